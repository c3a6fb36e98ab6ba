package process

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// OwnerVar is the environment variable that tags every child of a loop
// (agent and completion command) with the loop's id. When a harness is
// killed with SIGKILL it cannot stop its children; whoever later finds the
// loop crashed calls KillTagged to end the processes it left behind, even
// those that left their process group.
const OwnerVar = "AGENT_LOOP_OWNER"

// KillTagged sends SIGKILL to every process (other than this one) whose
// environment has OwnerVar=tag, and to its process group. It returns how
// many processes it signalled. Linux only (/proc); elsewhere it does nothing.
func KillTagged(tag string) int {
	want := []byte(OwnerVar + "=" + tag + "\x00")
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if !bytes.HasPrefix(env, want) && !bytes.Contains(env, append([]byte{0}, want...)) {
			continue
		}
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 && pgid != syscall.Getpgrp() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		n++
	}
	return n
}
