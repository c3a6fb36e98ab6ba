package heldout

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// Runner runs the criterion once (loop.Verifier satisfies it; the
// integration passes the sandboxed runner).
type Runner interface {
	Check(ctx context.Context, req loop.CheckRequest) (loop.CheckResult, error)
}

// Result is what the held-out check found: the engine's data type, so the
// judge and the report read it as it is.
type Result = loop.HeldOut

// Verdict is the held-out check's answer.
type Verdict = loop.HeldOutVerdict

// The verdicts (see loop.HeldOutVerdict).
const (
	NotNeeded    = loop.HeldOutNotNeeded
	Passed       = loop.HeldOutPassed
	Failed       = loop.HeldOutFailed
	Inconclusive = loop.HeldOutInconclusive
)

// Request is one held-out check.
type Request struct {
	// Base is the baseline commit (or tree); Iteration the iteration's
	// staged tree (or commit), both in the trusted object store.
	Base, Iteration string
	// Criterion is the loop's criterion: its Command is run in its
	// Workdir; what it depends on decides what is restored.
	Criterion spec.Criterion
	// WorkTree is the repository's work tree (dependencies are linked
	// from it).
	WorkTree string
	Env      []string
	Timeout  time.Duration
	// Output receives the held-out runs' output (the iteration log).
	Output io.Writer
	// TaskEditsTests: the task asks for changes to tests
	// (criteria.TaskEditsTests).
	TaskEditsTests bool
}

// Checker runs held-out checks.
type Checker struct {
	Objects Objects
	Runner  Runner
	// ScratchRoot holds the scratch trees (default os.TempDir()).
	ScratchRoot string
	// Chown is passed to Build (the sandboxed check's user).
	Chown func(path string) error
	// Links overrides DependencyDirs (nil: discovered in the work tree).
	Links []string
	// Keep leaves the scratch trees in place (for debugging).
	Keep bool
	// CacheDir, when set, keeps the scratch trees at fixed paths under it
	// (held-out/, control/) with a build cache of their own beside each
	// (Cargo's held-out-target/, ...), so that the held-out runs of one
	// loop reuse what the earlier ones compiled. Empty: every check starts
	// from fresh trees and caches in a temporary directory.
	CacheDir string
}

// Check plans the held-out tree and, when the iteration touched anything
// but product source, runs the criterion there. A held-out failure is
// checked twice over before it counts: the iteration's own tree must pass
// in the same scratch setup (else the setup, not the agent, is at fault),
// and the held-out tree must fail again (else the tests are flaky).
func (c *Checker) Check(ctx context.Context, req Request) (Result, error) {
	res := Result{TaskEditsTests: req.TaskEditsTests}
	plan, err := MakePlan(ctx, c.Objects, req.Base, req.Iteration, req.Criterion)
	if err != nil {
		return res, fmt.Errorf("planning the held-out tree: %w", err)
	}
	for _, ch := range plan.Changes {
		res.Changes = append(res.Changes, loop.HeldOutChange{Path: ch.Path, Kind: string(ch.Class.Kind), Reason: ch.Class.Reason, Action: ch.Action})
	}
	if !plan.Needed() {
		res.Verdict = NotNeeded
		res.Reason = "the change touches product source only"
		return res, nil
	}
	root := c.CacheDir
	if root == "" {
		if root, err = os.MkdirTemp(c.ScratchRoot, "agent-loop-heldout-"); err != nil {
			return res, fmt.Errorf("creating the scratch directory: %w", err)
		}
		if !c.Keep {
			defer os.RemoveAll(root)
		}
	} else if err := os.MkdirAll(root, 0o755); err != nil {
		return res, fmt.Errorf("creating the held-out cache %s: %w", root, err)
	}
	if c.Chown != nil {
		if err := c.Chown(root); err != nil {
			return res, err
		}
	}
	for _, d := range []string{"held-out", "control"} {
		if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
			return res, fmt.Errorf("clearing the scratch tree %s: %w", d, err)
		}
	}
	heldDir := filepath.Join(root, "held-out")
	opts := BuildOptions{Dir: heldDir, WorkTree: req.WorkTree, Links: c.Links, Chown: c.Chown}
	if err := plan.Build(ctx, c.Objects, opts); err != nil {
		return res, fmt.Errorf("writing the held-out tree: %w", err)
	}
	why := "the change touches " + describeChanges(plan.Changes)
	held, run, err := c.run(ctx, req, heldDir, state.RunHeldOut, why)
	if err != nil {
		return res, err
	}
	res.Runs = append(res.Runs, run)
	res.Run = &held
	if held.Passed {
		res.Verdict = Passed
		res.Reason = "the original tests pass with the iteration's product source alone"
		return res, nil
	}
	// Control: the iteration's own tree, built and run the same way.
	ctrlPlan, err := MakePlan(ctx, c.Objects, req.Iteration, req.Iteration, req.Criterion)
	if err != nil {
		return res, fmt.Errorf("planning the control tree: %w", err)
	}
	ctrlDir := filepath.Join(root, "control")
	opts.Dir = ctrlDir
	if err := ctrlPlan.Build(ctx, c.Objects, opts); err != nil {
		return res, fmt.Errorf("writing the control tree: %w", err)
	}
	ctrl, run, err := c.run(ctx, req, ctrlDir, state.RunHeldOutControl, "the held-out run failed: does the iteration's own tree pass outside the work tree?")
	if err != nil {
		return res, err
	}
	res.Runs = append(res.Runs, run)
	res.Control = &ctrl
	if !ctrl.Passed {
		res.Verdict = Inconclusive
		res.Reason = "the iteration's own tree fails outside the work tree too (exit " + fmt.Sprint(ctrl.ExitCode) +
			"): the scratch tree lacks something the work tree has, so the held-out failure proves nothing"
		return res, nil
	}
	again, run, err := c.run(ctx, req, heldDir, state.RunHeldOutAgain, "the held-out run failed and the control passed: once more, to rule out a flaky test")
	if err != nil {
		return res, err
	}
	res.Runs = append(res.Runs, run)
	if again.Passed {
		res.Verdict = Inconclusive
		res.Reason = "the held-out run failed once and passed once: the original tests are flaky here"
		return res, nil
	}
	res.Run = &again
	res.Verdict = Failed
	res.Reason = "with the original " + describeChanges(plan.Changes) + " the criterion fails; the iteration's check passed only with its own edits to them"
	return res, nil
}

