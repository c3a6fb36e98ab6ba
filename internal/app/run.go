package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aiwg/agent-loop/internal/crashpoint"
	"github.com/aiwg/agent-loop/internal/escape"
	"github.com/aiwg/agent-loop/internal/gitrepo"
	"github.com/aiwg/agent-loop/internal/judge"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/protected"
	"github.com/aiwg/agent-loop/internal/provider"
	"github.com/aiwg/agent-loop/internal/redact"
	"github.com/aiwg/agent-loop/internal/report"
	"github.com/aiwg/agent-loop/internal/safefs"
	"github.com/aiwg/agent-loop/internal/sandbox"
	"github.com/aiwg/agent-loop/internal/shellcmd"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
	"github.com/aiwg/agent-loop/internal/verify"
	"github.com/aiwg/agent-loop/internal/weaken"
)

// Hooks are what a door (the Action) or a test adds to a run that is not
// part of the loop's Spec: adapters' credentials, an observer, a script.
type Hooks struct {
	Observer loop.Observer
	Token    string // push token (the Action)
	Remote   string // push remote (default origin)
	Script   *provider.Script
	Owner    string
	// Tuning shortens the engine's own constants (tests).
	Tuning loop.Tuning
	// Protect names files (path -> name) that no code of the agent may
	// read or write (the Action: the workflow command files): the sandbox
	// takes them out of its user's reach for the loop.
	Protect map[string]string
	// TaskFromComment says the task is a trigger comment's words (the
	// completion hint always is): a check they name came from the comment
	// (the criterion's source "trigger").
	TaskFromComment bool
	// Repo is the repository the caller opened already (the Action, which
	// checks out and publishes with it): the loop uses it instead of
	// opening the work tree a second time, so one record of the branches
	// and one trusted store govern the whole step.
	Repo *gitrepo.Repo
}

// openRepo is the caller's repository, or the work tree at dir opened.
func (h Hooks) openRepo(dir string) (*gitrepo.Repo, error) {
	if h.Repo != nil {
		return h.Repo, nil
	}
	return gitrepo.Open(dir, gitrepo.Options{Remote: h.Remote, Token: h.Token})
}

// RunResult is what a finished run reports to its caller.
type RunResult struct {
	Outcome loop.Outcome
	State   *state.State
	// Dir is the live copy of the loop directory (the state ref and the
	// artifact are made from it); Seed is its copy in the work tree.
	Dir    state.Dir
	Seed   state.Dir
	Report string
}

// Completed reports whether the loop completed: its criterion verified.
func (r *RunResult) Completed() bool { return r != nil && r.Outcome.Status == state.Completed }

