package safefs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func isNotRegular(err error) bool {
	var nr *NotRegularError
	return errors.As(err, &nr)
}

// Each case plants something where the harness opens a file, and checks
// that the plain os call (the weakened harness) is fooled while safefs is
// not: the probe is shown able to fail.
func TestOpenRefusesWhatTheAgentPlants(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "outside", "secret")
	write(t, secret, "token")

	t.Run("symlink read", func(t *testing.T) {
		p := filepath.Join(dir, "state.json")
		if err := os.Symlink(secret, p); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != "token" {
			t.Fatalf("weakened: os.ReadFile = %q, %v; the probe cannot fail", b, err)
		}
		if _, err := ReadFile(p, 1<<20); !isNotRegular(err) {
			t.Fatalf("ReadFile through a symlink: err = %v, want NotRegularError", err)
		}
	})
	t.Run("symlink append", func(t *testing.T) {
		target := filepath.Join(dir, "outside", "github_path")
		write(t, target, "")
		p := filepath.Join(dir, "GITHUB_OUTPUT")
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("/agent/bin\n")
		f.Close()
		if read(t, target) != "/agent/bin\n" {
			t.Fatal("weakened: the plain open did not write through the symlink; the probe cannot fail")
		}
		write(t, target, "")
		if _, err := OpenAppend(p); !isNotRegular(err) {
			t.Fatalf("OpenAppend through a symlink: err = %v, want NotRegularError", err)
		}
		if _, err := OpenRewrite(p); !isNotRegular(err) {
			t.Fatalf("OpenRewrite through a symlink: err = %v, want NotRegularError", err)
		}
		if read(t, target) != "" {
			t.Fatal("the target was written")
		}
	})
	t.Run("fifo", func(t *testing.T) {
		p := filepath.Join(dir, "control")
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		// Weakened: a plain read blocks until a writer comes.
		done := make(chan struct{})
		go func() {
			os.ReadFile(p)
			close(done)
		}()
		select {
		case <-done:
			t.Fatal("weakened: os.ReadFile of a FIFO returned; the probe cannot fail")
		case <-time.After(200 * time.Millisecond):
		}
		w, err := os.OpenFile(p, os.O_WRONLY, 0) // releases the blocked reader
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		<-done

		start := time.Now()
		if _, err := ReadFile(p, 4096); !isNotRegular(err) {
			t.Fatalf("ReadFile of a FIFO: err = %v, want NotRegularError", err)
		}
		if _, err := OpenAppend(p); !isNotRegular(err) {
			t.Fatalf("OpenAppend of a FIFO: err = %v, want NotRegularError", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("took %s", d)
		}
	})
	t.Run("directory and device", func(t *testing.T) {
		if _, err := ReadFile(dir, 10); !isNotRegular(err) {
			t.Fatalf("a directory: err = %v", err)
		}
		if _, err := ReadFile("/dev/zero", 10); !isNotRegular(err) {
			t.Fatalf("/dev/zero: err = %v", err)
		}
	})
}

func TestReadFileLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "huge")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 1.5 GiB that costs no disk.
	if err := f.Truncate(3 << 29); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadFile(p, 1<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != 3<<29 || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("err = %v, want TooLargeError", err)
	}
	write(t, p, "small")
	if b, err := ReadFile(p, 5); err != nil || string(b) != "small" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if _, err := ReadFile(p, 4); !errors.As(err, &tl) {
		t.Fatalf("one byte over: err = %v", err)
	}
}

