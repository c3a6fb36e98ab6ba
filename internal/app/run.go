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
	"github.com/aiwg/agent-loop/internal/gitrepo"
	"github.com/aiwg/agent-loop/internal/judge"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/provider"
	"github.com/aiwg/agent-loop/internal/redact"
	"github.com/aiwg/agent-loop/internal/report"
	"github.com/aiwg/agent-loop/internal/shellcmd"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
	"github.com/aiwg/agent-loop/internal/verify"
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
	// change: each is put back after every run of the agent and of the
	// completion command (the Action: the workflow command files).
	Protect map[string]string
}

// RunResult is what a finished run reports to its caller.
type RunResult struct {
	Outcome loop.Outcome
	State   *state.State
	Dir     state.Dir
	Report  string
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
	repo, err := gitrepo.Open(s.Start.Dir, gitrepo.Options{Remote: h.Remote, Token: h.Token, Exclude: sp.Publish.Exclude})
	if err != nil {
		return nil, problemList(append(problems, err))
	}
	root := repo.Root()
	store := state.NewStore(root)
	if _, err := store.MigrateLegacy(); err != nil {
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
	}
	secrets := harnessSecrets(o, h.Token)
	env := process.SafeEnv(o.Environ)
	agent, version, err := preflightAgent(ctx, sp.Agent, h.Script, o.Environ, env, secrets, root)
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
	dir := state.NewDir(root, loopID)
	if dir.Exists() {
		return nil, usagef("loop %s exists already; continue it with `agent-loop resume %s`, or choose another %s", loopID, loopID, door.Ref("loop-id"))
	}
	prop, err := resolveCriterion(ctx, s, door, root, o)
	if err != nil {
		return nil, err
	}
	sp.Criterion = prop.criterion
	sp.Criterion.Depends = criterionDepends(root, sp.Criterion)

	// 3. Registry: a free slot, and no active loop on the same task.
	reg, err := store.Read()
	if err != nil {
		return nil, usage(err)
	}
	if same := reg.SameTask(sp.Task); len(same) > 0 && !s.Start.Force {
		if err := confirmDuplicate(root, same, door, o); err != nil {
			return nil, err
		}
	}
	if sp.Publish.Branch == "" {
		sp.Publish.Branch = spec.DefaultBranch(loopID)
	}
	st := newState(sp, loopID, root, h.Owner)
	st.Harness.Provider = agent.Name()
	st.Harness.AgentVersion = version
	if err := store.Register(st); err != nil {
		return nil, usage(err)
	}
	crashpoint.Hit("registered")
	if err := dir.Save(st, time.Now()); err != nil {
		_ = store.Deregister(loopID)
		return nil, err
	}
	if prop.yaml != nil {
		_ = state.WriteFileAtomic(dir.ProposalPath(), prop.yaml, 0o644)
	}
	return execute(ctx, engineParts{repo: repo, agent: agent, env: env, dir: dir, store: store, st: st, io: o,
		quiet: s.Start.Quiet, secrets: secrets, hooks: h})
}