// Run starts a new loop. v was validated by its door: nothing here checks
// or defaults a parameter again; what Run adds to the Spec is what only a
// start can resolve (the criterion, the branch name from the loop id).
func Run(ctx context.Context, v spec.Validated, o IO, h Hooks) (*RunResult, error) {
	s, door := v.Settings(), v.Door()
	sp := s.Spec
	// 1. Preflight: every problem at once.
	var problems []error
	repo, err := h.openRepo(s.Start.Dir)
	if err != nil {
		return nil, problemList(append(problems, err))
	}
	root := repo.Root()
	pl, err := placesOf(root, o.Environ)
	if err != nil {
		return nil, problemList(append(problems, err))
	}
	if _, err := state.NewStore(root).MigrateLegacy(); err != nil {
		problems = append(problems, err)
	}
	// A credential in the repository's git configuration (a persisted
	// checkout token) is the agent's to read: refused before anything runs.
	if err := repo.CheckCredentials(); err != nil {
		problems = append(problems, err)
	}
	if err := repo.Exclude(ctx, ".aiwg/"); err != nil {
		problems = append(problems, fmt.Errorf("adding .aiwg/ to .git/info/exclude: %w", err))
	}
	if !s.Start.AllowDirty {
		dirty, err := repo.Dirty(ctx)
		if err != nil {
			problems = append(problems, err)
		} else if len(dirty) > 0 {
			problems = append(problems, fmt.Errorf("the work tree has uncommitted changes (%s); commit or stash them, or pass %s to let the loop start from them", listSome(dirty, 5), door.Ref("allow-dirty")))
		}
	} else if set, err := protected.Compile(sp.Publish.Protected); err == nil && len(sp.Publish.Protected) > 0 {
		// The loop reverts changes to protected paths to the last commit:
		// uncommitted ones of the user's would be lost with them.
		dirty, err := repo.Dirty(ctx)
		var hit []string
		for _, p := range dirty {
			if _, ok := set.Match(p); ok {
				hit = append(hit, p)
			}
		}
		if err != nil {
			problems = append(problems, err)
		} else if len(hit) > 0 {
			problems = append(problems, fmt.Errorf("the work tree has uncommitted changes to protected paths (%s), which the loop would revert; commit or stash them, or leave them out of %s", listSome(hit, 5), door.Ref("protected-paths")))
		}
	}
	secrets := harnessSecrets(o, h.Token)
	env := process.SafeEnv(o.Environ)
	agentName, version, err := preflightAgent(ctx, sp.Agent, h.Script, o.Environ, env, secrets)
	if err != nil {
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		return nil, problemList(problems)
	}

	// 2. The loop's id and the criterion.
	loopID := s.Start.LoopID
	if loopID == "" {
		loopID = state.NewLoopID(sp.Task)
	}
	if pl.live(loopID).Exists() || pl.seed(loopID).Exists() {
		return nil, usagef("loop %s exists already; continue it with `agent-loop resume %s`, or choose another %s", loopID, loopID, door.Ref("loop-id"))
	}
	prop, err := resolveCriterion(ctx, s, door, root, o, h.TaskFromComment)
	if err != nil {
		return nil, err
	}
	sp.Criterion = prop.criterion
	sp.Criterion.Depends = criterionDepends(root, sp.Criterion)

	// 3. Registry: a free slot, and no active loop on the same task.
	store := pl.store()
	reg, err := store.Read()
	if err != nil {
		return nil, usage(err)
	}
	if same := reg.SameTask(sp.Task); len(same) > 0 && !s.Start.Force {
		if err := confirmDuplicate(pl, same, door, o); err != nil {
			return nil, err
		}
	}
	if sp.Publish.Branch == "" {
		sp.Publish.Branch = spec.DefaultBranch(loopID)
	}

	// 4. The sandbox: from here on the work tree is the sandbox user's
	// (as root) and the live state is in the private directory.
	sb, boxLog, agent, err := boxAgent(pl, h, sp.Agent, o.Environ, env, secrets)
	if err != nil {
		return nil, err
	}
	st := newState(sp, loopID, root, h.Owner)
	st.Harness.Provider = agentName
	st.Harness.AgentVersion = version
	if err := store.Register(st); err != nil {
		closeSandbox(sb, nil)
		return nil, usage(err)
	}
	crashpoint.Hit("registered")
	dir := pl.live(loopID)
	if err := dir.Save(st, time.Now()); err != nil {
		_ = store.Deregister(loopID)
		closeSandbox(sb, nil)
		return nil, err
	}
	if prop.yaml != nil {
		_ = state.WriteFileAtomic(dir.ProposalPath(), prop.yaml, 0o644)
	}
	return execute(ctx, engineParts{repo: repo, agent: agent, env: env, places: pl, dir: dir, store: store, st: st, io: o,
		quiet: s.Start.Quiet, secrets: secrets, hooks: h, sb: sb, boxLog: boxLog})
}

// agentDir is where the agent CLI keeps its configuration across
// iterations: the sandbox's (its user writes it), or the private
// directory when there is no sandbox.
func agentDir(sb *sandbox.Sandbox, pl places) string {
	if sb != nil {
		return sb.AgentDir()
	}
	return filepath.Join(pl.private, state.RootDir)
}

