// Package weaken switches single defences of the harness off, for the
// red-team tests that show each of their probes able to fail: a probe runs
// once against the full harness, where its attack must be stopped, and once
// against a harness without the defence it targets, where the same attack
// must get through (or the probe proves nothing).
//
// The switch is the environment variable AGENT_LOOP_TEST_WEAKEN, a comma-
// separated list of names (Names). Only a test binary (testing.Testing)
// or a binary built with `-tags agentloop_weaken` honours it; any other
// binary refuses to start while it is set (Check), so that no release of
// agent-loop can be talked into running without its defences.
package weaken

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// EnvVar names the defences to switch off.
const EnvVar = "AGENT_LOOP_TEST_WEAKEN"

// The defences that can be switched off, and what goes without each.
var known = map[string]string{
	// internal/sandbox
	"sandbox":  "no sandbox at all: the agent and the check run as the harness, unswept",
	"privsep":  "as root, the sandboxed code runs as root (no separate user)",
	"landlock": "no Landlock",
	"pidns":    "no PID namespace",
	"sweep":    "no sweep after a run",
	"protect":  "the workflow command files keep their modes",
	"lifeline": "the sandbox's supervisor does not die with the harness",
	// internal/app and internal/state
	"private": "the live state, registry and control file in the work tree's .aiwg/ (the old layout)",
	"stream":  "the loop's files are read whole into memory for the state ref and the artifact",
	"escape":  "agent-controlled text reaches the terminal and the reports as it is",
	"safefs":  "the harness's opens follow symlinks, wait on FIFOs and read without a size limit",
	// internal/app (the criterion's runs)
	"heldout": "no held-out re-run of the original tests",
	"plan":    "no held-out re-run and no focused runs: the full criterion every iteration",
	// internal/gitrepo (trusted git)
	"git-index":   "stage through the agent-writable .git/index",
	"git-objects": "read the repository's objects unverified",
	"git-dir":     "run git on the repository's .git as the agent left it",
	"git-home":    "the user's HOME and global git configuration",
	"git-refs":    "no check of the recorded branches",
	"git-cred":    "the push credential in a file, and a persisted token not refused",
	"git-bound":   "a git child blocked on a FIFO in the work tree waits for the context's deadline (no watchdog)",
}

// Names lists the defences that can be switched off.
func Names() []string {
	out := make([]string, 0, len(known))
	for k := range known {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tagged is set by the build tag agentloop_weaken (tagged.go).
var tagged bool

// honouredFn reports whether this binary may honour EnvVar (a variable:
// the test of a release binary replaces it).
var honouredFn = func() bool { return tagged || testing.Testing() }

func honoured() bool { return honouredFn() }

func list() []string {
	v := strings.TrimSpace(os.Getenv(EnvVar))
	if v == "" {
		return nil
	}
	var out []string
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// On reports whether the defence called name is switched off.
func On(name string) bool {
	if !honoured() {
		return false
	}
	return slices.Contains(list(), name)
}

// Active lists the defences switched off ("" when none), for the log.
func Active() string {
	if !honoured() {
		return ""
	}
	return strings.Join(list(), ",")
}

// WritableVar names directories (colon-separated) the sandboxed code may
// write besides its own, for tests whose scripted agents report what they
// saw in files outside the work tree. Honoured as EnvVar is.
const WritableVar = "AGENT_LOOP_TEST_WRITABLE"

// Writable lists the directories of WritableVar.
func Writable() []string {
	if !honoured() {
		return nil
	}
	var out []string
	for _, d := range strings.Split(os.Getenv(WritableVar), ":") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// Check says whether the process may start: an error when EnvVar is set in
// a binary that does not honour it, or names a defence that does not exist.
func Check() error {
	if os.Getenv(WritableVar) != "" && !honoured() {
		return fmt.Errorf("%s is set: it is for agent-loop's own tests and only a test build honours it; unset it", WritableVar)
	}
	names := list()
	if len(names) == 0 {
		return nil
	}
	if !honoured() {
		return fmt.Errorf("%s is set (%q): it switches defences off for agent-loop's own tests and only a test build honours it; unset it", EnvVar, os.Getenv(EnvVar))
	}
	for _, n := range names {
		if _, ok := known[n]; !ok {
			return fmt.Errorf("%s: unknown defence %q (valid: %s)", EnvVar, n, strings.Join(Names(), ", "))
		}
	}
	return nil
}
