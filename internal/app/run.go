package app

import (
	"bufio"
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

	"github.com/aiwg/agent-loop/internal/config"
	"github.com/aiwg/agent-loop/internal/crashpoint"
	"github.com/aiwg/agent-loop/internal/criteria"
	"github.com/aiwg/agent-loop/internal/gitrepo"
	"github.com/aiwg/agent-loop/internal/judge"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/provider"
	"github.com/aiwg/agent-loop/internal/redact"
	"github.com/aiwg/agent-loop/internal/report"
	"github.com/aiwg/agent-loop/internal/shellcmd"
	"github.com/aiwg/agent-loop/internal/state"
	"github.com/aiwg/agent-loop/internal/verify"
)

// Hooks lets the Action and tests adjust a run without a second code path.
type Hooks struct {
	Observer loop.Observer
	Exclude  []string // extra paths kept out of commits
	Token    string   // push token (action mode)
	Remote   string   // push remote (default origin)
	Script   *provider.Script
	// Criterion, when set, is an already resolved proposal (action mode).
	Proposal *criteria.Proposal
	Owner    string
	Tune     func(*loop.Options)
	// Protect names files (path -> name) that no code of the agent may
	// change: each is put back after every run of the agent and of the
	// completion command (action mode: the workflow command files).
	Protect map[string]string
}

// RunResult is what a finished run reports to its caller.
type RunResult struct {
	Outcome loop.Outcome
	State   *state.State
	Dir     state.Dir
	Report  string
}

// Run starts a new loop from cfg.
func Run(ctx context.Context, cfg config.Config, o IO, h Hooks) (*RunResult, error) {
	cfg.Provider = config.NormalizeProvider(cfg.Provider)
	// 1. Preflight: every problem at once.
	var problems []error
	valid := true
	check := cfg
	if h.Script != nil {
		// The scripted provider (demo, replay) needs no CLI nor command.
		check.Provider, check.AgentCommand = "command", "scripted"
	}
	if err := config.Validate(check); err != nil {
		problems = append(problems, err)
		valid = false
	}
	repo, err := gitrepo.Open(cfg.Dir, gitrepo.Options{Remote: h.Remote, Token: h.Token, Exclude: h.Exclude})
	if err != nil {
		problems = append(problems, err)
		return nil, problemList(problems)
	}
	root := repo.Root()
	store := state.NewStore(root)
	if _, err := store.MigrateLegacy(); err != nil {
		problems = append(problems, err)
	}
	if err := repo.Exclude(ctx, ".aiwg/"); err != nil {
		problems = append(problems, fmt.Errorf("adding .aiwg/ to .git/info/exclude: %w", err))
	}
	if !cfg.AllowDirty {
		dirty, err := repo.Dirty(ctx)
		if err != nil {
			problems = append(problems, err)
		} else if len(dirty) > 0 {
			problems = append(problems, fmt.Errorf("the work tree has uncommitted changes (%s); commit or stash them, or pass --allow-dirty to let the loop start from them", listSome(dirty, 5)))
		}
	}
	secrets := harnessSecrets(o, h.Token)
	spec := agentSpec{Provider: cfg.Provider, AgentCommand: cfg.AgentCommand, Model: cfg.Model, MaxTurns: cfg.MaxTurns, Args: cfg.AgentArgs, Script: h.Script}
	if h.Script != nil {
		spec.Provider = "scripted"
	}
	env := process.SafeEnv(o.Environ)
	var agent loop.Agent
	version := ""
	if valid {
		agent, err = buildAgent(spec, o.Environ, secrets, filepath.Join(root, state.RootDir))
	}
	if err != nil {
		problems = append(problems, err)
	} else if pf, ok := agent.(loop.Preflighter); ok {
		pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		version, err = pf.Preflight(pctx, env)
		cancel()
		if err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		return nil, problemList(problems)
	}

	// 2. The criterion.
	loopID := cfg.LoopID
	if loopID == "" {
		loopID = state.NewLoopID(cfg.Task)
	}
	dir := state.NewDir(root, loopID)
	if dir.Exists() {
		return nil, usagef("loop %s exists already; continue it with `agent-loop resume %s`, or choose another --loop-id", loopID, loopID)
	}
	prop, source, err := resolveCriterion(ctx, cfg, root, o, h)
	if err != nil {
		return nil, err
	}

	// 3. Registry: a free slot, and no active loop on the same task.
	reg, err := store.Read()
	if err != nil {
		return nil, usage(err)
	}
	if same := reg.SameTask(cfg.Task); len(same) > 0 && !cfg.Force {
		if err := confirmDuplicate(same, o); err != nil {
			return nil, err
		}
	}
	branch := cfg.Branch
	if branch == "" {
		branch = "agent-loop/" + loopID
	}
	st := newState(cfg, loopID, root, h.Owner)
	st.CompletionCriteria = prop.Command
	st.Harness.Provider = agent.Name()
	st.Harness.AgentVersion = version
	st.Harness.Workdir = prop.Workdir
	st.Harness.Setup = prop.Setup
	st.Harness.CriterionSource = source
	st.Harness.Confidence = prop.Confidence
	if source != "inferred" {
		st.Harness.Confidence = "given"
	}
	st.Harness.Evidence = evidence(prop)
	st.Harness.Commit = !cfg.NoCommit
	st.Harness.Push = cfg.Push
	st.Harness.Branch = ""
	if err := store.Register(st); err != nil {
		return nil, usage(err)
	}
	crashpoint.Hit("registered")
	if err := dir.Save(st, time.Now()); err != nil {
		_ = store.Deregister(loopID)
		return nil, err
	}
	if source == "inferred" {
		if y, err := prop.YAML(); err == nil {
			_ = state.WriteFileAtomic(dir.ProposalPath(), y, 0o644)
		}
	}
	opts := loopOptions(cfg, prop, branch)
	if h.Tune != nil {
		h.Tune(&opts)
	}
	return execute(ctx, engineParts{repo: repo, agent: agent, env: env, dir: dir, store: store, st: st, opts: opts, io: o, quiet: cfg.Quiet, secrets: secrets, hooks: h, setup: prop.Setup})
}

