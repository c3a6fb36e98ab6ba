package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/crashpoint"
	"github.com/aiwg/agent-loop/internal/sandbox"
	"github.com/aiwg/agent-loop/internal/sandbox/sandboxtest"
	"github.com/aiwg/agent-loop/internal/schemas"
	"github.com/aiwg/agent-loop/internal/state"
)

// The torture tests of issue 7 ("Proof under stress") run the real binary
// (this test binary re-executed as agent-loop, see TestMain) on a scripted
// five-iteration loop: a command agent that writes one more step file per
// iteration, and `sh test.sh`, which passes once all five exist. The loop
// pushes to a local bare repository as origin.
//
// TestCrashTorture kills the harness with SIGKILL at named crash points
// (internal/crashpoint, selected with AGENT_LOOP_CRASHPOINT) and while its
// agent or its check runs, then recovers as a person would
// (`status --check-stale`, then `resume`, again if a resume is killed too).
// TestCancelTorture sends SIGINT then SIGTERM at random moments.
// Every trial must end completed with exactly one commit per iteration
// (checked with the real git CLI), every state, registry and checkpoint file
// valid, no process and no lock left behind.

var tortureSeed = flag.Uint64("torture.seed", 0, "seed of the cancellation trials' random moments (0: from the clock; the seed is logged)")

// tortureParallel trials run at once (each is a chain of short processes).
const tortureParallel = 4

const tortureTask = "finish the five steps"

// agentScript is the torture agent: iteration N writes stepN.txt, so one
// more test passes each iteration and iteration 5 passes the check. It
// records its pid and its child's; hold-agent-N makes the first run of
// iteration N block (the harness is killed meanwhile); TORTURE_SLEEP makes
// every run take a moment, in a child that ignores SIGINT (a background job
// of sh) so that only the harness's process-group escalation ends it;
// TORTURE_TRAP_INT makes the script itself handle SIGINT slowly (as a busy
// CLI might), so the harness needs its SIGTERM stage.
const agentScript = `T=$TORTURE_DIR
[ -n "$TORTURE_TRAP_INT" ] && trap 'sleep 5' INT
n=$AGENT_LOOP_ITERATION
` + recordPID + `
pid >> "$T/pids"
echo "step $n done" > "step$n.txt"
touch "$T/in-agent-$n"
if [ -e "$T/hold-agent-$n" ] && mkdir "$T/held-agent-$n" 2>/dev/null; then
	hold "$T" &
	wait
fi
if [ -n "$TORTURE_SLEEP" ]; then
	nap "$T" &
	wait
fi
`

// recordPID defines the shell functions of the agent and the check that
// record pids as the test sees them: the sandbox runs them in a PID
// namespace of their own, where $$ and $! are not the pids of /proc (the
// host's): pid prints the caller's from /proc/self/stat; hold records a
// child that sleeps 60 s and then touches holding; nap records a child that
// sleeps TORTURE_SLEEP.
const recordPID = `pid() { read -r p _ < /proc/self/stat; echo $p; }
hold() { sh -c 'read -r p _ < /proc/self/stat; echo $p >> "$0/pids"; touch "$0/holding"; exec sleep 60' "$1"; }
nap() { sh -c 'read -r p _ < /proc/self/stat; echo $p >> "$0/pids"; exec sleep "$1"' "$1" "$TORTURE_SLEEP"; }`

// checkHook is sourced by test.sh when TORTURE_DIR is set: hold-check-K
// blocks the first check that sees K step files, TORTURE_SLEEP slows every
// check down.
const checkHook = `[ -n "$TORTURE_TRAP_INT" ] && trap 'sleep 5' INT
` + recordPID + `
pid >> "$TORTURE_DIR/pids"
k=$(ls step*.txt 2>/dev/null | wc -l | tr -d ' ')
touch "$TORTURE_DIR/in-check-$k"
if [ -e "$TORTURE_DIR/hold-check-$k" ] && mkdir "$TORTURE_DIR/held-check-$k" 2>/dev/null; then
	hold "$TORTURE_DIR" &
	wait
fi
if [ -n "$TORTURE_SLEEP" ]; then
	nap "$TORTURE_DIR" &
	wait
fi
`

// fakeSSH is core.sshCommand for the trials that kill the harness during a
// push: origin is then "fake:<path>", reached through this "ssh" that runs
// git-receive-pack locally, after a pause on push N when hold-push-N exists.
// It re-executes itself with TORTURE_DIR so the push's processes can be
// found (git's own environment is filtered).
const fakeSSH = `[ -n "$TORTURE_DIR" ] || exec env TORTURE_DIR='%s' sh "$0" "$@"
echo $$ >> "$TORTURE_DIR/pushpids"
for last; do :; done
n=$(( $(cat "$TORTURE_DIR/pushes" 2>/dev/null || echo 0) + 1 ))
echo $n > "$TORTURE_DIR/pushes"
if [ -e "$TORTURE_DIR/hold-push-$n" ]; then
	touch "$TORTURE_DIR/holding"
	sleep 1
fi
exec sh -c "$last"
`

