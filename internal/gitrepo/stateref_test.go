package gitrepo

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/loop"
)

func TestStateRefRoundTrip(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"go-git", "fast-import"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			const ref = "refs/agent-loop/ralph-demo-0123abcd"
			dir := newWorkRepo(t, nil)
			bare := newBare(t, dir)
			ctx := ctxT(t)
			r := openRepo(t, dir, Options{})
			r.goGit = backend == "go-git"

			v1 := map[string][]byte{"state.json": []byte(`{"iteration":1}` + "\n"),
				"checkpoints/iteration-001.json.gz": {0x1f, 0x8b, 0x08, 0x00, 0xff}}
			sha1, err := r.PushRef(ctx, ref, v1, "state: iteration 1")
			if err != nil {
				t.Fatal(err)
			}
			v2 := map[string][]byte{"state.json": []byte(`{"iteration":2}` + "\n"),
				"checkpoints/iteration-001.json.gz": v1["checkpoints/iteration-001.json.gz"],
				"checkpoints/iteration-002.json.gz": []byte("two"), "a b/c d.txt": []byte("spaces")}
			sha2, err := r.PushRef(ctx, ref, v2, "state: iteration 2")
			if err != nil {
				t.Fatal(err)
			}
			// The state lives in the harness's private git directory, not
			// in the agent-writable .git.
			if p := privGit(t, r, "rev-parse", sha2+"^"); p != sha1 {
				t.Errorf("parent of the second state commit = %s, want %s", p, sha1)
			}
			if got := runGit(t, bare, "rev-parse", ref); got != sha2 {
				t.Errorf("remote %s = %s, want %s", ref, got, sha2)
			}
			runGit(t, dir, "fsck", "--strict", "--no-progress")
			privGit(t, r, "fsck", "--strict", "--no-progress")
			if out, err := runGitErr(dir, nil, "rev-parse", "--verify", "-q", ref); err == nil {
				t.Errorf("the state ref is in the agent-writable .git: %s", out)
			}
			tree := privGit(t, r, "ls-tree", "-r", "--name-only", sha2)
			if d := cmp.Diff("a b/c d.txt\ncheckpoints/iteration-001.json.gz\ncheckpoints/iteration-002.json.gz\nstate.json", tree); d != "" {
				t.Errorf("state tree (-want +got):\n%s", d)
			}
			if got := privGit(t, r, "cat-file", "blob", sha2+":state.json"); got != `{"iteration":2}` {
				t.Errorf("state.json blob = %q", got)
			}
			// The work tree and index never see the state.
			if st := runGit(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("PushRef touched the work tree:\n%s", st)
			}

			// A fresh runner reads it back from the remote.
			fresh := filepath.Join(t.TempDir(), "fresh")
			runGit(t, bare, "clone", "-q", bare, fresh)
			r2 := openRepo(t, fresh, Options{})
			r2.goGit = r.goGit
			got, gotSHA, err := r2.FetchRef(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			if gotSHA != sha2 {
				t.Errorf("FetchRef sha = %s, want %s", gotSHA, sha2)
			}
			if d := cmp.Diff(v2, got); d != "" {
				t.Errorf("FetchRef files (-want +got):\n%s", d)
			}
			// It continues the chain, and the first runner catches up.
			v3 := map[string][]byte{"state.json": []byte(`{"iteration":3}`)}
			sha3, err := r2.PushRef(ctx, ref, v3, "state: iteration 3")
			if err != nil {
				t.Fatal(err)
			}
			if p := privGit(t, r2, "rev-parse", sha3+"^"); p != sha2 {
				t.Errorf("the fresh runner's state commit has parent %s, want %s", p, sha2)
			}
			got, gotSHA, err = r.FetchRef(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			privGit(t, r2, "fsck", "--strict", "--no-progress")
			if gotSHA != sha3 || string(got["state.json"]) != `{"iteration":3}` {
				t.Errorf("FetchRef after the other runner pushed: %s %q", gotSHA, got)
			}
			if local := privGit(t, r, "rev-parse", ref); local != sha3 {
				t.Errorf("local ref not moved to the newest state: %s", local)
			}
		})
	}
}

func TestStateRefLocalOnlyAndErrors(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil) // no remote
	ctx := ctxT(t)
	r := openRepo(t, dir, Options{})
	const ref = "refs/agent-loop/local"
	if _, _, err := r.FetchRef(ctx, ref); !errors.Is(err, ErrNoRef) {
		t.Errorf("FetchRef of a missing ref: %v, want ErrNoRef", err)
	}
	files := map[string][]byte{"state.json": []byte("{}")}
	sha, err := r.PushRef(ctx, ref, files, "")
	if err != nil {
		t.Fatal(err)
	}
	got, gotSHA, err := r.FetchRef(ctx, ref)
	if err != nil || gotSHA != sha || !cmp.Equal(got, files) {
		t.Errorf("local round trip: %v %s %v", got, gotSHA, err)
	}
	for _, bad := range []string{"refs/heads/main", "refs/tags/v1", "agent-loop/x", "refs/agent-loop/../x",
		"refs/agent-loop/x.lock", "refs/x", "refs/agent-loop-fetch/x"} {
		if _, err := r.PushRef(ctx, bad, files, "x"); err == nil {
			t.Errorf("PushRef accepted ref %q", bad)
		}
	}
	for _, bad := range []map[string][]byte{
		{}, {"../x": nil}, {".git/config": nil}, {"/abs": nil}, {"a//b": nil}, {"a": nil, "a/b": nil}, {"x\ny": nil},
	} {
		if _, err := r.PushRef(ctx, ref, bad, "x"); err == nil {
			t.Errorf("PushRef accepted files %v", bad)
		}
	}
}