func listSome(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + fmt.Sprintf(" and %d more", len(xs)-n)
}

func newState(cfg config.Config, loopID, root, owner string) *state.State {
	pid := os.Getpid()
	tm := int(cfg.Timeout / time.Minute)
	if owner == "" {
		if u, err := user.Current(); err == nil {
			owner = u.Username
		}
	}
	return &state.State{
		Version: state.Version, LoopID: loopID, Status: state.Running, Task: cfg.Task,
		StartedAt: time.Now().UTC().Truncate(time.Second), Owner: owner, PID: &pid, WorkingDirectory: root,
		Configuration: state.Configuration{MaxIterations: cfg.MaxIterations, TimeoutMinutes: &tm, Interactive: false,
			AutoTest: true, CheckpointInterval: 1, ExecutionMode: "default"},
		Progress:         state.Progress{CompletionChecks: []state.Check{}},
		IterationHistory: []state.IterationEntry{}, RegressionEvents: []state.RegressionEvent{},
		ReinforcementLevel: "MINIMAL", ReinforcementHistory: []state.ReinforcementChange{},
		RecoveryHistory: []state.Recovery{}, DetectedPatterns: []state.DetectedPattern{},
		Harness: state.Harness{
			Host: state.Hostname(), PIDStart: state.ProcessStart(pid), Model: cfg.Model, AgentCommand: cfg.AgentCommand,
			BudgetUSD: cfg.BudgetUSD, MaxTokens: cfg.MaxTokens, IterationTimeoutMinutes: int(cfg.IterationTimeout / time.Minute),
			RegressionPolicy: cfg.RegressionPolicy, ConfirmRuns: cfg.ConfirmRuns,
		},
	}
}

func loopOptions(cfg config.Config, prop criteria.Proposal, branch string) loop.Options {
	return loop.Options{
		Task: cfg.Task, Criterion: prop.Command, Workdir: prop.Workdir,
		MaxIterations: cfg.MaxIterations, Timeout: cfg.Timeout, IterationTimeout: cfg.IterationTimeout,
		IdleTimeout: cfg.IdleTimeout, CheckTimeout: cfg.CheckTimeout,
		Commit: !cfg.NoCommit, Push: cfg.Push, Branch: branch,
		BudgetUSD: cfg.BudgetUSD, MaxTokens: cfg.MaxTokens, ConfirmRuns: cfg.ConfirmRuns,
		RegressionPolicy: cfg.RegressionPolicy, Model: cfg.Model, MaxTurns: cfg.MaxTurns,
	}
}

func evidence(p criteria.Proposal) []string {
	var out []string
	for _, f := range p.Rationale {
		out = append(out, fmt.Sprintf("%s: %s: %s", f.Layer, f.Source, f.Finding))
	}
	if len(out) > 8 {
		out = out[:8]
	}
	return out
}

