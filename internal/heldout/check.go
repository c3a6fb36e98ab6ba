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
)

// Runner runs the criterion once (loop.Verifier satisfies it; the
// integration passes the sandboxed runner).
type Runner interface {
	Check(ctx context.Context, req loop.CheckRequest) (loop.CheckResult, error)
}

// Run is one criterion run, for the report: what ran, why, how long.
type Run struct {
	// Kind: "focused", "full", "confirmation", "held-out", "held-out
	// control", "held-out again".
	Kind     string        `json:"kind"`
	Command  string        `json:"command"`
	Why      string        `json:"why"`
	Duration time.Duration `json:"duration"`
	Passed   bool          `json:"passed"`
	ExitCode int           `json:"exit_code"`
}

// Verdict is the held-out check's answer.
type Verdict string

// The verdicts.
const (
	// NotNeeded: the iteration changed product source only (or its check
	// failed): nothing to hold out.
	NotNeeded Verdict = "not-needed"
	// Passed: the original tests pass with the iteration's product source;
	// its other edits are reported and do not veto.
	Passed Verdict = "passed"
	// Failed: the iteration's pass depended on its edits to tests or their
	// machinery.
	Failed Verdict = "failed"
	// Inconclusive: the iteration's own tree did not pass in the scratch
	// setup either (a dependency the scratch tree lacks), or the held-out
	// run flipped: reported for a person, no veto.
	Inconclusive Verdict = "inconclusive"
)

// Result is what the held-out check found.
type Result struct {
	Verdict Verdict
	// Reason says the verdict in a sentence for the report.
	Reason string
	// Changes are the paths where the held-out tree differs from the
	// iteration's: what the agent changed besides product source.
	Changes []Change
	// HeldOut is the run on the held-out tree (the last one, when it ran
	// twice); Control the run on the iteration's own tree in the same
	// scratch setup (only after a held-out failure).
	HeldOut *loop.CheckResult
	Control *loop.CheckResult
	Runs    []Run
	// TaskEditsTests is copied from the request: a failure is then a
	// warning for a person.
	TaskEditsTests bool
}

// Request is one held-out check.
type Request struct {
	// Base is the baseline commit (or tree); Iteration the iteration's
	// staged tree (or commit), both in the trusted object store.
	Base, Iteration string
	// Deps is the criterion with what it depends on (Command is run).
	Deps CriterionDeps
	// Workdir is the criterion's directory, relative to the root.
	Workdir string
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
	plan, err := MakePlan(ctx, c.Objects, req.Base, req.Iteration, req.Deps)
	if err != nil {
		return res, fmt.Errorf("planning the held-out tree: %w", err)
	}
	res.Changes = plan.Changes
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
	held, run, err := c.run(ctx, req, heldDir, "held-out", why)
	if err != nil {
		return res, err
	}
	res.Runs = append(res.Runs, run)
	res.HeldOut = &held
	if held.Passed {
		res.Verdict = Passed
		res.Reason = "the original tests pass with the iteration's product source alone"
		return res, nil
	}
	// Control: the iteration's own tree, built and run the same way.
	ctrlPlan, err := MakePlan(ctx, c.Objects, req.Iteration, req.Iteration, req.Deps)
	if err != nil {
		return res, fmt.Errorf("planning the control tree: %w", err)
	}
	ctrlDir := filepath.Join(root, "control")
	opts.Dir = ctrlDir
	if err := ctrlPlan.Build(ctx, c.Objects, opts); err != nil {
		return res, fmt.Errorf("writing the control tree: %w", err)
	}
	ctrl, run, err := c.run(ctx, req, ctrlDir, "held-out control", "the held-out run failed: does the iteration's own tree pass outside the work tree?")
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
	again, run, err := c.run(ctx, req, heldDir, "held-out again", "the held-out run failed and the control passed: once more, to rule out a flaky test")
	if err != nil {
		return res, err
	}
	res.Runs = append(res.Runs, run)
	if again.Passed {
		res.Verdict = Inconclusive
		res.Reason = "the held-out run failed once and passed once: the original tests are flaky here"
		return res, nil
	}
	res.HeldOut = &again
	res.Verdict = Failed
	res.Reason = "with the original " + describeChanges(plan.Changes) + " the criterion fails; the iteration's check passed only with its own edits to them"
	return res, nil
}

func (c *Checker) run(ctx context.Context, req Request, dir, kind, why string) (loop.CheckResult, Run, error) {
	if req.Output != nil {
		fmt.Fprintf(req.Output, "\n--- %s run (%s): %s\n", kind, why, req.Deps.Command)
	}
	env := append([]string(nil), req.Env...)
	env = append(env, c.scratchEnv(dir)...)
	start := time.Now()
	res, err := c.Runner.Check(ctx, loop.CheckRequest{
		Command: req.Deps.Command, Dir: filepath.Join(dir, filepath.FromSlash(req.Workdir)),
		Env: env, Timeout: req.Timeout, Output: req.Output,
	})
	if err != nil {
		return res, Run{}, fmt.Errorf("running the %s check: %w", kind, err)
	}
	d := res.Duration
	if d == 0 {
		d = time.Since(start)
	}
	return res, Run{Kind: kind, Command: req.Deps.Command, Why: why, Duration: d, Passed: res.Passed, ExitCode: res.ExitCode}, nil
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
