package criteria

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProposalMarshal(t *testing.T) {
	t.Parallel()
	refused := Proposal{Task: "make it better", Class: ClassRefused, Confidence: ConfidenceHigh,
		Rationale: []Finding{{Layer: LayerTaskVerb, Source: "task", Finding: "refused"}}, RefusalReason: "no measurable criterion"}
	js, err := refused.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"command", "setup"} {
		if v, ok := raw[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if raw["refusal_reason"] != "no measurable criterion" || raw["workdir"] != "." {
		t.Errorf("marshalled %s", js)
	}
	if !strings.Contains(string(js), "\n  \"task\"") {
		t.Errorf("JSON is not indented:\n%s", js)
	}

	ok := Proposal{Task: "fix tests", Class: ClassTestPass, Criterion: "the test suite passes", Command: "go test ./...", Workdir: ".", Setup: "go mod download",
		Confidence: ConfidenceHigh, Rationale: []Finding{{LayerCIConfig, ".github/workflows/ci.yml job test", "runs `go test ./...`"}},
		Alternatives: []Alternative{{Command: "make test", Source: "Makefile", WhyNot: "CI runs go test"}}}
	y, err := ok.YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"criterion_class: test-pass", "command: go test ./...", "refusal_reason: null", "why_not: CI runs go test"} {
		if !strings.Contains(string(y), want) {
			t.Errorf("YAML lacks %q:\n%s", want, y)
		}
	}
	// Both forms read back to the same proposal.
	var fromJSON, fromYAML Proposal
	js, _ = ok.JSON()
	if err := json.Unmarshal(js, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := parseYAML(y, &fromYAML); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ok, fromJSON); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ok, fromYAML); diff != "" {
		t.Errorf("YAML round trip (-want +got):\n%s", diff)
	}
	// Every proposal validates against the shared schema.
	s := proposalSchema(t)
	validateProposal(t, s, "refused", refused)
	validateProposal(t, s, "ok", ok)
}

func TestSummary(t *testing.T) {
	t.Parallel()
	p := Proposal{Task: "fix tests", Class: ClassTestPass, Criterion: "the test suite passes", Command: "npm test", Workdir: "web", Setup: "npm ci", Confidence: ConfidenceMedium}
	for i := 0; i < 8; i++ {
		p.Rationale = append(p.Rationale, Finding{LayerManifest, "package.json", "finding"})
	}
	p.Rationale = append(p.Rationale, Finding{LayerCIConfig, "ci.yml", "trap: needs a database"})
	got := p.Summary()
	for _, want := range []string{"Completion: npm test\n", "Workdir:    web\n", "Setup:      npm ci\n", "Confidence: medium\n", "trap: needs a database", "... and 3 more"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	r := Proposal{Task: "make it better", Class: ClassRefused, RefusalReason: "vague"}
	if s := r.Summary(); !strings.Contains(s, "Reason: vague") || !strings.Contains(s, "--completion") {
		t.Errorf("refusal summary:\n%s", s)
	}
}
