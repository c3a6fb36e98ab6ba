package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sweepBound bounds one sweep: every process of the sandbox is gone by
// then, or Sweep says which are not.
const sweepBound = 5 * time.Second

// LeftError says processes of the sandbox were still alive when a sweep
// gave up (a process in uninterruptible sleep, or a fork chain that
// outran a sweep without a PID namespace). The harness must not go on as
// if the sandbox were empty: nothing it writes or pushes next is safe from
// them.
type LeftError struct {
	Who   string // "uid 47001" or "descendants of the harness"
	PIDs  []int
	After time.Duration
	Err   error // what the sweeper said, if anything
}

func (e *LeftError) Error() string {
	msg := fmt.Sprintf("sandbox sweep: %d process(es) of %s still alive after %s (pids %v)", len(e.PIDs), e.Who, e.After, e.PIDs)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg + "; stop the loop and end them by hand (kill -9)"
}

func (e *LeftError) Unwrap() error { return e.Err }

// sweepUser ends every process of the sandbox user: the sweeper runs as
// that user and sends kill(-1, SIGKILL) until /proc shows none; then this
// process reaps those orphaned to it and looks for itself. pgid's members
// (the run's own group, already killed) are not counted.
func (s *Sandbox) sweepUser(pgid int) (int, error) {
	var out, errb bytes.Buffer
	cmd := &exec.Cmd{
		Path: "/proc/self/exe",
		Args: []string{stageSweep, strconv.Itoa(s.uid), strconv.Itoa(int(sweepBound / time.Millisecond)), strconv.Itoa(pgid)},
		Env:  helperEnv(),
		SysProcAttr: &syscall.SysProcAttr{
			Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid), Groups: []uint32{}},
			Setsid:     true,
		},
		Stdout: &out, Stderr: &errb,
	}
	runErr := cmd.Run()
	n, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(out.String(), "\n", 2)[0]))
	if runErr != nil {
		// The sweeper could not run or gave up: kill from here, as root.
		runErr = fmt.Errorf("sweeper: %w: %s", runErr, strings.TrimSpace(errb.String()))
		deadline := time.Now().Add(sweepBound)
		for left := processesOf(s.uid, -1); len(left) > 0 && time.Now().Before(deadline); left = processesOf(s.uid, -1) {
			for _, p := range left {
				signalProc(p, unix.SIGKILL)
			}
			time.Sleep(time.Millisecond)
		}
	}
	s.reapUIDs(func(p procInfo) bool { return p.hasUID(s.uid) })
	if left := processesOf(s.uid, -1); len(left) > 0 {
		return n, &LeftError{Who: fmt.Sprintf("uid %d", s.uid), PIDs: pids(left), After: sweepBound, Err: runErr}
	}
	return n, nil
}

// sweepTree ends the harness's descendants that were not its children
// before the run (before), for the mode without a separate user: the
// harness is a child subreaper, so everything the sandbox started and
// orphaned is below it (see sweepDescendants). With a PID namespace the
// kernel has ended the namespace with its first process already: a few
// rounds make sure of it.
func (s *Sandbox) sweepTree(before map[int]bool) (int, error) {
	quietRounds := 25
	if s.clone != 0 {
		quietRounds = 3
	}
	n, left, err := sweepDescendants(os.Getpid(), before, quietRounds, sweepBound)
	if len(left) > 0 || err != nil {
		return n, &LeftError{Who: "descendants of the harness", PIDs: pids(left), After: sweepBound, Err: err}
	}
	return n, nil
}

