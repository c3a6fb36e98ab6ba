package judge

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		diff string
		want []FileDiff
	}{
		{
			name: "empty",
			diff: "",
			want: nil,
		},
		{
			name: "modified with two hunks",
			diff: `diff --git a/calc.go b/calc.go
index 1111111..2222222 100644
--- a/calc.go
+++ b/calc.go
@@ -1,3 +1,3 @@ package calc
 a
-b
+B
 c
@@ -10,2 +10,3 @@ func X() {
 x
+y
 z
`,
			want: []FileDiff{{
				OldPath: "calc.go", NewPath: "calc.go", Status: StatusModified, OldMode: "100644", NewMode: "100644",
				Hunks: []Hunk{
					{OldStart: 1, OldLines: 3, NewStart: 1, NewLines: 3, Section: "package calc", Lines: []Line{
						{Kind: LineContext, Text: "a", OldLine: 1, NewLine: 1},
						{Kind: LineRemoved, Text: "b", OldLine: 2},
						{Kind: LineAdded, Text: "B", NewLine: 2},
						{Kind: LineContext, Text: "c", OldLine: 3, NewLine: 3},
					}},
					{OldStart: 10, OldLines: 2, NewStart: 10, NewLines: 3, Section: "func X() {", Lines: []Line{
						{Kind: LineContext, Text: "x", OldLine: 10, NewLine: 10},
						{Kind: LineAdded, Text: "y", NewLine: 11},
						{Kind: LineContext, Text: "z", OldLine: 11, NewLine: 12},
					}},
				},
			}},
		},
		{
			name: "rename with similarity and an edit",
			diff: `diff --git a/old/name.py b/new/name.py
similarity index 87%
rename from old/name.py
rename to new/name.py
index 3333333..4444444 100644
--- a/old/name.py
+++ b/new/name.py
@@ -1 +1 @@
-x = 1
+x = 2
`,
			want: []FileDiff{{
				OldPath: "old/name.py", NewPath: "new/name.py", Status: StatusRenamed, Similarity: 87, OldMode: "100644", NewMode: "100644",
				Hunks: []Hunk{{OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 1, Lines: []Line{
					{Kind: LineRemoved, Text: "x = 1", OldLine: 1},
					{Kind: LineAdded, Text: "x = 2", NewLine: 1},
				}}},
			}},
		},
		{
			name: "pure rename without hunks",
			diff: `diff --git a/a.txt b/b.txt
similarity index 100%
rename from a.txt
rename to b.txt
`,
			want: []FileDiff{{OldPath: "a.txt", NewPath: "b.txt", Status: StatusRenamed, Similarity: 100}},
		},
		{
			name: "new file",
			diff: `diff --git a/n.go b/n.go
new file mode 100644
index 0000000..5555555
--- /dev/null
+++ b/n.go
@@ -0,0 +1,2 @@
+package n
+
`,
			want: []FileDiff{{
				NewPath: "n.go", Status: StatusAdded, NewMode: "100644",
				Hunks: []Hunk{{OldStart: 0, OldLines: 0, NewStart: 1, NewLines: 2, Lines: []Line{
					{Kind: LineAdded, Text: "package n", NewLine: 1},
					{Kind: LineAdded, Text: "", NewLine: 2},
				}}},
			}},
		},
		{
			name: "deleted file",
			diff: `diff --git a/d_test.go b/d_test.go
deleted file mode 100644
index 6666666..0000000
--- a/d_test.go
+++ /dev/null
@@ -1 +0,0 @@
-package d
`,
			want: []FileDiff{{
				OldPath: "d_test.go", Status: StatusDeleted, OldMode: "100644",
				Hunks: []Hunk{{OldStart: 1, OldLines: 1, NewStart: 0, NewLines: 0, Lines: []Line{
					{Kind: LineRemoved, Text: "package d", OldLine: 1},
				}}},
			}},
		},
		{
			name: "binary files",
			diff: `diff --git a/img.png b/img.png
new file mode 100644
index 0000000..7777777
Binary files /dev/null and b/img.png differ
diff --git a/logo.bin b/logo.bin
index 8888888..9999999 100644
Binary files a/logo.bin and b/logo.bin differ
`,
			want: []FileDiff{
				{NewPath: "img.png", Status: StatusAdded, NewMode: "100644", Binary: true},
				{OldPath: "logo.bin", NewPath: "logo.bin", Status: StatusModified, OldMode: "100644", NewMode: "100644", Binary: true},
			},
		},
		{
			name: "git binary patch is skipped",
			diff: `diff --git a/x.bin b/x.bin
index 1234567..89abcde 100644
GIT binary patch
literal 5
Mc${NkU|?VZ00Ar

literal 3
KcmZ?wU|;|PA^-w9

diff --git a/y.txt b/y.txt
index 1111111..2222222 100644
--- a/y.txt
+++ b/y.txt
@@ -1 +1 @@
-a
+b
`,
			want: []FileDiff{
				{OldPath: "x.bin", NewPath: "x.bin", Status: StatusModified, OldMode: "100644", NewMode: "100644", Binary: true},
				{OldPath: "y.txt", NewPath: "y.txt", Status: StatusModified, OldMode: "100644", NewMode: "100644", Hunks: []Hunk{{
					OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 1, Lines: []Line{
						{Kind: LineRemoved, Text: "a", OldLine: 1},
						{Kind: LineAdded, Text: "b", NewLine: 1},
					},
				}}},
			},
		},
		{
			name: "no newline at end of file on both sides",
			diff: `diff --git a/f b/f
index 1111111..2222222 100644
--- a/f
+++ b/f
@@ -1 +1 @@
-old
\ No newline at end of file
+new
\ No newline at end of file
`,
			want: []FileDiff{{
				OldPath: "f", NewPath: "f", Status: StatusModified, OldMode: "100644", NewMode: "100644",
				Hunks: []Hunk{{OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 1, Lines: []Line{
					{Kind: LineRemoved, Text: "old", OldLine: 1, NoNewline: true},
					{Kind: LineAdded, Text: "new", NewLine: 1, NoNewline: true},
				}}},
			}},
		},
		{
			name: "CRLF line endings are stripped",
			diff: "diff --git a/w.txt b/w.txt\r\nindex 1111111..2222222 100644\r\n--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1,2 +1,2 @@\r\n keep\r\n-old\r\n+new\r\n",
			want: []FileDiff{{
				OldPath: "w.txt", NewPath: "w.txt", Status: StatusModified, OldMode: "100644", NewMode: "100644",
				Hunks: []Hunk{{OldStart: 1, OldLines: 2, NewStart: 1, NewLines: 2, Lines: []Line{
					{Kind: LineContext, Text: "keep", OldLine: 1, NewLine: 1},
					{Kind: LineRemoved, Text: "old", OldLine: 2},
					{Kind: LineAdded, Text: "new", NewLine: 2},
				}}},
			}},
		},
		{
			name: "removed line that looks like a file header",
			diff: `diff --git a/m.md b/m.md
index 1111111..2222222 100644
--- a/m.md
+++ b/m.md
@@ -1,2 +1,2 @@
--- a/x
+++ b/x
 tail
`,
			want: []FileDiff{{
				OldPath: "m.md", NewPath: "m.md", Status: StatusModified, OldMode: "100644", NewMode: "100644",
				Hunks: []Hunk{{OldStart: 1, OldLines: 2, NewStart: 1, NewLines: 2, Lines: []Line{
					{Kind: LineRemoved, Text: "-- a/x", OldLine: 1},
					{Kind: LineAdded, Text: "++ b/x", NewLine: 1},
					{Kind: LineContext, Text: "tail", OldLine: 2, NewLine: 2},
				}}},
			}},
		},
		{
			name: "mode change only",
			diff: `diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
`,
			want: []FileDiff{{OldPath: "run.sh", NewPath: "run.sh", Status: StatusModified, OldMode: "100644", NewMode: "100755"}},
		},
		{
			name: "quoted paths with spaces and UTF-8",
			diff: `diff --git "a/dir with space/caf\303\251.txt" "b/dir with space/caf\303\251.txt"
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ "b/dir with space/caf\303\251.txt"
@@ -0,0 +1 @@
+x
`,
			want: []FileDiff{{
				NewPath: "dir with space/café.txt", Status: StatusAdded, NewMode: "100644",
				Hunks: []Hunk{{OldStart: 0, OldLines: 0, NewStart: 1, NewLines: 1, Lines: []Line{{Kind: LineAdded, Text: "x", NewLine: 1}}}},
			}},
		},
		{
			name: "plain diff -u without a git header",
			diff: `--- a/f.txt	2026-01-01 00:00:00.000000000 +0000
+++ b/f.txt	2026-01-02 00:00:00.000000000 +0000
@@ -1 +1,2 @@
 a
+b
`,
			want: []FileDiff{{
				OldPath: "f.txt", NewPath: "f.txt", Status: StatusModified,
				Hunks: []Hunk{{OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 2, Lines: []Line{
					{Kind: LineContext, Text: "a", OldLine: 1, NewLine: 1},
					{Kind: LineAdded, Text: "b", NewLine: 2},
				}}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseDiff(tt.diff)
			if err != nil {
				t.Fatalf("ParseDiff: %v", err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseDiff mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseDiffErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		diff      string
		wantFiles int
		wantLine  int
	}{
		{
			name:      "bad hunk header",
			diff:      "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -a +1 @@\n",
			wantFiles: 1, wantLine: 4,
		},
		{
			name:      "truncated hunk",
			diff:      "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n",
			wantFiles: 1, wantLine: 5,
		},
		{
			name:      "junk inside a hunk",
			diff:      "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n?junk\n",
			wantFiles: 1, wantLine: 6,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files, err := ParseDiff(tt.diff)
			var de *DiffError
			if !errors.As(err, &de) {
				t.Fatalf("ParseDiff error = %v, want a *DiffError", err)
			}
			if de.Line != tt.wantLine {
				t.Errorf("DiffError.Line = %d, want %d (%v)", de.Line, tt.wantLine, err)
			}
			if len(files) != tt.wantFiles {
				t.Errorf("got %d files with the error, want %d", len(files), tt.wantFiles)
			}
		})
	}
}

// TestParseDiffAgainstGit parses what the real git prints for a change
// covering renames, binaries, new/deleted files, missing final newlines,
// CRLF and unusual names, and checks every file's counts against
// `git diff --numstat`.
func TestParseDiffAgainstGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("line of a file that will be renamed\n", 20)
	gitRun(t, dir, "init", "-q", "-b", "main")
	write("moved/before.txt", long)
	write("gone_test.go", "package x\n\nimport \"testing\"\n\nfunc TestGone(t *testing.T) {}\n")
	write("eol.txt", "no newline")
	write("crlf.txt", "one\r\ntwo\r\n")
	write("img.bin", "\x00\x01\x02binary")
	write("space dir/ünï.txt", "a\n")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "before")

	if err := os.Remove(filepath.Join(dir, "moved/before.txt")); err != nil {
		t.Fatal(err)
	}
	write("moved/after.txt", long+"one more line\n")
	if err := os.Remove(filepath.Join(dir, "gone_test.go")); err != nil {
		t.Fatal(err)
	}
	write("eol.txt", "no newline either")
	write("crlf.txt", "one\r\nTWO\r\nthree\r\n")
	write("img.bin", "\x00\x01\x03other")
	write("space dir/ünï.txt", "a\nb\n")
	write("brand/new.go", "package brand\n")
	gitRun(t, dir, "add", "-A")

	diff := gitRun(t, dir, "diff", "--cached", "-M", "HEAD")
	files, err := ParseDiff(diff)
	if err != nil {
		t.Fatalf("ParseDiff: %v\n%s", err, diff)
	}
	// git diff --numstat -z: "added\tremoved\tpath\0" or, for a rename,
	// "added\tremoved\t\0old\0new\0".
	numstat := gitRun(t, dir, "diff", "--cached", "-M", "--numstat", "-z", "HEAD")
	type stat struct {
		added, removed string
		old            string
	}
	want := map[string]stat{}
	fields := strings.Split(numstat, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "" {
			continue
		}
		parts := strings.SplitN(f, "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("bad numstat record %q", f)
		}
		if parts[2] == "" { // rename: old and new follow
			want[fields[i+2]] = stat{parts[0], parts[1], fields[i+1]}
			i += 2
			continue
		}
		want[parts[2]] = stat{added: parts[0], removed: parts[1]}
	}
	if len(files) != len(want) {
		t.Fatalf("parsed %d files, git lists %d:\n%s", len(files), len(want), diff)
	}
	for _, f := range files {
		w, ok := want[f.Path()]
		if !ok {
			t.Errorf("parsed path %q that git does not list", f.Path())
			continue
		}
		a, r := f.Counts()
		if f.Binary {
			if w.added != "-" || w.removed != "-" {
				t.Errorf("%s: parsed as binary, git counts %s/%s", f.Path(), w.added, w.removed)
			}
			continue
		}
		if strconv.Itoa(a) != w.added || strconv.Itoa(r) != w.removed {
			t.Errorf("%s: parsed +%d -%d, git says +%s -%s", f.Path(), a, r, w.added, w.removed)
		}
		if w.old != "" && (f.Status != StatusRenamed || f.OldPath != w.old || f.Similarity == 0) {
			t.Errorf("%s: want a rename from %s, got %s from %q (similarity %d)", f.Path(), w.old, f.Status, f.OldPath, f.Similarity)
		}
	}
	byPath := map[string]FileDiff{}
	for _, f := range files {
		byPath[f.Path()] = f
	}
	if f := byPath["gone_test.go"]; f.Status != StatusDeleted || f.NewPath != "" {
		t.Errorf("gone_test.go: status %s, new path %q", f.Status, f.NewPath)
	}
	if f := byPath["brand/new.go"]; f.Status != StatusAdded || f.OldPath != "" || f.Hunks[0].Lines[0].NewLine != 1 {
		t.Errorf("brand/new.go: %+v", f)
	}
	if f := byPath["eol.txt"]; len(f.Hunks) != 1 || !f.Hunks[0].Lines[0].NoNewline || !f.Hunks[0].Lines[1].NoNewline {
		t.Errorf("eol.txt: the no-newline markers were lost: %+v", f.Hunks)
	}
	for _, l := range byPath["crlf.txt"].Added() {
		if strings.HasSuffix(l.Text, "\r") {
			t.Errorf("crlf.txt: line %q kept its CR", l.Text)
		}
	}
	if added := byPath["crlf.txt"].Added(); len(added) != 2 || added[0].Text != "TWO" || added[0].NewLine != 2 || added[1].NewLine != 3 {
		t.Errorf("crlf.txt: added lines %+v", added)
	}
	if _, ok := byPath["space dir/ünï.txt"]; !ok {
		t.Errorf("quoted path not unquoted; parsed paths: %v", keysOf(byPath))
	}
}

func keysOf(m map[string]FileDiff) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