// closeSandbox ends the sandbox (sweep, the work tree given back) and
// says what went wrong on out.
func closeSandbox(sb *sandbox.Sandbox, out io.Writer) {
	if sb == nil {
		return
	}
	if err := sb.Close(); err != nil && out != nil {
		fmt.Fprintf(out, "agent-loop: warning: closing the sandbox: %v\n", err)
	}
}

// preflightAgent checks that the agent of a Spec can run (CLI installed,
// credentials, the model API reachable) and returns its name and version.
// The agent that runs the loop is built afterwards, with the sandbox's
// directory for its configuration.
func preflightAgent(ctx context.Context, a spec.Agent, script *provider.Script, environ, env []string, secrets *redact.Set) (string, string, error) {
	agent, err := buildAgent(a, script, environ, secrets, "")
	if err != nil {
		return "", "", err
	}
	pf, ok := agent.(loop.Preflighter)
	if !ok {
		return agent.Name(), "", nil
	}
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	version, err := pf.Preflight(pctx, env)
	return agent.Name(), version, err
}

func listSome(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + fmt.Sprintf(" and %d more", len(xs)-n)
}

// newState is a new loop's state: its Spec, and who runs it.
func newState(sp spec.Spec, loopID, root, owner string) *state.State {
	pid := os.Getpid()
	if owner == "" {
		if u, err := user.Current(); err == nil {
			owner = u.Username
		}
	}
	st := &state.State{
		Version: state.Version, LoopID: loopID, Status: state.Running,
		StartedAt: time.Now().UTC().Truncate(time.Second), Owner: owner, PID: &pid, WorkingDirectory: root,
		Configuration:    state.Configuration{Interactive: false, AutoTest: true, CheckpointInterval: 1, ExecutionMode: "default"},
		Progress:         state.Progress{CompletionChecks: []state.Check{}},
		IterationHistory: []state.IterationEntry{}, RegressionEvents: []state.RegressionEvent{},
		ReinforcementLevel: "MINIMAL", ReinforcementHistory: []state.ReinforcementChange{},
		RecoveryHistory: []state.Recovery{}, DetectedPatterns: []state.DetectedPattern{},
		Harness: state.Harness{Host: state.Hostname(), PIDStart: state.ProcessStart(pid)},
	}
	st.SetSpec(sp)
	return st
}

// confirmDuplicate handles active loops with the same task (seed 002). A
// loop whose process is gone is marked crashed first, and then offered
// for `resume`, not described as running.
func confirmDuplicate(pl places, same []state.Entry, door spec.Door, o IO) error {
	var running, stopped []state.Entry
	for _, e := range same {
		if state.ValidLoopID(e.LoopID) {
			d := pl.find(e.LoopID)
			if st, err := d.Load(); err == nil {
				if _, err := markIfCrashed(pl, d, st); err == nil {
					e.Status = st.Status
				}
			}
		}
		if e.Status == state.Running || e.Status == state.Completing {
			running = append(running, e)
		} else {
			stopped = append(stopped, e)
		}
	}
	var b strings.Builder
	if len(running) == 0 {
		e := stopped[0]
		why := "it is " + string(e.Status)
		if e.Status == state.Crashed {
			why = "it crashed: its process is gone"
		}
		fmt.Fprintf(&b, "A loop for the same task is stopped (%s, after iteration %d of %d): %s\n\n", e.LoopID, e.Iteration, e.MaxIterations, why)
		b.WriteString("Options:\n")
		fmt.Fprintf(&b, "  1. Continue it:       agent-loop resume %s\n", e.LoopID)
		fmt.Fprintf(&b, "  2. Abort it:          agent-loop abort %s\n", e.LoopID)
		fmt.Fprintf(&b, "  3. Start a new loop anyway: add %s\n", door.Ref("force"))
	} else {
		b.WriteString("An existing loop is running for the same task.\n\nActive loops:\n")
		for _, e := range same {
			fmt.Fprintf(&b, "  %s — %s (%s, iteration %d/%d)\n", e.LoopID, escape.Terminal(e.Task), e.Status, e.Iteration, e.MaxIterations)
		}
		b.WriteString("\nOptions:\n")
		fmt.Fprintf(&b, "  1. Attach to it:     agent-loop attach %s\n", running[0].LoopID)
		fmt.Fprintf(&b, "  2. Abort it:         agent-loop abort %s\n", running[0].LoopID)
		fmt.Fprintf(&b, "  3. Start a new loop anyway: add %s\n", door.Ref("force"))
	}
	if !o.Interactive {
		return usagef("%s", b.String())
	}
	fmt.Fprintf(o.Stderr, "%s\nStart a new loop anyway? [y/N] ", b.String())
	if a := strings.ToLower(strings.TrimSpace(readLine(o.Stdin))); a == "y" || a == "yes" {
		return nil
	}
	return usagef("not started: a loop with the same task exists (%s)", same[0].LoopID)
}

