package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
)

// sparseFile makes a file of size bytes that takes no disk space.
func sparseFile(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Skipf("the file system cannot hold a sparse file of %d bytes: %v", size, err)
	}
}

// TestBoundedStaging: the agent leaves files git would hash for a long
// time (a sparse 1 TiB file, a 150 MiB file replacing a tracked one) and a
// FIFO (which git skips, and which must not block). Staging leaves the
// large files out without reading them, reports them, and commits the
// rest; the tracked file keeps its previous content. Without the limit (the weakened harness) the 1 TiB file is
// hashed until the context ends (which stops git at once), and the 150 MiB
// file is committed.
func TestBoundedStaging(t *testing.T) {
	t.Parallel()
	for _, weak := range []bool{false, true} {
		t.Run(modeName(weak), func(t *testing.T) {
			t.Parallel()
			opts := Options{}
			if weak {
				opts.MaxFileSize = -1
			}
			e := newProbe(t, weakness{}, opts)
			sparseFile(t, filepath.Join(e.dir, "huge.bin"), 1<<40)
			sparseFile(t, filepath.Join(e.dir, "README.md"), 150<<20)
			if err := syscall.Mkfifo(filepath.Join(e.dir, "pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
			writeFiles(t, e.dir, map[string]string{"src/app.go": "package app // kept\n"})
			ctx, cancel := context.WithTimeout(e.ctx, 3*time.Second)
			defer cancel()
			start := time.Now()
			d, err := e.r.Stage(ctx, e.base)
			took := time.Since(start)
			if weak {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Stage without a limit returned %v after %s: the 1 TiB file did not keep git busy, the probe proves nothing", err, took)
				}
				if took > 10*time.Second {
					t.Errorf("Stage went on for %s after its context ended", took)
				}
				// The 150 MiB file alone is staged and committed without a limit.
				os.Remove(filepath.Join(e.dir, "huge.bin"))
				os.Remove(filepath.Join(e.dir, "pipe"))
				res, err := e.r.Commit(e.ctx, loop.CommitRequest{Subject: "unbounded"})
				if err != nil {
					t.Fatal(err)
				}
				if size := runGit(t, e.dir, "cat-file", "-s", res.SHA+":README.md"); size != "157286400" {
					t.Errorf("README.md committed with %s bytes, want 157286400 without a limit", size)
				}
				return
			}
			if err != nil {
				t.Fatalf("Stage: %v (after %s)", err, took)
			}
			if took > 2*time.Second {
				t.Errorf("Stage took %s: something read the large files", took)
			}
			if !strings.Contains(d[0], "b/src/app.go") || strings.Contains(d[0], "huge.bin") || strings.Contains(d[0], "README.md") {
				t.Errorf("the diff:\n%s", d[0])
			}
			kinds := map[string]string{}
			for _, n := range e.r.Notices() {
				kinds[n.Path] = n.Kind
				if n.Detail == "" || !strings.Contains(n.Detail, n.Path) {
					t.Errorf("notice without a clear detail: %+v", n)
				}
			}
			for path, kind := range map[string]string{"huge.bin": NoticeTooLarge, "README.md": NoticeTooLarge} {
				if kinds[path] != kind {
					t.Errorf("notice for %s = %q, want %q (all: %v)", path, kinds[path], kind, kinds)
				}
			}
			res := e.publish(t, map[string]string{"src/app.go": "package app // kept\n", "README.md": "# demo\n", "huge.bin": ""})
			if want := []string{"README.md", "huge.bin"}; !slices.Equal(res.Excluded, want) {
				t.Errorf("Excluded = %v, want %v", res.Excluded, want)
			}
		})
	}
}

// TestLimitIsAParameter: a file above the default limit is committed when
// the limit is raised, left out when it is lowered below a small file.
func TestLimitIsAParameter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		limit int64
		size  int64
		in    bool
	}{{200 << 20, 150 << 20, true}, {DefaultMaxFileSize, 150 << 20, false}, {1000, 2000, false}, {1000, 1000, true}} {
		e := newProbe(t, weakness{}, Options{MaxFileSize: tc.limit})
		sparseFile(t, filepath.Join(e.dir, "data.bin"), tc.size)
		res, err := e.r.Commit(e.ctx, loop.CommitRequest{Subject: "x"})
		if err != nil {
			t.Fatal(err)
		}
		_, lerr := runGitErr(e.dir, nil, "cat-file", "-e", res.SHA+":data.bin")
		if in := lerr == nil; in != tc.in {
			t.Errorf("limit %d, file %d bytes: committed = %v, want %v", tc.limit, tc.size, in, tc.in)
		}
	}
}

// TestStageCancelled: a cancelled context stops staging at once, whatever
// is left to hash.
func TestStageCancelled(t *testing.T) {
	t.Parallel()
	e := newProbe(t, weakness{}, Options{MaxFileSize: -1})
	sparseFile(t, filepath.Join(e.dir, "huge.bin"), 1<<40)
	ctx, cancel := context.WithCancel(e.ctx)
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	_, err := e.r.Stage(ctx, e.base)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Stage: %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("Stage returned %s after it was cancelled", took)
	}
	// The harness works on afterwards (no lock left behind).
	os.Remove(filepath.Join(e.dir, "huge.bin"))
	if _, err := e.r.Stage(e.ctx, e.base); err != nil {
		t.Fatalf("Stage after a cancelled one: %v", err)
	}
}

