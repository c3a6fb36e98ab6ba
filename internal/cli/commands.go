package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/action"
	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/criteria"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/verify"
)

func init() {
	register(subcommand{name: "run", usage: "run [flags] TASK", summary: "run a loop until the completion command passes", run: (*Command).runCmd})
	register(subcommand{name: "infer", usage: "infer [--format yaml|json] [--verify] TASK", summary: "show the completion command agent-loop would use, with its evidence (--verify: run it once to show it runs the tests)", run: (*Command).inferCmd})
	register(subcommand{name: "status", usage: "status [--all] [--check-stale] [--format text|json] [LOOP_ID]", summary: "list loops, or show one", run: (*Command).statusCmd})
	register(subcommand{name: "attach", usage: "attach LOOP_ID", summary: "follow a running loop's output", run: (*Command).attachCmd})
	register(subcommand{name: "pause", usage: "pause LOOP_ID", summary: "pause a running loop after its current iteration", run: (*Command).pauseCmd})
	register(subcommand{name: "resume", usage: "resume [--approve|--reject] LOOP_ID", summary: "continue a paused or crashed loop", run: (*Command).resumeCmd})
	register(subcommand{name: "abort", usage: "abort LOOP_ID", summary: "stop a loop for good", run: (*Command).abortCmd})
	register(subcommand{name: "report", usage: "report [--format text|md|json] LOOP_ID", summary: "print a loop's report", run: (*Command).reportCmd})
	register(subcommand{name: "demo", usage: "demo [--keep]", summary: "run a real loop on a bundled project with a scripted agent (no API key)", run: (*Command).demoCmd})
	register(subcommand{name: "action", usage: "action", summary: "the GitHub Action's main step (run by action.yml)",
		run: func(c *Command, ctx context.Context, _ []string) error {
			return exitWith(action.Main(ctx, c.io(), c.getenv, c.Stdout))
		}})
	register(subcommand{name: "version", usage: "version", summary: "print the version",
		run: func(c *Command, _ context.Context, _ []string) error {
			fmt.Fprintf(c.Stdout, "agent-loop %s\n", c.version())
			return nil
		}})
}

func (c *Command) runCmd(ctx context.Context, args []string) error {
	settings := spec.Defaults(spec.DoorCLI)
	fs, dir := c.flags("run", "run [flags] TASK", spec.Params())
	spec.Flags(fs, &settings, spec.Params())
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("run takes one TASK argument, got %d (%q); quote the task, and put flags before it", fs.NArg(), fs.Args())
	}
	settings.Start.Dir = *dir
	if fs.NArg() == 1 {
		settings.Set(spec.DoorCLI, "task", strings.TrimSpace(fs.Arg(0)))
	}
	v, err := spec.Validate(settings, spec.DoorCLI)
	if err != nil {
		return app.ProblemList(err)
	}
	res, err := app.Run(ctx, v, c.io(), app.Hooks{})
	return c.finishRun(res, err)
}

// notCompleted is a loop that ended without its criterion verified: exit 1.
type notCompleted struct{ reason string }

func (e *notCompleted) Error() string { return "not completed: " + e.reason }

func (c *Command) finishRun(res *app.RunResult, err error) error {
	if res != nil {
		fmt.Fprintf(c.Stdout, "\n%s\n", res.Report)
		fmt.Fprintf(c.Stdout, "State: %s\n", res.Dir.Rel("state.json"))
	}
	if err != nil {
		return err
	}
	if !res.Completed() {
		return &notCompleted{reason: res.Outcome.StopReason}
	}
	return nil
}

func (c *Command) inferCmd(ctx context.Context, args []string) error {
	fs, dir := c.flags("infer", "infer [--format yaml|json] [--verify [--verify-timeout MIN] [--no-setup]] [-C DIR] TASK", nil)
	format := fs.String("format", "yaml", "output `format`: yaml or json")
	doVerify := fs.Bool("verify", false, "run the proposed command (then the next candidates, until one runs the tests) once, in the repository, and report what it showed; a candidate that runs no test is refused")
	perCandidate := fs.Int("verify-timeout", 5, "with --verify: limit for one candidate's run, in `MIN`utes (its setup gets as long again; all of them at most three times this)")
	noSetup := fs.Bool("no-setup", false, "with --verify: do not run the candidates' setup commands (run them yourself first)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("infer takes one TASK argument, e.g. agent-loop infer \"fix the failing tests\"")
	}
	if *format != "yaml" && *format != "json" {
		return usagef("--format: unknown format %q (valid: yaml, json)", *format)
	}
	if *perCandidate < 1 || *perCandidate > 120 {
		return usagef("--verify-timeout: %d minutes is out of range (valid: 1 to 120)", *perCandidate)
	}
	root, err := app.RepoOrDir(*dir)
	if err != nil {
		return err
	}
	p, err := criteria.Infer(ctx, root, fs.Arg(0))
	if err != nil {
		return err
	}
	if *doVerify {
		// The harness's own verifier: the one that runs the check in a loop
		// (sh -c in the repository, the filtered environment, bounded).
		per := time.Duration(*perCandidate) * time.Minute
		fmt.Fprintf(c.Stderr, "agent-loop: verifying by running, at most %s per candidate\n", per)
		if p, err = criteria.Verify(ctx, root, p, criteria.VerifyOptions{
			Runner: &verify.Shell{ScanReports: true}, Env: process.SafeEnv(c.Environ()),
			PerCandidate: per, Total: 3 * per, NoSetup: *noSetup,
		}); err != nil {
			return err
		}
	}
	var b []byte
	if *format == "json" {
		b, err = p.JSON()
	} else {
		b, err = p.YAML()
	}
	if err != nil {
		return err
	}
	c.Stdout.Write(b)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		fmt.Fprintln(c.Stdout)
	}
	return nil
}

