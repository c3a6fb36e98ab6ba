package corpus_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/sandbox/sandboxtest"
	"github.com/aiwg/agent-loop/internal/state"
)

// TestCorpusThroughTheBinary runs every case of the corpus as a loop of the
// real binary (this test binary re-executed as agent-loop, see TestMain):
// `agent-loop run --provider command --agent-command <script that makes the
// case's change>` on the case's repository, one iteration, with the
// criterion resolved as a loop resolves it. The state the loop leaves
// decides: a cheat's iteration must be rejected with the held-out failure
// among its evidence (or fail the harness's own check, or, for the cheats
// only a person can judge, be warned about), an honest one must complete
// with its test edits reported. It
// prints a table and recall and false positives, then runs the cheats again
// with the held-out check switched off (AGENT_LOOP_TEST_WEAKEN=heldout,
// honoured by test binaries only): recall must drop, or the test would not
// be testing the held-out check.
func TestCorpusThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a loop of the binary per case with the real toolchains")
	}
	if _, err := exec.LookPath("agent-loop"); err != nil {
		t.Fatalf("agent-loop is not on PATH (TestMain puts this test binary there): %v", err)
	}
	cases := loadCorpus(t)
	tc := findToolchains(t)
	run := func(t *testing.T, weakened bool, cheatsOnly bool) (map[*corpusCase]loopOutcome, *skips) {
		var mu sync.Mutex
		got := map[*corpusCase]loopOutcome{}
		skipped := &skips{}
		keep := func(c *corpusCase) bool { return !cheatsOnly || c.Kind == "cheat" }
		eachCase(t, tc, cases, keep, skipped, func(t *testing.T, i int, c *corpusCase) {
			o := runLoop(t, tc, c, fmt.Sprintf("ralph-corpus-%08x", i), weakened)
			mu.Lock()
			got[c] = o
			mu.Unlock()
			if weakened {
				return
			}
			if problem := o.against(c); problem != "" {
				t.Errorf("%s case (%s), want %s: %s\n%s", c.Kind, c.Class, c.Expect, problem, o.detail)
			}
		})
		return got, skipped
	}

	var full map[*corpusCase]loopOutcome
	var skipped *skips
	t.Run("loops", func(t *testing.T) { full, skipped = run(t, false, false) })
	recall, fp := printLoops(t, "with the held-out check", full, skipped)
	if recall.total > 0 && recall.hit != recall.total {
		t.Errorf("recall on the cheats through the binary is %s, want 100%%", recall)
	}
	if fp.hit != 0 {
		t.Errorf("false positives on the honest cases through the binary: %s, want 0", fp)
	}

	// The same cheats without the held-out check: the harness must do
	// worse, or these loops do not test it.
	var weak map[*corpusCase]loopOutcome
	t.Run("without-held-out", func(t *testing.T) { weak, _ = run(t, true, true) })
	weakRecall, _ := printLoops(t, "held-out check switched off", weak, nil)
	if weakRecall.total > 0 && weakRecall.hit == weakRecall.total {
		t.Errorf("with the held-out check switched off the loops still catch every cheat (%s): they do not test the held-out check", weakRecall)
	}
}

// loopOutcome is what one loop of the binary left in its state.
type loopOutcome struct {
	status   state.Status
	passed   bool // the iteration's own check passed
	rejected bool
	// warned: a high-severity regression or a held-out warning, for a
	// person, on an iteration that was not rejected.
	warned bool
	// heldOut is the held-out verdict ("" when the check did not run);
	// heldOutEvidence: a critical regression carries the held-out run's
	// failure.
	heldOut         string
	heldOutEvidence bool
	edits           int
	runs            []string
	detail          string
}

func (o loopOutcome) verdict() string {
	switch {
	case o.rejected && !o.passed:
		return "rejected (check failed)"
	case o.rejected:
		return "rejected"
	case o.warned:
		return "warned"
	}
	return "completed"
}

// against says what is wrong with the outcome for the case's label ("" when
// nothing is).
func (o loopOutcome) against(c *corpusCase) string {
	switch c.Expect {
	case "veto":
		if !o.rejected {
			return "the iteration was not rejected (" + o.verdict() + ")"
		}
		// A cheat whose check passed is rejected on the held-out failure;
		// one whose check the harness's own runs failed (the focused run
		// names the failing tests, past a filter the agent configured)
		// never passed at all.
		if o.passed && !o.heldOutEvidence {
			return "rejected without the held-out failure among the evidence (held-out: " + o.heldOut + ")"
		}
	case "warn":
		if o.rejected || !o.warned || o.status != state.Completed {
			return fmt.Sprintf("want a completed loop with a warning for a person, got %s (%s)", o.verdict(), o.status)
		}
	case "pass":
		if o.rejected || o.status != state.Completed {
			return fmt.Sprintf("want a completed loop, got %s (%s)", o.verdict(), o.status)
		}
		if o.heldOut != "" && o.heldOut != state.HeldOutPass {
			return "the held-out check said " + o.heldOut
		}
		if o.heldOut == state.HeldOutPass && o.edits == 0 {
			return "the held-out check passed but the test edits are not reported"
		}
	}
	return ""
}

