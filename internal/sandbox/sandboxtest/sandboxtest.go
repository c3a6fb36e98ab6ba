// Package sandboxtest gives end-to-end tests directories the sandbox's user
// can reach. As root, the harness runs the agent and the completion command
// as a separate user (internal/sandbox), and refuses a work tree that user
// cannot reach; t.TempDir's directories are root's, mode 0700. The product's
// check stays as it is: the tests make their directories what a user's
// checkout is (reachable by others), and nothing else.
package sandboxtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/weaken"
)

// Reach lets other users through dir and every directory above it up to
// os.TempDir (mode 0755), when the test runs as root; without root the
// harness's user is the agent's, and nothing changes. dir must be under
// os.TempDir.
func Reach(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	tmp := filepath.Clean(os.TempDir())
	dir = filepath.Clean(dir)
	if !strings.HasPrefix(dir, tmp+string(filepath.Separator)) {
		return fmt.Errorf("sandboxtest: %s is not under %s", dir, tmp)
	}
	for d := dir; d != tmp; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			return fmt.Errorf("sandboxtest: letting the sandbox user through %s: %w", d, err)
		}
	}
	return nil
}

// Share makes dir reachable (Reach) and, as root, writable by every user
// (sticky, mode 1777: the sandbox user adds files but cannot remove or move
// the test's own), for the files a scripted agent writes to report what it
// saw. The sandbox's Landlock layer still forbids the write unless dir is
// also in the environment's weaken.WritableVar (WritableEnv).
func Share(dir string) error {
	if err := Reach(dir); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return nil
	}
	if err := os.Chmod(dir, 0o1777); err != nil {
		return fmt.Errorf("sandboxtest: sharing %s with the sandbox user: %w", dir, err)
	}
	return nil
}

// WritableEnv is the environment entry that lets the sandboxed code of a
// test build write dirs besides its own (weaken.WritableVar).
func WritableEnv(dirs ...string) string {
	return weaken.WritableVar + "=" + strings.Join(dirs, ":")
}

// TempDir is t.TempDir, reachable by the sandbox user.
func TempDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := Reach(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// SharedDir is t.TempDir, reachable and writable by the sandbox user
// (Share).
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := Share(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}
