package refname

import (
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// names are hand-picked cases of every rule, and the defect that made this
// package: "fix." passed one validator and failed git.
var names = []string{
	"fix", "fix.", "main", "agent-loop/ralph-fix-tests-a1b2c3d4", "HEAD", "@", "@a", "a@b", "a@{b", "@{-1}", "-x", "-", "a-",
	"a..b", "a/.b", ".a", "a.", "a/b.", "a b", "a\tb", "a\x7fb", "a\x01b", "a~b", "a^b", "a:b", "a?b", "a*", "a[", "a\\b",
	"a.lock", "a/b.lock/c", "foo.lock.x", "a.lock/b", "a/", "/a", "a//b", "ü", "héllo", "\u200b", "a\x80b", "HEAD/x",
	"x/HEAD", "@/x", "a/@", "FETCH_HEAD", "a_b", "v1.2.3", "feature/x.y", "feature/.x", "x/..", "..", ".", "a/./b",
	"refs/heads/x", "refs", "refsx/y", "a@", "{", "}", "a{b}", "a!b", "a#b", "a$b", "a%b", "a&b", "a'b", "a\"b", "a(b)",
	"a+b", "a,b", "a;b", "a<b>", "a=b", "a|b", "a`b", "a.lock.lock", "x.lockx", ".lock", "a/.lock",
}

// gitAccepts asks the real git CLI. It runs outside any repository, so
// "@{-N}" cannot expand to a previous branch.
func gitAccepts(t *testing.T, args ...string) bool {
	t.Helper()
	cmd := exec.Command("git", append([]string{"check-ref-format"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CEILING_DIRECTORIES=/"}
	err := cmd.Run()
	if err == nil {
		return true
	}
	if _, ok := err.(*exec.ExitError); !ok {
		t.Fatalf("git check-ref-format: %v", err)
	}
	return false
}

// randomNames mixes the characters the rules are about.
func randomNames(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	atoms := []string{"a", "b", "z", "0", "9", "-", "_", ".", "/", "@", "{", "}", "~", "^", ":", "?", "*", "[", "\\", " ",
		"\t", "\x7f", "lock", ".lock", "..", "//", "@{", "HEAD", "refs/", "é", "\u00a0", "!", "#", "+", ","}
	out := make([]string, 0, n)
	for range n {
		var b strings.Builder
		for k := 1 + r.IntN(6); k > 0; k-- {
			b.WriteString(atoms[r.IntN(len(atoms))])
		}
		out = append(out, b.String())
	}
	return out
}

// Branch agrees with `git check-ref-format --branch` on every name, except
// its one documented refusal more (names beginning with refs/).
func TestBranchMatchesGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("this test needs the git CLI")
	}
	all := append(append([]string(nil), names...), randomNames(600)...)
	accepted, refused := 0, 0
	for _, name := range all {
		git := gitAccepts(t, "--branch", name)
		want := git && !strings.HasPrefix(name, "refs/")
		err := Branch(name)
		if (err == nil) != want {
			t.Errorf("Branch(%q) = %v; git check-ref-format --branch accepts it: %v", name, err, git)
		}
		if err != nil {
			refused++
			if !strings.Contains(err.Error(), "not a valid branch name") {
				t.Errorf("Branch(%q): the error does not say what is wrong: %v", name, err)
			}
		} else {
			accepted++
		}
	}
	if accepted < 50 || refused < 50 {
		t.Fatalf("the names do not exercise both sides: %d accepted, %d refused", accepted, refused)
	}
}

// Check agrees with `git check-ref-format --allow-onelevel` on full names.
func TestCheckMatchesGit(t *testing.T) {
	t.Parallel()
	for _, name := range append(append([]string(nil), names...), randomNames(300)...) {
		for _, ref := range []string{name, "refs/heads/" + name} {
			git := gitAccepts(t, "--allow-onelevel", ref)
			if err := Check(ref); (err == nil) != git {
				t.Errorf("Check(%q) = %v; git accepts it: %v", ref, err, git)
			}
		}
	}
}

// Git accepts a 256-byte component, but cannot create it as a ref file:
// Branch refuses it before the loop starts.
func TestBranchRefusesWhatGitCannotCreate(t *testing.T) {
	t.Parallel()
	long := "x/" + strings.Repeat("a", 256)
	if !gitAccepts(t, "--branch", long) {
		t.Fatal("git refuses a long component here; this test is moot")
	}
	dir := t.TempDir()
	run := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "PATH=/usr/bin:/bin"}
		return cmd.Run()
	}
	if err := run("init", "-q"); err != nil {
		t.Fatal(err)
	}
	if err := run("commit", "-q", "--allow-empty", "-m", "x"); err != nil {
		t.Fatal(err)
	}
	if run("branch", long) == nil {
		t.Fatal("git created the branch; the length rule is not needed")
	}
	if Branch(long) == nil || Branch("x/"+strings.Repeat("a", 255)) != nil {
		t.Errorf("Branch: the 256-byte component is accepted, or the 255-byte one refused")
	}
}