// runLoop writes the case's repository, runs one iteration of the binary on
// it with an agent script that makes the case's change, and reads the state.
func runLoop(t *testing.T, tc *toolchains, c *corpusCase, id string, weakened bool) loopOutcome {
	t.Helper()
	work := sandboxtest.TempDir(t)
	dir := filepath.Join(work, "repo")
	after := filepath.Join(work, "after")
	var deletes []string
	for _, f := range c.files {
		var dst string
		switch {
		case strings.HasPrefix(f.Name, "before/"):
			dst = filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(f.Name, "before/")))
		case strings.HasPrefix(f.Name, "after/"):
			dst = filepath.Join(after, filepath.FromSlash(strings.TrimPrefix(f.Name, "after/")))
		case strings.HasPrefix(f.Name, "delete/"):
			deletes = append(deletes, strings.TrimPrefix(f.Name, "delete/"))
			continue
		default:
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(dst, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(dst, f.Data, mode); err != nil {
			t.Fatal(err)
		}
	}
	cgit(t, dir, "init", "-q", "-b", "main")
	cgit(t, dir, "add", "-A")
	cgit(t, dir, "commit", "-q", "-m", "baseline")
	if c.Needs == "vitest" {
		if err := os.Symlink(tc.vitest, filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(dir, ".git", "info", "exclude"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(f, "/node_modules")
		f.Close()
	}
	// The agent: the case's change, made in the work tree it is given.
	var script strings.Builder
	script.WriteString("set -e\n")
	if _, err := os.Stat(after); err == nil {
		fmt.Fprintf(&script, "cp -R %s/. .\n", shq(after))
	}
	for _, d := range deletes {
		fmt.Fprintf(&script, "rm -f -- %s\n", shq(d))
	}
	agent := filepath.Join(work, "agent.sh")
	if err := os.WriteFile(agent, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("agent-loop", "run", "--provider", "command", "--agent-command", "sh "+shq(agent),
		"--completion", c.Criterion, "--max-iterations", "1", "--loop-id", id, "--check-timeout", "5", c.Task)
	cmd.Dir = dir
	env := append([]string(nil), tc.env...)
	env = append(env, "GIT_AUTHOR_NAME=corpus", "GIT_AUTHOR_EMAIL=corpus@example.invalid",
		"GIT_COMMITTER_NAME=corpus", "GIT_COMMITTER_EMAIL=corpus@example.invalid", "GIT_CONFIG_NOSYSTEM=1", "CI=true")
	if weakened {
		env = append(env, "AGENT_LOOP_TEST_WEAKEN=heldout")
	}
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("agent-loop run: %v\n%s", err, out.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, ".aiwg", "ralph", "loops", id, "state.json"))
	if err != nil {
		t.Fatalf("the loop left no state: %v\n%s", err, out.String())
	}
	var st state.State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	o := loopOutcome{status: st.Status, detail: fmt.Sprintf("loop %s in %s (%.0fs):\n%s", id, dir, time.Since(start).Seconds(), tail(out.String(), 3000))}
	if len(st.IterationHistory) != 1 {
		t.Fatalf("the loop recorded %d iterations, want 1\n%s", len(st.IterationHistory), o.detail)
	}
	it := st.IterationHistory[0]
	o.rejected, o.passed = it.Rejected, it.CheckPassed
	for _, r := range it.CriterionRuns {
		o.runs = append(o.runs, r.Purpose)
	}
	if h := it.HeldOut; h != nil {
		o.heldOut, o.edits = h.Verdict, len(h.Edits)
		if h.Verdict == state.HeldOutWarning {
			o.warned = true
		}
	}
	for _, ev := range st.RegressionEvents {
		if ev.Iteration != 1 {
			continue
		}
		if ev.Severity == "high" {
			o.warned = true
		}
		if ev.Severity == "critical" && strings.Contains(fmt.Sprint(ev.Details.Diff["evidence"]), "held-out run") {
			o.heldOutEvidence = true
		}
	}
	return o
}

type ratio struct{ hit, total int }

func (r ratio) String() string { return pct(r.hit, r.total) }

// printLoops prints the loops' table and returns recall on the cheats
// (rejected or warned) and false positives on the honest cases (rejected).
func printLoops(t *testing.T, title string, got map[*corpusCase]loopOutcome, skipped *skips) (recall, fp ratio) {
	t.Helper()
	var keys []*corpusCase
	for c := range got {
		keys = append(keys, c)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Lang != keys[j].Lang {
			return keys[i].Lang < keys[j].Lang
		}
		return keys[i].name < keys[j].name
	})
	var b strings.Builder
	fmt.Fprintf(&b, "corpus through the binary, %s:\n", title)
	fmt.Fprintf(&b, "| language | case | kind | verdict | held-out | criterion runs |\n|---|---|---|---|---|---|\n")
	for _, c := range keys {
		o := got[c]
		ho := o.heldOut
		if ho == "" {
			ho = "not needed"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d: %s |\n", c.Lang, c.name, c.Kind, o.verdict(), ho, len(o.runs), strings.Join(o.runs, ", "))
		if c.Kind == "cheat" {
			recall.total++
			if o.rejected || o.warned {
				recall.hit++
			}
		} else {
			fp.total++
			if o.rejected {
				fp.hit++
			}
		}
	}
	fmt.Fprintf(&b, "corpus through the binary, %s: recall %s, false positives %s\n", title, recall, fp)
	if skipped != nil {
		for l, why := range skipped.byLang {
			fmt.Fprintf(&b, "corpus through the binary: %s skipped: %s\n", l, why)
		}
	}
	fmt.Print(b.String())
	return recall, fp
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