const testScript = `# Five steps; the task is done when all five are (TAP output).
[ -n "$TORTURE_DIR" ] && . "$TORTURE_DIR/hook.sh"
failed=0
echo "1..5"
for i in 1 2 3 4 5; do
	if [ "$(cat step$i.txt 2>/dev/null)" = "step $i done" ]; then echo "ok $i - step $i"; else echo "not ok $i - step $i"; failed=$((failed + 1)); fi
done
[ "$failed" -eq 0 ]
`

// fixture is one trial's world: a repository with a bare origin, the
// scripts, the markers, and the loop's id.
type fixture struct {
	t      *testing.T
	dir    string // scripts, markers, pid list, logs
	repo   string
	priv   string // the harness's private directory of repo: the live state
	origin string
	bin    string
	id     string
	base   string // main's commit before the loop
	env    []string
	logs   int
}

func newFixture(t *testing.T, id string, extraEnv ...string) *fixture {
	t.Helper()
	bin, err := exec.LookPath("agent-loop")
	if err != nil {
		t.Fatalf("the test binary is not installed as agent-loop in PATH (TestMain): %v", err)
	}
	// The agent and the check (the sandbox's user, as root) write their
	// pids and markers here.
	dir := sandboxtest.SharedDir(t)
	// The harness's private state: root's, out of the sandbox's reach (not
	// in dir, which the sandbox may write).
	stateDir := t.TempDir()
	f := &fixture{t: t, dir: dir, repo: filepath.Join(dir, "repo"), origin: filepath.Join(dir, "origin.git"), bin: bin, id: id}
	if f.priv, err = sandbox.PrivateDir(stateDir, f.repo); err != nil {
		t.Fatal(err)
	}
	f.env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + os.TempDir(), "LANG=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"TORTURE_DIR=" + dir, sandboxtest.WritableEnv(dir), "GORACE=atexit_sleep_ms=0", app.StateDirVar + "=" + stateDir,
	}, extraEnv...)
	t.Cleanup(func() { killTagged(dir) })
	for name, body := range map[string]string{"agent.sh": agentScript, "hook.sh": checkHook} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(f.repo, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"test.sh": testScript, "README.md": "five steps\n"} {
		if err := os.WriteFile(filepath.Join(f.repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.git(dir, "init", "-q", "--bare", f.origin)
	f.git(f.repo, "init", "-q", "-b", "main")
	f.git(f.repo, "add", "-A")
	f.git(f.repo, "commit", "-qm", "five steps to do")
	f.git(f.repo, "remote", "add", "origin", f.origin)
	f.base = f.git(f.repo, "rev-parse", "HEAD")
	return f
}

// git runs the real git CLI and returns its trimmed output.
func (f *fixture) git(dir string, args ...string) string {
	f.t.Helper()
	out, err := f.tryGit(dir, args...)
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (f *fixture) tryGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, f.env
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// loopDir is the live copy of the loop's directory (the seed copy in the
// work tree is written from it).
func (f *fixture) loopDir() string { return filepath.Join(f.priv, state.LoopsDir, f.id) }

func (f *fixture) runArgs() []string {
	return []string{"run", "--provider", "command", "--agent-command", "sh " + filepath.Join(f.dir, "agent.sh"),
		"--completion", "sh test.sh", "--push", "--loop-id", f.id, "--max-iterations", "5", "--quiet", tortureTask}
}

// start starts agent-loop with args; point selects a crash point ("" none).
func (f *fixture) start(point string, args ...string) (*exec.Cmd, string) {
	f.t.Helper()
	f.logs++
	logPath := filepath.Join(f.dir, fmt.Sprintf("log-%02d-%s.txt", f.logs, args[0]))
	logf, err := os.Create(logPath)
	if err != nil {
		f.t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(f.bin, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = f.repo, logf, logf
	cmd.Env = append(slices.Clone(f.env), crashpoint.EnvVar+"="+point)
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	return cmd, logPath
}

// exit is how an agent-loop process ended.
type exit struct {
	code   int
	killed bool // by SIGKILL
	signal syscall.Signal
	log    string
}

func (x exit) String() string {
	if x.signal != 0 {
		return "killed by " + x.signal.String()
	}
	return "exit " + strconv.Itoa(x.code)
}

// wait waits for cmd, at most limit (then it kills it and fails).
func (f *fixture) wait(cmd *exec.Cmd, logPath string, limit time.Duration) exit {
	f.t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		f.t.Fatalf("agent-loop %s did not end within %s\n%s", cmd.Args[1], limit, tail(logPath))
	}
	x := exit{log: logPath}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			x.signal = ws.Signal()
			x.killed = x.signal == syscall.SIGKILL
		} else {
			x.code = ws.ExitStatus()
		}
	} else if err != nil {
		f.t.Fatal(err)
	}
	return x
}

// run runs agent-loop to its end.
func (f *fixture) run(point string, args ...string) exit {
	f.t.Helper()
	cmd, lp := f.start(point, args...)
	return f.wait(cmd, lp, 90*time.Second)
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// waitFile waits until path exists or cmd ends; it reports whether it exists.
func waitFile(path string, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// tagged lists the live processes (zombies excluded) whose environment has
// TORTURE_DIR=dir: the agents, checks and their children of one trial.
func tagged(dir string) []int {
	want := []byte("\x00TORTURE_DIR=" + dir + "\x00")
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append([]byte{0}, env...), want) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i >= 0 && bytes.HasPrefix(st[i+1:], []byte(" Z")) {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

func killTagged(dir string) {
	for _, pid := range tagged(dir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// waitPushes waits for a push the killed harness left running to end by
// itself (git's children are not the loop's: nothing kills them).
func (f *fixture) waitPushes() {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(f.livePIDs("pushpids")) > 0 {
		if time.Now().After(deadline) {
			f.t.Fatalf("an orphaned push still runs after 20s: %v", f.livePIDs("pushpids"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recordedPIDs are the pids the agent and the check wrote down.
func (f *fixture) recordedPIDs() []int { return f.pidList("pids") }

func (f *fixture) pidList(name string) []int {
	b, _ := os.ReadFile(filepath.Join(f.dir, name))
	var out []int
	for _, l := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(l); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// liveRecorded lists the recorded pids that still run as this trial's
// processes (a pid reused by another process does not count).
func (f *fixture) liveRecorded() []int { return f.livePIDs("pids") }

func (f *fixture) livePIDs(list string) []int {
	live := map[int]bool{}
	for _, p := range tagged(f.dir) {
		live[p] = true
	}
	var out []int
	for _, p := range f.pidList(list) {
		if live[p] {
			out = append(out, p)
		}
	}
	return out
}

// readState reads the loop's state.json; nil when it does not exist.
func (f *fixture) readState() (*state.State, []byte) {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.loopDir(), "state.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	var st state.State
	if err := json.Unmarshal(b, &st); err != nil {
		f.t.Errorf("state.json does not parse: %v\n%s", err, b)
		return nil, b
	}
	return &st, b
}

func (f *fixture) readRegistry() *state.Registry {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.priv, state.RegistryFile))
	if errors.Is(err, os.ErrNotExist) {
		return &state.Registry{}
	}
	if err != nil {
		f.t.Fatal(err)
	}
	var r state.Registry
	if err := json.Unmarshal(b, &r); err != nil {
		f.t.Errorf("registry.json does not parse: %v\n%s", err, b)
	}
	return &r
}

// checkFiles checks what a crash may leave: state.json, registry.json and
// every checkpoint parse and are valid; analytics.json parses; the registry
// lock is free.
func (f *fixture) checkFiles(when string) {
	f.t.Helper()
	if _, b := f.readState(); b != nil {
		if err := schemas.Validate(schemas.LoopState, b); err != nil {
			f.t.Errorf("%s: state.json is not valid: %v", when, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(f.priv, state.RegistryFile)); err == nil {
		if err := schemas.Validate(schemas.LoopRegistry, b); err != nil {
			f.t.Errorf("%s: registry.json is not valid: %v\n%s", when, err, b)
		}
	}
	cps, _ := filepath.Glob(filepath.Join(f.loopDir(), "checkpoints", "*"))
	for _, p := range cps {
		if strings.HasPrefix(filepath.Base(p), ".") {
			continue // an unrenamed temporary file of an interrupted write
		}
		if _, err := decodeCheckpoint(p); err != nil {
			f.t.Errorf("%s: %v", when, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(f.loopDir(), "analytics", "analytics.json")); err == nil {
		var a state.Analytics
		if err := json.Unmarshal(b, &a); err != nil {
			f.t.Errorf("%s: analytics.json does not parse: %v", when, err)
		}
	}
	// flock locks die with their process: the registry lock must be free
	// at once (a blocking wait would show up as a slow status or run).
	if _, err := os.Stat(filepath.Join(f.priv, state.LockFile)); err == nil {
		fl := flock.New(filepath.Join(f.priv, state.LockFile))
		ok, err := fl.TryLock()
		if err != nil || !ok {
			f.t.Errorf("%s: the registry lock is held (ok=%v, err=%v) though no agent-loop runs", when, ok, err)
		} else {
			_ = fl.Unlock()
		}
	}
}

func decodeCheckpoint(path string) (*state.Checkpoint, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: not gzip: %w", filepath.Base(path), err)
	}
	var cp state.Checkpoint
	dec := json.NewDecoder(zr)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cp); err != nil {
		return nil, fmt.Errorf("checkpoint %s: not JSON: %w", filepath.Base(path), err)
	}
	if err := zr.Close(); err != nil {
		return nil, fmt.Errorf("checkpoint %s: truncated: %w", filepath.Base(path), err)
	}
	want := fmt.Sprintf("iteration-%03d.json.gz", cp.Iteration)
	if filepath.Base(path) != want || cp.Entry.Iteration != cp.Iteration {
		return nil, fmt.Errorf("checkpoint %s holds iteration %d (entry %d)", filepath.Base(path), cp.Iteration, cp.Entry.Iteration)
	}
	return &cp, nil
}

// checkStale runs `status --check-stale` and checks what it must leave: no
// loop marked running or completing without a live process, and a registry
// that agrees with the states (a terminal loop or one without a state has no
// entry, an active one has its status).
func (f *fixture) checkStale() {
	f.t.Helper()
	t0 := time.Now()
	x := f.run("", "status", "--check-stale")
	if x.code != 0 || x.signal != 0 {
		f.t.Fatalf("status --check-stale: %s\n%s", x, tail(x.log))
	}
	if d := time.Since(t0); d > 10*time.Second {
		f.t.Errorf("status --check-stale took %s (a stuck lock?)", d)
	}
	st, _ := f.readState()
	if st != nil && (st.Status == state.Running || st.Status == state.Completing) {
		f.t.Errorf("after status --check-stale the loop is still %s, its process being dead", st.Status)
	}
	for _, e := range f.readRegistry().ActiveLoops {
		if e.LoopID != f.id {
			continue
		}
		switch {
		case st == nil:
			f.t.Errorf("after status --check-stale the registry lists %s (%s), which has no state file: a slot lost for good", e.LoopID, e.Status)
		case !st.Status.Active():
			f.t.Errorf("after status --check-stale the registry lists %s as %s, but the loop is %s: a slot lost for good", e.LoopID, e.Status, st.Status)
		case e.Status != st.Status:
			f.t.Errorf("after status --check-stale the registry says %s is %s, its state says %s", e.LoopID, e.Status, st.Status)
		}
	}
}

// recover brings a killed loop to its end the way a person would: status
// --check-stale, then resume (or, when the loop never got a state file, run
// again). points are the crash points of the successive attempts. It
// returns the number of processes started.
func (f *fixture) recover(points []string) int {
	f.t.Helper()
	attempts := 0
	for i := 0; ; i++ {
		f.waitPushes()
		f.checkFiles(fmt.Sprintf("after kill %d", i+1))
		f.checkStale()
		if live := f.liveRecorded(); len(live) > 0 {
			f.t.Errorf("after status --check-stale, processes of the killed loop still run: %v", live)
		}
		point := ""
		if i < len(points) {
			point = points[i]
		}
		st, _ := f.readState()
		var x exit
		attempts++
		switch {
		case st == nil:
			x = f.run(point, f.runArgs()...)
		case st.Status.Terminal():
			return attempts - 1
		default:
			x = f.run(point, "resume", "--quiet", f.id)
		}
		switch {
		case x.code == 0 && x.signal == 0:
			return attempts
		case x.killed && point != "":
			continue
		default:
			f.t.Fatalf("attempt %d after the kill (crash point %q): %s\n%s", i+1, point, x, tail(x.log))
		}
	}
}

// verifyCompleted checks a finished trial: the loop completed with exactly
// one commit per iteration (git log trailers, git fsck --strict in the
// repository and in origin), the pushed branch equals the local one, main
// did not move, the tree is the expected one, every file is valid and
// agrees, nothing is left running or locked, and a new run starts at once.
func (f *fixture) verifyCompleted(wantTree string) {
	f.t.Helper()
	f.checkFiles("at the end")
	st, _ := f.readState()
	if st == nil {
		f.t.Fatal("no state.json at the end")
	}
	if st.Status != state.Completed || st.Iteration != 5 || st.PID != nil {
		f.t.Errorf("final state: status %s, iteration %d, pid %v; want completed, 5, null (stop reason: %s)", st.Status, st.Iteration, st.PID, st.Harness.StopReason)
	}
	if st.Harness.OriginalBranch != "main" || st.Harness.BaseSHA != f.base {
		f.t.Errorf("final state: original branch %q at %.12s, want main at %.12s", st.Harness.OriginalBranch, st.Harness.BaseSHA, f.base)
	}
	var hist []int
	for _, h := range st.IterationHistory {
		hist = append(hist, h.Iteration)
		// Every iteration wrote one step file, also those a resume
		// rebuilt (from the checkpoint, or from the commit itself).
		if h.FilesChanged != 1 || h.Additions != 1 || h.Commit == "" {
			f.t.Errorf("iteration %d recorded %d files +%d, commit %q; want 1 file +1 and its commit (rebuilt: %v)",
				h.Iteration, h.FilesChanged, h.Additions, h.Commit, h.Rebuilt)
		}
	}
	if !slices.Equal(hist, []int{1, 2, 3, 4, 5}) {
		f.t.Errorf("state iteration_history holds iterations %v, want 1..5 each once", hist)
	}
	if st.BestIteration == nil || st.BestIteration.Iteration != 5 {
		f.t.Errorf("state best_iteration = %+v, want iteration 5", st.BestIteration)
	}
	for _, e := range f.readRegistry().ActiveLoops {
		if e.LoopID == f.id {
			f.t.Errorf("the completed loop is still in the registry as %s", e.Status)
		}
	}
	var cps []int
	for n := 1; n <= 5; n++ {
		p := filepath.Join(f.loopDir(), "checkpoints", fmt.Sprintf("iteration-%03d.json.gz", n))
		cp, err := decodeCheckpoint(p)
		if err != nil {
			f.t.Errorf("checkpoint of iteration %d: %v", n, err)
			continue
		}
		if cp.LoopID != f.id {
			f.t.Errorf("checkpoint %d: loop id %q", n, cp.LoopID)
		}
		cps = append(cps, n)
	}
	if b, err := os.ReadFile(filepath.Join(f.loopDir(), "analytics", "analytics.json")); err != nil {
		f.t.Errorf("analytics.json: %v", err)
	} else {
		var a state.Analytics
		_ = json.Unmarshal(b, &a)
		var its []int
		for _, it := range a.Iterations {
			its = append(its, it.Iteration)
		}
		if !slices.Equal(its, []int{1, 2, 3, 4, 5}) || a.Totals.Iterations != 5 {
			f.t.Errorf("analytics.json holds iterations %v (total %d), want 1..5 each once", its, a.Totals.Iterations)
		}
	}

	branch := "agent-loop/" + f.id
	if main := f.git(f.repo, "rev-parse", "refs/heads/main"); main != f.base {
		f.t.Errorf("main moved from %.12s to %.12s: the user's branch must never move\n%s", f.base, main,
			f.git(f.repo, "log", "--format=%h %s", f.base+"..main"))
	}
	if _, err := f.tryGit(f.repo, "rev-parse", "--verify", "-q", "refs/heads/"+branch); err != nil {
		f.t.Fatalf("the loop branch %s does not exist; branches:\n%s", branch, f.git(f.repo, "branch", "-a"))
	}
	if its := f.iterationTrailers(f.repo, f.base+".."+branch); !slices.Equal(its, []int{1, 2, 3, 4, 5}) {
		f.t.Errorf("Agent-Loop-Iteration trailers on %s: %v, want 1..5 each once\n%s", branch, its,
			f.git(f.repo, "log", "--format=%h %s", f.base+".."+branch))
	}
	local := f.git(f.repo, "rev-parse", "refs/heads/"+branch)
	if remote := f.git(f.origin, "rev-parse", "refs/heads/"+branch); remote != local {
		f.t.Errorf("origin has %s at %.12s, the repository at %.12s: the last push is missing", branch, remote, local)
	}
	if tree := f.git(f.repo, "rev-parse", branch+"^{tree}"); wantTree != "" && tree != wantTree {
		f.t.Errorf("%s has tree %.12s, want %.12s (the tree of an uninterrupted run)\n%s", branch, tree, wantTree,
			f.git(f.repo, "ls-tree", "-r", branch))
	}
	if st.Harness.HeadSHA != local {
		f.t.Errorf("state head_sha %.12s, branch at %.12s", st.Harness.HeadSHA, local)
	}
	f.git(f.repo, "fsck", "--strict", "--no-progress")
	f.git(f.origin, "fsck", "--strict", "--no-progress")
	if s := f.git(f.repo, "status", "--porcelain"); s != "" {
		f.t.Errorf("the work tree is not clean at the end:\n%s", s)
	}
	var locks []string
	_ = filepath.WalkDir(filepath.Join(f.repo, ".git"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".lock") {
			locks = append(locks, p)
		}
		return nil
	})
	if len(locks) > 0 {
		f.t.Errorf("git lock files left behind: %v", locks)
	}
	var temps []string
	for _, root := range []string{f.repo, f.priv} { // the seed copy and the live one
		_ = filepath.WalkDir(filepath.Join(root, state.RootDir), func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), ".tmp-") {
				temps = append(temps, p)
			}
			return nil
		})
	}
	if len(temps) > 0 {
		f.t.Errorf("temporary files of interrupted writes left behind: %v", temps)
	}
	if live := f.liveRecorded(); len(live) > 0 {
		f.t.Errorf("processes of the loop still run at the end: %v", live)
	}

	// Nothing is stuck: status answers and a new loop starts and ends (its
	// check passes on the finished work: 0 iterations).
	t0 := time.Now()
	if x := f.run("", "status"); x.code != 0 || x.signal != 0 {
		f.t.Errorf("status at the end: %s\n%s", x, tail(x.log))
	}
	if d := time.Since(t0); d >= state.LockTimeout {
		f.t.Errorf("status at the end took %s: it waited for a lock", d)
	}
	next := strings.Replace(f.id, "ralph-torture-", "ralph-after-", 1)
	x := f.run("", "run", "--provider", "command", "--agent-command", "true", "--completion", "sh test.sh",
		"--loop-id", next, "--quiet", "check the five steps again")
	if x.code != 0 || x.signal != 0 {
		f.t.Errorf("a new run after the trial: %s\n%s", x, tail(x.log))
	}
}

// iterationTrailers lists the Agent-Loop-Iteration trailers of the commits
// of rng, sorted.
func (f *fixture) iterationTrailers(dir, rng string) []int {
	out := f.git(dir, "log", "--format=%(trailers:key=Agent-Loop-Iteration,valueonly)%x00", rng)
	var its []int
	for _, rec := range strings.Split(out, "\x00") {
		s := bufio.NewScanner(strings.NewReader(rec))
		for s.Scan() {
			if l := strings.TrimSpace(s.Text()); l != "" {
				n, err := strconv.Atoi(l)
				if err != nil {
					f.t.Errorf("trailer Agent-Loop-Iteration: %q", l)
				}
				its = append(its, n)
			}
		}
	}
	sort.Ints(its)
	return its
}

// crashTrial kills the harness at points[0] (a crash point of the run, or,
// with hold, while the held agent or check runs), then every resume at the
// next point, until a resume is left to finish.
type crashTrial struct {
	points []string
	hold   string // "agent-N" or "check-K": SIGKILL while it runs
	phase  string
}

func (c crashTrial) name() string {
	var parts []string
	if c.hold != "" {
		parts = append(parts, "running-"+c.hold)
	}
	for _, p := range c.points {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.NewReplacer("#", "_", ":", "_", "/", "_").Replace(strings.Join(parts, "+"))
}

// crashTrials are the kill points, spread over every phase of the loop.
func crashTrials() []crashTrial {
	var ts []crashTrial
	add := func(phase string, points ...string) {
		ts = append(ts, crashTrial{phase: phase, points: points})
	}
	hold := func(phase, what string, then ...string) {
		ts = append(ts, crashTrial{phase: phase, hold: what, points: append([]string{""}, then...)})
	}
	// Starting: the registry slot, the first state, the branch, the baseline.
	add("start", "registry-locked#1")
	add("start", "registry-write#1")
	add("start", "registered")
	add("start", "before-rename:state.json#1")
	hold("start", "check-0")
	add("start", "branch-started")
	add("start", "before-rename:state.json#2") // the baseline, before the branch
	add("start", "state-saved#1")
	add("start", "before-rename:state.json#3") // the branch recorded
	// Agent running, agent done.
	hold("agent", "agent-1")
	hold("agent", "agent-3")
	hold("agent", "agent-5")
	add("agent", "iteration-start#2")
	add("agent", "agent-done#2")
	add("agent", "agent-done#5")
	// Check running, check done (check-5 is the first run of iteration 5,
	// which passes; its confirmation run follows).
	hold("check", "check-1")
	hold("check", "check-3")
	hold("check", "check-5")
	add("check", "check-done#1")
	add("check", "check-done#4")
	// Commit, and between the commit and the state write.
	add("commit", "before-commit#3")
	for n := 1; n <= 5; n++ {
		add("commit", fmt.Sprintf("after-commit#%d", n))
	}
	// While the branch's ref lock is held (commit object written, branch
	// not yet moved): the resume must clear the lock.
	add("commit", "ref-locked#2")
	add("commit", "ref-locked#4")
	// Push (the sixth push is the publish step's).
	for _, n := range []int{1, 3, 5, 6} {
		add("push", fmt.Sprintf("push#%d", n))
	}
	for _, n := range []int{2, 5, 6} {
		add("push", fmt.Sprintf("after-push#%d", n))
	}
	// SIGKILL while git pushes (origin's receive-pack holds push 2, or the
	// publish step's push 6).
	hold("push", "push-2")
	hold("push", "push-6")
	// Checkpoint write.
	for _, n := range []int{1, 3, 5} {
		add("checkpoint", fmt.Sprintf("checkpoint-write#%d", n))
	}
	add("checkpoint", "before-rename:iteration-002.json.gz")
	add("checkpoint", "mid-write:iteration-004.json.gz")
	add("checkpoint", "after-checkpoint#2")
	add("checkpoint", "after-checkpoint#5")
	add("checkpoint", "before-rename:analytics.json#3")
	// State write.
	for n := 1; n <= 5; n++ {
		add("state", fmt.Sprintf("before-state-save#%d", n))
	}
	add("state", "before-rename:state.json#5") // iteration 2
	add("state", "mid-write:state.json#7")     // iteration 4
	add("state", "after-state-save#3")
	// Registry update (state written, registry not yet).
	// e.save: 1-2 start, 3-7 iterations 1-5, 8 completing, 9 final.
	for _, n := range []int{3, 5, 8} {
		add("registry", fmt.Sprintf("state-saved#%d", n))
	}
	// Registry updates: 1 register, 2-3 start, 4-8 iterations, 9-10 finish.
	for _, n := range []int{4, 7} {
		add("registry", fmt.Sprintf("registry-locked#%d", n))
	}
	add("registry", "before-rename:registry.json#6")
	// Finishing: completing saved, final state, final registry update.
	add("finish", "completing-saved")
	add("finish", "before-final-save")
	add("finish", "state-saved#9")
	add("finish", "registry-write#10")
	// Resumes killed too.
	add("resume", "after-commit#2", "reconcile-rebuilt", "resume-registered")
	add("resume", "before-state-save#3", "resume-registered", "reconcile-rebuilt")
	add("resume", "push#2", "after-commit#1", "before-state-save#2")
	add("resume", "state-saved#4", "registry-locked#1", "checkpoint-write#1")
	hold("resume", "agent-3", "reconcile-reset", "before-rename:state.json#1")
	return ts
}

func TestCrashTorture(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the torture tests read /proc (Linux)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("the torture tests need the git CLI")
	}
	start := time.Now()
	wantTree := referenceRun(t)
	trials := crashTrials()
	if testing.Short() {
		trials = sample(trials, 10)
	}
	type result struct {
		name, phase string
		dur         time.Duration
		attempts    int
		failed      bool
	}
	var (
		mu      sync.Mutex
		results []result
		wg      sync.WaitGroup
		sem     = make(chan struct{}, tortureParallel)
	)
	for i, tr := range trials {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(tr.name(), func(t *testing.T) {
				t0 := time.Now()
				attempts := crashTrialRun(t, fmt.Sprintf("ralph-torture-%08x", 0xc0000000+i), tr, wantTree)
				mu.Lock()
				results = append(results, result{tr.name(), tr.phase, time.Since(t0), attempts, t.Failed()})
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].name < results[j].name })
	phases := map[string]int{}
	var failed []string
	var total, longest time.Duration
	recoveries := 0
	for _, r := range results {
		phases[r.phase]++
		total += r.dur
		longest = max(longest, r.dur)
		recoveries += r.attempts
		if r.failed {
			failed = append(failed, r.name)
		}
	}
	t.Logf("crash torture: %d kill points (%v), %d recovery processes, %d failed %v; wall %s, trials sum %s, mean %s, longest %s",
		len(results), phases, recoveries, len(failed), failed, time.Since(start).Round(time.Millisecond),
		total.Round(time.Millisecond), (total / time.Duration(max(len(results), 1))).Round(time.Millisecond), longest.Round(time.Millisecond))
}

// referenceRun runs the loop once without interruption, checks it like any
// trial, and returns its final tree.
func referenceRun(t *testing.T) string {
	t.Helper()
	var tree string
	t.Run("reference", func(t *testing.T) {
		f := newFixture(t, "ralph-torture-0000aaaa")
		if x := f.run("", f.runArgs()...); x.code != 0 || x.signal != 0 {
			t.Fatalf("uninterrupted run: %s\n%s", x, tail(x.log))
		}
		tree = f.git(f.repo, "rev-parse", "agent-loop/"+f.id+"^{tree}")
		f.verifyCompleted(tree)
	})
	if tree == "" {
		t.FailNow()
	}
	return tree
}

// sample picks one trial per phase (the middle one), at most n.
func sample(ts []crashTrial, n int) []crashTrial {
	var phases []string
	byPhase := map[string][]crashTrial{}
	for _, tr := range ts {
		if len(byPhase[tr.phase]) == 0 {
			phases = append(phases, tr.phase)
		}
		byPhase[tr.phase] = append(byPhase[tr.phase], tr)
	}
	var out []crashTrial
	for _, p := range phases[:min(n, len(phases))] {
		out = append(out, byPhase[p][len(byPhase[p])/2])
	}
	return out
}

func crashTrialRun(t *testing.T, id string, tr crashTrial, wantTree string) int {
	f := newFixture(t, id)
	if tr.hold != "" {
		if err := os.WriteFile(filepath.Join(f.dir, "hold-"+tr.hold), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if strings.HasPrefix(tr.hold, "push-") {
		ssh := filepath.Join(f.dir, "ssh.sh")
		if err := os.WriteFile(ssh, []byte(fmt.Sprintf(fakeSSH, f.dir)), 0o644); err != nil {
			t.Fatal(err)
		}
		f.git(f.repo, "config", "core.sshCommand", "sh "+ssh)
		f.git(f.repo, "config", "ssh.variant", "simple")
		f.git(f.repo, "remote", "set-url", "origin", "fake:"+f.origin)
	}
	cmd, lp := f.start(tr.points[0], f.runArgs()...)
	if tr.hold != "" {
		if !waitFile(filepath.Join(f.dir, "holding"), 60*time.Second) {
			_ = cmd.Process.Kill()
			f.wait(cmd, lp, 10*time.Second)
			t.Fatalf("the %s never ran\n%s", tr.hold, tail(lp))
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
	x := f.wait(cmd, lp, 90*time.Second)
	if !x.killed {
		t.Fatalf("the run was not killed (crash point %q never reached?): %s\n%s", tr.points[0], x, tail(lp))
	}
	switch {
	case strings.HasPrefix(tr.hold, "push-"):
		// git's children are not the sandbox's: a push outlives its harness.
		if len(f.livePIDs("pushpids")) == 0 {
			t.Errorf("the held %s did not outlive the killed harness: the kill did not land while it ran", tr.hold)
		}
	case tr.hold != "":
		// The sandbox never outlives its harness: the held agent or check
		// (it waits 60 s) ends with it.
		deadline := time.Now().Add(10 * time.Second)
		for len(f.liveRecorded()) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if live := f.liveRecorded(); len(live) > 0 {
			t.Errorf("the held %s outlived the killed harness by 10s: %v", tr.hold, live)
		}
	}
	attempts := f.recover(tr.points[1:])
	f.verifyCompleted(wantTree)
	if t.Failed() {
		logs, _ := filepath.Glob(filepath.Join(f.dir, "log-*"))
		for _, l := range logs {
			t.Logf("%s:\n%s", filepath.Base(l), tail(l))
		}
	}
	return attempts
}

// TestCancelTorture interrupts the loop with SIGINT, then SIGTERM 1-3 s
// later, at random moments of every phase: within 5 s of the first signal
// the state must say paused (valid, no pid) and every process of the agent
// and the check must be gone; `resume` then completes the loop with exactly
// one commit per iteration.
func TestCancelTorture(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the torture tests read /proc (Linux)")
	}
	start := time.Now()
	seed := *tortureSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("cancellation seed %d (rerun with -torture.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	const sleep = "0.3" // every agent and check run takes 0.3 s in a child
	wantTree := referenceRun(t)
	n := 20
	if testing.Short() {
		n = 5
	}
	phases := []string{"baseline", "agent", "check", "anywhere"}
	type trial struct {
		trapINT  bool
		phase    string
		at       int           // iteration (agent) or step count (check)
		delay    time.Duration // after the phase began (anywhere: after the loop's state exists)
		termWait time.Duration
	}
	trials := make([]trial, n)
	for i := range trials {
		tr := trial{trapINT: i%2 == 1, phase: phases[i%len(phases)], termWait: time.Second + time.Duration(rng.Int64N(int64(2*time.Second)))}
		switch tr.phase {
		case "baseline":
			tr.delay = time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
		case "agent":
			tr.at = 1 + rng.IntN(5)
			tr.delay = time.Duration(rng.Int64N(int64(400 * time.Millisecond)))
		case "check":
			tr.at = 1 + rng.IntN(5)
			tr.delay = time.Duration(rng.Int64N(int64(400 * time.Millisecond)))
		default:
			tr.delay = time.Duration(rng.Int64N(int64(3500 * time.Millisecond)))
		}
		trials[i] = tr
	}
	type result struct {
		name     string
		stopped  time.Duration // first signal -> harness gone
		termSent bool          // the SIGTERM came while the harness still ran
		status   state.Status
		resumeOK bool
	}
	var (
		mu      sync.Mutex
		results []result
		wg      sync.WaitGroup
		sem     = make(chan struct{}, tortureParallel)
	)
	for i, tr := range trials {
		name := fmt.Sprintf("%02d-%s", i, tr.phase)
		if tr.at > 0 {
			name += strconv.Itoa(tr.at)
		}
		name += fmt.Sprintf("+%dms", tr.delay.Milliseconds())
		env := []string{"TORTURE_SLEEP=" + sleep}
		if tr.trapINT {
			name += "-trapINT"
			env = append(env, "TORTURE_TRAP_INT=1")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(name, func(t *testing.T) {
				f := newFixture(t, fmt.Sprintf("ralph-torture-%08x", 0xca000000+i), env...)
				cmd, lp := f.start("", f.runArgs()...)
				t0 := time.Now()
				// anywhere: from the moment the loop exists (its state is
				// written; before that a signal only stops the start-up).
				marker := filepath.Join("repo", state.LoopsDir, f.id, "state.json")
				switch tr.phase {
				case "baseline":
					marker = "in-check-0"
				case "agent":
					marker = fmt.Sprintf("in-agent-%d", tr.at)
				case "check":
					marker = fmt.Sprintf("in-check-%d", tr.at)
				}
				if !waitFile(filepath.Join(f.dir, marker), 60*time.Second) {
					t.Fatalf("%s never appeared\n%s", marker, tail(lp))
				}
				time.Sleep(tr.delay)
				sig := time.Now()
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatalf("SIGINT %s after the start: %v (the loop ended first?)", time.Since(t0), err)
				}
				term := time.AfterFunc(tr.termWait, func() { _ = cmd.Process.Signal(syscall.SIGTERM) })
				x := f.wait(cmd, lp, 30*time.Second)
				stopped := time.Since(sig)
				termSent := !term.Stop()
				if stopped > 5*time.Second {
					t.Errorf("the harness ended %s after SIGINT, want within 5s", stopped.Round(time.Millisecond))
				}
				if live := tagged(f.dir); len(live) > 0 {
					t.Errorf("processes of the agent or check outlived the harness: %v (recorded: %v)", live, f.recordedPIDs())
				}
				f.checkFiles("after the signals")
				st, _ := f.readState()
				if st == nil {
					t.Fatalf("no state.json after the signals (%s)\n%s", x, tail(lp))
				}
				r := result{name: name, stopped: stopped, status: st.Status, termSent: termSent}
				switch st.Status {
				case state.Paused:
					if x.code != 1 || x.signal != 0 {
						t.Errorf("an interrupted run ends with exit 1, got %s", x)
					}
					if st.PID != nil {
						t.Errorf("paused state records pid %d", *st.PID)
					}
					reg := f.readRegistry()
					found := false
					for _, e := range reg.ActiveLoops {
						if e.LoopID == f.id {
							found = e.Status == state.Paused
						}
					}
					if !found {
						t.Errorf("the registry does not list the loop as paused: %+v", reg.ActiveLoops)
					}
					if x := f.run("", "resume", "--quiet", f.id); x.code != 0 || x.signal != 0 {
						t.Fatalf("resume: %s\n%s", x, tail(x.log))
					}
					r.resumeOK = true
				case state.Completed:
					// The signal came after the check passed: the loop
					// finishes (publishing is not interrupted).
					if tr.phase != "anywhere" {
						t.Errorf("the loop completed though SIGINT came during the %s", tr.phase)
					}
				default:
					t.Fatalf("state after the signals: %s (%s), want paused\n%s", st.Status, st.Harness.StopReason, tail(lp))
				}
				f.verifyCompleted(wantTree)
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].name < results[j].name })
	var worst time.Duration
	var sum time.Duration
	statuses := map[state.Status]int{}
	terms := 0
	for _, r := range results {
		worst = max(worst, r.stopped)
		sum += r.stopped
		statuses[r.status]++
		note := ""
		if r.termSent {
			terms++
			note = " (SIGTERM arrived before it ended)"
		}
		t.Logf("%s: stopped %s after SIGINT%s, %s", r.name, r.stopped.Round(time.Millisecond), note, r.status)
	}
	t.Logf("cancellation torture: %d trials %v, %d with the SIGTERM during the shutdown; stop after SIGINT mean %s, worst %s; wall %s",
		len(results), statuses, terms, (sum / time.Duration(max(len(results), 1))).Round(time.Millisecond),
		worst.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
