package app_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aiwg/agent-loop/internal/sandbox"
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
// tests run as root (t.TempDir's directories are root's, mode 0700).
func workDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		for d := dir; d != os.TempDir() && d != "/" && d != "."; d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}
