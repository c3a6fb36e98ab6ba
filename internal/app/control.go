package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aiwg/agent-loop/internal/crashpoint"
	"github.com/aiwg/agent-loop/internal/escape"
	"github.com/aiwg/agent-loop/internal/gitrepo"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/report"
	"github.com/aiwg/agent-loop/internal/safefs"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// repoRoot finds the repository root of dir (without opening it for writes).
func repoRoot(dir string) (string, error) {
	r, err := gitrepo.Open(dir, gitrepo.Options{})
	if err != nil {
		return "", usage(err)
	}
	return r.Root(), nil
}

// loadLoop loads a loop's state from where it lives (places.find): the
// live copy when this user can read it, else the seed layout.
func loadLoop(pl places, id string) (state.Dir, *state.State, error) {
	if _, err := state.NewStore(pl.root).MigrateLegacy(); err != nil {
		return state.Dir{}, nil, usage(err)
	}
	if !state.ValidLoopID(id) {
		return state.Dir{}, nil, usage(&state.NotFoundError{LoopID: id, Known: pl.loopIDs()})
	}
	d := pl.find(id)
	st, err := d.Load()
	if err != nil {
		var nf *state.NotFoundError
		if errors.As(err, &nf) {
			nf.Known = pl.loopIDs()
		}
		return d, nil, usage(err)
	}
	return d, st, nil
}

// openLoop finds the repository of dir and loads loop id's state.
func openLoop(dir, id string, o IO) (places, state.Dir, *state.State, error) {
	root, err := repoRoot(dir)
	if err != nil {
		return places{}, state.Dir{}, nil, err
	}
	pl, err := placesOf(root, o.Environ)
	if err != nil {
		return places{}, state.Dir{}, nil, usage(err)
	}
	d, st, err := loadLoop(pl, id)
	return pl, d, st, err
}

// storeOf is the registry that goes with the copy d of a loop's state.
func (p places) storeOf(d state.Dir) *state.Store {
	if p.isLive(d) {
		return p.store()
	}
	return state.NewStore(p.root)
}

// lastActive is the registry heartbeat of a loop (or its last state update).
func lastActive(pl places, d state.Dir, st *state.State) time.Time {
	if reg, err := pl.storeOf(d).Read(); err == nil {
		for _, e := range reg.ActiveLoops {
			if e.LoopID == st.LoopID && e.LastActive.After(st.LastUpdated) {
				return e.LastActive
			}
		}
	}
	return st.LastUpdated
}

// markIfCrashed turns a running loop whose process is gone into crashed
// (on this host: its pid is dead; elsewhere: no heartbeat for the stale
// threshold), ending the agent and check it may have left behind.
func markIfCrashed(pl places, d state.Dir, st *state.State) (bool, error) {
	l := state.CheckLiveness(st, lastActive(pl, d, st), time.Now())
	if l != state.Dead {
		return false, nil
	}
	pid := 0
	if st.PID != nil {
		pid = *st.PID
	}
	state.MarkCrashed(st, fmt.Sprintf("the controlling process (pid %d on %s) is gone", pid, st.Harness.Host), time.Now())
	// Its agent and check may still run, orphaned: end them.
	process.KillTagged(st.LoopID)
	if err := saveLoop(pl, d, st); err != nil {
		return false, err
	}
	return true, nil
}

// saveLoop writes a loop's state into the copy it was read from, the
// registry beside it, and the seed copy from the live one.
func saveLoop(pl places, d state.Dir, st *state.State) error {
	if err := d.Save(st, time.Now()); err != nil {
		return err
	}
	if err := pl.storeOf(d).Sync(st); err != nil {
		return err
	}
	if m := pl.mirror(st.LoopID); m != nil && pl.isLive(d) {
		return m.Sync()
	}
	return nil
}

// StatusOptions are the flags of `status`.
type StatusOptions struct {
	All bool
	// CheckStale also repairs the registry (entries of loops that never
	// started or have ended). A loop whose process is gone is shown as
	// crashed, and recorded so, with or without it.
	CheckStale bool
	Format     string // text, json
	LoopID     string
}

