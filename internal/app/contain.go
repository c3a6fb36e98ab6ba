package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/aiwg/agent-loop/internal/escape"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/redact"
	"github.com/aiwg/agent-loop/internal/safefs"
	"github.com/aiwg/agent-loop/internal/sandbox"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
	"github.com/aiwg/agent-loop/internal/weaken"
)

// The trust boundary, as the app wires it (internal/sandbox draws it):
//
//   - one Sandbox per loop run: the agent, the setup command, the
//     completion command and every re-run of it run inside it (the context
//     carries it: process.WithJail), swept after each run;
//   - the live state (state.json, registry, logs, transcripts,
//     checkpoints, the control file) is in the harness's private directory
//     of the work tree, where the sandbox cannot write; the seed layout
//     under the work tree's .aiwg/ralph/ is what the user and the agent
//     see, written from the live copy between runs (state.Mirror) and never
//     read back as truth;
//   - the control verbs (status, pause, abort, attach, report, resume) read
//     the live copy when this user can, else the seed.

// StateDirVar names the directory under which the harness keeps its
// private directories (sandbox.DefaultPrivateBase when unset).
const StateDirVar = "AGENT_LOOP_STATE_DIR"

// places are where a repository's loops live for the user running this
// process: the live copy in the private directory, the seed layout in the
// work tree.
type places struct {
	root    string // the work tree: the seed layout
	private string // the private directory: the live copy (== root when weakened)
}

// placesOf returns the places of the work tree root. The private directory
// is not created here (sandbox.New does, with its checks).
func placesOf(root string, environ []string) (places, error) {
	if weaken.On("private") {
		return places{root: root, private: root}, nil
	}
	base, _ := process.Lookup(environ, StateDirVar)
	if base != "" && !filepath.IsAbs(base) {
		return places{}, fmt.Errorf("%s=%q is not an absolute path: give the directory agent-loop keeps its private state in as one", StateDirVar, base)
	}
	priv, err := sandbox.PrivateDir(base, root)
	if err != nil {
		return places{}, err
	}
	return places{root: root, private: priv}, nil
}

// weakened reports the old layout (the live state in the work tree).
func (p places) weakened() bool { return p.private == p.root }

func (p places) live(id string) state.Dir { return state.NewDir(p.private, id) }
func (p places) seed(id string) state.Dir { return state.NewDir(p.root, id) }

// store is the live registry.
func (p places) store() *state.Store { return state.NewStore(p.private) }

