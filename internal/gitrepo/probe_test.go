package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
)

// The trusted-git probes. Each class of attack on git's own data, with
// more than one variant, runs twice: against the harness, where it must
// fail, and against a harness weakened in exactly the defence the probe is
// about (weakness), where it must succeed, or the probe proves nothing.

// weakenedTest is the agent's cheat: the assertion of src/app_test.go
// removed.
const weakenedTest = "package app\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n}\n"

// assertion is a line of the original test the diff must show removed.
const assertion = "-\tif A() != 1 {"

// probeEnv is a work repository with a bare remote, opened by the harness
// and on the loop branch "loop".
type probeEnv struct {
	dir, bare, base string
	r               *Repo
	ctx             context.Context
}

func newProbe(t *testing.T, weak weakness, opts Options) *probeEnv {
	t.Helper()
	dir := newWorkRepo(t, nil)
	return openProbe(t, dir, newBare(t, dir), weak, opts)
}

func openProbe(t *testing.T, dir, bare string, weak weakness, opts Options) *probeEnv {
	t.Helper()
	r := openRepo(t, dir, opts)
	r.weak = weak
	ctx := ctxT(t)
	_, base, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.StartBranch(ctx, "loop", base); err != nil {
		t.Fatal(err)
	}
	return &probeEnv{dir: dir, bare: bare, base: base, r: r, ctx: ctx}
}

// expectSeen checks what the judge saw: the weakened harness must miss
// the change (or the probe proves nothing), the harness must see it. It
// reports whether the test goes on (the harness).
func expectSeen(t *testing.T, weak, seen bool, diff string) bool {
	t.Helper()
	if weak {
		if seen {
			t.Fatalf("the weakened harness saw the change: the probe proves nothing\n%s", diff)
		}
		return false
	}
	if !seen {
		t.Fatalf("the judge does not see the change:\n%s", diff)
	}
	return true
}

func modeName(weak bool) string {
	if weak {
		return "weakened harness"
	}
	return "harness"
}

// blobOf is the id of the base's version of path.
func (e *probeEnv) blobOf(t *testing.T, path string) string {
	return runGit(t, e.dir, "rev-parse", e.base+":"+path)
}

// judge stages the work tree and returns the diff from the base, as the
// engine does after every agent run.
func (e *probeEnv) judge(t *testing.T) string {
	t.Helper()
	d, err := e.r.Stage(e.ctx, e.base)
	if err != nil {
		t.Fatalf("Stage: %v", err)
	}
	return d[0]
}

// publish commits what was staged and pushes it; the remote must hold it,
// with the content the judge saw, and every store the harness wrote must
// pass git fsck.
func (e *probeEnv) publish(t *testing.T, want map[string]string) loop.CommitResult {
	t.Helper()
	res, err := e.r.Commit(e.ctx, loop.CommitRequest{Subject: "iteration 1", Staged: true})
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if err := e.r.Push(e.ctx, "loop"); err != nil {
		t.Fatalf("Push: %v", err)
	}
	if got := runGit(t, e.bare, "rev-parse", "refs/heads/loop"); got != res.SHA {
		t.Errorf("the remote's loop = %s, want the harness's commit %s", got, res.SHA)
	}
	for path, content := range want {
		got, err := runGitErr(e.bare, nil, "cat-file", "blob", res.SHA+":"+path)
		if content == "" {
			if err == nil {
				t.Errorf("the published %s exists, want it deleted", path)
			}
			continue
		}
		if err != nil || got != content {
			t.Errorf("the published %s = %q (%v), want %q", path, got, err, content)
		}
	}
	runGit(t, e.bare, "fsck", "--strict", "--no-progress")
	privGit(t, e.r, "fsck", "--strict", "--no-progress")
	return res
}