// TestFIFOsDoNotHang: a FIFO where git reads a file (a .gitignore, a
// .gitattributes in a new directory) blocks git's open(2) for ever.
// Staging goes on (the watchdog opens the FIFO's other end, git reads it
// as empty) and reports it; the weakened harness (no watchdog) hangs until
// its context ends.
func TestFIFOsDoNotHang(t *testing.T) {
	t.Parallel()
	variants := map[string]struct {
		path string
		kind string
	}{
		".gitignore at the root":            {".gitignore", NoticeSpecialFile},
		".gitattributes in a new directory": {"newdir/.gitattributes", NoticeSpecialFile},
	}
	for _, name := range sortedKeys(variants) {
		v := variants[name]
		for _, weak := range []bool{false, true} {
			t.Run(name+"/"+modeName(weak), func(t *testing.T) {
				t.Parallel()
				e := newProbe(t, weakness{fifos: weak}, Options{})
				full := filepath.Join(e.dir, filepath.FromSlash(v.path))
				os.MkdirAll(filepath.Dir(full), 0o755)
				os.Remove(full)
				if err := syscall.Mkfifo(full, 0o644); err != nil {
					t.Fatal(err)
				}
				writeFiles(t, e.dir, map[string]string{"newdir/x.go": "package x\n", "src/app.go": "package app // fifo\n"})
				ctx, cancel := context.WithTimeout(e.ctx, 4*time.Second)
				defer cancel()
				d, err := e.r.Stage(ctx, e.base)
				if weak {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("the weakened harness returned %v: the FIFO did not block git, the probe proves nothing", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("Stage: %v", err)
				}
				if !strings.Contains(d[0], "b/newdir/x.go") || !strings.Contains(d[0], "b/src/app.go") {
					t.Errorf("the diff lacks the other changes:\n%s", d[0])
				}
				var reported bool
				for _, n := range e.r.Notices() {
					reported = reported || (n.Path == v.path && n.Kind == v.kind)
				}
				if !reported {
					t.Errorf("the FIFO %s was not reported", v.path)
				}
				e.publish(t, map[string]string{"newdir/x.go": "package x\n"})
			})
		}
	}
}

// TestSpecialFileReplacingTracked: a tracked file replaced by a FIFO is
// left out (it keeps its content in the commit) and reported; handed to
// git, it fails the whole staging (shown with git itself).
func TestSpecialFileReplacingTracked(t *testing.T) {
	t.Parallel()
	e := newProbe(t, weakness{}, Options{})
	readme := filepath.Join(e.dir, "README.md")
	os.Remove(readme)
	if err := syscall.Mkfifo(readme, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, e.dir, map[string]string{"src/app.go": "package app // with a fifo\n"})
	if out, err := runGitErr(e.dir, nil, "add", "-A"); err == nil || !strings.Contains(out, "can only add regular files") {
		t.Fatalf("git add -A on a FIFO: %v %s: the probe proves nothing", err, out)
	}
	e.judge(t)
	var reported bool
	for _, n := range e.r.Notices() {
		reported = reported || (n.Path == "README.md" && n.Kind == NoticeSpecialFile)
	}
	if !reported {
		t.Error("the FIFO was not reported")
	}
	e.publish(t, map[string]string{"README.md": "# demo\n", "src/app.go": "package app // with a fifo\n"})
}

// TestStatlessEntryBounded: an index entry without stat data (a fresh
// trusted index; git also zeroes the size of a racily clean entry) makes
// `git status` read the file to compare it, so a tracked file replaced by
// a sparse 1 TiB one is read to the end. The harness lists changes with
// diff-files, which compares stat data only; the weakened harness (git
// status) runs until its context ends.
func TestStatlessEntryBounded(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"Stage", "Dirty"} {
		for _, weak := range []bool{false, true} {
			t.Run(op+"/"+modeName(weak), func(t *testing.T) {
				t.Parallel()
				dir := newWorkRepo(t, nil)
				r := openRepo(t, dir, Options{}) // no TrustIndex: the trusted index has no stat data
				r.weak = weakness{status: weak}
				sparseFile(t, filepath.Join(dir, "README.md"), 1<<40)
				ctx, cancel := context.WithTimeout(ctxT(t), 4*time.Second)
				defer cancel()
				var err error
				var dirty []string
				if op == "Stage" {
					_, err = r.Stage(ctx, "HEAD")
				} else {
					dirty, err = r.Dirty(ctx)
				}
				if weak {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("the weakened harness returned %v: the probe proves nothing", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if op == "Dirty" && !slices.Contains(dirty, "README.md") {
					t.Errorf("Dirty = %v, want README.md in it", dirty)
				}
			})
		}
	}
}