// readable reports whether this process can read the private directory
// (it is another user's when a root loop runs and a user asks).
func (p places) readable() bool {
	f, err := os.Open(p.private)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// find is the directory holding loop id's state: the live copy when it
// has one (and this user can read it), else the seed layout.
func (p places) find(id string) state.Dir {
	if d := p.live(id); d.Exists() {
		return d
	}
	return p.seed(id)
}

// registry is the registry to read: the live one when this user can
// read it, else the seed's copy.
func (p places) registry() *state.Store {
	if p.readable() {
		return p.store()
	}
	return state.NewStore(p.root)
}

// loopIDs lists the loops of either copy.
func (p places) loopIDs() []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range append(state.ListLoopIDs(p.private), state.ListLoopIDs(p.root)...) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// isLive reports whether d is the live copy (writable by this process),
// not the seed.
func (p places) isLive(d state.Dir) bool { return d.Root == p.private }

// mirror writes the seed copy of loop id from the live one (nothing when
// weakened: they are one).
func (p places) mirror(id string) *state.Mirror {
	if p.weakened() {
		return nil
	}
	return state.NewMirror(p.live(id), p.seed(id))
}

// LoopDir is the directory holding a loop's state as the harness of the
// work tree root keeps it: its live copy when there is one, else the seed
// layout (the Action's post step, in a new container, has only the seed).
func LoopDir(root, id string, environ []string) state.Dir {
	p, err := placesOf(root, environ)
	if err != nil {
		return state.NewDir(root, id)
	}
	return p.find(id)
}

// importSeed makes the live copy of loop id from its seed layout: a loop
// paused in another container (the Action restores it there from the
// state ref or the artifact), or started before the live state moved out
// of the work tree. Every file is read through an open that refuses
// symlinks and FIFOs, and a file above the state's size limit is left
// out. It does nothing when the live copy exists.
func (p places) importSeed(id string) error {
	live, seed := p.live(id), p.seed(id)
	if p.weakened() || live.Exists() || !seed.Exists() {
		return nil
	}
	if _, err := seed.Load(); err != nil {
		return nil // loading it says what is wrong
	}
	if err := os.MkdirAll(p.private, 0o700); err != nil {
		return fmt.Errorf("importing loop %s: %w", id, err)
	}
	dst, err := safefs.OpenRoot(p.private)
	if err != nil {
		return fmt.Errorf("importing loop %s: %w", id, err)
	}
	defer dst.Close()
	rel := path.Join(state.LoopsDir, id)
	skipped, err := seed.Files(state.MaxStateBytes, func(f state.LoopFile, r io.Reader) error {
		if f.Rel == "control" {
			return nil
		}
		return dst.WriteFile(path.Join(rel, f.Rel), r, safefs.WriteOptions{Perm: 0o600})
	})
	if err != nil {
		return fmt.Errorf("importing loop %s from %s: %w", id, seed.Rel(), err)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(os.Stderr, "agent-loop: importing %s: left out %s\n", id, strings.Join(skipped, ", "))
	}
	return nil
}

// newSandbox sets up the sandbox of one loop run on the work tree (see
// sandbox.New): protect are the workflow command files. What New decided
// goes to log.
func newSandbox(p places, protect map[string]string, log io.Writer) (*sandbox.Sandbox, error) {
	if weaken.On("sandbox") {
		return nil, nil
	}
	var files []string
	for f := range protect {
		files = append(files, f)
	}
	sort.Strings(files)
	base := ""
	if !p.weakened() {
		base = filepath.Dir(p.private)
	}
	sb, err := sandbox.New(sandbox.Options{WorkTree: p.root, PrivateBase: base, Protect: files, Log: log, Writable: weaken.Writable()})
	if err != nil {
		return nil, usage(err)
	}
	if !p.weakened() && sb.PrivateDir() != p.private {
		_ = sb.Close()
		return nil, fmt.Errorf("the sandbox's private directory %s is not the loop's %s", sb.PrivateDir(), p.private)
	}
	return sb, nil
}

// boxAgent sets up the sandbox of one loop run (newSandbox) and builds the
// agent that runs in it (its configuration in the sandbox's directory),
// checked runnable by the sandbox's user; on an error nothing is left set
// up. boxLog holds what the sandbox said until the loop's log exists.
func boxAgent(pl places, h Hooks, a spec.Agent, environ, env []string, secrets *redact.Set) (sb *sandbox.Sandbox, boxLog *lateWriter, agent loop.Agent, err error) {
	boxLog = &lateWriter{}
	if sb, err = newSandbox(pl, h.Protect, boxLog); err != nil {
		return nil, nil, nil, err
	}
	agent, err = buildAgent(a, h.Script, environ, secrets, agentDir(sb, pl))
	if err == nil {
		err = checkAgentRuns(sb, agent, env)
	}
	if err != nil {
		closeSandbox(sb, nil)
		return nil, nil, nil, problemList([]error{err})
	}
	return sb, boxLog, agent, nil
}

// jailed is ctx carrying the sandbox (nil: none, weakened).
func jailed(ctx context.Context, sb *sandbox.Sandbox) context.Context {
	if sb == nil {
		return ctx
	}
	return process.WithJail(ctx, sb)
}

// programmer is an agent whose CLI is a program the sandbox must be able
// to run.
type programmer interface {
	Program(env []string) (string, error)
}

// checkAgentRuns is the preflight of the agent CLI against the sandbox:
// its user must be able to run it.
func checkAgentRuns(sb *sandbox.Sandbox, agent loop.Agent, env []string) error {
	pr, ok := agent.(programmer)
	if sb == nil || !ok {
		return nil
	}
	bin, err := pr.Program(env)
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		bin = real
	}
	if err := sb.CheckExec(bin); err != nil {
		return fmt.Errorf("%s provider: %w", agent.Name(), err)
	}
	return nil
}

// seeded runs the agent with the seed layout written from the live copy
// just before (the prompt and last-output files it reads are the seed's),
// and again just after, once the sandbox's sweep has ended everything it
// started (whatever the agent changed in the seed layout is undone).
type seeded struct {
	loop.Agent
	m          *state.Mirror
	live, seed string // the loop directories, live and seed
	log        io.Writer
}

func (a *seeded) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	a.sync()
	req.PromptFile = a.reseed(req.PromptFile)
	req.LastOutputFile = a.reseed(req.LastOutputFile)
	res, err := a.Agent.Run(ctx, req)
	a.sync()
	return res, err
}

func (a *seeded) sync() {
	if err := a.m.Sync(); err != nil && a.log != nil {
		fmt.Fprintf(a.log, "agent-loop: warning: writing the seed copy of the loop state: %v\n", err)
	}
}

// reseed is the seed copy's path of a file of the live loop directory.
func (a *seeded) reseed(p string) string {
	if rel, err := filepath.Rel(a.live, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.Join(a.seed, rel)
	}
	return p
}

// uncontained says whether err means the sandbox could not end what a run
// started.
func uncontained(err error) bool {
	var se *process.SweepError
	return errors.As(err, &se)
}

// terminal is the writer of untrusted text to a person's terminal (or the
// workflow log): escape.Writer, which shows control sequences instead of
// sending them. The weakening "escape" passes text as it is.
func terminal(w io.Writer) io.WriteCloser {
	if weaken.On("escape") {
		return nopCloser{w}
	}
	return escape.NewWriter(w)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// lateWriter holds what is written to it until it is attached to the
// writer that will receive it (the loop's log does not exist when the
// sandbox is set up), then passes everything on.
type lateWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	w   io.Writer
}

func (l *lateWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return l.buf.Write(p)
	}
	return l.w.Write(p)
}

// attach passes what was held to w, and everything after it.
func (l *lateWriter) attach(w io.Writer) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = w.Write(l.buf.Bytes())
	l.buf.Reset()
	l.w = w
}

// detach stops passing on (the log is about to close).
func (l *lateWriter) detach() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w = io.Discard
}
