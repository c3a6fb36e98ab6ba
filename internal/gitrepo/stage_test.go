package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
)

// TestStageDiffsEqualDiff: Stage returns, for each commit asked, the text
// Diff gives for it, repeated commits included.
func TestStageDiffsEqualDiff(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	r, ctx, base := onLoopBranch(t, dir)
	writeFiles(t, dir, map[string]string{"src/app.go": "package app\n\nfunc A() int { return 2 }\n"})
	first, err := r.Commit(ctx, loop.CommitRequest{Subject: "iteration 1"})
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"src/b.go": "package app\n\nfunc B() {}\n", ".aiwg/ralph/x": "state\n"})
	got, err := r.Stage(ctx, base, first.SHA, first.SHA)
	if err != nil {
		t.Fatal(err)
	}
	for i, from := range []string{base, first.SHA, first.SHA} {
		want, err := r.Diff(ctx, from)
		if err != nil {
			t.Fatal(err)
		}
		if got[i] != want {
			t.Errorf("Stage diff %d (from %s) differs from Diff:\n%s\nwant\n%s", i, from, got[i], want)
		}
	}
	if !strings.Contains(got[0], "return 2") || !strings.Contains(got[0], "b/src/b.go") || strings.Contains(got[1], "return 2") {
		t.Errorf("the diffs do not hold the right changes:\nfrom base:\n%s\nfrom iteration 1:\n%s", got[0], got[1])
	}
	if strings.Contains(got[0], ".aiwg") {
		t.Errorf("the diff shows .aiwg/:\n%s", got[0])
	}
	if _, err := r.Stage(ctx, base, "--output=/tmp/x"); err == nil {
		t.Error("Stage accepted an option as a commit")
	}
}

// TestCommitStagedCommitsWhatWasStaged: a Commit with Staged right after
// Stage commits the staged tree (what the judge saw), not a file written
// after it; that file stays in the work tree for the next iteration. Any
// other operation in between makes Commit stage again. A flag set in
// .git/index in between changes nothing: the harness stages into its own
// index, which only it writes, and commits what was judged.
func TestCommitStagedCommitsWhatWasStaged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		between func(t *testing.T, r *Repo, dir string)
		// late says whether the file written after Stage is committed.
		late bool
	}{
		{"nothing in between", func(*testing.T, *Repo, string) {}, false},
		{"another operation in between", func(t *testing.T, r *Repo, _ string) {
			if _, err := r.Dirty(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a flag in .git/index in between", func(t *testing.T, _ *Repo, dir string) {
			writeFiles(t, dir, map[string]string{"src/app_test.go": "package app\n"})
			runGit(t, dir, "update-index", "--assume-unchanged", "src/app_test.go")
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := newWorkRepo(t, nil)
			r, ctx, base := onLoopBranch(t, dir)
			writeFiles(t, dir, map[string]string{"src/app.go": "package app\n\nfunc A() int { return 2 }\n"})
			if _, err := r.Stage(ctx, base); err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, map[string]string{"late.txt": "written after the judge looked\n"})
			tc.between(t, r, dir)
			res, err := r.Commit(ctx, loop.CommitRequest{Subject: "iteration 1", Staged: true})
			if err != nil {
				t.Fatal(err)
			}
			files := runGit(t, dir, "ls-tree", "-r", "--name-only", res.SHA)
			if got := strings.Contains(files, "late.txt"); got != tc.late {
				t.Errorf("late.txt committed = %v, want %v; tree:\n%s", got, tc.late, files)
			}
			if !strings.Contains(runGit(t, dir, "show", res.SHA+":src/app.go"), "return 2") {
				t.Error("the staged change is not in the commit")
			}
			if strings.Contains(tc.name, "flag") && runGit(t, dir, "show", res.SHA+":src/app_test.go") == "package app" {
				t.Error("a change made after Stage (unjudged) was committed")
			}
			if _, err := os.Stat(filepath.Join(dir, "late.txt")); err != nil {
				t.Errorf("the late file left the work tree: %v", err)
			}
			runGit(t, dir, "fsck", "--strict", "--no-progress")
		})
	}
}
