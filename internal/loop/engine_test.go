package loop_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/gitrepo"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/schemas"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// The engine is tested with the real git repository adapter and fakes for
// the agent, the check and the judge, so each stop rule and policy can be
// driven exactly.

type agentFunc func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error)

func (f agentFunc) Name() string { return "fake" }
func (f agentFunc) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	return f(ctx, req)
}

// fileCheck passes when the file "fixed" contains "yes".
type fileCheck struct{ runs atomic.Int32 }

func (c *fileCheck) Check(ctx context.Context, req loop.CheckRequest) (loop.CheckResult, error) {
	c.runs.Add(1)
	b, _ := os.ReadFile(filepath.Join(req.Dir, "fixed"))
	ok := strings.TrimSpace(string(b)) == "yes"
	res := loop.CheckResult{Passed: ok, Output: "checked\n", Tests: testreport.Summary{Known: true, Total: 2, Passed: 1, Failed: 1, Failing: []string{"TestB"}, Passing: []string{"TestA"}}}
	if ok {
		res.Tests = testreport.Summary{Known: true, Total: 2, Passed: 2, Passing: []string{"TestA", "TestB"}}
	} else {
		res.ExitCode = 1
	}
	return res, nil
}

// fakeJudge vetoes iterations listed in cheat; score = 100 for a pass, 40 otherwise.
type fakeJudge struct{ cheat map[int]bool }

func (j fakeJudge) Baseline(ctx context.Context, dir string, c loop.CheckResult) (loop.BaselineMetrics, error) {
	return loop.BaselineMetrics{Check: c, FileCount: 1, LinesOfCode: 1}, nil
}
func (j fakeJudge) Assess(ctx context.Context, in loop.JudgeInput) (loop.Verdict, error) {
	v := loop.Verdict{Score: 40}
	if in.Check.Passed {
		v.Score = 100
	}
	if j.cheat[in.Iteration] {
		v.Regressions = []loop.Regression{{Type: "test_deletion", Severity: "critical", Summary: "TestB deleted"}}
		v.Score = 10
	}
	return v, nil
}
func (j fakeJudge) Best(h []loop.Record) (int, string) {
	best, score := 0, -1.0
	for _, r := range h {
		if r.Rejected {
			continue
		}
		s := r.Verdict.Score
		if r.Check.Passed {
			s += 1000
		}
		if s > score {
			best, score = r.Iteration, s
		}
	}
	return best, "fake"
}
func (j fakeJudge) Guide(h []loop.Record, cur loop.Guidance) loop.Guidance { return cur }

func newRepo(t *testing.T) (string, *gitrepo.Repo) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "fixed"), []byte("no\n"), 0o644)
	run("add", "-A")
	run("commit", "-qm", "init")
	r, err := gitrepo.Open(dir, gitrepo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Exclude(context.Background(), ".aiwg/"); err != nil {
		t.Fatal(err)
	}
	return dir, r
}

// testSpec is the Spec of the engine tests' loops.
func testSpec(id string) spec.Spec {
	sp := spec.Defaults(spec.DoorCLI).Spec
	sp.Task = "fix"
	sp.Criterion = spec.Criterion{Command: "check", Workdir: ".", Source: spec.SourceFlag, Confidence: "given"}
	sp.Limits.MaxIterations, sp.Limits.Timeout = 5, time.Minute
	sp.Publish.Branch = spec.DefaultBranch(id)
	return sp
}

func newEngine(t *testing.T, dir string, repo *gitrepo.Repo, agent loop.Agent, j loop.Judge, tune func(*spec.Spec)) (*loop.Engine, *state.State) {
	t.Helper()
	id := "ralph-engine-test-0000000" + "1"
	pid := os.Getpid()
	st := &state.State{Version: state.Version, LoopID: id, Status: state.Running,
		StartedAt: time.Now().UTC(), PID: &pid, WorkingDirectory: dir, ReinforcementLevel: "MINIMAL",
		Configuration: state.Configuration{CheckpointInterval: 1, ExecutionMode: "default"},
		Harness:       state.Harness{Host: state.Hostname()}}
	sp := testSpec(id)
	if tune != nil {
		tune(&sp)
	}
	st.SetSpec(sp)
	e := &loop.Engine{Agent: agent, Verifier: &fileCheck{}, Repo: repo, Judge: j, Dir: state.NewDir(dir, id),
		Registry: state.NewStore(dir), Tuning: loop.Tuning{RateLimitBackoff: time.Millisecond, ControlPoll: 10 * time.Millisecond}}
	if err := e.Registry.Register(st); err != nil {
		t.Fatal(err)
	}
	return e, st
}

func writeFile(dir, name, s string) { os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644) }

