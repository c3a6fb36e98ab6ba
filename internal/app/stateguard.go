package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/state"
)

// The agent has a shell in the work tree, and the completion command runs
// tests the agent wrote: both can write .aiwg/, where the harness keeps its
// state. stateGuard snapshots the harness's files before such code runs and
// puts them back when it returns, so a forged state.json never stands, a
// corrupted registry does not stop the loop (every state save also updates
// the registry), and a directory replaced by a symlink does not send the
// harness's writes elsewhere. In the Action it also keeps the workflow
// command files (GITHUB_OUTPUT, GITHUB_ENV, ...) as the harness left them:
// their variables are withheld from the agent, but in a container action
// they sit in a well-known directory (/github/file_commands).
type stateGuard struct {
	root    string
	dir     state.Dir
	out     io.Writer         // where repairs are reported
	protect map[string]string // other files kept exactly: path -> name in reports
	// killStrays kills the processes the agent's code leaves behind (they
	// escaped their process group) before the files are put back.
	killStrays bool
	children   []int // the harness's children before the run (kept)

	mu       sync.Mutex
	prot     map[string][]byte  // their content (absent: not in the map)
	files    map[string][]byte  // the loop's files: path -> content
	dirsWere map[string]dirKind // what each directory the harness writes into was
	registry []byte             // registry.json as it was, when valid
}

func newStateGuard(root string, dir state.Dir, out io.Writer, protect map[string]string) *stateGuard {
	return &stateGuard{root: root, dir: dir, out: out, protect: protect}
}

// guardedFiles are the loop's files the harness alone writes between agent
// runs: the state, the analytics and the checkpoints (logs, transcripts,
// the prompt and the control file are not guarded).
func (g *stateGuard) guardedFiles() []string {
	paths := []string{g.dir.StatePath(), g.dir.AnalyticsPath()}
	if ents, err := os.ReadDir(g.dir.File("checkpoints")); err == nil {
		for _, e := range ents {
			if e.Type().IsRegular() && strings.HasPrefix(e.Name(), "iteration-") && strings.HasSuffix(e.Name(), ".json.gz") {
				paths = append(paths, g.dir.File("checkpoints", e.Name()))
			}
		}
	}
	return paths
}

// dirs are the directories the harness writes into, parents first.
func (g *stateGuard) dirs() []string {
	return []string{
		filepath.Join(g.root, ".aiwg"), filepath.Join(g.root, state.RootDir), filepath.Join(g.root, state.LoopsDir),
		g.dir.Path(), g.dir.File("checkpoints"), g.dir.File("analytics"), g.dir.File("logs"), g.dir.File("transcripts"),
	}
}

// snapshot records the harness's files as they are now.
func (g *stateGuard) snapshot() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.killStrays {
		g.children = process.Children() // a service the setup command started stays
	}
	g.files = map[string][]byte{}
	for _, p := range g.guardedFiles() {
		if b, ok := readRegular(p); ok {
			g.files[p] = b
		}
	}
	g.prot = map[string][]byte{}
	for p := range g.protect {
		if b, ok := readRegular(p); ok {
			g.prot[p] = b
		}
	}
	g.dirsWere = map[string]dirKind{}
	for _, d := range g.dirs() {
		g.dirsWere[d] = kindAt(d)
	}
	g.registry = nil
	if b, ok := readRegular(filepath.Join(g.root, state.RegistryFile)); ok && validRegistry(b) {
		g.registry = b
	}
}

