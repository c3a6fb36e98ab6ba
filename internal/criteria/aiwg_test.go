package criteria

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAIWGLayer(t *testing.T) {
	t.Parallel()
	dir := writeRepo(t, map[string]string{
		"Makefile": "check:\n\tmake lint test\ntest:\n\tpytest\nlint:\n\truff check .\n",
		".aiwg/ralph/loops/ralph-old-00000001/inferred-completion.yaml": "task: t\ncriterion_class: test-pass\ncommand: make test\nworkdir: .\nconfidence: low\nrationale: []\n",
		".aiwg/ralph/loops/ralph-new-00000002/inferred-completion.yaml": "task: t\ncriterion_class: test-pass\ncommand: make check\nworkdir: .\nconfidence: high\nrationale: []\n",
		".aiwg/ralph/loops/ralph-bad-00000003/inferred-completion.yaml": "task: [unclosed\n",
		".aiwg/planning/test-strategy.md":                               "# Strategy\n\n```sh\nmake check\n```\n",
	})
	// The newer proposal is preferred.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, ".aiwg/ralph/loops/ralph-old-00000001/inferred-completion.yaml"), old, old); err != nil {
		t.Fatal(err)
	}
	p, err := Infer(t.Context(), dir, "fix the failing tests")
	if err != nil {
		t.Fatal(err)
	}
	if p.Command != "make check" || p.Confidence != ConfidenceHigh {
		t.Errorf("got %q (%s)\n%s", p.Command, p.Confidence, p.Summary())
	}
	found := false
	for _, f := range p.Rationale {
		if f.Layer == LayerAIWGArtifact && strings.Contains(f.Finding, "make check") {
			found = true
		}
	}
	if !found {
		t.Errorf("no aiwg-artifact finding names make check:\n%+v", p.Rationale)
	}
	if !hasFinding(p, "unreadable") {
		t.Error("the malformed proposal is not named as unreadable")
	}
}

func TestAIWGNewestProposalWins(t *testing.T) {
	t.Parallel()
	dir := writeRepo(t, map[string]string{
		".aiwg/ralph/loops/ralph-a-00000001/inferred-completion.yaml": "task: t\ncriterion_class: test-pass\ncommand: make test\nworkdir: .\nconfidence: high\nrationale: []\n",
		".aiwg/ralph/loops/ralph-b-00000002/inferred-completion.yaml": "task: t\ncriterion_class: test-pass\ncommand: make check\nworkdir: .\nconfidence: high\nrationale: []\n",
	})
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, ".aiwg/ralph/loops/ralph-b-00000002/inferred-completion.yaml"), old, old); err != nil {
		t.Fatal(err)
	}
	p, err := Infer(t.Context(), dir, "fix the failing tests")
	if err != nil {
		t.Fatal(err)
	}
	if p.Command != "make test" {
		t.Errorf("got %q, want the newest proposal's make test\n%s", p.Command, p.Summary())
	}
}
