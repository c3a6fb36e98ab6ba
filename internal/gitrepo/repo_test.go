package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/loop"
)

func TestOpenNotARepository(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Open(dir, Options{})
	if err == nil {
		t.Fatal("Open of a plain directory succeeded")
	}
	for _, want := range []string{"not a git repository", "git init", "-C DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestOpenSubdirectoryAndExclude(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	r := openRepo(t, filepath.Join(dir, "src"), Options{})
	if r.Root() != dir {
		t.Errorf("Root() = %s, want %s", r.Root(), dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), ".aiwg/\n") != 1 {
		t.Errorf("info/exclude = %q, want one .aiwg/ line", b)
	}
	// Exclude adds each pattern once, however often it is called.
	ctx := ctxT(t)
	for i := 0; i < 2; i++ {
		if err := r.Exclude(ctx, ".aiwg/", "*.tmp"); err != nil {
			t.Fatal(err)
		}
	}
	b, _ = os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
	if strings.Count(string(b), ".aiwg/\n") != 1 || strings.Count(string(b), "*.tmp\n") != 1 {
		t.Errorf("info/exclude = %q, want each pattern once", b)
	}
	// The sealed exclude file now holds *.tmp: the guard keeps it.
	writeFiles(t, dir, map[string]string{"x.tmp": "scratch\n"})
	dirty, err := r.Dirty(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirty) != 0 {
		t.Errorf("Dirty = %v, want nothing (x.tmp is excluded)", dirty)
	}
	if err := r.Exclude(ctx, "a\nb"); err == nil {
		t.Error("Exclude accepted a pattern with a newline")
	}
}

// loopSequence runs what the engine does for n iterations.
func loopSequence(t *testing.T, r *Repo, dir string, n int) (base string, results []loop.CommitResult) {
	t.Helper()
	ctx := ctxT(t)
	_, base, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.StartBranch(ctx, "agent-loop/demo", base); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		writeFiles(t, dir, map[string]string{
			"src/app.go":                            "package app\n\nfunc A() int { return " + string(rune('1'+i)) + " }\n",
			"src/new" + string(rune('0'+i)) + ".go": "package app\n",
			".aiwg/ralph/state.json":                `{"iteration":` + string(rune('0'+i)) + "}\n",
			"node_modules/dep/index.js":             "module.exports = 1\n",
		})
		if _, err := r.Diff(ctx, base); err != nil {
			t.Fatal(err)
		}
		check := "fail"
		if i == n {
			check = "pass"
		}
		res, err := r.Commit(ctx, loop.CommitRequest{
			Subject: "agent-loop: iteration " + string(rune('0'+i)),
			Body:    "The agent changed A.",
			Trailers: []loop.Trailer{
				{Key: "Agent-Loop-Id", Value: "ralph-demo-0123abcd"},
				{Key: "Agent-Loop-Iteration", Value: string(rune('0' + i))},
				{Key: "Agent-Loop-Check", Value: check},
				{Key: "Agent-Loop-Score", Value: "7" + string(rune('0'+i))},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	return base, results
}

func TestCommitLoopSequence(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	r := openRepo(t, dir, Options{})
	ctx := ctxT(t)
	base, results := loopSequence(t, r, dir, 3)

	runGit(t, dir, "fsck", "--strict", "--no-progress")
	if got := runGit(t, dir, "rev-list", "--count", base+"..agent-loop/demo"); got != "3" {
		t.Errorf("commits on the branch = %s, want 3 (one per iteration)", got)
	}
	trailers := runGit(t, dir, "log", "--reverse", "--format=%(trailers:only,unfold)%x00", base+"..agent-loop/demo")
	wantFirst := "Agent-Loop-Id: ralph-demo-0123abcd\nAgent-Loop-Iteration: 1\nAgent-Loop-Check: fail\nAgent-Loop-Score: 71\n"
	if first := strings.Split(trailers, "\x00")[0]; first != wantFirst {
		t.Errorf("git log %%(trailers) of iteration 1:\n%s", cmp.Diff(wantFirst, first))
	}
	// .aiwg/ and ignored files never enter a commit.
	tree := runGit(t, dir, "ls-tree", "-r", "--name-only", "agent-loop/demo")
	for _, bad := range []string{".aiwg/", "node_modules/"} {
		if strings.Contains(tree, bad) {
			t.Errorf("the commit tree holds %s:\n%s", bad, tree)
		}
	}
	if got, want := results[0].Stat, (loop.DiffStat{Files: 2, Additions: 2, Deletions: 1,
		Paths: []string{"src/app.go", "src/new1.go"}}); !cmp.Equal(got, want) {
		t.Errorf("Stat of iteration 1:\n%s", cmp.Diff(want, got))
	}
	if rl := runGit(t, dir, "reflog", "show", "--format=%H %gs", "agent-loop/demo"); !strings.HasPrefix(rl, results[2].SHA+" agent-loop: commit") {
		t.Errorf("branch reflog:\n%s", rl)
	}
	if rl := runGit(t, dir, "reflog", "show", "--format=%H", "HEAD"); !strings.HasPrefix(rl, results[2].SHA) {
		t.Errorf("HEAD reflog does not record the commit:\n%s", rl)
	}
	if head := runGit(t, dir, "rev-parse", "HEAD"); head != results[2].SHA {
		t.Errorf("HEAD = %s, want the last commit %s", head, results[2].SHA)
	}

	hist, err := r.History(ctx, "agent-loop/demo", base)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 3 {
		t.Fatalf("History returned %d commits, want 3", len(hist))
	}
	for i, c := range hist {
		if c.SHA != results[i].SHA {
			t.Errorf("History[%d].SHA = %s, want %s (oldest first)", i, c.SHA, results[i].SHA)
		}
		if !c.Time.Equal(fixedNow()) {
			t.Errorf("History[%d].Time = %v, want %v", i, c.Time, fixedNow())
		}
	}
	want := map[string]string{"Agent-Loop-Id": "ralph-demo-0123abcd", "Agent-Loop-Iteration": "3",
		"Agent-Loop-Check": "pass", "Agent-Loop-Score": "73"}
	if d := cmp.Diff(want, hist[2].Trailers); d != "" {
		t.Errorf("History[2].Trailers (-want +got):\n%s", d)
	}
	if hist[2].Subject != "agent-loop: iteration 3" {
		t.Errorf("History[2].Subject = %q", hist[2].Subject)
	}
	// Without a base, History lists the whole branch, initial commit first.
	all, err := r.History(ctx, "agent-loop/demo", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 || all[0].SHA != base || all[0].Trailers != nil {
		t.Errorf("History without base: %d commits, first %+v", len(all), all[0])
	}
}

func TestCommitEmptyWhenNothingChanged(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	r := openRepo(t, dir, Options{})
	ctx := ctxT(t)
	_, base, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.StartBranch(ctx, "loop", base); err != nil {
		t.Fatal(err)
	}
	res, err := r.Commit(ctx, loop.CommitRequest{Subject: "iteration 1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, dir, "rev-parse", res.SHA+"^"); got != base {
		t.Errorf("parent = %s, want %s", got, base)
	}
	if a, b := runGit(t, dir, "rev-parse", res.SHA+"^{tree}"), runGit(t, dir, "rev-parse", base+"^{tree}"); a != b {
		t.Errorf("empty commit has tree %s, base has %s", a, b)
	}
	if res.Stat.Files != 0 {
		t.Errorf("Stat = %+v, want zero", res.Stat)
	}
	if got := runGit(t, dir, "log", "-1", "--format=%an <%ae>", res.SHA); got != "agent-loop <agent-loop@users.noreply.github.com>" {
		t.Errorf("author = %q", got)
	}
}

func TestCommitExclude(t *testing.T) {
	t.Parallel()
	for _, diffFirst := range []bool{false, true} {
		name := "commit only"
		if diffFirst {
			name = "diff then commit"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := newWorkRepo(t, map[string]string{"a.txt": "a\n", ".github/workflows/ci.yml": "on: push\n"})
			r := openRepo(t, dir, Options{Exclude: []string{"secret/"}})
			ctx := ctxT(t)
			_, base, _ := r.Head(ctx)
			if err := r.StartBranch(ctx, "loop", base); err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, map[string]string{
				"a.txt": "a2\n", ".github/workflows/ci.yml": "on: [push, pull_request]\n",
				".github/workflows/new.yml": "on: push\n", "secret/key": "k\n", ".aiwg/ralph/x": "state\n",
			})
			if diffFirst {
				d, err := r.Diff(ctx, base)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(d, ".github/workflows/new.yml") {
					t.Errorf("Diff leaves out workflow changes; the judge must see them:\n%s", d)
				}
			}
			res, err := r.Commit(ctx, loop.CommitRequest{Subject: "it", Exclude: []string{".github/workflows/"}})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{".github/workflows/ci.yml", ".github/workflows/new.yml", "secret/key"}
			if d := cmp.Diff(want, res.Excluded); d != "" {
				t.Errorf("Excluded (-want +got):\n%s", d)
			}
			tree := runGit(t, dir, "ls-tree", "-r", "--name-only", res.SHA)
			if d := cmp.Diff(".github/workflows/ci.yml\na.txt", tree); d != "" {
				t.Errorf("commit tree (-want +got):\n%s", d)
			}
			if got := runGit(t, dir, "show", res.SHA+":.github/workflows/ci.yml"); got != "on: push" {
				t.Errorf("committed ci.yml = %q, want the base version", got)
			}
			// The excluded changes are still in the work tree, uncommitted.
			b, _ := os.ReadFile(filepath.Join(dir, ".github/workflows/ci.yml"))
			if string(b) != "on: [push, pull_request]\n" {
				t.Errorf("work tree ci.yml = %q, the edit was lost", b)
			}
			dirty, err := r.Dirty(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, dirty); d != "" {
				t.Errorf("Dirty after commit (-want +got):\n%s", d)
			}
		})
	}
}

func TestDiffGolden(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("line of a file that gets renamed\n", 20)
	dir := newWorkRepo(t, map[string]string{
		"keep.txt": "one\ntwo\nthree\n", "gone.txt": "bye\n", "old/name.txt": long, "bin.dat": "\x00\x01\x02",
		".gitignore": "node_modules/\n*.log\n",
	})
	r := openRepo(t, dir, Options{})
	ctx := ctxT(t)
	_, base, _ := r.Head(ctx)
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "old/name.txt"), filepath.Join(dir, "new/name.txt")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"keep.txt": "one\n2\nthree\n", "bin.dat": "\x00\x01\x03", "untracked/added.go": "package added\n",
		"node_modules/x/index.js": "ignored\n", "debug.log": "ignored\n", ".aiwg/ralph/state.json": "{}\n",
	})
	got, err := r.Diff(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.Diff(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if got != again {
		t.Errorf("Diff is not deterministic:\n%s", cmp.Diff(got, again))
	}
	golden := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("Diff (-want +got):\n%s", d)
	}
	for _, must := range []string{"rename from old/name.txt", "new file mode", "Binary files a/bin.dat and b/bin.dat differ",
		"+package added", "deleted file mode"} {
		if !strings.Contains(got, must) {
			t.Errorf("Diff lacks %q", must)
		}
	}
	for _, never := range []string{".aiwg", "node_modules", "debug.log"} {
		if strings.Contains(got, never) {
			t.Errorf("Diff holds %q", never)
		}
	}
	if _, err := r.Diff(ctx, "--output=/tmp/x"); err == nil {
		t.Error("Diff accepted an option as revision")
	}
}

func TestResetTo(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	r := openRepo(t, dir, Options{})
	ctx := ctxT(t)
	base, results := loopSequence(t, r, dir, 2)
	writeFiles(t, dir, map[string]string{"src/app.go": "half done\n", "scratch/tmp.txt": "x\n",
		"node_modules/keep.js": "kept\n"})
	if err := os.Remove(filepath.Join(dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	if err := r.ResetTo(ctx, results[0].SHA); err != nil {
		t.Fatal(err)
	}
	// The branch did not move; the work tree is iteration 1's tree.
	if got := runGit(t, dir, "rev-parse", "agent-loop/demo"); got != results[1].SHA {
		t.Errorf("branch moved to %s", got)
	}
	// Index and work tree both equal iteration 1's tree.
	if st := runGit(t, dir, "diff", "--cached", "--name-status", results[0].SHA); st != "" {
		t.Errorf("index differs from iteration 1:\n%s", st)
	}
	if st := runGit(t, dir, "diff", "--name-status", results[0].SHA); st != "" {
		t.Errorf("work tree differs from iteration 1:\n%s", st)
	}
	if fileExists(filepath.Join(dir, "scratch")) {
		t.Error("untracked scratch/ survived ResetTo")
	}
	if !fileExists(filepath.Join(dir, "README.md")) {
		t.Error("deleted README.md was not restored")
	}
	for _, keep := range []string{"node_modules/keep.js", ".aiwg/ralph/state.json"} {
		if !fileExists(filepath.Join(dir, keep)) {
			t.Errorf("ResetTo removed %s (ignored / harness state)", keep)
		}
	}
	d, err := r.Diff(ctx, results[0].SHA)
	if err != nil {
		t.Fatal(err)
	}
	if d != "" {
		t.Errorf("Diff from iteration 1 after ResetTo = %q, want empty", d)
	}
	if base == "" {
		t.Error("no base")
	}
}

func TestCommitTreeOf(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	r := openRepo(t, dir, Options{})
	ctx := ctxT(t)
	_, results := loopSequence(t, r, dir, 3)
	res, err := r.CommitTreeOf(ctx, results[0].SHA, loop.CommitRequest{
		Subject:  "agent-loop: publish iteration 1",
		Trailers: []loop.Trailer{{Key: "Agent-Loop-Iteration", Value: "1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := runGit(t, dir, "rev-parse", res.SHA+"^{tree}"), runGit(t, dir, "rev-parse", results[0].SHA+"^{tree}"); a != b {
		t.Errorf("tree %s != iteration 1 tree %s", a, b)
	}
	if p := runGit(t, dir, "rev-parse", res.SHA+"^"); p != results[2].SHA {
		t.Errorf("parent = %s, want the last iteration %s (history stays honest)", p, results[2].SHA)
	}
	if h := runGit(t, dir, "rev-parse", "agent-loop/demo"); h != res.SHA {
		t.Errorf("branch at %s, want %s", h, res.SHA)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("work tree differs from the published commit:\n%s", st)
	}
	// Iterations 2 and 3 added new2.go and new3.go; the publish commit removes them.
	want := []string{"src/app.go", "src/new2.go", "src/new3.go"}
	if d := cmp.Diff(want, res.Stat.Paths); d != "" {
		t.Errorf("Stat.Paths (-want +got):\n%s", d)
	}
	runGit(t, dir, "fsck", "--strict", "--no-progress")
}

func TestStartBranchAndCheckout(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	r := openRepo(t, dir, Options{})
	ctx := ctxT(t)
	_, base, _ := r.Head(ctx)
	writeFiles(t, dir, map[string]string{"wip.txt": "kept\n"})
	if err := r.StartBranch(ctx, "loop/a", base); err != nil {
		t.Fatal(err)
	}
	branch, sha, err := r.Head(ctx)
	if err != nil || branch != "loop/a" || sha != base {
		t.Fatalf("Head = %q %q %v", branch, sha, err)
	}
	if !fileExists(filepath.Join(dir, "wip.txt")) {
		t.Error("StartBranch lost the work tree")
	}
	res, err := r.Commit(ctx, loop.CommitRequest{Subject: "one"})
	if err != nil {
		t.Fatal(err)
	}
	// Reusing a branch that contains sha is fine; one that does not is an error.
	if err := r.StartBranch(ctx, "loop/a", base); err != nil {
		t.Errorf("reusing loop/a: %v", err)
	}
	runGit(t, dir, "branch", "other", base)
	runGit(t, dir, "update-ref", "refs/heads/other", runGit(t, dir, "commit-tree", "-m", "x", base+"^{tree}"))
	err = r.StartBranch(ctx, "other", res.SHA)
	if err == nil || !strings.Contains(err.Error(), "does not contain") {
		t.Errorf("StartBranch on a foreign branch: %v", err)
	}
	for _, bad := range []string{"-x", "a..b", "a b", "refs/heads/x", ""} {
		if err := r.StartBranch(ctx, bad, base); err == nil {
			t.Errorf("StartBranch(%q) succeeded", bad)
		}
	}
	if err := r.Checkout(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if b, _, _ := r.Head(ctx); b != "main" {
		t.Errorf("after Checkout HEAD is %q", b)
	}
	if err := r.Checkout(ctx, "nope"); err == nil {
		t.Error("Checkout of a missing branch succeeded")
	}
}

func TestHeadUnbornAndDetached(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	r := openRepo(t, dir, Options{})
	ctx := ctxT(t)
	if _, _, err := r.Head(ctx); !errors.Is(err, ErrUnbornHead) {
		t.Errorf("Head of an empty repository: %v, want ErrUnbornHead", err)
	}
	// The first commit on an unborn branch is a root commit.
	writeFiles(t, dir, map[string]string{"a": "a\n"})
	res, err := r.Commit(ctx, loop.CommitRequest{Subject: "root"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stat.Files != 1 || runGit(t, dir, "rev-list", "--count", "HEAD") != "1" {
		t.Errorf("root commit: %+v", res)
	}
	runGit(t, dir, "checkout", "-q", "--detach")
	r2 := openRepo(t, dir, Options{})
	if b, sha, err := r2.Head(ctx); err != nil || b != "" || sha != res.SHA {
		t.Errorf("detached Head = %q %q %v", b, sha, err)
	}
	if _, err := r2.Commit(ctx, loop.CommitRequest{Subject: "x"}); err == nil || !strings.Contains(err.Error(), "detached") {
		t.Errorf("Commit on a detached HEAD: %v", err)
	}
}

func TestCommitRequestValidation(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	r := openRepo(t, dir, Options{})
	ctx := ctxT(t)
	for name, req := range map[string]loop.CommitRequest{
		"empty subject":      {Subject: " "},
		"bad key":            {Subject: "s", Trailers: []loop.Trailer{{Key: "Agent Loop", Value: "x"}}},
		"digit key":          {Subject: "s", Trailers: []loop.Trailer{{Key: "Score2", Value: "x"}}},
		"multi-line value":   {Subject: "s", Trailers: []loop.Trailer{{Key: "A", Value: "x\ny"}}},
		"exclude outside":    {Subject: "s", Exclude: []string{"../x"}},
		"multi-line subject": {Subject: "a\nb"},
	} {
		if _, err := r.Commit(ctx, req); err == nil {
			t.Errorf("%s: Commit accepted %+v", name, req)
		}
	}
	if n := runGit(t, dir, "rev-list", "--count", "HEAD"); n != "1" {
		t.Errorf("a rejected request made a commit (%s commits)", n)
	}
}

func TestDirty(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	r := openRepo(t, dir, Options{})
	ctx := ctxT(t)
	d, err := r.Dirty(ctx)
	if err != nil || len(d) != 0 {
		t.Fatalf("Dirty of a clean tree = %v, %v", d, err)
	}
	writeFiles(t, dir, map[string]string{"README.md": "changed\n", "n/new.txt": "x\n", ".aiwg/s": "x\n",
		"node_modules/m.js": "x\n"})
	os.Remove(filepath.Join(dir, "src/app_test.go"))
	d, err = r.Dirty(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"README.md", "n/new.txt", "src/app_test.go"}, d); diff != "" {
		t.Errorf("Dirty (-want +got):\n%s", diff)
	}
}

func TestContextCancelled(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	r := openRepo(t, dir, Options{})
	ctx := ctxT(t)
	c2, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Diff(c2, "HEAD"); !errors.Is(err, context.Canceled) {
		t.Errorf("Diff with a cancelled context: %v", err)
	}
}

func TestPackedRefsAndHeldLock(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	r, ctx, _ := onLoopBranch(t, dir)
	runGit(t, dir, "pack-refs", "--all", "--prune")
	if fileExists(filepath.Join(dir, ".git", "refs", "heads", "loop")) {
		t.Fatal("pack-refs left the loose ref")
	}
	one, err := r.Commit(ctx, loop.CommitRequest{Subject: "from a packed ref"})
	if err != nil {
		t.Fatal(err)
	}
	// A lock someone else holds on the branch: git reports it, clearly.
	writeFiles(t, dir, map[string]string{".git/refs/heads/loop.lock": ""})
	_, err = r.Commit(ctx, loop.CommitRequest{Subject: "locked"})
	if err == nil || !strings.Contains(err.Error(), "lock") {
		t.Errorf("Commit with the branch locked: %v", err)
	}
	os.Remove(filepath.Join(dir, ".git", "refs", "heads", "loop.lock"))
	two, err := r.Commit(ctx, loop.CommitRequest{Subject: "after the lock"})
	if err != nil {
		t.Fatal(err)
	}
	if p := runGit(t, dir, "rev-parse", two.SHA+"^"); p != one.SHA {
		t.Errorf("parent %s, want %s", p, one.SHA)
	}
	runGit(t, dir, "fsck", "--strict", "--no-progress")
}

// TestLinkedWorktree: a loop in a linked worktree (`git worktree add`)
// mirrors its branch into the common directory and its HEAD and index into
// the worktree's own git directory.
func TestLinkedWorktree(t *testing.T) {
	t.Parallel()
	main := newWorkRepo(t, nil)
	bare := newBare(t, main)
	wt := filepath.Join(t.TempDir(), "linked")
	runGit(t, main, "worktree", "add", "-q", "-b", "feature", wt)
	e := openProbe(t, wt, bare, weakness{}, Options{})
	writeFiles(t, wt, map[string]string{"src/app.go": "package app // linked\n"})
	e.judge(t)
	res := e.publish(t, map[string]string{"src/app.go": "package app // linked\n"})
	if got := runGit(t, main, "rev-parse", "refs/heads/loop"); got != res.SHA {
		t.Errorf("the common directory's loop = %s, want %s", got, res.SHA)
	}
	if st := runGit(t, wt, "status", "--porcelain"); st != "" {
		t.Errorf("git status in the linked worktree:\n%s", st)
	}
	if b := runGit(t, main, "symbolic-ref", "HEAD"); b != "refs/heads/main" {
		t.Errorf("the main worktree's HEAD moved to %s", b)
	}
	if b := runGit(t, main, "rev-parse", "feature"); b != e.base {
		t.Errorf("the user's branch feature moved to %s", b)
	}
	runGit(t, main, "fsck", "--strict", "--no-progress")
}

// TestPrivateDirChecked: the private directory must be the harness's
// alone: not inside the work tree, not writable by others, not another
// repository's.
func TestPrivateDirChecked(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	for name, priv := range map[string]string{
		"inside the work tree": filepath.Join(dir, ".aiwg", "private"),
	} {
		if _, err := Open(dir, Options{PrivateDir: priv}); err == nil || !strings.Contains(err.Error(), "inside the work tree") {
			t.Errorf("%s: Open = %v", name, err)
		}
	}
	open := filepath.Join(t.TempDir(), "open")
	os.MkdirAll(open, 0o777)
	os.Chmod(open, 0o777)
	if _, err := Open(dir, Options{PrivateDir: open}); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("a world-writable private directory: %v", err)
	}
	priv := filepath.Join(t.TempDir(), "private")
	r := openRepo(t, dir, Options{PrivateDir: priv})
	if _, _, err := r.Head(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	other := newWorkRepo(t, nil)
	if _, err := Open(other, Options{PrivateDir: priv}); err == nil || !strings.Contains(err.Error(), "belongs to the repository") {
		t.Errorf("another repository's private directory: %v", err)
	}
	// Reopened (a resume), it keeps what it recorded: the harness's HEAD,
	// the loop branch. The user's branch, which the user may have moved
	// between runs, is recorded where it is now, and said.
	if err := r.StartBranch(ctxT(t), "loop", "main"); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"src/app.go": "package app // one\n"})
	one, err := r.Commit(ctxT(t), loop.CommitRequest{Subject: "one"})
	if err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "checkout", "-q", "main")
	runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "the user's own work")
	users := runGit(t, dir, "rev-parse", "main")
	runGit(t, dir, "update-ref", "refs/heads/loop", users)
	r2 := openRepo(t, dir, Options{PrivateDir: priv})
	if b, sha, err := r2.Head(ctxT(t)); err != nil || b != "loop" || sha != one.SHA {
		t.Errorf("reopened private directory: Head = %q %s, %v; want the recorded loop at %s", b, sha, err, one.SHA)
	}
	if got := runGit(t, dir, "rev-parse", "main"); got != users {
		t.Errorf("the user's commit on main was undone: main = %s, want %s", got, users)
	}
	if got := runGit(t, dir, "rev-parse", "loop"); got != one.SHA {
		t.Errorf("the loop branch was not put back: %s, want %s", got, one.SHA)
	}
	kinds := map[string]string{}
	for _, n := range r2.Notices() {
		kinds[n.Path] = n.Kind
	}
	if kinds["refs/heads/main"] != NoticeBranchRerecorded || kinds["refs/heads/loop"] != NoticeBranchRestored {
		t.Errorf("notices = %v", kinds)
	}
}

// TestAbandonedTempDirsRemoved: the temporary private directory of a
// harness process that is gone (killed, or never Closed) is removed by the
// next one; a live process's is kept.
func TestAbandonedTempDirsRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(tmp, tempPrefix+strconv.Itoa(gone.Process.Pid)+"-1")
	live := filepath.Join(tmp, tempPrefix+"1-2") // pid 1 is alive
	for _, d := range []string{dead, live} {
		writeFiles(t, d, map[string]string{"trusted-git/trust.json": "{}"})
	}
	dir := newWorkRepo(t, nil)
	r := openRepo(t, dir, Options{})
	if _, _, err := r.Head(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if fileExists(dead) {
		t.Error("the dead process's private directory is still there")
	}
	if !fileExists(live) {
		t.Error("a live process's private directory was removed")
	}
	if err := r.Close(); err != nil || fileExists(r.opts.PrivateDir) {
		t.Errorf("Close: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, tempPrefix+strconv.Itoa(os.Getpid())+"-*")); len(left) != 0 {
		t.Errorf("Close left %v", left)
	}
}
