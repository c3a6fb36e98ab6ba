// Package crashpoint is a test hook for crash-consistency tests: it lets a
// test kill agent-loop with SIGKILL at a precise point of its work (between
// a commit and the state write, inside the registry lock, before a rename),
// so the torture test (cmd/agent-loop/torture_test.go) can prove that every
// such crash is recoverable by `agent-loop resume`.
//
// The points are named calls to Hit placed at the phase boundaries of the
// engine and of the state files. The environment variable
// AGENT_LOOP_CRASHPOINT selects one: "name" kills the process at the first
// hit of the point, "name#N" at the N-th. Without the variable (every real
// run) Hit returns at once: the variable is read once, at start-up.
package crashpoint

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// EnvVar selects the crash point ("name" or "name#N").
const EnvVar = "AGENT_LOOP_CRASHPOINT"

var (
	target = parse(os.Getenv(EnvVar))
	hits   atomic.Int64
)

type spec struct {
	name string
	nth  int64
}

// parse reads "name" or "name#N" (N >= 1); anything else selects nothing.
func parse(v string) spec {
	v = strings.TrimSpace(v)
	if v == "" {
		return spec{}
	}
	name, n, ok := strings.Cut(v, "#")
	if !ok {
		return spec{name: v, nth: 1}
	}
	nth, err := strconv.ParseInt(n, 10, 64)
	if err != nil || nth < 1 || name == "" {
		return spec{}
	}
	return spec{name: name, nth: nth}
}

// Enabled reports whether a crash point is selected in this process.
func Enabled() bool { return target.name != "" }

// Hit kills the process with SIGKILL if name is the selected point and this
// is its selected hit. It does nothing (and costs a comparison) otherwise.
func Hit(name string) {
	if target.name == "" || name != target.name {
		return
	}
	if hits.Add(1) == target.nth {
		kill()
	}
}

// HitPath is Hit for a point about one file: the point's name is
// "name:<base name of path>" (before-rename:state.json). The name is only
// built when a point is selected.
func HitPath(name, path string) {
	if target.name == "" {
		return
	}
	Hit(name + ":" + filepath.Base(path))
}

// kill ends the process as a power cut or the OOM killer would: no deferred
// function, no flush, no signal handler runs.
func kill() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	for { // SIGKILL to oneself is delivered on return from the syscall
		time.Sleep(time.Second)
	}
}