// TestWorktreeConfig: a repository with extensions.worktreeConfig (what
// actions/checkout's sparse-checkout sets) works; go-git never opens it
// (it only writes into the trusted store), so no fallback is reported.
func TestWorktreeConfig(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, map[string]string{"a/x.txt": "a\n", "b/y.txt": "b\n"})
	newBare(t, dir)
	runGit(t, dir, "config", "extensions.worktreeConfig", "true")
	runGit(t, dir, "config", "--worktree", "core.sparseCheckout", "false")
	ctx := ctxT(t)
	r := openRepo(t, dir, Options{})
	if info := r.Info(); len(info.Fallback) != 0 {
		t.Fatalf("Info().Fallback = %q, want none", info.Fallback)
	}
	_, base, _ := r.Head(ctx)
	if err := r.StartBranch(ctx, "loop", base); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"a/x.txt": "changed\n"})
	res, err := r.Commit(ctx, loop.CommitRequest{Subject: "one"})
	if err != nil || res.Stat.Files != 1 {
		t.Fatalf("Commit: %+v %v", res, err)
	}
	files := map[string][]byte{"state.json": []byte(`{"ok":true}`)}
	sha, err := r.PushRef(ctx, "refs/agent-loop/wt", files, "state")
	if err != nil {
		t.Fatal(err)
	}
	got, gotSHA, err := r.FetchRef(ctx, "refs/agent-loop/wt")
	if err != nil || gotSHA != sha || !cmp.Equal(got, files) {
		t.Errorf("state ref through the git CLI: %v %s %v", got, gotSHA, err)
	}
	// The worktree configuration is sealed too.
	marker := filepath.Join(t.TempDir(), "pwned")
	runGit(t, dir, "config", "--worktree", "core.hooksPath", filepath.Join(t.TempDir(), "hooks"))
	runGit(t, dir, "config", "--worktree", "filter.wt.clean", "touch "+marker+"; cat")
	writeFiles(t, dir, map[string]string{".gitattributes": "* filter=wt\n", "b/y.txt": "changed\n"})
	if _, err := r.Commit(ctx, loop.CommitRequest{Subject: "two"}); err != nil {
		t.Fatal(err)
	}
	if fileExists(marker) {
		t.Fatal("a filter from config.worktree ran")
	}
	if out := runGit(t, dir, "config", "--worktree", "--list"); strings.Contains(out, "filter.wt") {
		t.Errorf("config.worktree not restored:\n%s", out)
	}
}

// TestSHA256Repository: a SHA-256 repository works end to end (the
// trusted store uses its object format; commits and the state ref are
// written by the git CLI, go-git v5 reading SHA-1 only), and a forged
// object is refused by the import there too.
func TestSHA256Repository(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "work")
	runGit(t, t.TempDir(), "init", "-q", "--object-format=sha256", "-b", "main", dir)
	writeFiles(t, dir, map[string]string{"a.txt": "a\n", "t_test.go": "package t\n// assert\n"})
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "init")
	bare := filepath.Join(t.TempDir(), "remote.git")
	runGit(t, t.TempDir(), "init", "-q", "--bare", "--object-format=sha256", bare)
	runGit(t, dir, "remote", "add", "origin", bare)
	runGit(t, dir, "push", "-q", "origin", "main")
	e := openProbe(t, dir, bare, weakness{}, Options{})
	if e.r.goGit || len(e.r.Info().Fallback) == 0 {
		t.Errorf("go-git used on a SHA-256 repository: %v", e.r.Info())
	}
	writeFiles(t, dir, map[string]string{"t_test.go": "package t\n"})
	if d := e.judge(t); !strings.Contains(d, "-// assert") {
		t.Errorf("diff:\n%s", d)
	}
	e.publish(t, map[string]string{"t_test.go": "package t\n"})
	files := map[string][]byte{"state.json": []byte("{}")}
	sha, err := e.r.PushRef(e.ctx, "refs/agent-loop/sha256", files, "state")
	if err != nil || len(sha) != 64 {
		t.Fatalf("PushRef: %q %v", sha, err)
	}
	got, _, err := e.r.FetchRef(e.ctx, "refs/agent-loop/sha256")
	if err != nil || !cmp.Equal(got, files) {
		t.Errorf("FetchRef: %v %v", got, err)
	}
	// A fresh harness on the same repository after the agent forged the
	// base's blob refuses it.
	blob := runGit(t, dir, "rev-parse", e.base+":a.txt")
	forgeLoose(t, filepath.Join(dir, ".git", "objects"), blob, "blob", []byte("forged\n"))
	r2 := openRepo(t, dir, Options{})
	if err := r2.StartBranch(e.ctx, "other", e.base); !errors.Is(err, ErrForgedObject) {
		t.Errorf("StartBranch on a forged SHA-256 store: %v, want ErrForgedObject", err)
	}
}
