package protected

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var cases = []struct {
	pattern string
	path    string
	want    bool
}{
	{".github/**", ".github/workflows/ci.yml", true},
	{".github/**", ".github/CODEOWNERS", true},
	{".github/**", "docs/.github/x", false},
	{".github/**", ".githubx/a", false},
	{"CODEOWNERS", "CODEOWNERS", true},
	{"CODEOWNERS", "docs/CODEOWNERS", true},
	{"CODEOWNERS", "CODEOWNERS.md", false},
	{"/CODEOWNERS", "docs/CODEOWNERS", false},
	{"/CODEOWNERS", "CODEOWNERS", true},
	{"AGENTS.md", "pkg/sub/AGENTS.md", true},
	{"AGENTS.md", "pkg/AGENTS.md.bak", false},
	{"docs/*.md", "docs/a.md", true},
	{"docs/*.md", "docs/sub/a.md", false},
	{"docs/*.md", "x/docs/a.md", false},
	{"*.lock", "a/b/yarn.lock", true},
	{"**/fixtures/**", "a/b/fixtures/c/d.json", true},
	{"**/fixtures/**", "fixtures/d.json", true},
	{"**/fixtures", "a/fixtures/x", true},
	{"a/**/b", "a/b", true},
	{"a/**/b", "a/x/y/b", true},
	{"a/**/b", "a/x/y/c", false},
	{"build/", "build/out.js", true},
	{"build/", "src/build/out.js", true},
	{"build/", "build", false},
	{"scripts", "scripts/test.sh", true},
	{"test?.go", "test1.go", true},
	{"test?.go", "test12.go", false},
	{"[ab].txt", "b.txt", true},
	{"[!ab].txt", "c.txt", true},
	{"[!ab].txt", "a.txt", false},
	{"**", "any/thing", true},
	{`\#notes`, "#notes", true},
}

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, c := range cases {
		s, err := Compile([]string{c.pattern})
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if _, got := s.Match(c.path); got != c.want {
			t.Errorf("pattern %q, path %q: %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

// TestMatchAgreesWithGit checks the same table against git's own .gitignore
// matching (git check-ignore --no-index), so the semantics are git's and
// not this package's reading of them.
func TestMatchAgreesWithGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, c := range cases {
		dir := t.TempDir()
		run := func(args ...string) error {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
			return cmd.Run()
		}
		if err := run("init", "-q"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(c.pattern+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// A trailing-slash pattern matches directories: make the path's
		// directories real so git knows them as such.
		if d := filepath.Dir(c.path); d != "." {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		err := run("check-ignore", "--no-index", "-q", c.path)
		var ee *exec.ExitError
		gitSays := err == nil
		if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
			t.Fatalf("git check-ignore %q: %v", c.path, err)
		}
		if gitSays != c.want {
			t.Errorf("git says pattern %q matches %q: %v; the table says %v", c.pattern, c.path, gitSays, c.want)
		}
	}
}

func TestDefaultAndNegation(t *testing.T) {
	t.Parallel()
	s := MustCompile(Default)
	for p, want := range map[string]bool{
		".github/workflows/ci.yml": true, "CODEOWNERS": true, "docs/CODEOWNERS": true, ".github/CODEOWNERS": true,
		"AGENTS.md": true, "web/AGENTS.md": true, "CLAUDE.md": true, "claude.md": true, ".GitHub/Workflows/x.yml": true,
		"src/main.go": false, "README.md": false, "github/x": false,
	} {
		if _, got := s.Match(p); got != want {
			t.Errorf("default, %q: %v, want %v", p, got, want)
		}
	}
	s = MustCompile([]string{".github/**", "!.github/ISSUE_TEMPLATE/**"})
	if _, got := s.Match(".github/ISSUE_TEMPLATE/bug.md"); got {
		t.Error("a later ! pattern did not take the path back out")
	}
	if pat, got := s.Match(".github/workflows/ci.yml"); !got || pat != ".github/**" {
		t.Errorf("%q %v", pat, got)
	}
}

func TestParseInputAndErrors(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(Default, ParseInput("  \n")); diff != "" {
		t.Errorf("empty input (-want +got):\n%s", diff)
	}
	if got := ParseInput("none"); got != nil {
		t.Errorf("none: %q", got)
	}
	if diff := cmp.Diff([]string{".github/**", "Makefile"}, ParseInput("# ours\n- .github/**\nMakefile\n")); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	_, err := Compile([]string{"../etc/passwd", "a//b", "[abc", "ok/**"})
	if err == nil {
		t.Fatal("bad patterns were accepted")
	}
	for _, want := range []string{`"../etc/passwd"`, `"a//b"`, `"[abc"`, ".gitignore-style"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestSplitRestoreSummary(t *testing.T) {
	t.Parallel()
	s := MustCompile(Default)
	changes := []Change{
		{Status: 'M', Path: "src/a.go"},
		{Status: 'M', Path: ".github/workflows/ci.yml"},
		{Status: 'A', Path: "AGENTS.md"},
		{Status: 'D', Path: "CODEOWNERS"},
		{Status: 'R', OldPath: "CLAUDE.md", Path: "notes.md"},
		{Status: 'R', OldPath: "src/old.go", Path: "src/new.go"},
		{Status: 'C', OldPath: "AGENTS.md", Path: "docs/agents-copy.md"},
	}
	keep, revert := s.Split(changes)
	var kept []string
	for _, k := range keep {
		kept = append(kept, k.Path)
	}
	if diff := cmp.Diff([]string{"src/a.go", "src/new.go", "docs/agents-copy.md"}, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	restore, remove := Restore(revert)
	if diff := cmp.Diff([]string{".github/workflows/ci.yml", "CLAUDE.md", "CODEOWNERS"}, restore); diff != "" {
		t.Errorf("restore (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"AGENTS.md", "notes.md"}, remove); diff != "" {
		t.Errorf("remove (-want +got):\n%s", diff)
	}
	sum := Summary(revert)
	for _, want := range []string{"Reverted 4 changes", "modified .github/workflows/ci.yml (protected by .github/**)", "renamed CLAUDE.md -> notes.md", "deleted CODEOWNERS"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary %q lacks %q", sum, want)
		}
	}
	if Summary(nil) != "" {
		t.Error("a summary for nothing")
	}
}
