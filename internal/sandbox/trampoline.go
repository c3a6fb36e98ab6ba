package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The trampoline's stages: the agent-loop binary re-executed (through
// /proc/self/exe) with one of these as argv[0].
const (
	// stageSupervise drops to the sandbox user, becomes the reaper of the
	// sandbox (PID 1 of its namespace, or a child subreaper) and starts
	// stageExec; it exits with the target's status when the target ends.
	stageSupervise = "agent-loop-sandbox"
	// stageExec sets no_new_privs, applies Landlock and execs the target.
	stageExec = "agent-loop-sandbox-exec"
	// stageSweep runs as the sandbox user and sends kill(-1, SIGKILL)
	// until /proc shows no process of that user.
	stageSweep = "agent-loop-sandbox-sweep"
	// stageProbe exits 0: it tells whether a PID namespace can be made.
	stageProbe = "agent-loop-sandbox-probe"
	// stageAccess reports whether the sandbox user can execute a path.
	stageAccess = "agent-loop-sandbox-access"
)

// Exit codes of the trampoline when it cannot run the target (as a shell
// reports them).
const (
	exitCannotRun = 126
	exitNotFound  = 127
	exitSetup     = 125
)

// Main runs a trampoline stage when args[0] names one; it returns the exit
// code and true then, and false (having done nothing) otherwise. It must be
// the first thing main does:
//
//	if code, ok := sandbox.Main(os.Args); ok {
//		os.Exit(code)
//	}
func Main(args []string) (int, bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case stageSupervise:
		return supervise(args), true
	case stageExec:
		return execTarget(args), true
	case stageSweep:
		return sweepAsUser(args), true
	case stageProbe:
		return 0, true
	case stageAccess:
		if len(args) == 2 && unix.Faccessat(unix.AT_FDCWD, args[1], unix.X_OK, unix.AT_EACCESS) == nil {
			return 0, true
		}
		return 1, true
	}
	return 0, false
}

// policy is what the harness tells the trampoline (argv[1], JSON).
type policy struct {
	UID int `json:"uid"` // -1: keep the harness's (not root)
	GID int `json:"gid"`
	// Sweep: when the target ends, the supervisor sends kill(-1, SIGKILL)
	// until nothing is left that it may signal: every process of the
	// sandbox user (separate user), or every process of its PID namespace.
	// Never without one of them: kill(-1) would reach the harness's user.
	Sweep    bool     `json:"sweep,omitempty"`
	Landlock bool     `json:"landlock"`
	Scoped   bool     `json:"scoped"`
	Writable []string `json:"rw,omitempty"`  // directories the sandbox may write
	Devices  []string `json:"dev,omitempty"` // device files it may read, write and ioctl
	// Lifeline: the supervisor ends the sandbox and itself as soon as the
	// harness is gone (see watchHarness).
	Lifeline bool `json:"life,omitempty"`
}

func (p policy) encode() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// trampolineArgs is argv of a stage: name, policy, report fd (-1: none),
// target, "--", argv...
func trampolineArgs(stage string, p string, report int, target string, argv []string) []string {
	return append([]string{stage, p, strconv.Itoa(report), target, "--"}, argv...)
}

func parseArgs(args []string) (p policy, report int, target string, argv []string, err error) {
	if len(args) < 6 || args[4] != "--" {
		return p, -1, "", nil, fmt.Errorf("usage: %s POLICY REPORT-FD TARGET -- ARGV0 [ARGS...] (the harness starts this; it is not a command)", args[0])
	}
	if err := json.Unmarshal([]byte(args[1]), &p); err != nil {
		return p, -1, "", nil, fmt.Errorf("reading the sandbox policy: %w", err)
	}
	if report, err = strconv.Atoi(args[2]); err != nil {
		return p, -1, "", nil, fmt.Errorf("reading the report fd %q: %w", args[2], err)
	}
	return p, report, args[3], args[5:], nil
}

func fail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "agent-loop sandbox: "+format+"\n", a...)
	return exitSetup
}