type engineParts struct {
	repo    *gitrepo.Repo
	agent   loop.Agent
	env     []string
	places  places
	dir     state.Dir // the live copy of the loop directory
	store   *state.Store
	st      *state.State
	io      IO
	quiet   bool
	secrets *redact.Set
	hooks   Hooks
	sb      *sandbox.Sandbox // nil: none (weakened)
	boxLog  *lateWriter      // the sandbox's log: held until the loop's log exists
}

// execute runs the engine on a prepared state, in the sandbox, and writes
// the report. It closes the sandbox on every way out.
func execute(ctx context.Context, p engineParts) (res *RunResult, err error) {
	sp := p.st.Harness.Spec
	seed := p.places.seed(p.st.LoopID)
	mirror := p.places.mirror(p.st.LoopID)
	progress, agentOut, closeLog, err := p.openProgress()
	if err != nil {
		closeSandbox(p.sb, nil)
		return nil, err
	}
	defer closeLog()
	p.boxLog.attach(progress)
	defer func() {
		// The seed copy is written from the live one last, after the final
		// sweep of the last run; then the work tree is given back.
		if mirror != nil {
			if merr := mirror.Sync(); merr != nil {
				fmt.Fprintf(progress, "agent-loop: warning: writing the seed copy of the loop state: %v\n", merr)
			}
		}
		closeSandbox(p.sb, progress)
		p.boxLog.detach()
	}()
	if p.sb == nil {
		fmt.Fprintf(progress, "agent-loop: containment: none (%s=%s)\n", weaken.EnvVar, weaken.Active())
	}
	// Tag every child with the loop id, so the processes a killed harness
	// leaves behind can be found and ended (process.KillTagged; as root,
	// the next sandbox ends what its user left).
	p.env = process.Override(p.env, process.OwnerVar+"="+p.st.LoopID)
	if err := p.repo.Seal(ctx); err != nil {
		return nil, err
	}
	// Where Landlock is missing, a process of the harness's own user could
	// read this process's environment in /proc: the harness is not dumpable.
	if _, err := process.HideSecrets(); err != nil {
		fmt.Fprintf(progress, "agent-loop: warning: could not hide the harness's environment from the agent: %v\n", err)
	}
	jctx := jailed(ctx, p.sb)
	if sp.Criterion.Setup != "" && p.st.Harness.BaseSHA == "" {
		if err := runSetup(jctx, p, progress); err != nil {
			p.st.Status = state.Failed
			p.st.Harness.StopReason, p.st.Harness.StopKind = err.Error(), state.StopError
			now := time.Now().UTC().Truncate(time.Second)
			p.st.CompletedAt = &now
			p.st.PID = nil
			_ = p.dir.Save(p.st, time.Now())
			_ = p.store.Sync(p.st)
			return nil, err
		}
	}
	agent := p.agent
	if mirror != nil {
		agent = &seeded{Agent: p.agent, m: mirror, live: p.dir.Path(), seed: seed.Path(), log: progress}
	}
	verifier := &verify.Shell{ScanReports: true}
	place, cleanPlace, err := newHeldOutPlace(p.sb)
	if err != nil {
		return nil, err
	}
	defer cleanPlace()
	eng := &loop.Engine{
		Agent: agent, Verifier: verifier, Repo: p.repo,
		Planner: newPlanner(sp, p.repo, verifier, place),
		Judge:   judge.New(judge.Options{Depends: shellcmd.Depends(sp.Criterion.Depends)}),
		Dir:     p.dir, Registry: p.store, Observer: p.hooks.Observer,
		Env: p.env, Out: progress, AgentOut: agentOut, Tuning: p.hooks.Tuning,
		Redact:      func(w io.Writer) io.WriteCloser { return p.secrets.Writer(w) },
		CommitWords: report.CommitWords,
	}
	out, err := eng.Run(jctx, p.st)
	st, lerr := p.dir.Load()
	if lerr != nil || err != nil {
		// The engine's own view: the last save may be what failed.
		st = p.st
	}
	if errors.Is(err, syscall.ENOSPC) {
		err = fmt.Errorf("%w\nThe disk is full: the state from before the fault is kept; free some space, then continue the loop "+
			"(`agent-loop resume %s`; in GitHub Actions, re-run the workflow)", err, st.LoopID)
	}
	// report.md is the report in Markdown (as the step summary shows it);
	// the terminal gets the same report as text.
	_ = state.WriteFileAtomic(p.dir.ReportPath(), []byte(report.Render(st, report.Options{Target: report.Summary})), 0o644)
	rep := report.Render(st, report.Options{Target: report.CLI})
	res = &RunResult{Outcome: out, State: st, Dir: p.dir, Seed: seed, Report: rep}
	if err != nil {
		return res, err
	}
	if out.ConfigError != nil {
		return res, &UsageError{Err: out.ConfigError}
	}
	return res, nil
}