// Status prints loops. A loop the state says is running whose process is
// gone is marked crashed first: status never shows a dead loop as running.
func Status(dir string, opt StatusOptions, o IO) error {
	if opt.Format != "text" && opt.Format != "json" {
		return usagef("--format: unknown format %q (valid: text, json)", opt.Format)
	}
	root, err := repoRoot(dir)
	if err != nil {
		return err
	}
	pl, err := placesOf(root, o.Environ)
	if err != nil {
		return usage(err)
	}
	if _, err := state.NewStore(root).MigrateLegacy(); err != nil {
		return usage(err)
	}
	// Names, tasks and reports quote the agent: shown, not sent.
	out := terminal(o.Stdout)
	defer out.Close()
	if opt.LoopID != "" {
		d, st, err := loadLoop(pl, opt.LoopID)
		if err != nil {
			return err
		}
		if _, err := markIfCrashed(pl, d, st); err != nil {
			return err
		}
		if opt.Format == "json" {
			return writeJSON(o.Stdout, st)
		}
		fmt.Fprint(out, report.Render(st, report.Options{Target: report.CLI}))
		fmt.Fprintf(out, "State: %s\nLog:   %s\n", d.Rel("state.json"), d.Rel("logs", "loop.log"))
		return nil
	}
	ids := pl.loopIDs()
	store := pl.registry()
	reg, err := store.Read()
	if err != nil {
		return usage(err)
	}
	active := map[string]bool{}
	for _, e := range reg.ActiveLoops {
		active[e.LoopID] = true
	}
	var rows []*state.State
	var changed []string
	for _, id := range ids {
		d := pl.find(id)
		st, err := d.Load()
		if err != nil {
			fmt.Fprintf(o.Stderr, "agent-loop: %s\n", escape.Terminal(err.Error()))
			continue
		}
		if st.Status == state.Running || st.Status == state.Completing {
			if c, err := markIfCrashed(pl, d, st); err != nil {
				return err
			} else if c {
				changed = append(changed, id)
			}
		}
		if opt.All || active[id] || st.Status.Active() {
			rows = append(rows, st)
		}
	}
	var repairs []string
	if opt.CheckStale && len(reg.ActiveLoops) > 0 {
		if repairs, err = reconcileRegistry(pl, store); err != nil {
			return err
		}
	}
	if opt.Format == "json" {
		type row struct {
			LoopID     string       `json:"loop_id"`
			Status     state.Status `json:"status"`
			Iteration  int          `json:"iteration"`
			Max        int          `json:"max_iterations"`
			Task       string       `json:"task"`
			Best       *int         `json:"best_iteration"`
			StopReason string       `json:"stop_reason,omitempty"`
		}
		out := []row{}
		for _, st := range rows {
			r := row{LoopID: st.LoopID, Status: st.Status, Iteration: st.Iteration, Max: st.Configuration.MaxIterations, Task: st.Task, StopReason: st.Harness.StopReason}
			if st.BestIteration != nil {
				b := st.BestIteration.Iteration
				r.Best = &b
			}
			out = append(out, r)
		}
		return writeJSON(o.Stdout, out)
	}
	for _, r := range repairs {
		fmt.Fprintf(out, "registry: %s\n", r)
	}
	for _, id := range changed {
		fmt.Fprintf(out, "marked crashed: %s (its process is gone; continue it with `agent-loop resume %s`)\n", id, id)
	}
	if len(rows) == 0 {
		if opt.All {
			fmt.Fprintln(out, "no loops yet: start one with `agent-loop run`")
		} else {
			fmt.Fprintln(out, "no active loops (`agent-loop status --all` lists finished ones too)")
		}
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOOP\tSTATUS\tITERATION\tBEST\tTASK")
	for _, st := range rows {
		best := "-"
		if st.BestIteration != nil {
			best = fmt.Sprint(st.BestIteration.Iteration)
		}
		// The task is the user's (or an issue's) text: one line, its
		// control characters shown, not sent.
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\n", st.LoopID, st.Status, st.Iteration, st.Configuration.MaxIterations, best, escape.Terminal(truncate(st.Task, 50)))
	}
	return tw.Flush()
}

// errRegistryUnchanged skips the registry write when nothing needs repair.
var errRegistryUnchanged = errors.New("registry unchanged")

// reconcileRegistry repairs the registry entries a killed agent-loop left
// behind (they would hold a slot, or block a new loop with the same task,
// for good): an entry whose loop has no state and no live process (killed
// between registering and its first state write) or has ended (killed
// between its final state write and the registry update) is removed, and a
// stopped loop's entry takes the status of its state. Entries of running
// loops belong to their process and are left alone.
func reconcileRegistry(pl places, store *state.Store) ([]string, error) {
	var notes []string
	err := store.Update(func(r *state.Registry) error {
		out := make([]state.Entry, 0, len(r.ActiveLoops))
		for _, e := range r.ActiveLoops {
			if !state.ValidLoopID(e.LoopID) {
				out = append(out, e)
				continue
			}
			st, err := state.NewDir(store.Root, e.LoopID).Load()
			var nf *state.NotFoundError
			switch {
			case errors.As(err, &nf):
				if e.PID != nil && state.PIDAlive(*e.PID, 0) {
					out = append(out, e) // starting: its state is about to be written
					continue
				}
				notes = append(notes, fmt.Sprintf("removed %s: it never started (no state; pid %d is gone)", e.LoopID, derefPID(e.PID)))
			case err != nil:
				out = append(out, e) // corrupt: the error names the recovery
			case st.Status.Terminal():
				notes = append(notes, fmt.Sprintf("removed %s: it is %s", e.LoopID, st.Status))
			case st.Status != e.Status && st.Status != state.Running && st.Status != state.Completing:
				out = append(out, state.EntryFor(st, e.LastActive))
				notes = append(notes, fmt.Sprintf("%s is %s (the registry said %s)", e.LoopID, st.Status, e.Status))
			default:
				out = append(out, e)
			}
		}
		if len(notes) == 0 {
			return errRegistryUnchanged
		}
		r.ActiveLoops = out
		return nil
	})
	if errors.Is(err, errRegistryUnchanged) {
		return nil, nil
	}
	return notes, err
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Pause asks a running loop to pause after its current iteration, or pauses
// a crashed one's record.
func Pause(dir, id string, o IO) error {
	pl, d, st, err := openLoop(dir, id, o)
	if err != nil {
		return err
	}
	if crashed, err := markIfCrashed(pl, d, st); err != nil {
		return err
	} else if crashed {
		return usagef("loop %s is not running (it crashed); continue it with `agent-loop resume %s`", id, id)
	}
	if st.Status != state.Running {
		return usagef("loop %s is %s, not running; only a running loop can be paused", id, st.Status)
	}
	if err := requestControl(pl, d, "pause"); err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "pause requested: %s stops after its current iteration; continue with `agent-loop resume %s`\n", id, id)
	return nil
}

// Abort stops a running loop now (its agent is stopped), or ends a paused or
// crashed one.
func Abort(dir, id string, o IO) error {
	pl, d, st, err := openLoop(dir, id, o)
	if err != nil {
		return err
	}
	if _, err := markIfCrashed(pl, d, st); err != nil {
		return err
	}
	switch st.Status {
	case state.Running, state.Completing:
		if err := requestControl(pl, d, "abort"); err != nil {
			return err
		}
		fmt.Fprintf(o.Stdout, "abort requested: %s stops its agent and ends as aborted\n", id)
		return nil
	case state.Paused:
		st.Status = state.Aborted
		now := time.Now().UTC().Truncate(time.Second)
		st.CompletedAt = &now
		st.Harness.StopReason = "aborted by request while paused"
		st.Harness.StopKind = state.StopAborted
	case state.Crashed:
		// crashed is terminal in the schema: the record stays, the slot is freed.
		st.Harness.StopReason = "aborted by request after a crash"
	default:
		return usagef("loop %s is %s already; nothing to abort", id, st.Status)
	}
	if err := d.Save(st, time.Now()); err != nil {
		return err
	}
	if err := pl.storeOf(d).Deregister(id); err != nil {
		return err
	}
	if m := pl.mirror(id); m != nil && pl.isLive(d) {
		if err := m.Sync(); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.Stdout, "%s: %s\n", id, st.Harness.StopReason)
	return nil
}

// requestControl asks the running loop whose state is d to pause or
// abort: through the control file of its live copy, which only the user
// that runs it (root for a root loop) can write, and the agent cannot.
func requestControl(pl places, d state.Dir, action string) error {
	if !pl.isLive(d) {
		return usagef("loop %s runs as another user or with another %s: its live state (%s) is not readable here; run `agent-loop %s %s` as the user that started it (root for a loop run as root)",
			d.LoopID, StateDirVar, pl.live(d.LoopID).Path(), action, d.LoopID)
	}
	return d.RequestControl(action)
}

// Report prints a loop's report: text for a terminal (the default),
// Markdown (as report.md and the step summary hold it) or the state as
// JSON.
func Report(dir, id, format string, o IO) error {
	_, _, st, err := openLoop(dir, id, o)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		return writeJSON(o.Stdout, st)
	case "text", "":
		// The report quotes the agent's names: control sequences are
		// shown, not sent, to a terminal.
		out := terminal(o.Stdout)
		defer out.Close()
		fmt.Fprint(out, report.Render(st, report.Options{Target: report.CLI}))
		return nil
	case "md", "markdown":
		out := terminal(o.Stdout)
		defer out.Close()
		fmt.Fprint(out, report.Render(st, report.Options{Target: report.Summary}))
		return nil
	}
	return usagef("--format: unknown format %q (valid: text, md, json)", format)
}

