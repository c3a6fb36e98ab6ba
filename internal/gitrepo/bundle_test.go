package gitrepo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
)

// TestBundleCarriesTheBranch: a clone that has only the base fetches the
// loop's commits from the bundle, and git fsck accepts the result.
func TestBundleCarriesTheBranch(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	bare := newBare(t, dir) // has main (the base) only
	r := openRepo(t, dir, Options{})
	ctx := ctxT(t)
	_, base, _ := r.Head(ctx)
	if err := r.StartBranch(ctx, "agent-loop/x", base); err != nil {
		t.Fatal(err)
	}
	var head string
	for i := 1; i <= 2; i++ {
		writeFiles(t, dir, map[string]string{"src/app.go": "package app\n\n// iteration " + string(rune('0'+i)) + "\n"})
		res, err := r.Commit(ctx, loop.CommitRequest{Subject: "iteration"})
		if err != nil {
			t.Fatal(err)
		}
		head = res.SHA
	}
	b, err := r.Bundle(ctx, "agent-loop/x", base)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "branch.bundle")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	runGit(t, t.TempDir(), "clone", "-q", bare, other)
	runGit(t, other, "bundle", "verify", "-q", file)
	runGit(t, other, "fetch", "-q", file, "agent-loop/x:agent-loop/x")
	if got := runGit(t, other, "rev-parse", "agent-loop/x"); got != head {
		t.Errorf("the bundle's branch is at %s, want %s", got, head)
	}
	runGit(t, other, "fsck", "--strict", "--no-progress")
	if _, err := r.Bundle(ctx, "agent-loop/x", "--all"); err == nil {
		t.Error("Bundle took an option as the base")
	}
}
