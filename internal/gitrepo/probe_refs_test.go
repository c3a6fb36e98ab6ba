package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
)

// TestProbeBranchesMoved: the agent moves, deletes or re-points the
// user's branch (which the README promises never moves) or the loop
// branch, with git's own commands or by editing .git. After the agent run,
// the harness's next operation puts each back at the value it recorded
// and reports it; the weakened harness (no record check) leaves the
// agent's value.
func TestProbeBranchesMoved(t *testing.T) {
	t.Parallel()
	// fake makes a commit of the agent's (a weakened test) on top of base.
	fake := func(t *testing.T, e *probeEnv) string {
		writeFiles(t, e.dir, map[string]string{"src/app_test.go": weakenedTest})
		runGit(t, e.dir, "add", "src/app_test.go")
		sha := runGit(t, e.dir, "commit-tree", "-p", e.base, "-m", "agent", runGit(t, e.dir, "write-tree"))
		runGit(t, e.dir, "checkout", "-q", e.base, "--", "src/app_test.go")
		return sha
	}
	variants := map[string]struct {
		ref   string
		agent func(t *testing.T, e *probeEnv)
	}{
		"user branch moved with update-ref": {"refs/heads/main", func(t *testing.T, e *probeEnv) {
			runGit(t, e.dir, "update-ref", "refs/heads/main", fake(t, e))
		}},
		"user branch deleted": {"refs/heads/main", func(t *testing.T, e *probeEnv) {
			runGit(t, e.dir, "update-ref", "-d", "refs/heads/main")
		}},
		"user branch rewritten in packed-refs": {"refs/heads/main", func(t *testing.T, e *probeEnv) {
			sha := fake(t, e)
			runGit(t, e.dir, "pack-refs", "--all", "--prune")
			p := filepath.Join(e.dir, ".git", "packed-refs")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			writeFiles(t, e.dir, map[string]string{".git/packed-refs": strings.ReplaceAll(string(b), e.base+" refs/heads/main", sha+" refs/heads/main")})
		}},
		"user branch made a symbolic ref": {"refs/heads/main", func(t *testing.T, e *probeEnv) {
			runGit(t, e.dir, "branch", "agent", fake(t, e))
			runGit(t, e.dir, "symbolic-ref", "refs/heads/main", "refs/heads/agent")
		}},
		"loop branch moved to the agent's commit": {"refs/heads/loop", func(t *testing.T, e *probeEnv) {
			runGit(t, e.dir, "update-ref", "refs/heads/loop", fake(t, e))
		}},
		"loop branch deleted": {"refs/heads/loop", func(t *testing.T, e *probeEnv) {
			writeFiles(t, e.dir, map[string]string{"src/app.go": "package app // work\n"})
			if err := os.Remove(filepath.Join(e.dir, ".git", "refs", "heads", "loop")); err != nil {
				t.Fatal(err)
			}
		}},
		"HEAD switched to the user's branch": {"HEAD", func(t *testing.T, e *probeEnv) {
			runGit(t, e.dir, "symbolic-ref", "HEAD", "refs/heads/main")
		}},
	}
	for _, name := range sortedKeys(variants) {
		v := variants[name]
		for _, weak := range []bool{false, true} {
			t.Run(name+"/"+modeName(weak), func(t *testing.T) {
				t.Parallel()
				e := newProbe(t, weakness{refs: weak}, Options{})
				// One iteration first: the loop branch is ahead of main.
				writeFiles(t, e.dir, map[string]string{"src/app.go": "package app // iteration 1\n"})
				first, err := e.r.Commit(e.ctx, loop.CommitRequest{Subject: "iteration 1"})
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]string{"refs/heads/main": e.base, "refs/heads/loop": first.SHA, "HEAD": "refs/heads/loop"}
				read := func(ref string) string {
					if ref == "HEAD" {
						out, _ := runGitErr(e.dir, nil, "symbolic-ref", "-q", "HEAD")
						return strings.TrimSpace(out)
					}
					out, _ := runGitErr(e.dir, nil, "rev-parse", "-q", "--verify", ref)
					return strings.TrimSpace(out)
				}
				e.r.Notices()
				v.agent(t, e)
				if read(v.ref) == want[v.ref] && !strings.Contains(name, "symbolic") {
					t.Fatalf("the agent's move did not take: %s = %s", v.ref, read(v.ref))
				}
				if _, err := e.r.Dirty(e.ctx); err != nil {
					t.Fatal(err)
				}
				if weak {
					if read(v.ref) == want[v.ref] && !isSymbolic(e.dir, v.ref) {
						t.Fatalf("the weakened harness put %s back: the probe proves nothing", v.ref)
					}
					return
				}
				for ref, sha := range want {
					if got := read(ref); got != sha {
						t.Errorf("after the agent ran, %s = %q, want the recorded %s", ref, got, sha)
					}
				}
				if isSymbolic(e.dir, "refs/heads/main") {
					t.Error("refs/heads/main is still a symbolic ref")
				}
				var reported bool
				for _, n := range e.r.Notices() {
					if n.Path == v.ref && (n.Kind == NoticeBranchRestored || n.Kind == NoticeHeadRestored) {
						reported = true
					}
				}
				if !reported {
					t.Errorf("the restore of %s was not reported", v.ref)
				}
				// The next iteration builds on the recorded tip; main is not pushed.
				writeFiles(t, e.dir, map[string]string{"src/app.go": "package app // iteration 2\n"})
				second := e.publish(t, nil)
				if p := runGit(t, e.dir, "rev-parse", second.SHA+"^"); p != first.SHA {
					t.Errorf("iteration 2's parent = %s, want iteration 1 %s", p, first.SHA)
				}
				if got := runGit(t, e.bare, "rev-parse", "refs/heads/main"); got != e.base {
					t.Errorf("the remote's main moved to %s", got)
				}
				runGit(t, e.dir, "fsck", "--strict", "--no-progress")
			})
		}
	}
}

