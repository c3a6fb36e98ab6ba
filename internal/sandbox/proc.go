package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// procInfo is what /proc says of one process.
type procInfo struct {
	pid, ppid, pgid, sid int
	start                uint64 // clock ticks after boot: tells a reused pid apart
	uids                 [3]int // real, effective, saved
	state                byte   // R, S, D, Z, T, ...
}

// dead reports a zombie (or a process on its way out).
func (p procInfo) dead() bool { return p.state == 'Z' || p.state == 'X' || p.state == 'x' }

func (p procInfo) hasUID(uid int) bool {
	return p.uids[0] == uid || p.uids[1] == uid || p.uids[2] == uid
}

// scanProcs lists the processes /proc shows (those that vanish while it
// reads are left out), without their uids (see scanProcsUIDs).
func scanProcs() []procInfo { return scan(false) }

// scanProcsUIDs is scanProcs with the uids (one more read per process).
func scanProcsUIDs() []procInfo { return scan(true) }

func scan(uids bool) []procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	out := make([]procInfo, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, ok := readProcStat(pid, uids); ok {
			out = append(out, p)
		}
	}
	return out
}

// readProc reads /proc/<pid>/stat and the Uid line of /proc/<pid>/status.
func readProc(pid int) (procInfo, bool) { return readProcStat(pid, true) }

func readProcStat(pid int, uids bool) (procInfo, bool) {
	p := procInfo{pid: pid, uids: [3]int{-1, -1, -1}}
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return p, false
	}
	// The command name (field 2) is in parentheses and may hold anything.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return p, false
	}
	f := bytes.Fields(b[i+1:]) // state ppid pgrp session ...
	if len(f) < 4 || len(f[0]) == 0 {
		return p, false
	}
	p.state = f[0][0]
	p.ppid, _ = strconv.Atoi(string(f[1]))
	p.pgid, _ = strconv.Atoi(string(f[2]))
	p.sid, _ = strconv.Atoi(string(f[3]))
	if len(f) > 19 { // field 22, starttime; f[0] is field 3
		p.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	}
	if !uids {
		return p, true
	}
	st, err := os.ReadFile(dir + "/status")
	if err != nil {
		return p, false
	}
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			ids := strings.Fields(v)
			for k := 0; k < 3 && k < len(ids); k++ {
				p.uids[k], _ = strconv.Atoi(ids[k])
			}
			break
		}
	}
	return p, true
}

// processesOf lists the live processes one of whose uids is uid, but skip.
func processesOf(uid, skip int) []procInfo {
	var out []procInfo
	for _, p := range scanProcsUIDs() {
		if p.pid != skip && !p.dead() && p.hasUID(uid) {
			out = append(out, p)
		}
	}
	return out
}

// descendants returns the pids below the roots in the process tree procs
// describes (the roots included).
func descendants(procs []procInfo, roots map[int]bool) map[int]procInfo {
	kids := map[int][]procInfo{}
	byPID := map[int]procInfo{}
	for _, p := range procs {
		kids[p.ppid] = append(kids[p.ppid], p)
		byPID[p.pid] = p
	}
	out := map[int]procInfo{}
	var walk func(pid int)
	walk = func(pid int) {
		if _, seen := out[pid]; seen {
			return
		}
		if p, ok := byPID[pid]; ok {
			out[pid] = p
		}
		for _, k := range kids[pid] {
			walk(k.pid)
		}
	}
	for r := range roots {
		walk(r)
	}
	return out
}

// children lists the children of pid.
func children(procs []procInfo, pid int) []procInfo {
	var out []procInfo
	for _, p := range procs {
		if p.ppid == pid {
			out = append(out, p)
		}
	}
	return out
}
