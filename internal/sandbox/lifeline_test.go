package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/aiwg/agent-loop/internal/process"
)

// lifelineArg0 starts this test binary as a harness that runs a hostile
// target in the sandbox (a fork/exit/setsid chain, a daemon, and a process
// that never ends), says "ready" with the survive directory once they run,
// and then waits to be killed.
const lifelineArg0 = "sandbox-test-lifeline"

func lifelineMain(args []string) int {
	var sc scenario
	if err := json.Unmarshal([]byte(args[1]), &sc); err != nil {
		fmt.Println("error", err)
		return 1
	}
	sb, err := New(Options{WorkTree: sc.WorkTree, PrivateBase: sc.PrivateBase, Protect: sc.Protect, weak: sc.weakening()})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	dir := filepath.Join(sc.WorkTree, fmt.Sprintf("survive-%d", os.Getpid()))
	if err := os.MkdirAll(dir, 0o777); err == nil {
		_ = os.Chmod(dir, 0o777)
	}
	go func() {
		_, _ = process.Run(process.WithJail(context.Background(), sb), process.Spec{Path: "/proc/self/exe", Args: []string{dir}, Dir: sc.WorkTree,
			Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", probeEnv + "=survive-wait", "GORACE=" + os.Getenv("GORACE")}})
	}()
	for i := 0; i < 500 && !stillGrowing(filepath.Join(dir, "pids")); i++ {
	}
	fmt.Println("ready", dir)
	select {}
}

// A supervisor never outlives its harness: the harness is killed with
// SIGKILL while the agent's code runs (a process that never ends, a fork
// chain, a daemon), and within seconds nothing of the sandbox is left,
// supervisor included. Without the lifeline (weakened), the same kill
// leaves the supervisor and everything below it running: the orphaned
// supervisors that were found spinning for hours.
func TestSupervisorDiesWithTheHarness(t *testing.T) {
	needRoot(t)
	for _, c := range []struct {
		name     string
		rootMode bool
		weak     []string
		survives bool
	}{
		{"root", true, nil, false},
		{"root without a pid namespace", true, []string{"noPIDNS"}, false},
		{"without root", false, nil, false},
		{"without root or a pid namespace", false, []string{"noPIDNS"}, false},
		{"root, weakened: no lifeline", true, []string{"noLifeline"}, true},
		{"without root, weakened: no lifeline", false, []string{"noLifeline"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.rootMode)
			sc := f.sc
			sc.Weak = c.weak
			uid := -1
			if !c.rootMode {
				uid = harnessUID
			}
			harness, supervisor, dir := startLifeline(t, sc, uid, f.env)
			slotUID := procUID(supervisor)
			// The harness dies as a killed process does: no deferred code.
			if err := harness.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = harness.Wait()
			if c.survives {
				// The dead harness's slot lock is free now: a loop of
				// another test package could take the uid and sweep it,
				// ending the orphans this variant must show alive. The
				// test holds the slot while it looks.
				if release, ok := holdSlot(slotUID); ok {
					defer release()
				} else {
					t.Skipf("another loop took the sandbox user (uid %d) as soon as the harness died: its sweep may end the orphans, so they prove nothing here", slotUID)
				}
			}
			gone := false
			wait := 15 * time.Second
			if c.survives {
				wait = 3 * time.Second
			}
			deadline := time.Now().Add(wait)
			for time.Now().Before(deadline) && !gone {
				gone = !alive(supervisor)
				time.Sleep(20 * time.Millisecond)
			}
			growing := stillGrowing(filepath.Join(dir, "pids"))
			if c.survives {
				if gone || !growing {
					t.Errorf("weakened: the supervisor gone %v, the chain still running %v; without the lifeline both must outlive the harness (the test must be able to fail)", gone, growing)
				}
				// What the orphaned supervisors did for hours: reap the
				// chain's generations, one after another.
				t.Logf("the orphaned supervisor used %s of CPU time in one second", cpuIn(supervisor, time.Second))
				stopSurvivors(dir)
				_ = unix.Kill(supervisor, unix.SIGKILL)
				for i := 0; i < 500 && alive(supervisor); i++ {
					time.Sleep(10 * time.Millisecond)
				}
				return
			}
			if !gone {
				t.Errorf("the supervisor (pid %d) outlived its harness by 15 s", supervisor)
				_ = unix.Kill(supervisor, unix.SIGKILL)
			}
			if growing {
				t.Errorf("the agent's processes outlived the harness (%s keeps growing)", filepath.Join(dir, "pids"))
				stopSurvivors(dir)
			}
		})
	}
}

// startLifeline starts the lifeline harness as uid (-1: this process's)
// and returns it, the pid of the sandbox's supervisor and the survive
// directory once the sandbox's processes run.
func startLifeline(t *testing.T, sc scenario, uid int, env []string) (*exec.Cmd, int, string) {
	t.Helper()
	b, _ := json.Marshal(sc)
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{lifelineArg0, string(b)}, Env: append(env, "GORACE="+os.Getenv("GORACE"))}
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	var dir string
	select {
	case l := <-line:
		var ok bool
		if dir, ok = strings.CutPrefix(l, "ready "); !ok {
			t.Fatalf("the harness said %q", l)
		}
	case <-time.After(time.Minute):
		t.Fatal("the harness did not start its sandbox within a minute")
	}
	if !stillGrowing(filepath.Join(dir, "pids")) {
		t.Fatal("the sandbox's processes did not start")
	}
	sup := 0
	for _, p := range scanProcs() {
		if p.ppid == cmd.Process.Pid && argv0(p.pid) == stageSupervise {
			sup = p.pid
		}
	}
	if sup == 0 {
		t.Fatal("no supervisor among the harness's children")
	}
	return cmd, sup, dir
}

// cpuIn is the CPU time pid uses during d (utime + stime of /proc/<pid>/stat).
func cpuIn(pid int, d time.Duration) time.Duration {
	ticks := func() int64 {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			return 0
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 13 {
			return 0
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		return u + s
	}
	before := ticks()
	time.Sleep(d)
	return time.Duration(ticks()-before) * 10 * time.Millisecond // USER_HZ = 100
}

func argv0(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	a, _, _ := strings.Cut(string(b), "\x00")
	return a
}

// alive reports whether pid runs (a zombie is not alive).
// procUID is the real uid of pid (-1 when it cannot be read).
func procUID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			n, err := strconv.Atoi(f[1])
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// holdSlot takes the slot lock of the sandbox user uid, as a loop does
// (takeSlot), trying for a second; release gives it back.
func holdSlot(uid int) (release func(), ok bool) {
	if uid < 0 {
		return nil, false
	}
	dir := slotLockDir
	if fi, err := os.Stat("/run"); err != nil || !fi.IsDir() {
		dir = filepath.Join(os.TempDir(), "agent-loop-slots")
	}
	f, err := os.OpenFile(filepath.Join(dir, "slot-"+strconv.Itoa(uid)+".lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, false
	}
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			return func() { f.Close() }, true
		}
	}
	f.Close()
	return nil, false
}

func alive(pid int) bool {
	p, ok := readProc(pid)
	return ok && !p.dead()
}
