package loop_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/gitrepo"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// gitIn runs git in dir and returns its trimmed output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// sameFilesCheck passes when the file "fixed" holds what tests/expect
// holds: an agent can pass it by fixing "fixed", or by changing the test.
type sameFilesCheck struct{ runs int }

func (c *sameFilesCheck) Check(ctx context.Context, req loop.CheckRequest) (loop.CheckResult, error) {
	c.runs++
	a, _ := os.ReadFile(filepath.Join(req.Dir, "fixed"))
	b, _ := os.ReadFile(filepath.Join(req.Dir, "tests", "expect"))
	if string(a) == string(b) {
		return loop.CheckResult{Passed: true, Output: "ok\n"}, nil
	}
	return loop.CheckResult{ExitCode: 1, Output: "FAIL: fixed is " + strings.TrimSpace(string(a)) + "\n", Tests: testreport.Summary{}}, nil
}

// protectedRepo is a repository with the files the default protected
// paths name, and a test the agent could change instead of the code.
func protectedRepo(t *testing.T) (string, *gitrepo.Repo) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"fixed": "no\n", "tests/expect": "yes\n", ".github/workflows/ci.yml": "on: push\n",
		"CLAUDE.md": "# rules\n", "AGENTS.md": "# agents\n", "src/app.txt": "app\n"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		writeFile(dir, name, body)
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "init")
	r, err := gitrepo.Open(dir, gitrepo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Exclude(context.Background(), ".aiwg/"); err != nil {
		t.Fatal(err)
	}
	return dir, r
}

// The agent's changes to protected paths are undone before the iteration
// is checked and committed, and listed in the state: a workflow edited, a
// file added under .github, CLAUDE.md renamed, AGENTS.md deleted, and the
// test changed so that the check passes. The check runs again without
// them, so the changed test does not make the iteration pass. Without the
// protected paths (the weakened harness) the same agent's cheat passes.
func TestProtectedPathsAreRevertedBeforeTheCheck(t *testing.T) {
	agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		switch req.Iteration {
		case 1:
			writeFile(req.Dir, ".github/workflows/ci.yml", "on: push\njobs: {}\n")
			writeFile(req.Dir, ".github/workflows/new.yml", "on: push\n")
			os.Rename(filepath.Join(req.Dir, "CLAUDE.md"), filepath.Join(req.Dir, "docs-claude.md"))
			os.Remove(filepath.Join(req.Dir, "AGENTS.md"))
			writeFile(req.Dir, "tests/expect", "no\n") // the cheat
			writeFile(req.Dir, "src/app.txt", "app v2\n")
		case 2:
			for _, f := range []string{"CLAUDE.md", "AGENTS.md"} {
				if _, err := os.Stat(filepath.Join(req.Dir, f)); err != nil {
					t.Errorf("iteration 2 starts without %s: %v", f, err)
				}
			}
			writeFile(req.Dir, "fixed", "yes\n")
		}
		return loop.AgentResult{}, nil
	})
	run := func(t *testing.T, protect []string) (*state.State, string, *sameFilesCheck) {
		dir, repo := protectedRepo(t)
		e, st := newEngine(t, dir, repo, agent, fakeJudge{}, func(sp *spec.Spec) {
			sp.Publish.Protected = protect
			sp.Policy.ConfirmRuns = 0
		})
		check := &sameFilesCheck{}
		e.Verifier = check
		if _, err := e.Run(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		return validState(t, e.Dir), dir, check
	}

	t.Run("protected", func(t *testing.T) {
		st, dir, check := run(t, []string{".github/**", "CODEOWNERS", "AGENTS.md", "CLAUDE.md", "tests/**"})
		if st.Status != state.Completed || st.Iteration != 2 {
			t.Fatalf("status %s after %d iterations, want completed after 2 (the changed test must not pass iteration 1)", st.Status, st.Iteration)
		}
		it1 := st.IterationHistory[0]
		if it1.CheckPassed {
			t.Errorf("iteration 1 passed with its changed test reverted")
		}
		got := map[string]string{}
		for _, r := range it1.Reverted {
			got[r.Status+" "+r.OldPath+">"+r.Path] = r.Pattern
		}
		want := map[string]string{"M >.github/workflows/ci.yml": ".github/**", "A >.github/workflows/new.yml": ".github/**",
			"R CLAUDE.md>docs-claude.md": "CLAUDE.md", "D >AGENTS.md": "AGENTS.md", "M >tests/expect": "tests/**"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("revert %q: pattern %q, want %q (all: %v)", k, got[k], v, got)
			}
		}
		if len(got) != len(want) {
			t.Errorf("reverts %v, want %v", got, want)
		}
		// The check ran on the reverted tree: baseline, the agent's tree,
		// the reverted tree, then iteration 2.
		if check.runs != 4 {
			t.Errorf("%d check runs, want 4", check.runs)
		}
		changed := gitIn(t, dir, "diff", "--name-status", "main", it1.Commit)
		if changed != "M\tsrc/app.txt" {
			t.Errorf("iteration 1's commit changes %q, want only src/app.txt", changed)
		}
		for _, f := range []string{".github/workflows/new.yml", "docs-claude.md"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("%s is still in the work tree", f)
			}
		}
		gitIn(t, dir, "fsck", "--strict")
	})
	t.Run("weakened: nothing protected", func(t *testing.T) {
		st, dir, _ := run(t, nil)
		if st.Status != state.Completed || st.Iteration != 1 || len(st.IterationHistory[0].Reverted) != 0 {
			t.Fatalf("without protection the cheat should pass iteration 1: %s after %d", st.Status, st.Iteration)
		}
		if changed := gitIn(t, dir, "diff", "--name-only", "main", st.IterationHistory[0].Commit); !strings.Contains(changed, ".github/workflows/ci.yml") {
			t.Errorf("the unprotected commit lacks the workflow change: %q", changed)
		}
	})
}

