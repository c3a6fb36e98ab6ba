package process

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// AdoptOrphans makes this process the subreaper of its descendants: a
// process that leaves its process group (setsid, setpgid) and outlives its
// parent becomes this process's child instead of init's, where KillStrays
// finds it. (A container action's harness is PID 1 and adopts them anyway.)
//
// Deprecated: internal/sandbox makes the harness a child subreaper where it
// needs one (without root) and sweeps by itself. Kept until internal/app
// stops calling it.
func AdoptOrphans() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	return nil
}

// Children lists the child processes of this process.
func Children() []int { return children(os.Getpid()) }

// KillStrays kills and reaps every child process of this one but those in
// keep, and the children each leaves behind, until none is left (within two
// seconds). It is for the moment after an agent or a completion command
// ended: Run has then stopped the child's process group, so a child that
// was not there before the run (keep: Children then) escaped it (a daemon
// left to read the credentials of the next push, or to write to the
// workflow command files after the harness restored them). Call it only
// when no other child of this process is starting or running: it cannot
// tell them from strays. It returns the pids it killed.
//
// Deprecated: a walk of the process tree for two seconds loses against a
// chain that forks, exits and calls setsid; run children under a jail
// instead (WithJail with internal/sandbox), whose sweep holds by
// construction. Kept until internal/app stops calling it.
func KillStrays(keep []int) []int {
	var killed []int
	self, pgrp := os.Getpid(), syscall.Getpgrp()
	kept := map[int]bool{}
	for _, pid := range keep {
		kept[pid] = true
	}
	deadline := time.Now().Add(2 * time.Second)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); {
		var kids []int
		for _, pid := range children(self) {
			if !kept[pid] {
				kids = append(kids, pid)
			}
		}
		if len(kids) == 0 {
			quiet++
			time.Sleep(10 * time.Millisecond)
			continue
		}
		quiet = 0
		for _, pid := range kids {
			// Its group too, unless it joined the harness's own.
			if pg, err := syscall.Getpgid(pid); err == nil && pg != pgrp && pg > 1 {
				_ = syscall.Kill(-pg, syscall.SIGKILL)
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, 0, nil)
			killed = append(killed, pid)
		}
	}
	return killed
}

// children lists the processes whose parent is pid (/proc/<n>/stat).
func children(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:]) // state, ppid, ...
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(string(f[1])); err == nil && pp == pid {
			if n, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
