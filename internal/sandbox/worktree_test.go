package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aiwg/agent-loop/internal/process"
)

func statOf(t *testing.T, p string) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t)
}

// The work tree is the sandbox user's during the loop (but .git and
// .aiwg), what the harness writes between runs is handed over too, and
// Close gives everything back to the owner, with the root's mode; the
// workflow command files get their modes back. A hard link the agent
// made to a file of root is never chowned (it would chown that file).
func TestWorkTreeHandedOverAndBack(t *testing.T) {
	needRoot(t)
	f := newFixture(t, true)
	if err := os.Chmod(f.wt, 0o750); err != nil {
		t.Fatal(err)
	}
	mkdir(t, filepath.Join(f.wt, ".aiwg", "ralph"), 0o755, ownerUID)
	outside := filepath.Join(f.base, "root-file")
	writeOwned(t, outside, "root's", 0o644, 0)

	sb, err := New(Options{WorkTree: f.wt, PrivateBase: filepath.Join(f.base, "priv"), Protect: f.protect})
	if err != nil {
		t.Fatal(err)
	}
	uid := sb.UID()
	if st := statOf(t, f.wt); st.Uid != 0 || int(st.Gid) != sb.gid || st.Mode&0o7777 != 0o1775 {
		t.Errorf("work tree root during the loop: uid %d gid %d mode %o, want root, the sandbox's group, 1775", st.Uid, st.Gid, st.Mode&0o7777)
	}
	if st := statOf(t, filepath.Join(f.wt, "main.go")); int(st.Uid) != uid {
		t.Errorf("main.go belongs to %d during the loop, want the sandbox user %d", st.Uid, uid)
	}
	if st := statOf(t, filepath.Join(f.wt, ".git", "config")); int(st.Uid) != ownerUID {
		t.Errorf(".git/config belongs to %d, want the owner %d", st.Uid, ownerUID)
	}
	if st := statOf(t, filepath.Join(f.wt, ".aiwg", "ralph")); st.Uid != 0 {
		t.Errorf(".aiwg belongs to %d during the loop, want root", st.Uid)
	}
	for _, p := range f.protect {
		if st := statOf(t, p); st.Mode&0o077 != 0o060 {
			t.Errorf("%s mode %o during the loop, want no permission for others", p, st.Mode&0o777)
		}
	}
	if st := statOf(t, f.fc); st.Mode&0o002 != 0 {
		t.Errorf("%s is writable by others during the loop (mode %o)", f.fc, st.Mode&0o777)
	}

	// The harness writes a file (root's) and the agent plants a hard link
	// to a file of root; the next run hands over the first, not the second.
	writeOwned(t, filepath.Join(f.wt, "restored.go"), "package main", 0o644, 0)
	if err := os.Link(outside, filepath.Join(f.wt, "link")); err != nil {
		t.Fatal(err)
	}
	ctx := process.WithJail(context.Background(), sb)
	if _, err := process.Run(ctx, process.Spec{Path: "/bin/true", Dir: f.wt, Env: []string{"PATH=/bin"}}); err != nil {
		t.Fatal(err)
	}
	if st := statOf(t, filepath.Join(f.wt, "restored.go")); int(st.Uid) != uid {
		t.Errorf("a file the harness wrote belongs to %d at the next run, want the sandbox user", st.Uid)
	}
	if st := statOf(t, outside); st.Uid != 0 {
		t.Fatalf("the file outside, linked into the work tree, now belongs to %d", st.Uid)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if st := statOf(t, outside); st.Uid != 0 {
		t.Fatalf("after Close the file outside belongs to %d", st.Uid)
	}
	os.Remove(filepath.Join(f.wt, "link"))
	err = filepath.Walk(f.wt, func(p string, fi os.FileInfo, err error) error {
		if err == nil && (ownerOf(fi) != ownerUID || int(fi.Sys().(*syscall.Stat_t).Gid) != ownerUID) {
			t.Errorf("%s belongs to %d after Close, want the owner %d", p, ownerOf(fi), ownerUID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := statOf(t, f.wt); st.Mode&0o7777 != 0o750 {
		t.Errorf("the work tree's mode after Close: %o, want 750", st.Mode&0o7777)
	}
	for _, p := range append(f.protect, f.fc) {
		want := uint32(0o666)
		if p == f.fc {
			want = 0o777
		}
		if st := statOf(t, p); st.Mode&0o777 != want {
			t.Errorf("%s mode %o after Close, want %o back", p, st.Mode&0o777, want)
		}
	}

	// The probe can fail: a plain chown of everything in the work tree
	// (what the harness did before) gives the linked file away.
	if err := os.Link(outside, filepath.Join(f.wt, "link")); err != nil {
		t.Fatal(err)
	}
	filepath.Walk(f.wt, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			os.Lchown(p, ownerUID, ownerUID)
		}
		return nil
	})
	if st := statOf(t, outside); st.Uid != ownerUID {
		t.Fatal("weakened: the plain chown did not reach the linked file; the probe cannot fail")
	}
}

// A loop that crashed leaves the work tree handed over; the next one
// finds the owner in the private directory and gives it back at Close.
func TestWorkTreeAfterACrash(t *testing.T) {
	needRoot(t)
	f := newFixture(t, true)
	opts := Options{WorkTree: f.wt, PrivateBase: filepath.Join(f.base, "priv")}
	sb, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	// The crash: no Close; the slot is free again when the process dies.
	sb.release()
	sb2, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := sb2.Close(); err != nil {
		t.Fatal(err)
	}
	if st := statOf(t, filepath.Join(f.wt, "main.go")); st.Uid != ownerUID {
		t.Errorf("main.go belongs to %d, want the owner %d", st.Uid, ownerUID)
	}
	if st := statOf(t, f.wt); st.Uid != ownerUID || st.Mode&0o7777 != 0o755 {
		t.Errorf("work tree root: uid %d mode %o, want the owner and 755", st.Uid, st.Mode&0o7777)
	}
	if _, err := os.Stat(filepath.Join(sb2.PrivateDir(), ownerRecord)); !os.IsNotExist(err) {
		t.Errorf("the owner record is still there: %v", err)
	}
}

// New refuses what it cannot contain, saying why and what to do.
func TestNewRefuses(t *testing.T) {
	needRoot(t)
	f := newFixture(t, true)
	for name, tc := range map[string]struct {
		opts Options
		want string
	}{
		"private base inside the work tree":  {Options{WorkTree: f.wt, PrivateBase: filepath.Join(f.wt, "priv")}, "inside the work tree"},
		"a symlink as workflow command file": {Options{WorkTree: f.wt, PrivateBase: filepath.Join(f.base, "priv"), Protect: []string{filepath.Join(f.fc, "link")}}, "not a regular file"},
		"no work tree":                       {Options{PrivateBase: filepath.Join(f.base, "priv")}, "no work tree"},
	} {
		if name == "a symlink as workflow command file" {
			os.Symlink(f.protect[0], filepath.Join(f.fc, "link"))
		}
		sb, err := New(tc.opts)
		if err == nil {
			sb.Close()
			t.Errorf("%s: New succeeded", name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
	// Nothing half-done: the work tree is still the owner's.
	if st := statOf(t, filepath.Join(f.wt, "main.go")); st.Uid != ownerUID {
		t.Errorf("main.go belongs to %d after the refusals", st.Uid)
	}
}
