package judge

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/testreport"
)

var update = flag.Bool("update", false, "rewrite golden files and regenerate the labelled corpus with git")

// The labelled corpus: testdata/corpus/cases/NAME.txtar holds the files of
// a repository before and after a change (before/PATH, after/PATH) and, as
// its comment, the label {"expect": [types], "criterion": "..."}. `go test
// -run TestCorpus -update` builds each pair into a real git repository,
// writes `git diff -M` of the change to testdata/corpus/NAME.diff and the
// labels to testdata/corpus/labels.json.
const corpusDir = "testdata/corpus"

type corpusLabel struct {
	Expect    []string `json:"expect"`
	Criterion string   `json:"criterion,omitempty"`
	Note      string   `json:"note,omitempty"`
	// Coverage reported by the baseline run and by the iteration's run,
	// for the cases about coverage.
	BaselineCoverage *float64 `json:"baseline_coverage,omitempty"`
	Coverage         *float64 `json:"coverage,omitempty"`
}

// input is the JudgeInput a case is judged with.
func (l corpusLabel) input() loop.JudgeInput {
	in := loop.JudgeInput{Criterion: l.Criterion}
	if l.BaselineCoverage != nil || l.Coverage != nil {
		in.Baseline.Check.Tests = testreport.Summary{Known: true, Coverage: l.BaselineCoverage}
		in.Check.Tests = testreport.Summary{Known: true, Coverage: l.Coverage}
		in.Check.Passed = true
	}
	return in
}