// isSymbolic reports whether ref is a symbolic ref in dir's repository.
func isSymbolic(dir, ref string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ".git", filepath.FromSlash(ref)))
	return err == nil && strings.HasPrefix(string(b), "ref: ") && ref != "HEAD"
}

// TestProbePlantedCode: hooks, an fsmonitor, a clean filter and an ssh
// command, planted in .git or in a file the configuration includes, run
// in the weakened harness (git on the repository's .git as the agent left
// it) and never in the harness.
func TestProbePlantedCode(t *testing.T) {
	t.Parallel()
	variants := map[string]func(t *testing.T, e *probeEnv, marker string){
		"post-index-change hook in .git/hooks": func(t *testing.T, e *probeEnv, marker string) {
			writeScript(t, filepath.Join(e.dir, ".git", "hooks", "post-index-change"), marker)
		},
		"core.hooksPath to the work tree": func(t *testing.T, e *probeEnv, marker string) {
			writeScript(t, filepath.Join(e.dir, "tools", "hooks", "post-index-change"), marker)
			runGit(t, e.dir, "config", "core.hooksPath", filepath.Join(e.dir, "tools", "hooks"))
		},
		"core.fsmonitor": func(t *testing.T, e *probeEnv, marker string) {
			runGit(t, e.dir, "config", "core.fsmonitor", writeScript(t, filepath.Join(t.TempDir(), "fsmonitor"), marker))
		},
		"clean filter in .git/config": func(t *testing.T, e *probeEnv, marker string) {
			runGit(t, e.dir, "config", "filter.evil.clean", "touch '"+marker+"'; cat")
			writeFiles(t, e.dir, map[string]string{".gitattributes": "* filter=evil\n"})
		},
		"clean filter in an included file": func(t *testing.T, e *probeEnv, marker string) {
			writeFiles(t, e.dir, map[string]string{"repo.gitconfig": "[filter \"inc\"]\n\tclean = \"touch '" + marker + "'; cat\"\n",
				".gitattributes": "*.go filter=inc\n"})
			runGit(t, e.dir, "config", "include.path", "../repo.gitconfig")
		},
		"ssh command for the push": func(t *testing.T, e *probeEnv, marker string) {
			runGit(t, e.dir, "remote", "set-url", "origin", "ssh://git@127.0.0.1:1/x.git")
			runGit(t, e.dir, "config", "core.sshCommand", "touch '"+marker+"'; false")
		},
	}
	for _, name := range sortedKeys(variants) {
		for _, weak := range []bool{false, true} {
			t.Run(name+"/"+modeName(weak), func(t *testing.T) {
				t.Parallel()
				marker := filepath.Join(t.TempDir(), "pwned")
				e := newProbe(t, weakness{gitDir: weak}, Options{})
				variants[name](t, e, marker)
				writeFiles(t, e.dir, map[string]string{"src/app.go": "package app // changed\n"})
				e.judge(t)
				if _, err := e.r.Commit(e.ctx, loop.CommitRequest{Subject: "iteration 1", Staged: true}); err != nil {
					t.Fatal(err)
				}
				_ = e.r.Push(e.ctx, "loop")
				if weak {
					if !fileExists(marker) {
						t.Fatal("the weakened harness did not run the planted code: the probe proves nothing")
					}
					return
				}
				if fileExists(marker) {
					t.Fatal("the harness ran the agent's code")
				}
				privGit(t, e.r, "fsck", "--strict", "--no-progress")
			})
		}
	}
}

// writeScript writes an executable script that touches marker and passes
// its input through.
func writeScript(t *testing.T, path, marker string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\ntouch '"+marker+"'\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