// Attach follows a loop's live output until it stops.
func Attach(ctx context.Context, dir, id string, o IO) error {
	pl, d, st, err := openLoop(dir, id, o)
	if err != nil {
		return err
	}
	// Never a FIFO or a symlink someone put in its place.
	f, err := safefs.Open(d.LiveLogPath())
	if err != nil {
		return usagef("loop %s has no live log yet (%s: %v)", id, d.File("logs", "loop.log"), err)
	}
	defer f.Close()
	// The log quotes the agent's output: shown, not sent.
	stdout := terminal(o.Stdout)
	defer stdout.Close()
	o.Stdout = stdout
	fmt.Fprintf(o.Stderr, "attached to %s (%s); Ctrl-C detaches, the loop goes on\n", id, st.Status)
	buf := make([]byte, 64<<10)
	idle := 0
	for {
		n, err := f.Read(buf)
		if n > 0 {
			o.Stdout.Write(buf[:n])
			idle = 0
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		idle++
		if idle%10 == 0 {
			if cur, err := d.Load(); err == nil {
				st = cur
			}
			alive := st.Status == state.Running || st.Status == state.Completing
			if alive && state.CheckLiveness(st, lastActive(pl, d, st), time.Now()) == state.Dead {
				alive = false
			}
			if !alive {
				// Drain what is left, then stop.
				for {
					n, _ := f.Read(buf)
					if n == 0 {
						break
					}
					o.Stdout.Write(buf[:n])
				}
				fmt.Fprintf(o.Stderr, "loop %s is %s\n", id, st.Status)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ResumeOptions are the choices of one resume.
type ResumeOptions struct {
	Approve, Reject bool
	// Changes holds the parameters given to resume (spec.ResumeParams:
	// the limits, --quiet): each one given replaces the saved Spec's value,
	// checked as Door's user gave it. Nothing else of the Spec changes.
	Changes spec.Settings
	Door    spec.Door
}

// Resume continues a paused or crashed loop from its last completed
// iteration, with the Spec it saved (and the changes given explicitly).
func Resume(ctx context.Context, dir, id string, ro ResumeOptions, o IO, h Hooks) (*RunResult, error) {
	root, err := repoRoot(dir)
	if err != nil {
		return nil, err
	}
	pl, err := placesOf(root, o.Environ)
	if err != nil {
		return nil, usage(err)
	}
	// A loop paused in another container (the Action restores its seed
	// layout from the state ref or the artifact) or on another machine:
	// its live copy is made from the seed first.
	if state.ValidLoopID(id) {
		if err := pl.importSeed(id); err != nil {
			return nil, err
		}
	}
	d, st, err := loadLoop(pl, id)
	if err != nil {
		return nil, err
	}
	if !pl.isLive(d) {
		return nil, usagef("loop %s runs as another user or with another %s: its live state (%s) is not readable here; resume it as the user that started it (root for a loop run as root)",
			id, StateDirVar, pl.live(id).Path())
	}
	if _, err := markIfCrashed(pl, d, st); err != nil {
		return nil, err
	}
	switch st.Status {
	case state.Completed, state.Failed, state.Aborted:
		return nil, usagef("loop %s is %s; a finished loop cannot be resumed (start a new one with `agent-loop run`)", id, st.Status)
	case state.Running, state.Completing:
		return nil, usagef("loop %s is still running (pid %d); follow it with `agent-loop attach %s`", id, derefPID(st.PID), id)
	}
	door := ro.Door
	if door == 0 {
		door = spec.DoorCLI
	}
	amended, err := spec.Amend(st.Harness.Spec, ro.Changes, door)
	if err != nil {
		return nil, ProblemList(err)
	}
	if g := st.Harness.PendingGate; g != nil && g.Decision == "" {
		if !ro.Approve && !ro.Reject {
			return nil, usagef("loop %s waits for a decision on iteration %d (%s): resume with --approve (the change is fine) or --reject (revert it and go on)", id, g.Iteration, g.Reason)
		}
		decide(st, ro.Approve)
	}
	sp := amended.Spec
	st.SetSpec(sp)

	repo, err := h.openRepo(root)
	if err != nil {
		return nil, usage(err)
	}
	if err := repo.CheckCredentials(); err != nil {
		return nil, problemList([]error{err})
	}
	secrets := harnessSecrets(o, h.Token)
	env := process.SafeEnv(o.Environ)
	if _, _, err := preflightAgent(ctx, sp.Agent, h.Script, o.Environ, env, secrets); err != nil {
		return nil, problemList([]error{err})
	}
	sb, boxLog, agent, err := boxAgent(pl, h, sp.Agent, o.Environ, env, secrets)
	if err != nil {
		return nil, err
	}
	// Take the loop over: the report says it went on, and why it had
	// stopped.
	st.Harness.Resumes = append(st.Harness.Resumes, state.Resume{
		At: time.Now().UTC().Truncate(time.Second), AfterIteration: st.Iteration, Why: resumedFrom(st)})
	st.Harness.StopKind = ""
	wasCrashed := st.Status == state.Crashed
	pid := os.Getpid()
	st.Status, st.PID = state.Running, &pid
	st.Harness.Host, st.Harness.PIDStart = state.Hostname(), state.ProcessStart(pid)
	st.Harness.StopReason = ""
	st.CompletedAt = nil
	if wasCrashed {
		if st.ErrorContext == nil {
			st.ErrorContext = &state.ErrorContext{ErrorMessage: "crashed", ErrorTimestamp: time.Now().UTC().Truncate(time.Second)}
		}
		st.ErrorContext.RecoveryAttempted = true
	}
	store := pl.store()
	if err := store.Register(st); err != nil {
		closeSandbox(sb, nil)
		return nil, usage(err)
	}
	crashpoint.Hit("resume-registered")
	if err := d.Save(st, time.Now()); err != nil {
		closeSandbox(sb, nil)
		return nil, err
	}
	d.ClearControl()
	fmt.Fprintf(o.Stderr, "agent-loop: resuming %s after iteration %d\n", id, st.Iteration)
	return execute(ctx, engineParts{repo: repo, agent: agent, env: env, places: pl, dir: d, store: store, st: st, io: o,
		quiet: amended.Start.Quiet, secrets: secrets, hooks: h, sb: sb, boxLog: boxLog})
}

// resumedFrom is why a loop being resumed had stopped: its recorded
// StopKind, or what its status says when it has none.
func resumedFrom(st *state.State) state.StopKind {
	switch {
	case st.Status == state.Crashed:
		return state.StopCrashed
	case st.Harness.StopKind != "":
		return st.Harness.StopKind
	case st.Harness.PendingGate != nil:
		return state.StopHumanGate
	}
	return state.StopPaused
}

// decide records a person's decision on a human-gated iteration.
func decide(st *state.State, approve bool) {
	g := st.Harness.PendingGate
	decision := "reject"
	if approve {
		decision = "approve"
	}
	g.Decision = decision
	for i := range st.RegressionEvents {
		if st.RegressionEvents[i].Iteration == g.Iteration {
			d := decision
			st.RegressionEvents[i].HumanDecision = &d
		}
	}
	for i := range st.IterationHistory {
		if st.IterationHistory[i].Iteration == g.Iteration && approve {
			st.IterationHistory[i].Rejected = false
		}
	}
	for i := range st.RecoveryHistory {
		if r := &st.RecoveryHistory[i]; r.Iteration == g.Iteration && r.ProtocolSteps.Escalate != nil {
			r.ProtocolSteps.Escalate.HumanDecision = decision
		}
	}
	st.Harness.PendingGate = nil
}

func derefPID(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func nonEmpty(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// RepoOrDir returns the repository root of dir, or dir itself when it is not
// inside a repository (inference only reads files).
func RepoOrDir(dir string) (string, error) {
	if r, err := gitrepo.Open(dir, gitrepo.Options{}); err == nil {
		return r.Root(), nil
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return "", usagef("-C %s: not a directory", dir)
	}
	return dir, nil
}
