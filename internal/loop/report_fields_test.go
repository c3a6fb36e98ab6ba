package loop_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/gitrepo"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/report"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// namingJudge is fakeJudge whose veto names the deleted test and points
// at the file, as internal/judge does.
type namingJudge struct{ fakeJudge }

func (j namingJudge) Assess(ctx context.Context, in loop.JudgeInput) (loop.Verdict, error) {
	v, err := j.fakeJudge.Assess(ctx, in)
	for i := range v.Regressions {
		v.Regressions[i].Tests = []string{"TestB"}
		v.Regressions[i].Evidence = []loop.Evidence{{Path: "cheat", Line: 1, Text: "deleted a test"}, {Path: "cheat", Line: 2}}
	}
	return v, err
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestTheEngineFillsWhatTheReportReads: a cheat rejected, then a fix. The
// state holds each iteration's change from the starting commit (the
// rejected one's own tree, before the revert), the agent's summary, the
// tests and files of the regression and why the loop stopped; the
// rejected commit says so in its subject and its Agent-Loop-Verdict
// trailer, in the report's words, and the four other trailers stay.
func TestTheEngineFillsWhatTheReportReads(t *testing.T) {
	run := func(t *testing.T, words bool) (string, *state.State) {
		dir, repo := newRepo(t)
		agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
			switch req.Iteration {
			case 1:
				writeFile(req.Dir, "fixed", "yes\n")
				writeFile(req.Dir, "cheat", "deleted a test\nand another line\n")
				return loop.AgentResult{Message: "## Summary\n\nRemoved TestB, which failed.\nThe suite passes now.\n\n```\nok\n```\nMore detail."}, nil
			default:
				writeFile(req.Dir, "fixed", "yes\n")
				return loop.AgentResult{Message: "  Fixed the bug in `fixed`.  "}, nil
			}
		})
		e, st := newEngine(t, dir, repo, agent, namingJudge{fakeJudge{cheat: map[int]bool{1: true}}}, nil)
		if words {
			e.CommitWords = report.CommitWords
		}
		out, err := e.Run(context.Background(), st)
		if err != nil || out.Status != state.Completed {
			t.Fatalf("outcome %+v, %v", out, err)
		}
		return dir, validState(t, e.Dir)
	}
	dir, got := run(t, true)

	if got.Harness.StopKind != state.StopPassed {
		t.Errorf("stop kind %q, want %q", got.Harness.StopKind, state.StopPassed)
	}
	h := got.IterationHistory
	if len(h) != 2 {
		t.Fatalf("%d iterations", len(h))
	}
	want1 := state.Change{Files: 2, Additions: 3, Deletions: 1, Paths: []state.ChangedFile{
		{Path: "cheat", Status: "added", Additions: 2}, {Path: "fixed", Status: "modified", Additions: 1, Deletions: 1}}}
	want2 := state.Change{Files: 1, Additions: 1, Deletions: 1, Paths: []state.ChangedFile{{Path: "fixed", Status: "modified", Additions: 1, Deletions: 1}}}
	for i, want := range []state.Change{want1, want2} {
		if c := h[i].FromStart; c == nil || c.Files != want.Files || c.Additions != want.Additions || c.Deletions != want.Deletions || !slices.Equal(c.Paths, want.Paths) {
			t.Errorf("iteration %d: change from the start %+v, want %+v", i+1, c, want)
		}
	}
	if s := h[0].AgentSummary; s != "Removed TestB, which failed.\nThe suite passes now." {
		t.Errorf("iteration 1: agent summary %q", s)
	}
	if s := h[1].AgentSummary; s != "Fixed the bug in `fixed`." {
		t.Errorf("iteration 2: agent summary %q (stored as the agent wrote it, trimmed)", s)
	}
	ev := got.RegressionEvents
	if len(ev) != 1 || !slices.Equal(ev[0].Details.Tests, []string{"TestB"}) || !slices.Equal(ev[0].Details.Paths, []string{"cheat"}) {
		t.Errorf("regression details: %+v", ev)
	}

	branch := got.Harness.Branch
	subjects := strings.Split(strings.TrimSpace(gitOut(t, dir, "log", "--reverse", "--format=%s", "main.."+branch)), "\n")
	wantSubjects := []string{"agent-loop: iteration 1 (rejected: deleted 1 test)", "agent-loop: iteration 2 (check pass)"}
	if !slices.Equal(subjects, wantSubjects) {
		t.Errorf("commit subjects %q, want %q", subjects, wantSubjects)
	}
	trailers := gitOut(t, dir, "log", "-1", "--format=%(trailers)", branch+"~1")
	for _, tr := range []string{"Agent-Loop-Id: " + got.LoopID, "Agent-Loop-Iteration: 1", "Agent-Loop-Check: pass", "Agent-Loop-Score: 10", "Agent-Loop-Verdict: rejected (deleted 1 test)"} {
		if !strings.Contains(trailers, tr+"\n") {
			t.Errorf("iteration 1's trailers lack %q:\n%s", tr, trailers)
		}
	}
	if tr := gitOut(t, dir, "log", "-1", "--format=%(trailers:key=Agent-Loop-Verdict,valueonly)", branch); strings.TrimSpace(tr) != "pass" {
		t.Errorf("iteration 2's verdict trailer %q, want pass", tr)
	}

	// Without the report's words the engine still marks the rejection,
	// but cannot say why: the check above would fail.
	dir, got = run(t, false)
	subjects = strings.Split(strings.TrimSpace(gitOut(t, dir, "log", "--reverse", "--format=%s", "main.."+got.Harness.Branch)), "\n")
	if subjects[0] != "agent-loop: iteration 1 (rejected)" || slices.Equal(subjects, wantSubjects) {
		t.Errorf("the engine's own wording: %q", subjects)
	}
}

