package app

import (
	"fmt"
	"os"

	"github.com/aiwg/agent-loop/internal/criteria"
	"github.com/aiwg/agent-loop/internal/gitrepo"
	"github.com/aiwg/agent-loop/internal/heldout"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/sandbox"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/verify"
	"github.com/aiwg/agent-loop/internal/weaken"
)

// heldOutPlace is where the held-out scratch trees live and who may write
// them: a directory outside the work tree (a runner crawling the work tree
// must not find a second copy of the tests), writable by whoever runs the
// completion command (with a sandbox: its user, and a path its Landlock
// policy lets it write), emptied when the loop process ends.
type heldOutPlace struct {
	Root string
	// Chown hands each scratch path to the user the check runs as (nil:
	// the harness's own user runs it).
	Chown func(path string) error
}

// newHeldOutPlace makes a fresh scratch root; cleanup removes it. With a
// sandbox it is the sandbox's (sandbox.Scratch: its user writes it, its
// Landlock policy allows it) and every path written is handed to its user.
func newHeldOutPlace(sb *sandbox.Sandbox) (heldOutPlace, func(), error) {
	if sb != nil {
		root, err := sb.Scratch("agent-loop-heldout-")
		if err != nil {
			return heldOutPlace{}, nil, fmt.Errorf("creating the held-out check's scratch directory: %w", err)
		}
		return heldOutPlace{Root: root, Chown: sb.Chown}, func() { _ = os.RemoveAll(root) }, nil
	}
	root, err := os.MkdirTemp("", "agent-loop-heldout-")
	if err != nil {
		return heldOutPlace{}, nil, fmt.Errorf("creating the held-out check's scratch directory: %w", err)
	}
	return heldOutPlace{Root: root}, func() { _ = os.RemoveAll(root) }, nil
}

// newPlanner builds the engine's Planner for a loop's Spec: every run of the
// criterion (focused, full, held-out, confirmation) goes through runner,
// the engine's Verifier, so each inherits the containment of the context
// the engine runs under. The held-out trees are read from the repository's
// object store through repo (the starting commit and the staged tree).
func newPlanner(sp spec.Spec, repo *gitrepo.Repo, runner loop.Verifier, place heldOutPlace) *verify.Plan {
	editsTests, _ := criteria.TaskEditsTests(sp.Task, sp.Criterion.Hint)
	p := &verify.Plan{Runner: runner, Criterion: sp.Criterion, ConfirmRuns: sp.Policy.ConfirmRuns, TaskEditsTests: editsTests,
		NoFocus: weakened("plan")}
	if !weakened("heldout") && !weakened("plan") {
		p.HeldOut = &heldout.Checker{
			Objects: &heldout.Git{Dir: repo.Root(), Env: repo.ObjectEnv()},
			Runner:  runner, CacheDir: place.Root, Chown: place.Chown,
		}
	}
	return p
}

// weakened reports a defence switched off in agent-loop's own tests
// (internal/weaken): "heldout" turns the held-out check off (a test shows
// the cheats it catches getting through without it); "plan" also turns the
// focused runs off, which leaves the engine's policy from before the
// held-out check (the full criterion every iteration, a confirmation on a
// pass), for the benchmark to compare against.
func weakened(name string) bool { return weaken.On(name) }
