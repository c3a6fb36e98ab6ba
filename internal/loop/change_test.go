package loop

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/state"
)

// TestChangeOfAgreesWithGit: changeOf sizes a diff as git's own --numstat
// and --name-status do, on a change with every kind of file: modified,
// added, deleted, renamed with an edit, binary, a name with a space and
// one git quotes, and content lines that look like diff headers.
func TestChangeOfAgreesWithGit(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	write := func(name, s string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("a line that stays the same\n", 20)
	git("init", "-q", "-b", "main")
	write("calc.sh", "add\nsub\n")
	write("gone.txt", "bye\n")
	write("old/name.go", long+"package x\n")
	write("logo.bin", "\x00\x01\x02")
	write("my notes.md", "one\n")
	write("héllo.txt", "a\n")
	write("headers.txt", "-- a\n++ b\n")
	git("add", "-A")
	git("commit", "-qm", "start")

	write("calc.sh", "add\nsub fixed\nmul\n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	os.Remove(filepath.Join(dir, "old/name.go"))
	write("new/name.go", long+"package y\n")
	write("logo.bin", "\x00\x01\x03\x04")
	write("my notes.md", "one\ntwo\n")
	write("héllo.txt", "b\n")
	write("headers.txt", "--- a\n+++ b\n++ c\n")
	write("added/file.txt", "1\n2\n3\n")
	git("add", "-A")

	diff := git("diff", "--cached", "--no-color", "--find-renames", "--src-prefix=a/", "--dst-prefix=b/", "HEAD")
	got := changeOf(diff)

	// git's own count: --numstat -z (paths unquoted; "-" for binary).
	want := state.Change{}
	fields := strings.Split(strings.TrimSuffix(git("diff", "--cached", "--find-renames", "--numstat", "-z", "HEAD"), "\x00"), "\x00")
	for i := 0; i < len(fields); i++ {
		parts := strings.SplitN(fields[i], "\t", 3)
		path := parts[2]
		if path == "" { // a rename: old and new paths follow
			path = fields[i+2]
			i += 2
		}
		add, _ := strconv.Atoi(parts[0])
		del, _ := strconv.Atoi(parts[1])
		want.Files++
		want.Additions += add
		want.Deletions += del
		f := slices.IndexFunc(got.Paths, func(c state.ChangedFile) bool { return c.Path == path })
		if f < 0 {
			t.Errorf("changeOf lacks %q (it has %+v)", path, got.Paths)
			continue
		}
		if got.Paths[f].Additions != add || got.Paths[f].Deletions != del {
			t.Errorf("%s: +%d −%d, git says +%d −%d", path, got.Paths[f].Additions, got.Paths[f].Deletions, add, del)
		}
	}
	if got.Files != want.Files || got.Additions != want.Additions || got.Deletions != want.Deletions {
		t.Errorf("changeOf: %d files +%d −%d; git: %d files +%d −%d", got.Files, got.Additions, got.Deletions, want.Files, want.Additions, want.Deletions)
	}
	status := map[string]string{"A": "added", "D": "deleted", "M": "modified", "R": "renamed"}
	ns := strings.Split(strings.TrimSuffix(git("diff", "--cached", "--find-renames", "--name-status", "-z", "HEAD"), "\x00"), "\x00")
	for i := 0; i < len(ns); i += 2 {
		code, path := ns[i][:1], ns[i+1]
		if code == "R" {
			path = ns[i+2]
			i++
		}
		f := slices.IndexFunc(got.Paths, func(c state.ChangedFile) bool { return c.Path == path })
		if f >= 0 && got.Paths[f].Status != status[code] {
			t.Errorf("%s: status %q, git says %s", path, got.Paths[f].Status, code)
		}
	}
	// Largest first.
	for i := 1; i < len(got.Paths); i++ {
		a, b := got.Paths[i-1], got.Paths[i]
		if a.Additions+a.Deletions < b.Additions+b.Deletions {
			t.Errorf("paths not largest first: %+v", got.Paths)
		}
	}

	// The counter the engine had before read "+++ b" and "--- a" inside a
	// hunk as file headers: it would miss these two lines.
	if old := naiveCount(diff); old == got.Additions+got.Deletions {
		t.Errorf("the header-like lines did not matter (%d): the test cannot tell the counters apart", old)
	}
}

// naiveCount counts +/- lines, skipping every line that starts like a
// file header.
func naiveCount(d string) int {
	n := 0
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"), strings.HasPrefix(l, "-"):
			n++
		}
	}
	return n
}

func TestChangeWithoutExcluded(t *testing.T) {
	c := state.Change{Files: 3, Additions: 6, Deletions: 1, Paths: []state.ChangedFile{
		{Path: ".github/workflows/ci.yml", Additions: 4}, {Path: "a", Additions: 1, Deletions: 1}, {Path: "b", Additions: 1}}}
	got := changeWithout(c, []string{".github/workflows/ci.yml"})
	if got.Files != 2 || got.Additions != 2 || got.Deletions != 1 || len(got.Paths) != 2 {
		t.Errorf("%+v", got)
	}
}

func TestAgentSummary(t *testing.T) {
	for _, c := range []struct{ msg, want string }{
		{"", ""},
		{"  Fixed it.  ", "Fixed it."},
		{"## Summary\n\nFixed Sub.\nIt subtracted wrongly.\n\nDetails follow.", "Fixed Sub.\nIt subtracted wrongly."},
		{"Summary:\nOne\nTwo\nThree\nFour", "One\nTwo\nThree"},
		{"```diff\n-a\n+b\n```\nChanged a to b.", "Changed a to b."},
		{"Done.\r\nSecond line\r\n", "Done.\nSecond line"},
		{strings.Repeat("x", 300), strings.Repeat("x", summaryRunes-1) + "…"},
		{"Fixed it:\n```\ncode\n```", "Fixed it:"},
	} {
		if got := agentSummary(c.msg); got != c.want {
			t.Errorf("agentSummary(%q) = %q, want %q", c.msg, got, c.want)
		}
	}
}
