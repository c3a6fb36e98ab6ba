package gitrepo

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/protected"
)

// Paths reach git literally: an agent's file named "*" (or ":(glob)**")
// under a protected directory is removed alone, never read as a pattern
// that takes every file with it; a name with a space and a rename are
// listed as git sees them. A twin repository shows the trap is real: the
// same removal without literal pathspecs takes the other files too.
func TestProtectedPathsAreLiteral(t *testing.T) {
	dir := newWorkRepo(t, map[string]string{"keep.txt": "keep\n", ".github/ci.yml": "on: push\n", "docs/a b.md": "a\n"})
	r, ctx, base := onLoopBranch(t, dir)
	writeFiles(t, dir, map[string]string{".github/*": "evil\n", ":(glob)**": "evil\n", "docs/a b.md": "changed\n"})
	if err := os.Rename(filepath.Join(dir, ".github", "ci.yml"), filepath.Join(dir, "ci-moved.yml")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Stage(ctx, base); err != nil {
		t.Fatal(err)
	}
	changes, err := r.StagedChanges(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, string(c.Status)+" "+c.OldPath+">"+c.Path)
	}
	slices.Sort(got)
	want := []string{"A >.github/*", "A >:(glob)**", "M >docs/a b.md", "R .github/ci.yml>ci-moved.yml"}
	if !slices.Equal(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
	_, revert := protected.MustCompile([]string{".github/**", `\:(glob)\*\*`}).Split(changes)
	restore, remove := protected.Restore(revert)
	if err := r.RestorePaths(ctx, base, restore, remove); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"keep.txt", ".github/ci.yml", "docs/a b.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{".github/*", ":(glob)**", "ci-moved.yml"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s is still there", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "docs", "a b.md")); string(b) != "changed\n" {
		t.Errorf("an unprotected change was touched: %q", b)
	}
	if _, err := r.Stage(ctx, base); err != nil {
		t.Fatal(err)
	}
	if left, _ := r.StagedChanges(ctx, base); len(left) != 1 || left[0].Path != "docs/a b.md" {
		t.Errorf("after the revert: %+v", left)
	}

	// The twin: plain git with the same path as a pathspec.
	twin := newWorkRepo(t, map[string]string{"keep.txt": "keep\n", "src/a.txt": "a\n"})
	writeFiles(t, twin, map[string]string{":(glob)**": "evil\n"})
	runGit(t, twin, "add", "-A")
	runGit(t, twin, "rm", "-q", "-r", "-f", "--", ":(glob)**")
	if _, err := os.Stat(filepath.Join(twin, "keep.txt")); err == nil {
		t.Errorf("the twin's git rm took only the literal file: the trap is not real")
	}
}

// StartMerge: a target the loop branch has is up to date; a target that
// moved is merged into the work tree (not committed) and AbortMerge puts
// the branch's tree back; CommitMerge then makes a two-parent commit.
func TestStartMergeAndAbort(t *testing.T) {
	dir := newWorkRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	bare := newBare(t, dir)
	r := openRepo(t, dir, Options{Remote: "origin"})
	ctx := ctxT(t)
	_, base, _ := r.Head(ctx)
	if err := r.StartBranch(ctx, "loop", base); err != nil {
		t.Fatal(err)
	}
	res, err := r.StartMerge(ctx, "main")
	if err != nil || !res.UpToDate {
		t.Fatalf("StartMerge on an unmoved target: %+v, %v", res, err)
	}
	writeFiles(t, dir, map[string]string{"a.txt": "a, ours\n"})
	mine, err := r.Commit(ctx, loopCommit())
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	runGit(t, filepath.Dir(other), "clone", "-q", bare, other)
	writeFiles(t, other, map[string]string{"b.txt": "b, theirs\n"})
	runGit(t, other, "commit", "-qam", "theirs")
	runGit(t, other, "push", "-q", "origin", "main")
	theirs := runGit(t, other, "rev-parse", "HEAD")

	res, err = r.StartMerge(ctx, "main")
	if err != nil || res.UpToDate || len(res.Conflicts) != 0 || res.Head != theirs || len(res.Commits) != 1 || res.Commits[0].Subject != "theirs" {
		t.Fatalf("StartMerge: %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(b) != "b, theirs\n" {
		t.Errorf("the work tree lacks the merge: %q", b)
	}
	if err := r.AbortMerge(ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(b) != "b\n" {
		t.Errorf("AbortMerge left %q", b)
	}
	if _, err := r.StartMerge(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	cr, err := r.CommitMerge(ctx, loopCommit())
	if err != nil {
		t.Fatal(err)
	}
	parents := strings.Fields(runGit(t, dir, "rev-list", "--parents", "-n", "1", cr.SHA))
	if len(parents) != 3 || parents[1] != mine.SHA || parents[2] != theirs {
		t.Errorf("merge commit parents %v, want %s %s", parents[1:], mine.SHA, theirs)
	}
	runGit(t, dir, "fsck", "--strict")
}

func loopCommit() loop.CommitRequest {
	return loop.CommitRequest{Subject: "agent-loop: iteration", Trailers: []loop.Trailer{{Key: "Agent-Loop-Id", Value: "ralph-merge-00000001"}}}
}