// restore puts back what changed since the snapshot and reports it. The
// registry is shared with other loops of the repository, so it is put back
// only when it is no longer a valid registry.
func (g *stateGuard) restore(who string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.files == nil {
		return
	}
	var fixed []string
	for _, d := range g.dirs() {
		was, now := g.dirsWere[d], kindAt(d)
		if now == was {
			continue
		}
		// A symlink or a file in place of a directory (or the reverse):
		// removed, never followed, and put back as it was.
		if now.kind != "" {
			_ = os.RemoveAll(d)
		}
		var err error
		switch was.kind {
		case "dir":
			err = os.MkdirAll(d, 0o755)
		case "symlink":
			err = os.Symlink(was.target, d)
		case "":
			fixed = append(fixed, g.rel(d)+" (removed)")
			continue
		}
		if err == nil {
			fixed = append(fixed, g.rel(d)+"/")
		}
	}
	var paths []string
	for p := range g.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if b, ok := readRegular(p); ok && bytes.Equal(b, g.files[p]) {
			continue
		}
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			_ = os.RemoveAll(p)
		}
		if err := state.WriteFileAtomic(p, g.files[p], 0o644); err == nil {
			fixed = append(fixed, g.rel(p))
		}
	}
	// Checkpoints the harness did not write.
	for _, p := range g.guardedFiles() {
		if _, ok := g.files[p]; !ok && strings.HasPrefix(p, g.dir.File("checkpoints")) {
			if os.Remove(p) == nil {
				fixed = append(fixed, g.rel(p)+" (removed)")
			}
		}
	}
	reg := filepath.Join(g.root, state.RegistryFile)
	if b, ok := readRegular(reg); !ok || !validRegistry(b) {
		if _, err := os.Lstat(reg); err == nil || g.registry != nil {
			if fi, err := os.Lstat(reg); err == nil && !fi.Mode().IsRegular() {
				_ = os.RemoveAll(reg)
			}
			var err error
			if g.registry != nil {
				err = state.WriteFileAtomic(reg, g.registry, 0o644)
			} else {
				err = os.Remove(reg) // rebuilt by the next save
			}
			if err == nil {
				fixed = append(fixed, g.rel(reg))
			}
		}
	}
	var names []string
	for p := range g.protect {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		was, existed := g.prot[p]
		b, ok := readRegular(p)
		_, lerr := os.Lstat(p)
		switch {
		case ok && existed && bytes.Equal(b, was):
			continue
		case !existed:
			if lerr == nil && os.RemoveAll(p) == nil {
				fixed = append(fixed, g.protect[p])
			}
			continue
		case lerr == nil && !ok:
			_ = os.RemoveAll(p) // a symlink, FIFO or directory in its place
		}
		// Rewritten in place: the runner owns the file and reads it after the step.
		if os.WriteFile(p, was, 0o644) == nil {
			fixed = append(fixed, g.protect[p])
		}
	}
	if len(fixed) > 0 && g.out != nil {
		fmt.Fprintf(g.out, "agent-loop: %s changed files only the harness may write; restored %s\n", who, strings.Join(fixed, ", "))
	}
}

func (g *stateGuard) rel(p string) string {
	if r, err := filepath.Rel(g.root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// dirKind is what is at a path: a directory, a symlink (to target), or
// something else ("other"); kind "" when nothing is there.
type dirKind struct{ kind, target string }

func kindAt(p string) dirKind {
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return dirKind{}
	case fi.IsDir():
		return dirKind{kind: "dir"}
	case fi.Mode()&os.ModeSymlink != 0:
		t, _ := os.Readlink(p)
		return dirKind{kind: "symlink", target: t}
	}
	return dirKind{kind: "other"}
}

// readRegular reads p when it is a regular file (never through a symlink).
func readRegular(p string) ([]byte, bool) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := os.ReadFile(p)
	return b, err == nil
}

func validRegistry(b []byte) bool {
	var r state.Registry
	return json.Unmarshal(b, &r) == nil
}

// after ends a run of the agent's code: its leftover processes first (they
// could still write), then the files.
func (g *stateGuard) after(who string) {
	if g.killStrays {
		if pids := process.KillStrays(g.children); len(pids) > 0 && g.out != nil {
			fmt.Fprintf(g.out, "agent-loop: %s left %d process(es) running outside its process group; killed them (pids %v)\n", who, len(pids), pids)
		}
	}
	g.restore(who)
}

// ownProcess reports whether this process is the agent-loop program (the
// binary, or the container's entrypoint at PID 1), so that every child it
// has is the harness's: a library caller (a test binary) has children of
// its own that KillStrays must not touch.
func ownProcess() bool {
	return os.Getpid() == 1 || strings.HasPrefix(filepath.Base(os.Args[0]), "agent-loop")
}

// guardedAgent runs the agent inside the state guard.
type guardedAgent struct {
	loop.Agent
	g *stateGuard
}

func (a *guardedAgent) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	a.g.snapshot()
	defer a.g.after(fmt.Sprintf("iteration %d: the agent", req.Iteration))
	return a.Agent.Run(ctx, req)
}

// guardedVerifier runs the completion command inside the state guard.
type guardedVerifier struct {
	loop.Verifier
	g *stateGuard
}

func (v *guardedVerifier) Check(ctx context.Context, req loop.CheckRequest) (loop.CheckResult, error) {
	v.g.snapshot()
	defer v.g.after("the completion command")
	return v.Verifier.Check(ctx, req)
}