// supervise is stage 1. It starts as the harness's child in a new session
// (and PID namespace when there is one), drops to the sandbox user, then
// runs stage 2 as its child and reaps everything that is orphaned to it.
// When the target ends it ends the rest (policy.Sweep), reports on the
// report fd how many processes it ended, and exits with the target's
// status (128+n for a signal n).
func supervise(args []string) int {
	// The drop below acts on this thread (the bounding set) and on all of
	// them (the ids); stage 2 is forked from this thread, so it inherits
	// both.
	runtime.LockOSThread()
	p, report, target, argv, err := parseArgs(args)
	if err != nil {
		return fail("%v", err)
	}
	if report >= 0 {
		unix.CloseOnExec(report) // not the target's
	}
	if p.UID >= 0 {
		if err := dropTo(p.UID, p.GID); err != nil {
			return fail("dropping to uid %d: %v", p.UID, err)
		}
	}
	if os.Getpid() != 1 {
		// Orphans of the sandbox come to this process, not to the harness.
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}
	if p.Lifeline && report >= 0 {
		// After the drop: a change of credentials clears the parent-death
		// signal.
		if os.Getpid() == 1 {
			_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
		}
		go watchHarness(report, p)
	}
	// The harness signals the whole process group; this process only
	// waits for the target (as PID 1 of a namespace it would not even get
	// a signal it has no handler for).
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	go func() {
		for range sigs {
		}
	}()
	proc, err := os.StartProcess("/proc/self/exe", trampolineArgs(stageExec, args[1], -1, target, argv), &os.ProcAttr{
		Env: os.Environ(), Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		return fail("starting the sandbox's second stage: %v", err)
	}
	code := exitSetup
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "agent-loop sandbox: waiting for %s: %v\n", target, err)
			break
		}
		if wpid != proc.Pid {
			continue // an orphan, reaped
		}
		if ws.Exited() {
			code = ws.ExitStatus()
		} else if ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			continue
		}
		break
	}
	n := 0
	// kill(-1) only where it cannot reach beyond the sandbox: as PID 1 of
	// its namespace, or as the unprivileged sandbox user.
	switch {
	case !p.Sweep:
	case os.Getpid() == 1:
		n = killAll(sweepBound, nil)
	case p.UID > 0 && os.Getuid() == p.UID && os.Geteuid() == p.UID:
		self := os.Getpid()
		n = killAll(sweepBound, func() bool { return len(processesOf(p.UID, self)) == 0 })
	}
	if report >= 0 {
		f := os.NewFile(uintptr(report), "report")
		fmt.Fprintf(f, "%d\n", n)
		f.Close()
	}
	return code
}

// watchHarness ends the sandbox, and this supervisor, as soon as the
// harness is gone: a supervisor must never outlive its harness (it would
// wait for its target, and reap what the target forks, for ever: two
// orphaned supervisors of a killed test were found spinning for hours).
// The harness holds the only read end of the report pipe, so the kernel
// wakes this poll with POLLERR on the write end the moment the harness
// exits, however it dies (SIGKILL included). Ending the sandbox is then:
// as PID 1 of its namespace, exiting (the kernel kills the namespace; the
// parent-death signal does the same if this goroutine never runs); as the
// separate user, kill(-1) until none of that user's processes is left; as
// the harness's own user without a namespace, killing every descendant of
// this subreaper. Each is bounded.
func watchHarness(report int, p policy) {
	fds := []unix.PollFd{{Fd: int32(report), Events: 0}}
	for {
		n, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
			break
		}
	}
	self := os.Getpid()
	switch {
	case self == 1:
	case p.UID > 0 && os.Getuid() == p.UID && os.Geteuid() == p.UID:
		killAll(sweepBound, func() bool { return len(processesOf(p.UID, self)) == 0 })
	default:
		_, _, _ = sweepDescendants(self, nil, 25, sweepBound)
	}
	os.Exit(exitSetup)
}

