package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// indexFixture builds a real index with flagged entries in the given
// format version and returns its bytes and git's own view of it.
func indexFixture(t testing.TB, version string) ([]byte, indexScan) {
	t.Helper()
	dir := newWorkRepo(t, map[string]string{
		"a.txt": "a\n", "deep/er/path/with/many/components/file.go": "x\n", "sub/.gitattributes": "*.bin binary\n",
		".gitattributes": "* text=auto\n", "z/zz/zzz.txt": "z\n", "long-" + strings.Repeat("n", 200) + ".txt": "l\n",
	})
	writeFiles(t, dir, map[string]string{".aiwg/ralph/state.json": "{}\n"})
	runGit(t, dir, "add", "-f", ".aiwg/ralph/state.json")
	runGit(t, dir, "update-index", "--assume-unchanged", "a.txt")
	runGit(t, dir, "update-index", "--skip-worktree", "z/zz/zzz.txt")
	if version != "" {
		runGit(t, dir, "update-index", "--index-version", version)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := runGitErr(dir, nil, "ls-files", "-v", "-z")
	if err != nil {
		t.Fatal(err)
	}
	return b, parseLsFilesV([]byte(ls), []string{".aiwg/"})
}

func TestScanIndexMatchesGit(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2", "3", "4"} {
		t.Run("version="+version, func(t *testing.T) {
			t.Parallel()
			b, want := indexFixture(t, version)
			got, err := scanIndex(b, 20, []string{".aiwg/"})
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(got.attributes)
			sort.Strings(want.attributes)
			if d := cmp.Diff(want, got, cmp.AllowUnexported(indexScan{})); d != "" {
				t.Errorf("scanIndex differs from git ls-files -v (-git +ours):\n%s", d)
			}
			if len(got.assumeValid) != 1 || len(got.skipWorktree) != 1 || len(got.excluded) != 1 {
				t.Errorf("flags not found: %+v", got)
			}
		})
	}
}

func TestScanIndexSplitAndCorrupt(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	runGit(t, dir, "update-index", "--split-index")
	b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scanIndex(b, 20, nil); !errors.Is(err, errSplitIndex) {
		t.Errorf("split index: %v, want errSplitIndex", err)
	}
	good, _ := indexFixture(t, "4")
	for name, data := range map[string][]byte{
		"empty":     nil,
		"signature": append([]byte("XXXX"), good[4:]...),
		"version":   append(append([]byte("DIRC"), 0, 0, 0, 9), good[8:]...),
		"truncated": good[:len(good)/2],
	} {
		if _, err := scanIndex(data, 20, nil); err == nil {
			t.Errorf("%s index accepted", name)
		}
	}
}

func FuzzScanIndex(f *testing.F) {
	for _, v := range []string{"2", "3", "4"} {
		b, _ := indexFixture(f, v)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := scanIndex(b, 20, []string{".aiwg/"})
		if err != nil {
			return
		}
		if len(s.assumeValid) > s.entries || len(s.skipWorktree) > s.entries || len(s.excluded) > s.entries {
			t.Errorf("more flagged entries than entries: %+v", s)
		}
	})
}

func TestAttributeDrivers(t *testing.T) {
	t.Parallel()
	named := map[string]bool{}
	lfs := attributeDrivers([]byte("# comment filter=commented\n*.psd filter=lfs diff=lfs merge=lfs -text\n"+
		"[attr]evil filter=macro\n\"quoted name\" diff=q\n*.x   merge=m  filter=\n  filter=a.b.c\n"), named)
	if !lfs {
		t.Error("filter=lfs not detected")
	}
	want := map[string]bool{"commented": true, "lfs": true, "macro": true, "q": true, "m": true, "a.b.c": true}
	if d := cmp.Diff(want, named); d != "" {
		t.Errorf("drivers (-want +got):\n%s", d)
	}
}

func FuzzAttributeDrivers(f *testing.F) {
	f.Add([]byte("* filter=evil\n*.go diff=golang merge=union\n[attr]m filter=x\n"))
	f.Add([]byte("filter=\x00\nfilter=a\nb\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		named := map[string]bool{}
		attributeDrivers(b, named)
		for n := range named {
			if n == "" || strings.ContainsAny(n, " \t\n\r\x00") {
				t.Errorf("bad driver name %q", n)
			}
			if !strings.Contains(string(b), "="+n) {
				t.Errorf("driver %q not in the input", n)
			}
		}
	})
}
