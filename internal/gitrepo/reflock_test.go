package gitrepo

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
)

// TestStaleBranchLockIsCleared: a harness killed while it held the lock of
// its branch (updateRef, crash point ref-locked) leaves
// refs/heads/<branch>.lock; the next harness's Checkout removes it, so the
// loop can commit again. A young lock (a git command holding it) is waited
// for, not broken.
func TestStaleBranchLockIsCleared(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// age of the lock; release removes it after that long (0: never).
		age, release time.Duration
	}{
		{"a dead harness's lock", time.Minute, 0},
		{"a live git command's lock", 0, 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := newWorkRepo(t, nil)
			_, ctx, base := onLoopBranch(t, dir)
			lock := filepath.Join(dir, ".git", "refs", "heads", "loop.lock")
			if err := os.WriteFile(lock, []byte(base+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			stamp := time.Now().Add(-tc.age)
			if err := os.Chtimes(lock, stamp, stamp); err != nil {
				t.Fatal(err)
			}
			if tc.release > 0 {
				time.AfterFunc(tc.release, func() { os.Remove(lock) })
			}
			// Another process opens the repository and resumes the loop.
			r2 := openRepo(t, dir, Options{})
			start := time.Now()
			if err := r2.Checkout(ctx, "loop"); err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(start); tc.release > 0 && waited < tc.release {
				t.Errorf("Checkout took %s: it did not wait for the young lock", waited)
			}
			if _, err := os.Lstat(lock); !os.IsNotExist(err) {
				t.Fatalf("the lock is still there: %v", err)
			}
			writeFiles(t, dir, map[string]string{"src/app.go": "package app\n"})
			res, err := r2.Commit(ctx, loop.CommitRequest{Subject: "iteration 1"})
			if err != nil {
				t.Fatal(err)
			}
			if got := runGit(t, dir, "rev-parse", "refs/heads/loop"); got != res.SHA {
				t.Errorf("loop is at %s, want the new commit %s", got, res.SHA)
			}
		})
	}
}