func validState(t *testing.T, d state.Dir) *state.State {
	t.Helper()
	b, err := os.ReadFile(d.StatePath())
	if err != nil {
		t.Fatal(err)
	}
	if schemas.Available() {
		if err := schemas.Validate(schemas.LoopState, b); err != nil {
			t.Fatalf("state does not validate: %v", err)
		}
	}
	st, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCheatIsRejectedAndReverted(t *testing.T) {
	dir, repo := newRepo(t)
	agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		switch req.Iteration {
		case 1: // cheats: the check passes, the judge vetoes
			writeFile(req.Dir, "fixed", "yes\n")
			writeFile(req.Dir, "cheat", "deleted a test\n")
		case 2:
			if _, err := os.Stat(filepath.Join(req.Dir, "cheat")); err == nil {
				t.Errorf("iteration 2 did not start from the reverted tree")
			}
			if !strings.Contains(req.Prompt, "REJECTED for test_deletion") {
				t.Errorf("prompt of iteration 2 does not name the rejected change:\n%s", req.Prompt)
			}
			writeFile(req.Dir, "fixed", "yes\n")
		}
		return loop.AgentResult{InputTokens: 100, OutputTokens: 50, CostUSD: 0.01}, nil
	})
	e, st := newEngine(t, dir, repo, agent, fakeJudge{cheat: map[int]bool{1: true}}, nil)
	out, err := e.Run(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != state.Completed || out.Best != 2 || out.Iterations != 2 || out.ConfigError != nil {
		t.Fatalf("outcome = %+v", out)
	}
	got := validState(t, e.Dir)
	if len(got.RegressionEvents) != 1 || got.RegressionEvents[0].Iteration != 1 || got.RegressionEvents[0].Severity != "critical" {
		t.Fatalf("regression events = %+v", got.RegressionEvents)
	}
	if got.RecoveryAttempts != 1 || got.RecoveryHistory[0].ProtocolSteps.Adapt == nil {
		t.Fatalf("recovery = %+v", got.RecoveryHistory)
	}
	if got.Metrics.TotalTokens != 300 || got.Metrics.TotalCostUSD != 0.02 {
		t.Fatalf("metrics = %+v", got.Metrics)
	}
}

func TestBudgetStopsAndKeepsBest(t *testing.T) {
	dir, repo := newRepo(t)
	agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		writeFile(req.Dir, "notes", req.Prompt)
		return loop.AgentResult{CostUSD: 0.6}, nil
	})
	e, st := newEngine(t, dir, repo, agent, fakeJudge{}, func(sp *spec.Spec) { sp.Limits.BudgetUSD = 1 })
	out, err := e.Run(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != state.Failed || out.Iterations != 2 || !strings.Contains(out.StopReason, "budget of $1.00 spent") {
		t.Fatalf("outcome = %+v", out)
	}
	validState(t, e.Dir)
}

func TestRateLimitIsRetriedNotCounted(t *testing.T) {
	dir, repo := newRepo(t)
	calls := 0
	agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		calls++
		if calls <= 2 {
			return loop.AgentResult{Class: loop.ClassRateLimit, Detail: "429"}, nil
		}
		writeFile(req.Dir, "fixed", "yes\n")
		return loop.AgentResult{}, nil
	})
	e, st := newEngine(t, dir, repo, agent, fakeJudge{}, nil)
	out, err := e.Run(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != state.Completed || out.Iterations != 1 || calls != 3 {
		t.Fatalf("outcome = %+v, calls %d", out, calls)
	}
}

func TestAuthErrorIsConfigError(t *testing.T) {
	dir, repo := newRepo(t)
	agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		return loop.AgentResult{Class: loop.ClassAuth, Detail: "ANTHROPIC_API_KEY is not set"}, nil
	})
	e, st := newEngine(t, dir, repo, agent, fakeJudge{}, nil)
	out, err := e.Run(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if out.ConfigError == nil || !strings.Contains(out.StopReason, "ANTHROPIC_API_KEY") {
		t.Fatalf("outcome = %+v", out)
	}
	got := validState(t, e.Dir)
	if got.Status != state.Failed || got.ErrorContext == nil {
		t.Fatalf("state = %s %+v", got.Status, got.ErrorContext)
	}
}

func TestAbortRequestStopsTheAgent(t *testing.T) {
	dir, repo := newRepo(t)
	agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		select {
		case <-ctx.Done():
			return loop.AgentResult{Class: loop.ClassCancelled}, nil
		case <-time.After(20 * time.Second):
			return loop.AgentResult{}, nil
		}
	})
	e, st := newEngine(t, dir, repo, agent, fakeJudge{}, nil)
	go func() {
		time.Sleep(200 * time.Millisecond)
		e.Dir.RequestControl("abort")
	}()
	start := time.Now()
	out, err := e.Run(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != state.Aborted || time.Since(start) > 5*time.Second {
		t.Fatalf("outcome = %+v after %v", out, time.Since(start))
	}
	got := validState(t, e.Dir)
	if got.Status != state.Aborted || got.CompletedAt == nil {
		t.Fatalf("state = %+v", got.Status)
	}
}

func TestBaselinePassingEndsAtOnce(t *testing.T) {
	dir, repo := newRepo(t)
	writeFile(dir, "fixed", "yes\n")
	exec.Command("git", "-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "fixed").Run()
	agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		t.Error("the agent ran although the check already passed")
		return loop.AgentResult{}, nil
	})
	e, st := newEngine(t, dir, repo, agent, fakeJudge{}, nil)
	out, err := e.Run(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != state.Completed || out.Iterations != 0 || !strings.Contains(out.StopReason, "already passes") {
		t.Fatalf("outcome = %+v", out)
	}
	if _, sha, _ := repo.Head(context.Background()); sha == "" {
		t.Fatal("no head")
	}
	validState(t, e.Dir)
}

func TestHumanGatePauses(t *testing.T) {
	dir, repo := newRepo(t)
	agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		writeFile(req.Dir, "fixed", "yes\n")
		return loop.AgentResult{}, nil
	})
	e, st := newEngine(t, dir, repo, agent, fakeJudge{cheat: map[int]bool{1: true}}, func(sp *spec.Spec) { sp.Policy.Regression = "human-gate" })
	out, err := e.Run(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	got := validState(t, e.Dir)
	if out.Status != state.Paused || got.Harness.PendingGate == nil || got.Harness.PendingGate.Iteration != 1 || !got.RegressionEvents[0].HumanGateInvoked {
		t.Fatalf("outcome = %+v gate=%+v", out, got.Harness.PendingGate)
	}
}