// resolveCriterion returns the completion command: given, or inferred and
// adopted as seed 002 says (asked at a terminal; only high confidence
// without one).
func resolveCriterion(ctx context.Context, cfg config.Config, root string, o IO, h Hooks) (criteria.Proposal, string, error) {
	if h.Proposal != nil {
		return *h.Proposal, "action-input", nil
	}
	if strings.TrimSpace(cfg.Completion) != "" {
		wd := cfg.Workdir
		if wd == "" {
			wd = "."
		}
		return criteria.Proposal{Task: cfg.Task, Command: cfg.Completion, Workdir: wd, Setup: cfg.Setup, Confidence: "high",
			Rationale: []criteria.Finding{{Layer: "task-verb", Source: "--completion", Finding: "given by the user"}}}, "flag", nil
	}
	prop, err := criteria.Infer(ctx, root, cfg.Task)
	if err != nil {
		return prop, "", usage(fmt.Errorf("inferring the completion command: %w", err))
	}
	if cfg.Setup != "" {
		prop.Setup = cfg.Setup
	}
	if prop.Command == "" {
		return prop, "", usagef("no completion command could be inferred for %q: %s\n\n%s\nGive one with --completion \"<command that exits 0 when done>\".", cfg.Task, prop.RefusalReason, prop.Summary())
	}
	if o.Interactive && !cfg.AutoCriteria {
		fmt.Fprintf(o.Stderr, "agent-loop inferred the completion check:\n\n%s\nUse it? [Y/n/edit] ", prop.Summary())
		in := bufio.NewReader(o.Stdin)
		line, _ := in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "", "y", "yes":
			return prop, "inferred", nil
		case "e", "edit":
			fmt.Fprint(o.Stderr, "Completion command: ")
			cmd, _ := in.ReadString('\n')
			if cmd = strings.TrimSpace(cmd); cmd == "" {
				return prop, "", usagef("no completion command given")
			}
			prop.Command, prop.Confidence = cmd, "high"
			return prop, "flag", nil
		default:
			return prop, "", usagef("completion check not accepted; re-run with --completion \"<command>\"")
		}
	}
	if prop.Confidence != "high" {
		return prop, "", usagef("the inferred completion check has %s confidence, and without a terminal (or with --auto-criteria) only high confidence is adopted:\n\n%s\nRe-run with --completion %q if it is right, or give the right command.", prop.Confidence, prop.Summary(), prop.Command)
	}
	return prop, "inferred", nil
}

// confirmDuplicate handles an active loop with the same task (seed 002).
func confirmDuplicate(same []state.Entry, o IO) error {
	var b strings.Builder
	b.WriteString("An existing loop may be running for the same task.\n\nActive loops:\n")
	for _, e := range same {
		fmt.Fprintf(&b, "  %s — %s (%s, iteration %d/%d)\n", e.LoopID, e.Task, e.Status, e.Iteration, e.MaxIterations)
	}
	b.WriteString("\nOptions:\n")
	fmt.Fprintf(&b, "  1. Attach to it:     agent-loop attach %s\n", same[0].LoopID)
	fmt.Fprintf(&b, "  2. Abort it:         agent-loop abort %s\n", same[0].LoopID)
	b.WriteString("  3. Start a new loop anyway: add --force\n")
	if !o.Interactive {
		return usagef("%s", b.String())
	}
	fmt.Fprintf(o.Stderr, "%s\nStart a new loop anyway? [y/N] ", b.String())
	line, _ := bufio.NewReader(o.Stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
		return nil
	}
	return usagef("not started: a loop with the same task is active (%s)", same[0].LoopID)
}

type engineParts struct {
	repo    *gitrepo.Repo
	agent   loop.Agent
	env     []string
	dir     state.Dir
	store   *state.Store
	st      *state.State
	opts    loop.Options
	io      IO
	quiet   bool
	secrets *redact.Set
	hooks   Hooks
	setup   string
}

// execute runs the engine on a prepared state and writes the report.
func execute(ctx context.Context, p engineParts) (*RunResult, error) {
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
		progress = io.MultiWriter(liveR, term)
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
	if p.setup != "" && p.st.Harness.BaseSHA == "" {
		if err := runSetup(ctx, p, progress); err != nil {
			p.st.Status = state.Failed
			p.st.Harness.StopReason = err.Error()
			now := time.Now().UTC().Truncate(time.Second)
			p.st.CompletedAt = &now
			p.st.PID = nil
			_ = p.dir.Save(p.st, time.Now())
			_ = p.store.Sync(p.st)
			return nil, &ExitError{Code: loop.ExitNotCompleted, Err: err}
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
		Judge: judge.New(judge.Options{Depends: shellcmd.DependsAt(p.repo.Root(), p.opts.Criterion, p.opts.Workdir)}), Dir: p.dir, Registry: p.store, Observer: p.hooks.Observer,
		Env: p.env, Out: progress, AgentOut: agentOut, Opts: p.opts,
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
		return res, &ExitError{Code: loop.ExitConfig, Err: out.ConfigError}
	}
	return res, nil
}

func runSetup(ctx context.Context, p engineParts, out io.Writer) error {
	fmt.Fprintf(out, "agent-loop: setup: %s\n", p.setup)
	logPath := p.dir.File("logs", "setup.log")
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	w := io.MultiWriter(f, out)
	res, err := process.Run(ctx, process.Spec{Path: "sh", Args: []string{"-c", p.setup}, Dir: filepath.Join(p.repo.Root(), p.opts.Workdir),
		Env: p.env, Stdout: w, Stderr: w, Timeout: 30 * time.Minute})
	if err != nil {
		return fmt.Errorf("setup %q: %w", p.setup, err)
	}
	if res.ExitCode != 0 || res.Stopped() {
		return fmt.Errorf("setup %q failed with exit code %d (see %s)", p.setup, res.ExitCode, p.dir.Rel("logs", "setup.log"))
	}
	return nil
}

var errNotResumable = errors.New("not resumable")