// remoteRepo is newRepo with a bare remote origin that has main, and a
// second clone (a colleague) that pushes to it.
func remoteRepo(t *testing.T) (dir string, repo *gitrepo.Repo, bare, colleague string) {
	t.Helper()
	dir, _ = newRepo(t)
	bare = filepath.Join(t.TempDir(), "origin.git")
	gitIn(t, dir, "clone", "-q", "--bare", dir, bare)
	gitIn(t, dir, "remote", "add", "origin", bare)
	gitIn(t, dir, "fetch", "-q", "origin")
	colleague = filepath.Join(t.TempDir(), "colleague")
	gitIn(t, filepath.Dir(colleague), "clone", "-q", bare, colleague)
	r, err := gitrepo.Open(dir, gitrepo.Options{Remote: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Exclude(context.Background(), ".aiwg/"); err != nil {
		t.Fatal(err)
	}
	return dir, r, bare, colleague
}

func push(t *testing.T, clone, file, body, msg string) string {
	t.Helper()
	writeFile(clone, file, body)
	gitIn(t, clone, "add", "-A")
	gitIn(t, clone, "commit", "-qm", msg)
	gitIn(t, clone, "push", "-q", "origin", "HEAD:main")
	return gitIn(t, clone, "rev-parse", "HEAD")
}

func parents(t *testing.T, bare, rev string) []string {
	t.Helper()
	f := strings.Fields(gitIn(t, bare, "rev-list", "--parents", "-n", "1", rev))
	return f[1:]
}

// A base that moves: the branch the result is for (main, on a real bare
// remote) gets commits while the loop runs. A clean merge that keeps the
// check passing is committed before publishing; a conflict becomes the
// next iteration's task, whose commit is the merge; with no iteration
// left, the result is published without the merge; an iteration that
// leaves a conflict marker undoes the merge. The state says what came in.
func TestBaseThatMovesIsMergedBeforePublishing(t *testing.T) {
	tune := func(max int) func(*spec.Spec) {
		return func(sp *spec.Spec) {
			sp.Publish.Push, sp.Publish.Base = true, "main"
			sp.Limits.MaxIterations = max
			sp.Policy.ConfirmRuns = 0
		}
	}
	t.Run("clean", func(t *testing.T) {
		dir, repo, bare, colleague := remoteRepo(t)
		var theirs string
		agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
			writeFile(req.Dir, "fixed", "yes\n")
			theirs = push(t, colleague, "other.txt", "theirs\n", "docs: other")
			return loop.AgentResult{}, nil
		})
		e, st := newEngine(t, dir, repo, agent, fakeJudge{}, tune(3))
		out, err := e.Run(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		got := validState(t, e.Dir)
		if out.Status != state.Completed || out.Iterations != 1 {
			t.Fatalf("outcome %+v", out)
		}
		if len(got.Harness.Merges) != 1 {
			t.Fatalf("merges %+v", got.Harness.Merges)
		}
		m := got.Harness.Merges[0]
		if m.Outcome != state.MergeMerged || m.Head != theirs || len(m.Commits) != 1 || m.Commits[0].Subject != "docs: other" || m.Commit == "" {
			t.Errorf("merge %+v", m)
		}
		branch := got.Harness.Branch
		if head := gitIn(t, bare, "rev-parse", branch); head != m.Commit {
			t.Errorf("the remote %s is at %s, want the merge %s", branch, head, m.Commit)
		}
		if p := parents(t, bare, branch); len(p) != 2 || p[0] != got.IterationHistory[0].Commit || p[1] != theirs {
			t.Errorf("merge parents %v", p)
		}
		if body := gitIn(t, bare, "show", branch+":other.txt"); body != "theirs" {
			t.Errorf("other.txt = %q", body)
		}
		if !strings.Contains(got.Harness.StopReason, "merged") {
			t.Errorf("stop reason %q", got.Harness.StopReason)
		}
		gitIn(t, bare, "fsck", "--strict")
	})
	conflicting := func(t *testing.T, max int, second func(dir string)) (*state.State, string, string, []string) {
		dir, repo, bare, colleague := remoteRepo(t)
		var prompts []string
		agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
			prompts = append(prompts, req.Prompt)
			if req.Iteration == 1 {
				writeFile(req.Dir, "fixed", "yes\n")
				push(t, colleague, "fixed", "yes, by hand\n", "fixed by hand")
				return loop.AgentResult{}, nil
			}
			second(req.Dir)
			return loop.AgentResult{}, nil
		})
		e, st := newEngine(t, dir, repo, agent, fakeJudge{}, tune(max))
		if _, err := e.Run(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		gitIn(t, bare, "fsck", "--strict")
		return validState(t, e.Dir), bare, dir, prompts
	}
	t.Run("conflict resolved by the next iteration", func(t *testing.T) {
		st, bare, _, prompts := conflicting(t, 3, func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "fixed"))
			if !strings.Contains(string(b), "<<<<<<<") {
				t.Errorf("iteration 2 does not see the conflict markers:\n%s", b)
			}
			writeFile(dir, "fixed", "yes\n")
		})
		if st.Status != state.Completed || st.Iteration != 2 {
			t.Fatalf("status %s after %d", st.Status, st.Iteration)
		}
		if len(prompts) != 2 || !strings.Contains(prompts[1], "# The branch main moved on") || !strings.Contains(prompts[1], "- `fixed`") {
			t.Errorf("iteration 2's prompt does not give it the conflict:\n%s", prompts[len(prompts)-1])
		}
		ms := st.Harness.Merges
		if len(ms) != 2 || ms[0].Outcome != state.MergeConflict || len(ms[0].Conflicts) != 1 || ms[1].Outcome != state.MergeMerged ||
			!ms[1].ByIteration || ms[1].Commit != st.IterationHistory[1].Commit {
			t.Fatalf("merges %+v", ms)
		}
		if p := parents(t, bare, st.Harness.Branch); len(p) != 2 || p[1] != ms[0].Head {
			t.Errorf("iteration 2's commit parents %v, want the merge of %s", p, ms[0].Head)
		}
	})
	t.Run("markers left: the merge is undone", func(t *testing.T) {
		st, bare, _, _ := conflicting(t, 2, func(dir string) {})
		ms := st.Harness.Merges
		if len(ms) < 2 || ms[1].Outcome != state.MergeUnresolved || st.IterationHistory[1].CheckPassed {
			t.Fatalf("merges %+v, iteration 2 passed %v", ms, st.IterationHistory[1].CheckPassed)
		}
		if p := parents(t, bare, st.Harness.Branch); len(p) != 1 {
			t.Errorf("the branch head has parents %v: an unresolved merge was committed", p)
		}
		if b := gitIn(t, bare, "show", st.Harness.Branch+":fixed"); strings.Contains(b, "<<<<<<<") {
			t.Errorf("conflict markers were published:\n%s", b)
		}
	})
	t.Run("no iteration left", func(t *testing.T) {
		st, bare, _, _ := conflicting(t, 1, func(dir string) { t.Error("no second iteration should run") })
		ms := st.Harness.Merges
		if st.Status != state.Completed || len(ms) != 1 || ms[0].Outcome != state.MergeNotMerged || !strings.Contains(ms[0].Detail, "conflicts in fixed") {
			t.Fatalf("status %s, merges %+v", st.Status, ms)
		}
		if head := gitIn(t, bare, "rev-parse", st.Harness.Branch); head != st.IterationHistory[0].Commit {
			t.Errorf("published %s, want iteration 1 unmerged (%s)", head, st.IterationHistory[0].Commit)
		}
	})
}
