package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
)

// hostileEnv is one repository a hostile agent works in.
type hostileEnv struct {
	dir, bare, base, marker string
	evilRemote, outside     string
	r                       *Repo
}

// script writes an executable shell script that touches the marker.
func (e *hostileEnv) script(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "#!/bin/sh\ntouch '" + e.marker + "'\ncat\n"
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func (e *hostileEnv) touch() string { return "touch '" + e.marker + "'" }

type hostileCase struct {
	name string
	// before runs before Open (what the user's trusted setup holds).
	before func(t *testing.T, e *hostileEnv)
	// agent is what the agent does between the harness's operations.
	agent func(t *testing.T, e *hostileEnv)
	// live is a plain git command that fires the attack in a twin
	// repository, proving it is real (nil when not applicable).
	live []string
	// tampered is true when the harness must refuse with *TamperedError.
	tampered bool
	// check inspects the harness's commit.
	check func(t *testing.T, e *hostileEnv, res loop.CommitResult)
}

func hostileSetup(t *testing.T, c hostileCase, marker string, open bool) *hostileEnv {
	t.Helper()
	dir := newWorkRepo(t, nil)
	e := &hostileEnv{dir: dir, marker: marker}
	e.bare = newBare(t, dir)
	e.base = runGit(t, dir, "rev-parse", "HEAD")
	if c.before != nil {
		c.before(t, e)
	}
	if open {
		e.r = openRepo(t, dir, Options{})
		if err := e.r.StartBranch(ctxT(t), "loop", e.base); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func TestHostileAgent(t *testing.T) {
	t.Parallel()
	cases := []hostileCase{
		{
			name: "hooks planted in .git/hooks",
			agent: func(t *testing.T, e *hostileEnv) {
				for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "pre-push", "post-checkout",
					"reference-transaction", "post-index-change", "fsmonitor-watchman", "pre-auto-gc", "post-rewrite"} {
					e.script(t, filepath.Join(e.dir, ".git", "hooks", h))
				}
				writeFiles(t, e.dir, map[string]string{"src/app.go": "package app // edited\n"})
			},
			live: []string{"commit", "-q", "-am", "agent"},
			check: func(t *testing.T, e *hostileEnv, _ loop.CommitResult) {
				if fileExists(filepath.Join(e.dir, ".git", "hooks", "pre-commit")) {
					t.Error("the planted pre-commit hook was not removed")
				}
				if !fileExists(filepath.Join(e.dir, ".git", "hooks", "pre-commit.sample")) {
					t.Error("the sealed sample hooks were removed")
				}
			},
		},
		{
			name: "core.hooksPath to a directory of hooks",
			agent: func(t *testing.T, e *hostileEnv) {
				hooks := filepath.Join(e.dir, "tools", "hooks")
				for _, h := range []string{"pre-commit", "post-commit", "pre-push", "reference-transaction", "post-index-change"} {
					e.script(t, filepath.Join(hooks, h))
				}
				runGit(t, e.dir, "config", "core.hooksPath", hooks)
			},
			live: []string{"commit", "-q", "--allow-empty", "-m", "agent"},
			check: func(t *testing.T, e *hostileEnv, res loop.CommitResult) {
				if b, _ := os.ReadFile(filepath.Join(e.dir, ".git", "config")); strings.Contains(string(b), "hooksPath =") {
					t.Errorf(".git/config still names the agent's hooksPath:\n%s", b)
				}
				// The agent's hook scripts are ordinary files of the work tree: committed.
				if got := runGit(t, e.dir, "ls-tree", "-r", "--name-only", res.SHA, "tools/hooks"); !strings.Contains(got, "pre-commit") {
					t.Errorf("tools/hooks not committed: %q", got)
				}
			},
		},
		{
			name: "core.fsmonitor runs a script",
			agent: func(t *testing.T, e *hostileEnv) {
				runGit(t, e.dir, "config", "core.fsmonitor", e.script(t, filepath.Join(t.TempDir(), "fsmonitor")))
				writeFiles(t, e.dir, map[string]string{"src/app.go": "package app // fsmonitor\n"})
			},
			live: []string{"status"},
		},
		{
			name: "clean/smudge/process filter in .git/config and .gitattributes",
			agent: func(t *testing.T, e *hostileEnv) {
				runGit(t, e.dir, "config", "filter.evil.clean", e.touch()+"; cat")
				runGit(t, e.dir, "config", "filter.evil.smudge", e.touch()+"; cat")
				runGit(t, e.dir, "config", "filter.evil.required", "true")
				writeFiles(t, e.dir, map[string]string{".gitattributes": "* filter=evil\n", "src/app.go": "package app // filtered\n"})
			},
			live: []string{"add", "-A"},
			check: func(t *testing.T, e *hostileEnv, res loop.CommitResult) {
				if got := runGit(t, e.dir, "show", res.SHA+":src/app.go"); got != "package app // filtered" {
					t.Errorf("committed src/app.go = %q", got)
				}
			},
		},
		{
			name: "long-running process filter",
			agent: func(t *testing.T, e *hostileEnv) {
				runGit(t, e.dir, "config", "filter.proc.process", e.script(t, filepath.Join(t.TempDir(), "proc")))
				writeFiles(t, e.dir, map[string]string{"sub/.gitattributes": "*.go filter=proc\n", "sub/x.go": "package sub\n"})
			},
			live: []string{"add", "-A"},
		},
		{
			name: "textconv, diff command and external diff",
			agent: func(t *testing.T, e *hostileEnv) {
				s := e.script(t, filepath.Join(t.TempDir(), "conv"))
				runGit(t, e.dir, "config", "diff.evil.textconv", s)
				runGit(t, e.dir, "config", "diff.evil.command", s)
				runGit(t, e.dir, "config", "diff.external", s)
				writeFiles(t, e.dir, map[string]string{".gitattributes": "* diff=evil\n", "README.md": "changed\n"})
			},
			live: []string{"diff", "HEAD"},
		},
		{
			name: "filter and fsmonitor in a work-tree file the trusted config includes",
			before: func(t *testing.T, e *hostileEnv) {
				writeFiles(t, e.dir, map[string]string{"repo.gitconfig": "[core]\n\tautocrlf = false\n"})
				runGit(t, e.dir, "add", "repo.gitconfig")
				runGit(t, e.dir, "commit", "-q", "-m", "shared config")
				e.base = runGit(t, e.dir, "rev-parse", "HEAD")
				runGit(t, e.dir, "config", "include.path", "../repo.gitconfig")
			},
			agent: func(t *testing.T, e *hostileEnv) {
				writeFiles(t, e.dir, map[string]string{
					"repo.gitconfig": "[filter \"inc\"]\n\tclean = \"" + e.touch() + "; cat\"\n\trequired = true\n" +
						"[core]\n\tfsmonitor = " + e.script(t, filepath.Join(t.TempDir(), "fsm")) + "\n",
					".gitattributes": "* filter=inc\n",
				})
			},
			live: []string{"add", "-A"},
		},
		{
			name: "credential helper, receive-pack and remote URL rewritten",
			agent: func(t *testing.T, e *hostileEnv) {
				evil := newBare(t, "")
				runGit(t, e.dir, "remote", "set-url", "origin", evil)
				runGit(t, e.dir, "config", "remote.origin.receivepack", e.touch()+"; git-receive-pack")
				runGit(t, e.dir, "config", "credential.helper", "!"+e.touch()+"; echo")
				e.evilRemote = evil
			},
			live: []string{"push", "-q", "origin", "HEAD:refs/heads/x"},
			check: func(t *testing.T, e *hostileEnv, res loop.CommitResult) {
				if got := runGit(t, e.bare, "rev-parse", "refs/heads/loop"); got != res.SHA {
					t.Errorf("the sealed remote has loop at %q, want %s", got, res.SHA)
				}
				if out, err := runGitErr(e.evilRemote, nil, "rev-parse", "--verify", "-q", "refs/heads/loop"); err == nil {
					t.Errorf("the push went to the agent's remote: %s", out)
				}
			},
		},
		{
			name: "symlink to a file outside the work tree",
			agent: func(t *testing.T, e *hostileEnv) {
				secret := filepath.Join(t.TempDir(), "passwd")
				if err := os.WriteFile(secret, []byte("root:x:0:0:secret\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(secret, filepath.Join(e.dir, "leak")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("/etc/passwd", filepath.Join(e.dir, "passwd")); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, e *hostileEnv, res loop.CommitResult) {
				for _, name := range []string{"leak", "passwd"} {
					ls := runGit(t, e.dir, "ls-tree", res.SHA, name)
					if !strings.HasPrefix(ls, "120000 blob ") {
						t.Errorf("%s committed as %q, want a symlink (mode 120000)", name, ls)
					}
					blob := runGit(t, e.dir, "cat-file", "-p", res.SHA+":"+name)
					if strings.Contains(blob, "root:") || !strings.HasPrefix(blob, "/") {
						t.Errorf("%s blob = %q: the link was followed", name, blob)
					}
				}
			},
		},
		{
			name: "agent commits, resets and switches branch",
			agent: func(t *testing.T, e *hostileEnv) {
				writeFiles(t, e.dir, map[string]string{"a1.txt": "1\n"})
				runGit(t, e.dir, "add", "-A")
				runGit(t, e.dir, "commit", "-q", "-m", "agent commit 1")
				writeFiles(t, e.dir, map[string]string{"a2.txt": "2\n"})
				runGit(t, e.dir, "commit", "-q", "-am", "agent commit 2", "--allow-empty")
				runGit(t, e.dir, "checkout", "-q", "-b", "agent-branch")
				writeFiles(t, e.dir, map[string]string{"a3.txt": "3\n"})
			},
			check: func(t *testing.T, e *hostileEnv, res loop.CommitResult) {
				if p := runGit(t, e.dir, "rev-parse", res.SHA+"^"); p != e.base {
					t.Errorf("parent = %s, want the harness's tip %s", p, e.base)
				}
				tree := runGit(t, e.dir, "ls-tree", "--name-only", res.SHA)
				for _, f := range []string{"a1.txt", "a2.txt", "a3.txt"} {
					if !strings.Contains(tree, f) {
						t.Errorf("the agent's %s is not in the iteration commit", f)
					}
				}
				if b := runGit(t, e.dir, "symbolic-ref", "HEAD"); b != "refs/heads/loop" {
					t.Errorf("HEAD = %s, want refs/heads/loop", b)
				}
			},
		},
		{
			name: "skip-worktree and assume-unchanged hide a deleted test",
			agent: func(t *testing.T, e *hostileEnv) {
				if err := os.Remove(filepath.Join(e.dir, "src/app_test.go")); err != nil {
					t.Fatal(err)
				}
				runGit(t, e.dir, "update-index", "--skip-worktree", "src/app_test.go")
				writeFiles(t, e.dir, map[string]string{"README.md": "weakened\n"})
				runGit(t, e.dir, "update-index", "--assume-unchanged", "README.md")
			},
			check: func(t *testing.T, e *hostileEnv, res loop.CommitResult) {
				if out, err := runGitErr(e.dir, nil, "cat-file", "-e", res.SHA+":src/app_test.go"); err == nil {
					t.Errorf("the deleted test is still in the commit %s", out)
				}
				if got := runGit(t, e.dir, "show", res.SHA+":README.md"); got != "weakened" {
					t.Errorf("README.md in the commit = %q, the change was hidden", got)
				}
			},
		},
		{
			name: "split index hides a deleted test",
			agent: func(t *testing.T, e *hostileEnv) {
				runGit(t, e.dir, "update-index", "--split-index")
				if err := os.Remove(filepath.Join(e.dir, "src/app_test.go")); err != nil {
					t.Fatal(err)
				}
				runGit(t, e.dir, "update-index", "--skip-worktree", "src/app_test.go")
			},
			check: func(t *testing.T, e *hostileEnv, res loop.CommitResult) {
				if out, err := runGitErr(e.dir, nil, "cat-file", "-e", res.SHA+":src/app_test.go"); err == nil {
					t.Errorf("the deleted test is still in the commit %s", out)
				}
			},
		},
		{
			name: "stale index.lock and a corrupt index",
			agent: func(t *testing.T, e *hostileEnv) {
				writeFiles(t, e.dir, map[string]string{".git/index.lock": "", ".git/index": "DIRC garbage", "new.txt": "n\n"})
			},
			check: func(t *testing.T, e *hostileEnv, res loop.CommitResult) {
				tree := runGit(t, e.dir, "ls-tree", "-r", "--name-only", res.SHA)
				if !strings.Contains(tree, "new.txt") || !strings.Contains(tree, "src/app_test.go") {
					t.Errorf("commit tree after index rebuild:\n%s", tree)
				}
			},
		},
		{
			name: "config and hooks replaced by symlinks",
			agent: func(t *testing.T, e *hostileEnv) {
				out := filepath.Join(t.TempDir(), "evil.config")
				if err := os.WriteFile(out, []byte("[core]\n\thooksPath = /nonexistent\n\tfsmonitor = "+
					e.script(t, filepath.Join(t.TempDir(), "fsm"))+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				cfg := filepath.Join(e.dir, ".git", "config")
				os.Remove(cfg)
				if err := os.Symlink(out, cfg); err != nil {
					t.Fatal(err)
				}
				hooks := filepath.Join(t.TempDir(), "hooks")
				e.script(t, filepath.Join(hooks, "pre-commit"))
				os.RemoveAll(filepath.Join(e.dir, ".git", "hooks"))
				if err := os.Symlink(hooks, filepath.Join(e.dir, ".git", "hooks")); err != nil {
					t.Fatal(err)
				}
				e.outside = out
			},
			live: []string{"status"},
			check: func(t *testing.T, e *hostileEnv, _ loop.CommitResult) {
				fi, err := os.Lstat(filepath.Join(e.dir, ".git", "config"))
				if err != nil || !fi.Mode().IsRegular() {
					t.Errorf(".git/config is not a regular file again: %v %v", fi, err)
				}
				if b, _ := os.ReadFile(e.outside); !strings.Contains(string(b), "hooksPath =") {
					t.Error("the restore wrote through the symlink into the agent's file")
				}
				if fi, err := os.Lstat(filepath.Join(e.dir, ".git", "hooks")); err != nil || !fi.IsDir() {
					t.Errorf(".git/hooks is not a directory again: %v", err)
				}
			},
		},
		{
			name: "replace refs rewrite the base",
			agent: func(t *testing.T, e *hostileEnv) {
				writeFiles(t, e.dir, map[string]string{"src/app_test.go": "package app\n"})
				fake := runGit(t, e.dir, "commit-tree", "-m", "fake base", runGit(t, e.dir, "write-tree"))
				runGit(t, e.dir, "replace", e.base, fake)
				runGit(t, e.dir, "reset", "-q")
			},
			check: func(t *testing.T, e *hostileEnv, res loop.CommitResult) {
				d, err := e.r.Diff(ctxT(t), e.base)
				if err != nil {
					t.Fatal(err)
				}
				// Honouring the replacement, git would compare with the fake base and see nothing.
				if !strings.Contains(d, "-import \"testing\"") {
					t.Errorf("Diff from the real base does not show the weakened test:\n%s", d)
				}
				if res.Stat.Files != 1 || res.Stat.Paths[0] != "src/app_test.go" {
					t.Errorf("Stat = %+v", res.Stat)
				}
			},
		},
		{
			name: "harness state un-ignored and force-added",
			agent: func(t *testing.T, e *hostileEnv) {
				writeFiles(t, e.dir, map[string]string{".gitignore": "!.aiwg/\n", ".aiwg/ralph/state.json": "{}\n",
					".aiwg/forced.txt": "x\n"})
				runGit(t, e.dir, "add", "-f", ".aiwg/forced.txt")
			},
			check: func(t *testing.T, e *hostileEnv, res loop.CommitResult) {
				tree := runGit(t, e.dir, "ls-tree", "-r", "--name-only", res.SHA)
				if strings.Contains(tree, ".aiwg") {
					t.Errorf(".aiwg/ entered the commit:\n%s", tree)
				}
				if !strings.Contains(tree, ".gitignore") {
					t.Errorf("the agent's .gitignore edit is missing:\n%s", tree)
				}
			},
		},
		{
			name:     ".git replaced by a gitfile pointing at the agent's repository",
			tampered: true,
			agent: func(t *testing.T, e *hostileEnv) {
				evil := filepath.Join(t.TempDir(), "evil")
				runGit(t, t.TempDir(), "init", "-q", evil)
				e.script(t, filepath.Join(evil, ".git", "hooks", "pre-commit"))
				e.script(t, filepath.Join(evil, ".git", "hooks", "reference-transaction"))
				os.Rename(filepath.Join(e.dir, ".git"), filepath.Join(t.TempDir(), "moved"))
				writeFiles(t, e.dir, map[string]string{".git": "gitdir: " + filepath.Join(evil, ".git") + "\n"})
			},
			live: []string{"commit", "-q", "--allow-empty", "-m", "x"},
		},
		{
			name:     ".git replaced by a symlink",
			tampered: true,
			agent: func(t *testing.T, e *hostileEnv) {
				evil := filepath.Join(t.TempDir(), "evil")
				runGit(t, t.TempDir(), "init", "-q", evil)
				e.script(t, filepath.Join(evil, ".git", "hooks", "pre-commit"))
				os.Rename(filepath.Join(e.dir, ".git"), filepath.Join(t.TempDir(), "moved"))
				if err := os.Symlink(filepath.Join(evil, ".git"), filepath.Join(e.dir, ".git")); err != nil {
					t.Fatal(err)
				}
			},
			live: []string{"commit", "-q", "--allow-empty", "-m", "x"},
		},
		{
			name:     ".git deleted",
			tampered: true,
			agent: func(t *testing.T, e *hostileEnv) {
				os.RemoveAll(filepath.Join(e.dir, ".git"))
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(os.TempDir(), "pwned-"+randName(t))
			t.Cleanup(func() { os.Remove(marker) })
			if c.live != nil {
				// The attack is real: plain git in a twin repository runs it.
				liveMarker := filepath.Join(os.TempDir(), "pwned-"+randName(t))
				t.Cleanup(func() { os.Remove(liveMarker) })
				twin := hostileSetup(t, c, liveMarker, false)
				c.agent(t, twin)
				runGitErr(twin.dir, nil, c.live...)
				if !fileExists(liveMarker) {
					t.Fatalf("plain `git %s` did not fire the attack: the test proves nothing", strings.Join(c.live, " "))
				}
			}
			e := hostileSetup(t, c, marker, true)
			ctx := ctxT(t)
			c.agent(t, e)

			_, derr := e.r.Diff(ctx, e.base)
			_, dirtyErr := e.r.Dirty(ctx)
			res, cerr := e.r.Commit(ctx, loop.CommitRequest{Subject: "iteration 1",
				Trailers: []loop.Trailer{{Key: "Agent-Loop-Iteration", Value: "1"}}})
			var perr error
			if cerr == nil {
				perr = e.r.Push(ctx, "loop")
			}
			_, herr := e.r.History(ctx, "loop", e.base)
			if e.r != nil && !c.tampered {
				if _, _, err := e.r.FetchRef(ctx, "refs/agent-loop/none"); !errors.Is(err, ErrNoRef) {
					t.Errorf("FetchRef of a missing ref: %v", err)
				}
				if err := e.r.ResetTo(ctx, "HEAD"); err != nil {
					t.Errorf("ResetTo: %v", err)
				}
			}
			if fileExists(marker) {
				t.Fatalf("the harness ran the agent's code: %s exists", marker)
			}
			if c.tampered {
				for name, err := range map[string]error{"Diff": derr, "Dirty": dirtyErr, "Commit": cerr, "History": herr} {
					var te *TamperedError
					if !errors.As(err, &te) {
						t.Errorf("%s: error %v, want *TamperedError", name, err)
					} else if !strings.Contains(err.Error(), "refusing to run git") {
						t.Errorf("%s: unclear error %q", name, err)
					}
				}
				return
			}
			for name, err := range map[string]error{"Diff": derr, "Dirty": dirtyErr, "Commit": cerr, "Push": perr, "History": herr} {
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			runGit(t, e.dir, "fsck", "--strict", "--no-progress")
			if got := runGit(t, e.bare, "rev-parse", "refs/heads/loop"); got != res.SHA {
				t.Errorf("remote loop = %s, want %s", got, res.SHA)
			}
			// From here on the test's own plain git may fire attacks that live
			// in work-tree files (the included config): the marker was checked.
			if c.check != nil {
				c.check(t, e, res)
			}
		})
	}
}