// killAll sends kill(-1, SIGKILL) and reaps what it may, until none is
// left or bound passes; it returns how many processes it reaped. kill(-1)
// reaches every process this one may signal but itself and init: as the
// sandbox user without capabilities, that user's; as PID 1 of a
// namespace, the namespace's. In a namespace, kill says when there is no
// other process (ESRCH); outside one it cannot (it counts the processes
// it may not signal too), so gone tells.
func killAll(bound time.Duration, gone func() bool) int {
	deadline := time.Now().Add(bound)
	n := 0
	for {
		err := unix.Kill(-1, unix.SIGKILL)
		for {
			var ws unix.WaitStatus
			wpid, werr := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if wpid <= 0 || werr != nil {
				break
			}
			n++
		}
		if gone == nil && errors.Is(err, unix.ESRCH) || gone != nil && gone() || time.Now().After(deadline) {
			return n
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// dropTo makes every thread of this process uid:gid with no supplementary
// groups and no capabilities. The calling thread's bounding set is emptied
// first (while CAP_SETPCAP is there), so not even a file capability could
// give one back to what it starts; the caller has locked it.
func dropTo(uid, gid int) error {
	if uid <= 0 || gid <= 0 {
		return fmt.Errorf("refusing uid %d gid %d: the sandbox user must not be root", uid, gid)
	}
	last := capLast()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(gid, gid, gid); err != nil {
		return fmt.Errorf("setresgid: %w", err)
	}
	if err := syscall.Setresuid(uid, uid, uid); err != nil {
		return fmt.Errorf("setresuid: %w", err)
	}
	if r, e, s := getresuid(); r != uid || e != uid || s != uid {
		return fmt.Errorf("uids are %d/%d/%d after setresuid(%d)", r, e, s, uid)
	}
	if eff, err := capEff(); err != nil || eff != 0 {
		return fmt.Errorf("capabilities left after the drop: CapEff %x (%v)", eff, err)
	}
	return nil
}

func getresuid() (int, int, int) {
	r, e, s := unix.Getresuid()
	return r, e, s
}

// capLast is the highest capability number of this kernel.
func capLast() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 63
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 63
	}
	return n
}

// capEff reads CapEff of this process.
func capEff() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, errors.New("no CapEff in /proc/self/status")
}

// execTarget is stage 2: on this one thread, no_new_privs and Landlock,
// then execve, which keeps only this thread's restrictions for the target.
func execTarget(args []string) int {
	runtime.LockOSThread()
	p, _, target, argv, err := parseArgs(args)
	if err != nil {
		return fail("%v", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("prctl(PR_SET_NO_NEW_PRIVS): %v", err)
	}
	if p.Landlock {
		if err := restrict(p); err != nil {
			return fail("landlock: %v", err)
		}
	}
	err = syscall.Exec(target, argv, os.Environ())
	who := "the sandbox user"
	if u := os.Getuid(); u != 0 {
		who = "uid " + strconv.Itoa(u)
	}
	switch {
	case errors.Is(err, unix.ENOENT):
		fmt.Fprintf(os.Stderr, "agent-loop sandbox: %s: not found\n", target)
		return exitNotFound
	case errors.Is(err, unix.EACCES):
		fmt.Fprintf(os.Stderr, "agent-loop sandbox: %s: permission denied for %s: install it where every user can read and run it (not under /root)\n", target, who)
		return exitCannotRun
	}
	fmt.Fprintf(os.Stderr, "agent-loop sandbox: exec %s: %v\n", target, err)
	return exitCannotRun
}

// sweepAsUser is the sweeper: started as the sandbox user, it kills every
// process of that user (kill(-1) reaches exactly those: its real and
// effective uid are the user's, and it has no capability) until /proc
// shows none, within a bound. argv: name, uid, deadline (ms), pgid whose
// members are not counted as left behind. It prints how many processes it
// found besides that group.
func sweepAsUser(args []string) int {
	if len(args) != 4 {
		return fail("usage: %s UID MILLISECONDS PGID", args[0])
	}
	uid, err1 := strconv.Atoi(args[1])
	ms, err2 := strconv.Atoi(args[2])
	pgid, err3 := strconv.Atoi(args[3])
	if err := errors.Join(err1, err2, err3); err != nil || uid <= 0 || os.Getuid() != uid || os.Geteuid() != uid {
		return fail("sweeper: bad arguments %q or not running as uid %s", args[1:], args[1])
	}
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	self := os.Getpid()
	counted := map[int]bool{}
	for first := true; ; first = false {
		left := processesOf(uid, self)
		for _, pr := range left {
			if first && pr.pgid != pgid {
				counted[pr.pid] = true
			}
		}
		if len(left) == 0 {
			fmt.Println(len(counted))
			return 0
		}
		if time.Now().After(deadline) {
			var pids []string
			for _, pr := range left {
				pids = append(pids, fmt.Sprintf("%d (%c)", pr.pid, pr.state))
			}
			fmt.Println(len(counted))
			fmt.Fprintf(os.Stderr, "agent-loop sandbox: processes of uid %d still there after %s: %s\n", uid, time.Duration(ms)*time.Millisecond, strings.Join(pids, ", "))
			return 1
		}
		_ = unix.Kill(-1, unix.SIGKILL)
		time.Sleep(time.Millisecond)
	}
}