// TestEveryStopHasAKind: each stop rule records why, as a StopKind.
func TestEveryStopHasAKind(t *testing.T) {
	idle := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		writeFile(req.Dir, "notes", req.Prompt)
		return loop.AgentResult{CostUSD: 0.6}, nil
	})
	fix := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		writeFile(req.Dir, "fixed", "yes\n")
		return loop.AgentResult{}, nil
	})
	cases := []struct {
		name   string
		agent  loop.Agent
		judge  loop.Judge
		tune   func(*spec.Spec)
		before func(dir string, e *loop.Engine)
		want   state.StopKind
		status state.Status
	}{
		{"max iterations", idle, fakeJudge{}, func(sp *spec.Spec) { sp.Limits.MaxIterations = 2 }, nil, state.StopMaxIterations, state.Failed},
		{"budget", idle, fakeJudge{}, func(sp *spec.Spec) { sp.Limits.BudgetUSD = 1 }, nil, state.StopBudget, state.Failed},
		{"human gate", fix, fakeJudge{cheat: map[int]bool{1: true}}, func(sp *spec.Spec) { sp.Policy.Regression = "human-gate" }, nil, state.StopHumanGate, state.Paused},
		{"cheat policy", fix, fakeJudge{cheat: map[int]bool{1: true}}, func(sp *spec.Spec) { sp.Policy.Regression = "fail" }, nil, state.StopCheatPolicy, state.Failed},
		{"paused", idle, fakeJudge{}, nil, func(dir string, e *loop.Engine) { e.Dir.RequestControl("pause") }, state.StopPaused, state.Paused},
		{"already passing", idle, fakeJudge{}, nil, func(dir string, e *loop.Engine) {
			writeFile(dir, "fixed", "yes\n")
			exec.Command("git", "-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "fixed").Run()
		}, state.StopAlreadyPassing, state.Completed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, repo := newRepo(t)
			e, st := newEngine(t, dir, repo, c.agent, c.judge, c.tune)
			if c.before != nil {
				os.MkdirAll(e.Dir.Path(), 0o755)
				c.before(dir, e)
			}
			out, err := e.Run(context.Background(), st)
			if err != nil {
				t.Fatal(err)
			}
			got := validState(t, e.Dir)
			if out.Status != c.status || got.Harness.StopKind != c.want {
				t.Errorf("status %s, stop kind %q; want %s, %q (%s)", out.Status, got.Harness.StopKind, c.status, c.want, out.StopReason)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		dir, repo := newRepo(t)
		ctx, cancel := context.WithCancel(context.Background())
		agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
			cancel()
			return loop.AgentResult{Class: loop.ClassCancelled}, nil
		})
		e, st := newEngine(t, dir, repo, agent, fakeJudge{}, nil)
		if _, err := e.Run(ctx, st); err != nil {
			t.Fatal(err)
		}
		if got := validState(t, e.Dir); got.Status != state.Paused || got.Harness.StopKind != state.StopCancelled {
			t.Errorf("status %s, stop kind %q", got.Status, got.Harness.StopKind)
		}
	})
}