// TestProbeForgedBaselineObject: the agent weakens a test and rewrites the
// baseline blob's object in .git/objects to hold the weakened text, so a
// diff from the base shows nothing. The harness diffs against the trusted
// store, filled before the agent ran, through index-pack.
func TestProbeForgedBaselineObject(t *testing.T) {
	t.Parallel()
	forgers := map[string]func(testing.TB, string, string, string, []byte){"loose object": forgeLoose, "packed object": forgePack}
	for _, name := range sortedKeys(forgers) {
		for _, weak := range []bool{false, true} {
			t.Run(name+"/"+modeName(weak), func(t *testing.T) {
				t.Parallel()
				e := newProbe(t, weakness{objects: weak}, Options{})
				blob := e.blobOf(t, "src/app_test.go")
				writeFiles(t, e.dir, map[string]string{"src/app_test.go": weakenedTest})
				forgers[name](t, filepath.Join(e.dir, ".git", "objects"), blob, "blob", []byte(weakenedTest))
				if got := runGit(t, e.dir, "cat-file", "blob", blob); got+"\n" != weakenedTest {
					t.Fatalf("the forgery did not take: git reads %q", got)
				}
				if d := e.judge(t); !expectSeen(t, weak, strings.Contains(d, assertion), d) {
					return
				}
				e.publish(t, map[string]string{"src/app_test.go": weakenedTest})
			})
		}
	}
	// Forged before the trusted store exists (a resume without the private
	// directory): the import refuses the forged tree, it does not take it.
	for _, weak := range []bool{false, true} {
		t.Run("forged before the import/"+modeName(weak), func(t *testing.T) {
			t.Parallel()
			dir := newWorkRepo(t, nil)
			blob := runGit(t, dir, "rev-parse", "HEAD:src/app_test.go")
			writeFiles(t, dir, map[string]string{"src/app_test.go": weakenedTest})
			forgePack(t, filepath.Join(dir, ".git", "objects"), blob, "blob", []byte(weakenedTest))
			r := openRepo(t, dir, Options{})
			r.weak = weakness{objects: weak}
			ctx := ctxT(t)
			base := runGit(t, dir, "rev-parse", "HEAD")
			_, _, err := r.Head(ctx)
			if !weak {
				if !errors.Is(err, ErrForgedObject) {
					t.Fatalf("Head on a forged store: %v, want ErrForgedObject", err)
				}
				if _, err := r.Stage(ctx, base); !errors.Is(err, ErrForgedObject) {
					t.Fatalf("Stage on a forged store: %v, want ErrForgedObject", err)
				}
				return
			}
			d, err := r.Stage(ctx, base)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(d[0], assertion) {
				t.Fatalf("the weakened harness saw the change: the probe proves nothing\n%s", d[0])
			}
		})
	}
}

// TestProbePatchedIndex: the agent hides a change from an index-based diff:
// an entry's object id patched back to the baseline's under the changed
// file's stat data, or a flag that makes git skip the file. The harness
// stages into its own index.
func TestProbePatchedIndex(t *testing.T) {
	t.Parallel()
	variants := []struct {
		name  string
		agent func(t *testing.T, e *probeEnv)
		want  map[string]string
	}{
		{"object id patched under matching stat data", func(t *testing.T, e *probeEnv) {
			writeFiles(t, e.dir, map[string]string{"src/app_test.go": weakenedTest})
			hideInIndex(t, e.dir, "src/app_test.go", e.blobOf(t, "src/app_test.go"))
		}, map[string]string{"src/app_test.go": weakenedTest}},
		{"assume-unchanged", func(t *testing.T, e *probeEnv) {
			writeFiles(t, e.dir, map[string]string{"src/app_test.go": weakenedTest})
			runGit(t, e.dir, "update-index", "--assume-unchanged", "src/app_test.go")
		}, map[string]string{"src/app_test.go": weakenedTest}},
		{"skip-worktree on a deleted test", func(t *testing.T, e *probeEnv) {
			if err := os.Remove(filepath.Join(e.dir, "src", "app_test.go")); err != nil {
				t.Fatal(err)
			}
			runGit(t, e.dir, "update-index", "--skip-worktree", "src/app_test.go")
		}, map[string]string{"src/app_test.go": ""}},
	}
	for _, v := range variants {
		for _, weak := range []bool{false, true} {
			t.Run(v.name+"/"+modeName(weak), func(t *testing.T) {
				t.Parallel()
				e := newProbe(t, weakness{index: weak}, Options{})
				v.agent(t, e)
				if d := e.judge(t); !expectSeen(t, weak, strings.Contains(d, assertion), d) {
					return
				}
				e.publish(t, v.want)
				// The user's .git/index is the harness's again: git status in
				// the work tree agrees with the loop branch.
				if st := runGit(t, e.dir, "status", "--porcelain"); st != "" {
					t.Errorf("git status after the commit:\n%s", st)
				}
				runGit(t, e.dir, "fsck", "--strict", "--no-progress")
			})
		}
	}
}