func TestRootRefusesSymlinksOnTheWay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	outside := filepath.Join(dir, "outside")
	write(t, filepath.Join(outside, "logs", "loop.log"), "theirs")
	write(t, filepath.Join(repo, "src", "main.go"), "package main")
	if err := os.MkdirAll(filepath.Join(repo, ".aiwg", "ralph", "loops", "l1"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The loop's logs directory is a symlink to a directory outside.
	if err := os.Symlink(filepath.Join(outside, "logs"), filepath.Join(repo, ".aiwg/ralph/loops/l1/logs")); err != nil {
		t.Fatal(err)
	}
	// A file inside the tree is a symlink to a product file.
	if err := os.Symlink("../../../../src/main.go", filepath.Join(repo, ".aiwg/ralph/loops/l1/report.md")); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(repo)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	// Weakened: path-based writes follow both.
	if b, err := os.ReadFile(filepath.Join(repo, ".aiwg/ralph/loops/l1/logs/loop.log")); err != nil || string(b) != "theirs" {
		t.Fatalf("weakened read = %q, %v; the probe cannot fail", b, err)
	}

	if _, err := r.ReadFile(".aiwg/ralph/loops/l1/logs/loop.log", 100); !isNotRegular(err) {
		t.Fatalf("read through a symlinked directory: err = %v", err)
	}
	if _, err := r.ReadFile(".aiwg/ralph/loops/l1/report.md", 100); !isNotRegular(err) {
		t.Fatalf("read through a symlinked file: err = %v", err)
	}
	if _, err := r.ReadFile("../outside/logs/loop.log", 100); err == nil {
		t.Fatal(`".." was followed`)
	}

	// Writers replace what is in the way, and the targets stay as they were.
	for _, rel := range []string{".aiwg/ralph/loops/l1/logs/loop.log", ".aiwg/ralph/loops/l1/report.md"} {
		if err := r.WriteFile(rel, strings.NewReader("ours "+rel), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if b, err := r.ReadFile(rel, 100); err != nil || string(b) != "ours "+rel {
			t.Fatalf("%s = %q, %v", rel, b, err)
		}
	}
	if got := read(t, filepath.Join(outside, "logs", "loop.log")); got != "theirs" {
		t.Fatalf("outside file = %q", got)
	}
	if got := read(t, filepath.Join(repo, "src", "main.go")); got != "package main" {
		t.Fatalf("product file = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(repo, ".aiwg/ralph/loops/l1/logs")); err != nil || !fi.IsDir() {
		t.Fatalf("logs is not a real directory now: %v", err)
	}

	// A FIFO and a directory at a file's place are replaced too.
	fifo := filepath.Join(repo, ".aiwg/ralph/loops/l1/state.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile(".aiwg/ralph/loops/l1/state.json", strings.NewReader("{}"), WriteOptions{Sync: true}); err != nil {
		t.Fatal(err)
	}
	if read(t, fifo) != "{}" {
		t.Fatal("FIFO not replaced")
	}
	write(t, filepath.Join(repo, ".aiwg/ralph/loops/l1/analytics.json/x"), "a directory in the way")
	if err := r.WriteFile(".aiwg/ralph/loops/l1/analytics.json", strings.NewReader("[]"), WriteOptions{Perm: 0o600}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(repo, ".aiwg/ralph/loops/l1/analytics.json")); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("analytics.json: %v %v", fi, err)
	}
}

func TestRootRemoveAllAndWalk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	outside := filepath.Join(dir, "outside")
	write(t, filepath.Join(outside, "keep"), "keep")
	write(t, filepath.Join(repo, "a", "b", "file"), "x")
	if err := os.Symlink(outside, filepath.Join(repo, "a", "link")); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(repo)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var seen []string
	err = r.Walk("", func(e *Entry) error {
		kind := "f"
		switch {
		case e.IsDir():
			kind = "d"
		case e.Mode&fs.ModeSymlink != 0:
			kind = "l"
		}
		seen = append(seen, kind+":"+e.Rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "d:. d:a d:a/b f:a/b/file l:a/link"
	if got := strings.Join(seen, " "); got != want {
		t.Fatalf("walk = %s, want %s", got, want)
	}
	// Entry.Open reads a regular file; a symlink entry is refused.
	_ = r.Walk("a", func(e *Entry) error {
		f, err := e.Open()
		switch {
		case e.Rel == "a/b/file":
			if err != nil {
				t.Errorf("open %s: %v", e.Rel, err)
				return nil
			}
			b, _ := io.ReadAll(f)
			f.Close()
			if !bytes.Equal(b, []byte("x")) {
				t.Errorf("content %q", b)
			}
		case e.Rel == "a/link" && !isNotRegular(err):
			t.Errorf("open of a symlink entry: %v", err)
		}
		return nil
	})
	if err := r.RemoveAll("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(repo, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a still there: %v", err)
	}
	if read(t, filepath.Join(outside, "keep")) != "keep" {
		t.Fatal("RemoveAll followed the symlink")
	}
	if err := r.RemoveAll("missing/x"); err != nil {
		t.Fatalf("missing: %v", err)
	}
}