// TestRebuiltRejectedIteration: an iteration the state never recorded (a
// crash between its commit and the state write, its checkpoint lost too)
// is rebuilt from its commit's trailers on resume, and its
// Agent-Loop-Verdict trailer keeps it rejected: it can never be the best
// nor complete the loop.
func TestRebuiltRejectedIteration(t *testing.T) {
	dir, repo := newRepo(t)
	agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		writeFile(req.Dir, "fixed", "yes\n")
		writeFile(req.Dir, "cheat", "deleted a test\n")
		return loop.AgentResult{}, nil
	})
	e, st := newEngine(t, dir, repo, agent, namingJudge{fakeJudge{cheat: map[int]bool{1: true}}}, func(sp *spec.Spec) { sp.Limits.MaxIterations = 1 })
	e.CommitWords = report.CommitWords
	if _, err := e.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	// The crash: the state ends before iteration 1, whose checkpoint is
	// gone; its commit is on the branch.
	got := validState(t, e.Dir)
	got.IterationHistory, got.RegressionEvents, got.DetectedPatterns = []state.IterationEntry{}, []state.RegressionEvent{}, []state.DetectedPattern{}
	got.Iteration, got.BestIteration, got.Status, got.CompletedAt = 0, nil, state.Paused, nil
	got.Harness.HeadSHA, got.Harness.BestSHA = strings.TrimSpace(gitOut(t, dir, "rev-parse", got.Harness.Branch+"~1")), ""
	gitOut(t, dir, "reset", "-q", "--hard", got.Harness.HeadSHA)
	gitOut(t, dir, "update-ref", "refs/heads/"+got.Harness.Branch, got.Harness.HeadSHA)
	if err := os.RemoveAll(filepath.Join(dir, filepath.Dir(e.Dir.CheckpointRel(1)))); err != nil {
		t.Fatal(err)
	}
	if err := e.Dir.Save(got, got.LastUpdated); err != nil {
		t.Fatal(err)
	}
	// The resumed harness is a new process: it opens the repository again
	// (the old Repo recorded the branch where the crash left it and would
	// put it back).
	repo.Close()
	repo2, err := gitrepo.Open(dir, gitrepo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo2.Close() })
	if err := repo2.Exclude(context.Background(), ".aiwg/"); err != nil {
		t.Fatal(err)
	}
	e2, _ := newEngine(t, dir, repo2, agent, fakeJudge{}, func(sp *spec.Spec) { sp.Limits.MaxIterations = 1 })
	if _, err := e2.Run(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	after := validState(t, e2.Dir)
	if len(after.IterationHistory) != 1 || !after.IterationHistory[0].Rebuilt || !after.IterationHistory[0].Rejected || after.BestIteration != nil || after.Status == state.Completed {
		t.Errorf("rebuilt: %d iterations, %+v; best %+v; status %s", len(after.IterationHistory), after.IterationHistory, after.BestIteration, after.Status)
	}
	if c := after.IterationHistory[0].FromStart; c == nil || c.Files != 2 {
		t.Errorf("the rebuilt iteration's change from the start: %+v", c)
	}
}
