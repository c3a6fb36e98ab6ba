package loop_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aiwg/agent-loop/internal/gitrepo"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/state"
)

// A signal (the run context cancelled) that arrives after the agent ended,
// while the harness diffs, judges or commits, pauses the loop like a signal
// during the agent: it must never fail it (a failed loop cannot be resumed).
// Found by the cancellation torture (cmd/agent-loop/torture_test.go).

// cancelOnStage cancels the run context when the engine stages the
// iteration (after its check).
type cancelOnStage struct {
	*gitrepo.Repo
	cancel context.CancelFunc
}

func (r *cancelOnStage) Stage(ctx context.Context, froms ...string) ([]string, error) {
	r.cancel()
	return r.Repo.Stage(ctx, froms...)
}

// cancelOnAssess cancels the run context while the judge works and, like
// internal/judge, refuses to judge with a cancelled context.
type cancelOnAssess struct {
	fakeJudge
	cancel context.CancelFunc
}

func (j cancelOnAssess) Assess(ctx context.Context, in loop.JudgeInput) (loop.Verdict, error) {
	j.cancel()
	if err := ctx.Err(); err != nil {
		return loop.Verdict{}, fmt.Errorf("judging iteration %d: %w", in.Iteration, err)
	}
	return j.fakeJudge.Assess(ctx, in)
}

func TestSignalAfterTheAgentPauses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// wire returns the repo and judge that cancel the run.
		wire func(r *gitrepo.Repo, cancel context.CancelFunc) (loop.Repo, loop.Judge)
		// recorded is how many iterations the state holds: the diffs and
		// the judge come after the check, so a signal during either lets
		// the finished iteration be committed and recorded.
		recorded int
	}{
		{"during the diff", func(r *gitrepo.Repo, cancel context.CancelFunc) (loop.Repo, loop.Judge) {
			return &cancelOnStage{Repo: r, cancel: cancel}, fakeJudge{}
		}, 1},
		{"during the judge", func(r *gitrepo.Repo, cancel context.CancelFunc) (loop.Repo, loop.Judge) {
			return r, cancelOnAssess{cancel: cancel}
		}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, repo := newRepo(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
				writeFile(req.Dir, "notes", fmt.Sprintf("iteration %d\n", req.Iteration))
				return loop.AgentResult{}, nil
			})
			r, j := tc.wire(repo, cancel)
			e, st := newEngine(t, dir, repo, agent, j, nil)
			e.Repo = r
			out, err := e.Run(ctx, st)
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			if out.Status != state.Paused {
				t.Fatalf("outcome = %+v, want paused", out)
			}
			got := validState(t, e.Dir)
			if got.Status != state.Paused || got.PID != nil || got.ErrorContext != nil {
				t.Errorf("state: status %s, pid %v, error %+v; want paused, no pid, no error", got.Status, got.PID, got.ErrorContext)
			}
			if len(got.IterationHistory) != tc.recorded {
				t.Errorf("state records %d iterations, want %d", len(got.IterationHistory), tc.recorded)
			}
			if tc.recorded > 0 && got.IterationHistory[0].Commit == "" {
				t.Errorf("the recorded iteration has no commit")
			}
		})
	}
}
