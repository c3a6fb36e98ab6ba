package state

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Hostname is this host's name as recorded in the state.
func Hostname() string {
	h, _ := os.Hostname()
	return h
}

// ProcessStart returns the start time (in clock ticks since boot) of pid
// from /proc, 0 when unknown. Together with the pid it tells a live loop
// from an unrelated process that reused the pid.
func ProcessStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	// The command name may contain spaces and parentheses: fields start
	// after the last ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// Field 22 of stat is starttime; f[0] is field 3.
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
}

// PIDAlive reports whether pid is alive and, when start is known, is still
// the same process.
func PIDAlive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	if start != 0 {
		if cur := ProcessStart(pid); cur != 0 && cur != start {
			return false
		}
	}
	// A zombie is not alive.
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 0 && f[0] == "Z" {
				return false
			}
		}
	}
	return true
}

// Liveness is what stale detection concluded about a loop.
type Liveness int

const (
	Alive Liveness = iota // running and heart-beating (or paused/terminal: nothing to check)
	Stale                 // no heartbeat for StaleThreshold but the pid may still live
	Dead                  // its controlling process is gone: crashed
)

// CheckLiveness decides whether a loop marked running (or completing) is
// still controlled by a live process. On this host a dead pid means crashed
// at once; elsewhere (another runner, a copied state) only a heartbeat older
// than StaleThreshold does.
func CheckLiveness(st *State, lastActive time.Time, now time.Time) Liveness {
	if st.Status != Running && st.Status != Completing {
		return Alive
	}
	sameHost := st.Harness.Host == "" || st.Harness.Host == Hostname()
	if sameHost {
		if st.PID == nil || !PIDAlive(*st.PID, st.Harness.PIDStart) {
			return Dead
		}
		if now.Sub(lastActive) > StaleThreshold {
			return Stale
		}
		return Alive
	}
	if now.Sub(lastActive) > StaleThreshold {
		return Dead
	}
	return Alive
}

// MarkCrashed moves a loop whose process is gone to crashed.
func MarkCrashed(st *State, reason string, now time.Time) {
	st.Status = Crashed
	st.PID = nil
	st.ErrorContext = &ErrorContext{ErrorMessage: reason, ErrorTimestamp: now.UTC().Truncate(time.Second)}
	st.Harness.StopReason = reason
	st.Harness.StopKind = StopCrashed
}