// preflightAgent builds the agent of a Spec (the scripted one when a
// script is given) and checks it can run: CLI installed, credentials, the
// model API reachable.
func preflightAgent(ctx context.Context, a spec.Agent, script *provider.Script, environ, env []string, secrets *redact.Set, root string) (loop.Agent, string, error) {
	agent, err := buildAgent(a, script, environ, secrets, filepath.Join(root, state.RootDir))
	if err != nil {
		return nil, "", err
	}
	pf, ok := agent.(loop.Preflighter)
	if !ok {
		return agent, "", nil
	}
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	version, err := pf.Preflight(pctx, env)
	return agent, version, err
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
func confirmDuplicate(root string, same []state.Entry, door spec.Door, o IO) error {
	var running, stopped []state.Entry
	for _, e := range same {
		if d := state.NewDir(root, e.LoopID); state.ValidLoopID(e.LoopID) {
			if st, err := d.Load(); err == nil {
				if _, err := markIfCrashed(root, d, st); err == nil {
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
			fmt.Fprintf(&b, "  %s — %s (%s, iteration %d/%d)\n", e.LoopID, e.Task, e.Status, e.Iteration, e.MaxIterations)
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
	dir     state.Dir
	store   *state.Store
	st      *state.State
	io      IO
	quiet   bool
	secrets *redact.Set
	hooks   Hooks
}

// execute runs the engine on a prepared state and writes the report.
func execute(ctx context.Context, p engineParts) (*RunResult, error) {
	sp := p.st.Harness.Spec
	// Tag every child with the loop id, so the processes a killed harness
	// leaves behind can be found and ended (process.KillTagged).
	p.env = process.Override(p.env, process.OwnerVar+"="+p.st.LoopID)
	if err := os.MkdirAll(filepath.Dir(p.dir.LiveLogPath()), 0o755); err != nil {
		return nil, err
	}
	live, err := os.OpenFile(p.dir.LiveLogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer live.Close()
	liveR := p.secrets.Writer(live)
	defer liveR.Close()
	var progress, agentOut io.Writer = liveR, liveR
	if !p.quiet {
		term := p.secrets.Writer(p.io.Stderr)
		defer term.Close()
		// The terminal may go away (a closed pipe): the loop goes on.
		progress = multiWriter(liveR, term)
		agentOut = progress
	}
	if err := p.repo.Seal(ctx); err != nil {
		return nil, err
	}
	// The agent could read this process's environment in /proc (the same
	// user; in a container action, root beside the harness at PID 1).
	if _, err := process.HideSecrets(); err != nil {
		fmt.Fprintf(progress, "agent-loop: warning: could not hide the harness's environment from the agent: %v\n", err)
	}
	if sp.Criterion.Setup != "" && p.st.Harness.BaseSHA == "" {
		if err := runSetup(ctx, p, progress); err != nil {
			p.st.Status = state.Failed
			p.st.Harness.StopReason = err.Error()
			now := time.Now().UTC().Truncate(time.Second)
			p.st.CompletedAt = &now
			p.st.PID = nil
			_ = p.dir.Save(p.st, time.Now())
			_ = p.store.Sync(p.st)
			return nil, err
		}
	}
	guard := newStateGuard(p.repo.Root(), p.dir, progress, p.hooks.Protect)
	if ownProcess() {
		// Processes that escape the agent's process group become this
		// process's children, and die when the agent's run ends.
		if err := process.AdoptOrphans(); err != nil {
			fmt.Fprintf(progress, "agent-loop: warning: %v; a process the agent leaves behind may outlive its iteration\n", err)
		}
		guard.killStrays = true
	}
	eng := &loop.Engine{
		Agent: &guardedAgent{Agent: p.agent, g: guard}, Verifier: &guardedVerifier{Verifier: &verify.Shell{ScanReports: true}, g: guard}, Repo: p.repo,
		Judge: judge.New(judge.Options{Depends: shellcmd.Depends(sp.Criterion.Depends)}),
		Dir:   p.dir, Registry: p.store, Observer: p.hooks.Observer,
		Env: p.env, Out: progress, AgentOut: agentOut, Tuning: p.hooks.Tuning,
		Redact: func(w io.Writer) io.WriteCloser { return p.secrets.Writer(w) },
	}
	out, err := eng.Run(ctx, p.st)
	st, lerr := p.dir.Load()
	if lerr != nil || err != nil {
		// The engine's own view: the last save may be what failed.
		st = p.st
	}
	if errors.Is(err, syscall.ENOSPC) {
		err = fmt.Errorf("%w\nThe disk is full: the state from before the fault is kept; free some space, then continue the loop "+
			"(`agent-loop resume %s`; in GitHub Actions, re-run the workflow)", err, st.LoopID)
	}
	rep := report.Render(st, report.Options{Target: report.CLI, Resume: "`agent-loop resume " + st.LoopID + "`"})
	_ = state.WriteFileAtomic(p.dir.ReportPath(), []byte(rep), 0o644)
	res := &RunResult{Outcome: out, State: st, Dir: p.dir, Report: rep}
	if err != nil {
		return res, err
	}
	if out.ConfigError != nil {
		return res, &UsageError{Err: out.ConfigError}
	}
	return res, nil
}

func runSetup(ctx context.Context, p engineParts, out io.Writer) error {
	c := p.st.Harness.Spec.Criterion
	fmt.Fprintf(out, "agent-loop: setup: %s\n", c.Setup)
	logPath := p.dir.File("logs", "setup.log")
	f, err := os.Create(logPath)
	if err != nil {
		return err
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