// openProgress opens the loop's log (in the live copy) and the writers of
// the loop's progress and of the agent's output: the log, and the terminal
// unless quiet, through the redactor and, for the terminal, the escaper.
// closeLog flushes and closes them.
func (p engineParts) openProgress() (progress, agentOut io.Writer, closeLog func(), err error) {
	if err := os.MkdirAll(filepath.Dir(p.dir.LiveLogPath()), 0o755); err != nil {
		return nil, nil, nil, err
	}
	live, err := safefs.OpenLog(p.dir.LiveLogPath())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening the loop's log: %w", err)
	}
	liveR := p.secrets.Writer(live)
	closers := []io.Closer{liveR, live}
	progress = liveR
	if !p.quiet {
		// The agent's output and the lines that quote its names reach a
		// person's terminal: every control sequence but colour is shown,
		// not sent.
		esc := terminal(p.io.Stderr)
		term := p.secrets.Writer(esc)
		closers = append([]io.Closer{term, esc}, closers...)
		// The terminal may go away (a closed pipe): the loop goes on.
		progress = multiWriter(liveR, term)
	}
	return progress, progress, func() {
		for _, c := range closers {
			_ = c.Close()
		}
	}, nil
}

func runSetup(ctx context.Context, p engineParts, out io.Writer) error {
	c := p.st.Harness.Spec.Criterion
	fmt.Fprintf(out, "agent-loop: setup: %s\n", c.Setup)
	logPath := p.dir.File("logs", "setup.log")
	f, err := safefs.OpenRewrite(logPath)
	if err != nil {
		return fmt.Errorf("opening %s: %w", p.dir.Rel("logs", "setup.log"), err)
	}
	defer f.Close()
	w := multiWriter(f, out)
	res, err := process.Run(ctx, process.Spec{Path: "sh", Args: []string{"-c", c.Setup}, Dir: filepath.Join(p.repo.Root(), c.Workdir),
		Env: p.env, Stdout: w, Stderr: w, Timeout: 30 * time.Minute})
	if err != nil {
		return fmt.Errorf("setup %q: %w", c.Setup, err)
	}
	if res.ExitCode != 0 || res.Stopped() {
		return fmt.Errorf("setup %q failed with exit code %d (see %s)", c.Setup, res.ExitCode, p.dir.Rel("logs", "setup.log"))
	}
	return nil
}