func (c *Checker) run(ctx context.Context, req Request, dir, purpose, why string) (loop.CheckResult, state.CriterionRun, error) {
	cmd := req.Criterion.Command
	if req.Output != nil {
		fmt.Fprintf(req.Output, "\n--- %s run (%s): %s\n", purpose, why, cmd)
	}
	env := append([]string(nil), req.Env...)
	env = append(env, c.scratchEnv(dir)...)
	start := time.Now()
	res, err := c.Runner.Check(ctx, loop.CheckRequest{
		Command: cmd, Dir: filepath.Join(dir, filepath.FromSlash(req.Criterion.Workdir)),
		Env: env, Timeout: req.Timeout, Output: req.Output,
	})
	if err != nil {
		return res, state.CriterionRun{}, fmt.Errorf("running the %s check: %w", purpose, err)
	}
	return res, loop.RunOf(purpose, why, cmd, res, time.Since(start)), nil
}

// scratchEnv gives each scratch tree the build caches that a tool keys by
// path: Cargo's fingerprints record the sources' absolute paths and their
// mtimes, not the package's path, so a target directory shared with the
// work tree or with the other scratch tree finds those files unchanged and
// reuses binaries built from other sources (the agent's edits). Each tree
// gets its own, beside it; with a CacheDir the tree's path stays the same
// from one check to the next, its files are written anew (newer than the
// artifacts, so the crate is rebuilt) and the compiled dependencies are
// reused. Go's cache is keyed by content and shared as it is.
func (c *Checker) scratchEnv(dir string) []string {
	if _, err := os.Stat(filepath.Join(dir, "Cargo.toml")); err != nil {
		return nil
	}
	return []string{"CARGO_TARGET_DIR=" + dir + "-target"}
}

// describeChanges names the changed paths by kind, in plain words:
// "test files (calc_test.go) and the criterion's files (Makefile)".
func describeChanges(changes []Change) string {
	byKind := map[Kind][]string{}
	var order []Kind
	for _, ch := range changes {
		k := ch.Class.Kind
		if k == Mixed || k == Inline {
			k = ch.Class.Kind
		}
		if _, ok := byKind[k]; !ok {
			order = append(order, k)
		}
		byKind[k] = append(byKind[k], ch.Path)
	}
	var parts []string
	for _, k := range order {
		paths := byKind[k]
		list := strings.Join(paths, ", ")
		if len(paths) > 3 {
			list = strings.Join(paths[:3], ", ") + fmt.Sprintf(" and %d more", len(paths)-3)
		}
		parts = append(parts, kindWords[k]+" ("+list+")")
	}
	return strings.Join(parts, " and ")
}

var kindWords = map[Kind]string{
	Test: "test files", Fixture: "test data", Config: "test and runner configuration", Criterion: "the criterion's files",
	CI: "CI workflows", Dotfile: "dotfiles", Docs: "documentation", RootNew: "new files at the root",
	Shadow: "files named like the tools the criterion runs", Dependency: "third-party code",
	Mixed: "runner sections of manifests", Inline: "tests inside product source",
}
