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
// orphaned is below it. Each round stops (SIGSTOP) every new process it
// finds, so that none of them can fork while the next round looks; only
// after quietRounds rounds in a row find nothing new do they all get
// SIGKILL (one empty round proves nothing: /proc is not read atomically,
// and a fork/exit chain can be between two entries). A chain that keeps
// outrunning the rounds until the bound is reported, not ignored. With a
// PID namespace none of this is needed: the kernel ends the namespace
// with its first process.
func (s *Sandbox) sweepTree(before map[int]bool) (int, error) {
	quietRounds := 25
	if s.clone != 0 {
		// The namespace is gone: a few rounds make sure of it.
		quietRounds = 3
	}
	self := os.Getpid()
	deadline := time.Now().Add(sweepBound)
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
		procs := scanProcs()
		roots := map[int]bool{}
		for _, c := range children(procs, self) {
			if !before[c.pid] {
				roots[c.pid] = true
			}
		}
		fresh := 0
		for pid, p := range descendants(procs, roots) {
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
	s.reap(func(p procInfo) bool { return !before[p.pid] })
	var left []procInfo
	for pid := range stopped {
		if p, ok := readProc(pid); ok && !p.dead() && p.start == stopped[pid].p.start {
			left = append(left, p)
		}
	}
	if len(left) > 0 || err != nil {
		return len(stopped), &LeftError{Who: "descendants of the harness", PIDs: pids(left), After: sweepBound, Err: err}
	}
	return len(stopped), nil
}

// reap collects the zombies among this process's children that match
// (never an exec.Cmd's own child: those are waited for by their Cmd, and
// the sandbox runs one child at a time).
func (s *Sandbox) reap(match func(procInfo) bool) { s.reapFrom(scanProcs(), match) }

// reapUIDs is reap for a match that looks at the uids.
func (s *Sandbox) reapUIDs(match func(procInfo) bool) { s.reapFrom(scanProcsUIDs(), match) }

func (s *Sandbox) reapFrom(procs []procInfo, match func(procInfo) bool) {
	self := os.Getpid()
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