// sweepDescendants ends the descendants of self (a child subreaper) below
// those of its children that are not in before. Each round stops
// (SIGSTOP) every new process it finds, so that none of them can fork
// while the next round looks; only after quietRounds rounds in a row find
// nothing new do they all get SIGKILL (one empty round proves nothing:
// /proc is not read atomically, and a fork/exit chain can be between two
// entries). A chain that keeps outrunning the rounds until bound is
// reported (err), not ignored; left lists what survived the SIGKILL.
func sweepDescendants(self int, before map[int]bool, quietRounds int, bound time.Duration) (int, []procInfo, error) {
	deadline := time.Now().Add(bound)
	type held struct {
		fd int
		p  procInfo
	}
	stopped := map[int]held{}
	defer func() {
		for _, h := range stopped {
			unix.Close(h.fd)
		}
	}()
	var err error
	for quiet := 0; quiet < quietRounds; {
		if time.Now().After(deadline) {
			err = errors.New("new processes kept appearing")
			break
		}
		fresh := 0
		for pid, p := range below(self, before) {
			if _, ok := stopped[pid]; ok || p.dead() {
				continue
			}
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				continue // gone
			}
			// The pidfd names whatever has this pid now: the same process
			// only if it started when the scanned one did.
			if now, ok := readProcStat(pid, false); !ok || now.start != p.start {
				unix.Close(fd)
				continue
			}
			_ = unix.PidfdSendSignal(fd, unix.SIGSTOP, nil, 0)
			stopped[pid] = held{fd, p}
			fresh++
		}
		if fresh > 0 {
			quiet = 0
			continue
		}
		quiet++
		time.Sleep(200 * time.Microsecond)
	}
	for _, h := range stopped {
		_ = unix.PidfdSendSignal(h.fd, unix.SIGKILL, nil, 0)
	}
	// Wait for them to die (a pidfd polls readable when its process has
	// exited), reaping those orphaned to this process.
	for _, h := range stopped {
		fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}}
		ms := max(int(time.Until(deadline.Add(time.Second))/time.Millisecond), 1)
		_, _ = unix.Poll(fds, ms)
	}
	reapFrom(self, scanProcs(), func(p procInfo) bool { return !before[p.pid] })
	var left []procInfo
	for pid := range stopped {
		if p, ok := readProc(pid); ok && !p.dead() && p.start == stopped[pid].p.start {
			left = append(left, p)
		}
	}
	return len(stopped), left, err
}

// below returns the descendants of self under those of its children
// that are not in before. It walks the tree down through the kernel's
// children lists (/proc/<pid>/task/<tid>/children), which costs a read per
// process of the tree and not one per process of the machine: a round is
// short, and a fork/exit chain whose links live a few milliseconds is
// seen (each link is the subreaper's child once its parent is gone).
// Without those lists it reads all of /proc.
func below(self int, before map[int]bool) map[int]procInfo {
	kids, ok := childrenOf(self)
	if !ok {
		procs := scanProcs()
		roots := map[int]bool{}
		for _, c := range children(procs, self) {
			if !before[c.pid] {
				roots[c.pid] = true
			}
		}
		return descendants(procs, roots)
	}
	out := map[int]procInfo{}
	queue := make([]int, 0, len(kids))
	for _, k := range kids {
		if !before[k] {
			queue = append(queue, k)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if _, seen := out[pid]; seen {
			continue
		}
		p, ok := readProcStat(pid, false)
		if !ok {
			continue
		}
		out[pid] = p
		if k, ok := childrenOf(pid); ok {
			queue = append(queue, k...)
		}
	}
	return out
}

// childrenOf lists pid's children from the kernel's per-thread children
// lists; ok is false when the kernel has none (CONFIG_PROC_CHILDREN) or
// pid is gone.
func childrenOf(pid int) ([]int, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	var out []int
	found := false
	for _, tid := range tids {
		b, err := os.ReadFile(dir + "/" + tid + "/children")
		if err != nil {
			continue
		}
		found = true
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, found
}

// reapUIDs collects the zombies among this process's children that match
// (never an exec.Cmd's own child: those are waited for by their Cmd, and
// the sandbox runs one child at a time).
func (s *Sandbox) reapUIDs(match func(procInfo) bool) { reapFrom(os.Getpid(), scanProcsUIDs(), match) }

// reapFrom reaps self's dead children among procs that match.
func reapFrom(self int, procs []procInfo, match func(procInfo) bool) {
	for _, p := range children(procs, self) {
		if p.dead() && match(p) {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// signalProc signals p through a pidfd, after checking the pid still
// names the process that was scanned.
func signalProc(p procInfo, sig unix.Signal) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if now, ok := readProc(p.pid); ok && now.start == p.start {
		_ = unix.PidfdSendSignal(fd, sig, nil, 0)
	}
}

func pids(ps []procInfo) []int {
	out := make([]int, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.pid)
	}
	sort.Ints(out)
	return out
}
