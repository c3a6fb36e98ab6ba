package app_test

import (
	"os"
	"testing"

	"github.com/aiwg/agent-loop/internal/sandbox"
	"github.com/aiwg/agent-loop/internal/sandbox/sandboxtest"
)

// stateBase holds the private directories of this test binary's loops
// (AGENT_LOOP_STATE_DIR), removed at the end.
var stateBase string

func TestMain(m *testing.M) {
	// The sandbox re-executes this binary as its trampoline.
	if code, ok := sandbox.Main(os.Args); ok {
		os.Exit(code)
	}
	// Jailed stages of a race-enabled binary: no second of sleep at exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	var err error
	if stateBase, err = os.MkdirTemp("", "agent-loop-app-state-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(stateBase)
	os.Exit(code)
}

// harnessEnv is the harness environment of a test loop: env, with its
// private state under stateBase.
func harnessEnv(env ...string) []string {
	return append(env, "AGENT_LOOP_STATE_DIR="+stateBase, "GORACE=atexit_sleep_ms=0")
}

// workDir is a temporary directory the sandbox user can reach when the
// tests run as root.
func workDir(t *testing.T) string { return sandboxtest.TempDir(t) }
