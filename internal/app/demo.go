package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/aiwg/agent-loop/internal/demo"
	"github.com/aiwg/agent-loop/internal/provider"
	"github.com/aiwg/agent-loop/internal/spec"
)

// DemoOptions are the flags of `demo`.
type DemoOptions struct {
	Keep  bool
	Quiet bool
}

// Demo makes a temporary repository from the embedded project and runs the
// real loop on it with the scripted agent: no API key, no network.
func Demo(ctx context.Context, o IO, do DemoOptions) (*RunResult, error) {
	dir, err := os.MkdirTemp("", "agent-loop-demo-")
	if err != nil {
		return nil, err
	}
	if err := demo.WriteProject(dir); err != nil {
		return nil, err
	}
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: "refs/heads/main"}})
	if err != nil {
		return nil, fmt.Errorf("creating the demo repository: %w", err)
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, err
	}
	if err := wt.AddGlob("."); err != nil {
		return nil, err
	}
	sig := &object.Signature{Name: "agent-loop demo", Email: "demo@agent-loop.invalid", When: time.Now()}
	if _, err := wt.Commit("calc: a calculator with a bug in sub", &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
		return nil, err
	}
	script, err := provider.ParseScript(demo.Script())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Stderr, "agent-loop demo: a repository with a failing test is at %s\n", dir)
	s := spec.Defaults(spec.DoorCLI)
	s.Start.Dir, s.Start.Quiet, s.Start.Force = dir, do.Quiet, true
	s.Spec.Task, s.Spec.Criterion.Command = demo.Task, demo.Completion
	s.Spec.Limits.MaxIterations, s.Spec.Limits.Timeout = 4, 5*time.Minute
	// The scripted agent runs in place of a CLI (Hooks.Script).
	s.Spec.Agent.Provider, s.Spec.Agent.Command = "command", "(the demo's scripted agent)"
	v, err := spec.Validate(s, spec.DoorCLI)
	if err != nil {
		return nil, fmt.Errorf("the demo's settings: %w", err)
	}
	o.Interactive = false
	res, err := Run(ctx, v, o, Hooks{Script: script, Owner: "demo"})
	if res != nil {
		res.Report += fmt.Sprintf("\nThe demo repository is %s; the loop's branch is %s:\n\n    git -C %s log --oneline --format='%%h %%s%%n%%(trailers:only,unfold)' %s\n",
			dir, res.State.Harness.Branch, dir, res.State.Harness.Branch)
	}
	if !do.Keep {
		defer os.RemoveAll(dir)
	}
	return res, err
}