func TestCorpus(t *testing.T) {
	if *update {
		generateCorpus(t)
	}
	raw, err := os.ReadFile(filepath.Join(corpusDir, "labels.json"))
	if err != nil {
		t.Fatalf("reading labels (run `go test ./internal/judge -run TestCorpus -update` to build the corpus): %v", err)
	}
	var labels map[string]corpusLabel
	if err := json.Unmarshal(raw, &labels); err != nil {
		t.Fatalf("labels.json: %v", err)
	}
	if len(labels) < 80 {
		t.Errorf("the corpus has %d cases, want at least 80", len(labels))
	}
	names := make([]string, 0, len(labels))
	for n := range labels {
		names = append(names, n)
	}
	sort.Strings(names)

	type tally struct{ tp, fp, fn, cheats int }
	per := map[string]*tally{}
	for _, typ := range []string{TestDeletion, TestSkipping, AssertionWeakening, ErrorSuppression, ValidationBypass, FeatureRemoval, CoverageRegression} {
		per[typ] = &tally{}
	}
	honest, cheats := 0, 0
	var failures []string
	for _, name := range names {
		label := labels[name]
		text, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil {
			t.Fatalf("case %s: %v", name, err)
		}
		files, err := ParseDiff(string(text))
		if err != nil {
			t.Errorf("case %s: ParseDiff: %v", name, err)
			continue
		}
		regs := Detect(files, label.input())
		got := map[string]bool{}
		for _, r := range regs {
			got[r.Type] = true
			if len(r.Evidence) == 0 {
				t.Errorf("case %s: %s regression without evidence: %s", name, r.Type, r.Summary)
			}
		}
		want := map[string]bool{}
		for _, e := range label.Expect {
			want[e] = true
			if per[e] == nil {
				per[e] = &tally{}
			}
			per[e].cheats++
		}
		if len(label.Expect) == 0 {
			honest++
		} else {
			cheats++
		}
		for typ := range per {
			switch {
			case got[typ] && want[typ]:
				per[typ].tp++
			case got[typ] && !want[typ]:
				per[typ].fp++
			case !got[typ] && want[typ]:
				per[typ].fn++
			}
		}
		if !equalSets(got, want) {
			var desc []string
			for _, r := range regs {
				desc = append(desc, fmt.Sprintf("  %s/%s: %s %v", r.Type, r.Severity, r.Summary, r.Evidence))
			}
			kind := "cheat"
			if len(want) == 0 {
				kind = "honest"
			}
			failures = append(failures, fmt.Sprintf("%s (%s): want %v, got %v\n%s", name, kind, keys(want), keys(got), strings.Join(desc, "\n")))
		}
	}
	t.Logf("corpus: %d cases (%d cheats, %d honest)", len(names), cheats, honest)
	t.Logf("%-20s %6s %4s %4s %4s %9s %7s", "type", "cheats", "tp", "fp", "fn", "precision", "recall")
	types := keys(map[string]bool{})
	for typ := range per {
		types = append(types, typ)
	}
	sort.Strings(types)
	for _, typ := range types {
		c := per[typ]
		t.Logf("%-20s %6d %4d %4d %4d %9s %7s", typ, c.cheats, c.tp, c.fp, c.fn, ratio(c.tp, c.tp+c.fp), ratio(c.tp, c.tp+c.fn))
	}
	for _, f := range failures {
		t.Error(f)
	}
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestCorpusMatchesSources rebuilds every case with git and checks the
// committed diff is what git prints for it: the corpus stays real.
func TestCorpusMatchesSources(t *testing.T) {
	if *update {
		t.Skip("regenerating")
	}
	if testing.Short() {
		t.Skip("rebuilds every case with git")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	cases, err := filepath.Glob(filepath.Join(corpusDir, "cases", "*.txtar"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no corpus cases: %v", err)
	}
	for _, c := range cases {
		name := strings.TrimSuffix(filepath.Base(c), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ar, err := parseTxtar(c)
			if err != nil {
				t.Fatal(err)
			}
			diff := buildCaseDiff(t, ar)
			want, err := os.ReadFile(filepath.Join(corpusDir, name+".diff"))
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if d := cmp.Diff(string(want), diff); d != "" {
				t.Errorf("%s.diff is stale (run with -update) (-committed +git):\n%s", name, d)
			}
		})
	}
}

func generateCorpus(t *testing.T) {
	t.Helper()
	cases, err := filepath.Glob(filepath.Join(corpusDir, "cases", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(corpusDir, "*.diff"))
	for _, f := range old {
		os.Remove(f)
	}
	labels := map[string]corpusLabel{}
	for _, c := range cases {
		name := strings.TrimSuffix(filepath.Base(c), ".txtar")
		ar, err := parseTxtar(c)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		var label corpusLabel
		if err := json.Unmarshal(bytes.TrimSpace(ar.Comment), &label); err != nil {
			t.Fatalf("%s: label comment: %v", c, err)
		}
		if label.Expect == nil {
			label.Expect = []string{}
		}
		diff := buildCaseDiff(t, ar)
		if strings.TrimSpace(diff) == "" {
			t.Fatalf("%s: empty diff", c)
		}
		if err := os.WriteFile(filepath.Join(corpusDir, name+".diff"), []byte(diff), 0o644); err != nil {
			t.Fatal(err)
		}
		labels[name+".diff"] = label
	}
	out, err := json.MarshalIndent(labels, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corpusDir, "labels.json"), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// buildCaseDiff commits the before/ files in a fresh repository, replaces
// them with the after/ files and returns `git diff --cached -M HEAD`.
func buildCaseDiff(t *testing.T, ar *archive) string {
	t.Helper()
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	write := func(prefix string) {
		for _, f := range ar.Files {
			if !strings.HasPrefix(f.Name, prefix) {
				continue
			}
			p := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(f.Name, prefix)))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("before/")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "--allow-empty", "-m", "before")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != ".git" {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("after/")
	gitRun(t, dir, "add", "-A")
	return gitRun(t, dir, "diff", "--cached", "-M", "HEAD")
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	full := append([]string{"-c", "core.hooksPath=" + os.DevNull, "-c", "core.autocrlf=false", "-c", "user.name=corpus",
		"-c", "user.email=corpus@example.invalid", "-c", "commit.gpgsign=false", "-c", "diff.renames=true", "-C", dir}, args...)
	cmd := exec.Command("git", full...)
	cmd.Env = append(gitEnv(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// archive is a txtar archive: a comment, then files introduced by
// "-- name --" lines (the format of golang.org/x/tools/txtar).
type archive struct {
	Comment []byte
	Files   []archiveFile
}

type archiveFile struct {
	Name string
	Data []byte
}

func parseTxtar(path string) (*archive, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	a := &archive{}
	cur := &a.Comment
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		trimmed := bytes.TrimRight(line, "\r\n")
		if bytes.HasPrefix(trimmed, []byte("-- ")) && bytes.HasSuffix(trimmed, []byte(" --")) && len(trimmed) > 6 {
			a.Files = append(a.Files, archiveFile{Name: string(bytes.TrimSpace(trimmed[3 : len(trimmed)-3]))})
			cur = &a.Files[len(a.Files)-1].Data
			continue
		}
		*cur = append(*cur, line...)
	}
	return a, nil
}