// TestProbePlantedAlternates: the agent adds an object directory of its
// own to .git/objects/info/alternates, holding a forged baseline blob (in
// a pack, or loose behind a second alternate with the real object
// deleted). The harness reads the repository's objects through a view
// without objects/info/, and only to import them, verified.
func TestProbePlantedAlternates(t *testing.T) {
	t.Parallel()
	variants := map[string]func(t *testing.T, e *probeEnv, blob string){
		"an alternate with a forged pack": func(t *testing.T, e *probeEnv, blob string) {
			evil := filepath.Join(t.TempDir(), "objects")
			forgePack(t, evil, blob, "blob", []byte(weakenedTest))
			writeFiles(t, e.dir, map[string]string{".git/objects/info/alternates": evil + "\n"})
		},
		"a chain of alternates, the real object deleted": func(t *testing.T, e *probeEnv, blob string) {
			one, two := filepath.Join(t.TempDir(), "objects"), filepath.Join(t.TempDir(), "objects")
			forgeLoose(t, two, blob, "blob", []byte(weakenedTest))
			writeFiles(t, one, map[string]string{"info/alternates": two + "\n"})
			writeFiles(t, e.dir, map[string]string{".git/objects/info/alternates": one + "\n"})
			if err := os.Remove(filepath.Join(e.dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
				t.Fatal(err)
			}
		},
	}
	for _, name := range sortedKeys(variants) {
		for _, weak := range []bool{false, true} {
			t.Run(name+"/"+modeName(weak), func(t *testing.T) {
				t.Parallel()
				e := newProbe(t, weakness{objects: weak, gitDir: weak}, Options{})
				blob := e.blobOf(t, "src/app_test.go")
				writeFiles(t, e.dir, map[string]string{"src/app_test.go": weakenedTest})
				variants[name](t, e, blob)
				if got := runGit(t, e.dir, "cat-file", "blob", blob); got+"\n" != weakenedTest {
					t.Fatalf("the forgery did not take: git reads %q", got)
				}
				if d := e.judge(t); !expectSeen(t, weak, strings.Contains(d, assertion), d) {
					return
				}
				e.publish(t, map[string]string{"src/app_test.go": weakenedTest})
				if fileExists(filepath.Join(e.dir, ".git", "objects", "info", "alternates")) {
					t.Error("the agent's alternates file is still in the user's repository")
				}
			})
		}
	}
}

// TestProbeReplaceAndHistory: replace refs swap the baseline blob or the
// base commit for the agent's; a graft or a shallow list cuts an
// iteration out of the loop branch's history (which a resume rebuilds
// iterations from). The harness's git sees no replace ref, graft or
// shallow list of the repository's.
func TestProbeReplaceAndHistory(t *testing.T) {
	t.Parallel()
	type variant struct {
		agent func(t *testing.T, e *probeEnv, tips []string)
		// history is true for the variants that cut the history: the
		// probe is History, not the diff.
		history bool
	}
	variants := map[string]variant{
		"replace ref on the baseline blob": {agent: func(t *testing.T, e *probeEnv, _ []string) {
			writeFiles(t, e.dir, map[string]string{"src/app_test.go": weakenedTest})
			w := runGit(t, e.dir, "hash-object", "-w", "src/app_test.go")
			runGit(t, e.dir, "replace", e.blobOf(t, "src/app_test.go"), w)
		}},
		"replace ref on the base commit": {agent: func(t *testing.T, e *probeEnv, _ []string) {
			writeFiles(t, e.dir, map[string]string{"src/app_test.go": weakenedTest})
			runGit(t, e.dir, "add", "src/app_test.go")
			fake := runGit(t, e.dir, "commit-tree", "-m", "fake base", runGit(t, e.dir, "write-tree"))
			runGit(t, e.dir, "replace", e.base, fake)
		}},
		"graft drops an iteration": {history: true, agent: func(t *testing.T, e *probeEnv, tips []string) {
			writeFiles(t, e.dir, map[string]string{".git/info/grafts": tips[1] + " " + e.base + "\n"})
		}},
		"shallow list drops an iteration": {history: true, agent: func(t *testing.T, e *probeEnv, tips []string) {
			writeFiles(t, e.dir, map[string]string{".git/shallow": tips[1] + "\n"})
		}},
	}
	for _, name := range sortedKeys(variants) {
		v := variants[name]
		for _, weak := range []bool{false, true} {
			t.Run(name+"/"+modeName(weak), func(t *testing.T) {
				t.Parallel()
				e := newProbe(t, weakness{gitDir: weak, objects: weak}, Options{})
				var tips []string
				if v.history {
					for i := 1; i <= 2; i++ {
						writeFiles(t, e.dir, map[string]string{"src/app.go": strings.Repeat("// more\n", i)})
						res, err := e.r.Commit(e.ctx, loop.CommitRequest{Subject: "iteration"})
						if err != nil {
							t.Fatal(err)
						}
						tips = append(tips, res.SHA)
					}
				}
				v.agent(t, e, tips)
				if v.history {
					hist, err := e.r.History(e.ctx, "loop", e.base)
					if err != nil {
						t.Fatal(err)
					}
					if weak {
						if len(hist) == 2 {
							t.Fatal("the weakened harness saw both iterations: the probe proves nothing")
						}
						return
					}
					if len(hist) != 2 || hist[0].SHA != tips[0] || hist[1].SHA != tips[1] {
						t.Fatalf("History = %+v, want the two iterations %v", hist, tips)
					}
					e.publish(t, nil)
					return
				}
				if d := e.judge(t); !expectSeen(t, weak, strings.Contains(d, assertion), d) {
					return
				}
				e.publish(t, map[string]string{"src/app_test.go": weakenedTest})
			})
		}
	}
}

// TestProbeExcludesHideNewTest: a pattern added after the loop started to
// an excludes file git reads besides the work tree's .gitignore files (the
// global one in HOME or XDG_CONFIG_HOME, one named by core.excludesFile in
// a file the configuration includes, .git/info/exclude) hides a new test
// file from the judge and from the commit. The harness reads the excludes
// as they were when the loop started.
func TestProbeExcludesHideNewTest(t *testing.T) {
	variants := map[string]func(t *testing.T, e *probeEnv, home, xdg, inc string){
		"HOME's global excludes file": func(t *testing.T, _ *probeEnv, home, _, _ string) {
			writeFiles(t, home, map[string]string{".config/git/ignore": "*_extra_test.go\n"})
		},
		"XDG_CONFIG_HOME's global excludes file": func(t *testing.T, _ *probeEnv, _, xdg, _ string) {
			writeFiles(t, xdg, map[string]string{"git/ignore": "*_extra_test.go\n"})
		},
		"core.excludesFile in an included file": func(t *testing.T, _ *probeEnv, _, _, inc string) {
			ignore := filepath.Join(filepath.Dir(inc), "agent-ignore")
			writeFiles(t, filepath.Dir(inc), map[string]string{"agent-ignore": "*_extra_test.go\n",
				filepath.Base(inc): "[core]\n\texcludesFile = " + ignore + "\n"})
		},
		".git/info/exclude": func(t *testing.T, e *probeEnv, _, _, _ string) {
			writeFiles(t, e.dir, map[string]string{".git/info/exclude": ".aiwg/\n*_extra_test.go\n"})
		},
	}
	const newTest = "src/app_extra_test.go"
	for _, name := range sortedKeys(variants) {
		for _, weak := range []bool{false, true} {
			t.Run(name+"/"+modeName(weak), func(t *testing.T) {
				home, xdg := t.TempDir(), t.TempDir()
				if strings.Contains(name, "XDG") {
					t.Setenv("XDG_CONFIG_HOME", xdg)
				} else {
					t.Setenv("XDG_CONFIG_HOME", "")
				}
				t.Setenv("HOME", home)
				dir := newWorkRepo(t, nil)
				inc := filepath.Join(t.TempDir(), "included.gitconfig")
				writeFiles(t, filepath.Dir(inc), map[string]string{filepath.Base(inc): "[core]\n\tautocrlf = false\n"})
				runGit(t, dir, "config", "include.path", inc)
				e := openProbe(t, dir, newBare(t, dir), weakness{home: weak, gitDir: weak}, Options{})
				variants[name](t, e, home, xdg, inc)
				writeFiles(t, e.dir, map[string]string{newTest: "package app\n\nfunc init() { panic(\"skip\") }\n"})
				d := e.judge(t)
				seen := strings.Contains(d, "b/"+newTest)
				if weak {
					if seen {
						t.Fatalf("the weakened harness saw the new test: the probe proves nothing\n%s", d)
					}
					return
				}
				if !seen {
					t.Fatalf("the judge does not see the new test file:\n%s", d)
				}
				e.publish(t, map[string]string{newTest: "package app\n\nfunc init() { panic(\"skip\") }\n"})
			})
		}
	}
}

// TestProbeAttributesHideDiff: the agent adds a .gitattributes that marks
// the weakened test binary, so the diff says "Binary files differ"
// instead of showing the removed assertion. The judge's diff shows the
// text of every file that is text, whatever the attributes say; a file
// that really is binary stays a binary line.
func TestProbeAttributesHideDiff(t *testing.T) {
	t.Parallel()
	variants := map[string]string{
		"-diff on test files":    "*_test.go -diff\n",
		"the binary macro":       "src/** binary\n",
		"a macro of the agent's": "[attr]opaque -diff -text\n*.go opaque\n",
	}
	for _, name := range sortedKeys(variants) {
		for _, weak := range []bool{false, true} {
			t.Run(name+"/"+modeName(weak), func(t *testing.T) {
				t.Parallel()
				e := newProbe(t, weakness{attrs: weak}, Options{})
				writeFiles(t, e.dir, map[string]string{"src/app_test.go": weakenedTest, ".gitattributes": variants[name],
					"src/blob.bin": "\x00\x01binary\x00"})
				d := e.judge(t)
				if !expectSeen(t, weak, strings.Contains(d, assertion), d) {
					return
				}
				if !strings.Contains(d, "Binary files /dev/null and b/src/blob.bin differ") {
					t.Errorf("a real binary file is not shown as binary:\n%s", d)
				}
				e.publish(t, map[string]string{"src/app_test.go": weakenedTest})
			})
		}
	}
}

// TestProbeResumeHistory: a resume with a new private directory (a lost
// one, or a second Repo of the same loop) reads the loop branch's history
// from the repository's objects, where the agent may have rewritten an
// iteration's commit object (forged trailers: "Agent-Loop-Check: pass").
// The history is whole, and a forged commit is an error; the weakened
// harness (commits unchecked) takes the forged trailers.
func TestProbeResumeHistory(t *testing.T) {
	t.Parallel()
	for _, weak := range []bool{false, true} {
		t.Run(modeName(weak), func(t *testing.T) {
			t.Parallel()
			e := newProbe(t, weakness{}, Options{})
			var tips []string
			for i := 1; i <= 2; i++ {
				writeFiles(t, e.dir, map[string]string{"src/app.go": strings.Repeat("// more\n", i)})
				res, err := e.r.Commit(e.ctx, loop.CommitRequest{Subject: "iteration", Trailers: []loop.Trailer{
					{Key: "Agent-Loop-Iteration", Value: string(rune('0' + i))}, {Key: "Agent-Loop-Check", Value: "fail"}}})
				if err != nil {
					t.Fatal(err)
				}
				tips = append(tips, res.SHA)
			}
			// A second harness process, without the first one's private directory.
			r2 := openRepo(t, e.dir, Options{})
			r2.weak = weakness{history: weak}
			if err := r2.Checkout(e.ctx, "loop"); err != nil {
				t.Fatal(err)
			}
			hist, err := r2.History(e.ctx, "loop", e.base)
			if err != nil || len(hist) != 2 || hist[0].SHA != tips[0] || hist[1].SHA != tips[1] {
				t.Fatalf("History in a new process: %+v %v, want the two iterations", hist, err)
			}
			// The agent rewrites iteration 1's commit object.
			raw := runGit(t, e.dir, "cat-file", "commit", tips[0]) + "\n"
			forged := strings.Replace(raw, "Agent-Loop-Check: fail", "Agent-Loop-Check: pass", 1)
			forgePack(t, filepath.Join(e.dir, ".git", "objects"), tips[0], "commit", []byte(forged))
			r3 := openRepo(t, e.dir, Options{})
			r3.weak = weakness{history: weak}
			hist, err = r3.History(e.ctx, "loop", e.base)
			if weak {
				if err != nil || len(hist) != 2 || hist[0].Trailers["Agent-Loop-Check"] != "pass" {
					t.Fatalf("the weakened harness did not take the forged trailers (%+v, %v): the probe proves nothing", hist, err)
				}
				return
			}
			if !errors.Is(err, ErrForgedObject) {
				t.Fatalf("History through a forged commit: %+v %v, want ErrForgedObject", hist, err)
			}
		})
	}
}