func (c *Command) statusCmd(ctx context.Context, args []string) error {
	fs, dir := c.flags("status", "status [--all] [--check-stale] [--format text|json] [LOOP_ID]", nil)
	var o app.StatusOptions
	fs.BoolVar(&o.All, "all", false, "list finished loops too")
	fs.BoolVar(&o.CheckStale, "check-stale", false, "also repair the registry (entries of loops that never started or have ended); loops whose process is gone are shown crashed without it")
	fs.StringVar(&o.Format, "format", "text", "output `format`: text or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("status takes at most one LOOP_ID")
	}
	o.LoopID = fs.Arg(0)
	return app.Status(*dir, o, c.io())
}

func (c *Command) oneLoop(name string, args []string) (string, string, error) {
	fs, dir := c.flags(name, name+" LOOP_ID", nil)
	if err := parse(fs, args); err != nil {
		return "", "", err
	}
	if fs.NArg() != 1 {
		return "", "", usagef("%s takes one LOOP_ID (see `agent-loop status`)", name)
	}
	return *dir, fs.Arg(0), nil
}

func (c *Command) attachCmd(ctx context.Context, args []string) error {
	dir, id, err := c.oneLoop("attach", args)
	if err != nil {
		return err
	}
	return app.Attach(ctx, dir, id, c.io())
}

func (c *Command) pauseCmd(ctx context.Context, args []string) error {
	dir, id, err := c.oneLoop("pause", args)
	if err != nil {
		return err
	}
	return app.Pause(dir, id, c.io())
}

func (c *Command) abortCmd(ctx context.Context, args []string) error {
	dir, id, err := c.oneLoop("abort", args)
	if err != nil {
		return err
	}
	return app.Abort(dir, id, c.io())
}

func (c *Command) reportCmd(ctx context.Context, args []string) error {
	fs, dir := c.flags("report", "report [--format text|md|json] LOOP_ID", nil)
	format := fs.String("format", "text", "output `format`: text (for a terminal), md (Markdown, as report.md) or json (the state)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("report takes one LOOP_ID (see `agent-loop status --all`)")
	}
	return app.Report(*dir, fs.Arg(0), *format, c.io())
}

func (c *Command) resumeCmd(ctx context.Context, args []string) error {
	ro := app.ResumeOptions{Door: spec.DoorCLI}
	fs, dir := c.flags("resume", "resume [--approve|--reject] [flags] LOOP_ID", spec.ResumeParams())
	fs.BoolVar(&ro.Approve, "approve", false, "accept the iteration a human gate stopped at")
	fs.BoolVar(&ro.Reject, "reject", false, "reject the iteration a human gate stopped at (revert it and go on)")
	// The limits, given here, change the loop's saved Spec; the rest of it
	// stays as the loop was started.
	spec.Flags(fs, &ro.Changes, spec.ResumeParams())
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("resume takes one LOOP_ID (see `agent-loop status --all`)")
	}
	if ro.Approve && ro.Reject {
		return usagef("--approve and --reject exclude each other")
	}
	res, err := app.Resume(ctx, *dir, fs.Arg(0), ro, c.io(), app.Hooks{})
	return c.finishRun(res, err)
}

func (c *Command) demoCmd(ctx context.Context, args []string) error {
	fs, _ := c.flags("demo", "demo [--keep]", nil)
	keep := fs.Bool("keep", true, "keep the demo repository (its path is printed)")
	quiet := fs.Bool("quiet", false, "print only the final report")
	if err := parse(fs, args); err != nil {
		return err
	}
	res, err := app.Demo(ctx, c.io(), app.DemoOptions{Keep: *keep, Quiet: *quiet})
	return c.finishRun(res, err)
}
