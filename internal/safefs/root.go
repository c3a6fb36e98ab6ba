package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Root is a directory beneath which paths are resolved without following
// any symlink and without "..": a path that would leave it, or pass
// through a symlink, is refused (readers) or replaced (writers).
type Root struct {
	dir  *os.File
	path string
}

// OpenRoot opens the directory path. The path itself is the caller's own
// (resolved as usual); everything beneath it is not.
func OpenRoot(path string) (*Root, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Root{dir: os.NewFile(uintptr(fd), path), path: path}, nil
}

// Close releases the directory.
func (r *Root) Close() error { return r.dir.Close() }

// Path is the directory the Root was opened on.
func (r *Root) Path() string { return r.path }

func (r *Root) fd() int { return int(r.dir.Fd()) }

func (r *Root) display(rel string) string { return filepath.Join(r.path, rel) }

// split checks rel (relative, slash- or OS-separated, no "." or ".."
// component, not empty) and returns its components.
func split(rel string) ([]string, error) {
	rel = filepath.ToSlash(rel)
	if rel == "" || strings.HasPrefix(rel, "/") {
		return nil, fmt.Errorf("path %q must be relative and not empty", rel)
	}
	parts := strings.Split(rel, "/")
	out := parts[:0]
	for _, p := range parts {
		switch p {
		case "", ".":
			continue
		case "..":
			return nil, fmt.Errorf("path %q leaves its directory (\"..\")", rel)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("path %q names no file", rel)
	}
	return out, nil
}

// openDirs walks the directories of parts beneath the root, each opened
// with O_NOFOLLOW|O_DIRECTORY; create makes (and, for writers, replaces)
// what is missing or in the way. The caller closes the returned fd when it
// is not the root's.
func (r *Root) openDirs(parts []string, create bool, perm os.FileMode) (int, error) {
	cur := r.fd()
	closeCur := func() {
		if cur != r.fd() {
			unix.Close(cur)
		}
	}
	for i, p := range parts {
		next, err := unix.Openat(cur, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil && create {
			if errors.Is(err, unix.ENOENT) {
				err = unix.Mkdirat(cur, p, uint32(perm.Perm()))
			} else if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
				// A symlink, file or FIFO where a directory belongs:
				// removed, never followed.
				if err = unix.Unlinkat(cur, p, 0); err == nil {
					err = unix.Mkdirat(cur, p, uint32(perm.Perm()))
				}
			}
			if err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(cur, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		if err != nil {
			closeCur()
			where := r.display(filepath.Join(parts[:i+1]...))
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return -1, &NotRegularError{Path: where, Mode: r.lmode(cur, p)}
			}
			return -1, &fs.PathError{Op: "open", Path: where, Err: err}
		}
		closeCur()
		cur = next
	}
	return cur, nil
}

// parent opens the directory that holds rel (created as needed when
// create, with perm) and returns it with rel's last component; done
// closes it.
func (r *Root) parent(rel string, create bool, perm os.FileMode) (dir int, base string, done func(), err error) {
	parts, err := split(rel)
	if err != nil {
		return -1, "", nil, err
	}
	dir, err = r.openDirs(parts[:len(parts)-1], create, perm)
	if err != nil {
		return -1, "", nil, err
	}
	done = func() {
		if dir != r.fd() {
			unix.Close(dir)
		}
	}
	return dir, parts[len(parts)-1], done, nil
}

// lmode is the type of name in dir, for error messages.
func (r *Root) lmode(dir int, name string) fs.FileMode {
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return 0
	}
	return modeOf(&st)
}

// Open opens rel for reading when every component is a real directory and
// the file is a regular one.
func (r *Root) Open(rel string) (*os.File, error) {
	dir, base, done, err := r.parent(rel, false, 0)
	if err != nil {
		return nil, err
	}
	defer done()
	return openChecked(dir, base, r.display(rel), unix.O_RDONLY)
}

// ReadFile reads rel (see Open), at most limit bytes.
func (r *Root) ReadFile(rel string, limit int64) ([]byte, error) {
	f, err := r.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, r.display(rel), limit)
}

// Lstat describes rel without following a symlink at any component.
func (r *Root) Lstat(rel string) (fs.FileMode, int64, error) {
	dir, base, done, err := r.parent(rel, false, 0)
	if err != nil {
		return 0, 0, err
	}
	defer done()
	var st unix.Stat_t
	if err := unix.Fstatat(dir, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, 0, &fs.PathError{Op: "lstat", Path: r.display(rel), Err: err}
	}
	return modeOf(&st), st.Size, nil
}

// MkdirAll makes the directory rel and its parents; a symlink or a file in
// the way is removed and replaced by a directory.
func (r *Root) MkdirAll(rel string, perm os.FileMode) error {
	parts, err := split(rel)
	if err != nil {
		return err
	}
	dir, err := r.openDirs(parts, true, perm)
	if err != nil {
		return err
	}
	if dir != r.fd() {
		unix.Close(dir)
	}
	return nil
}

// WriteOptions tune WriteFile.
type WriteOptions struct {
	Perm    os.FileMode // of the file (default 0644)
	DirPerm os.FileMode // of directories made on the way (default 0755)
	Sync    bool        // fsync the file and its directory
	ModTime time.Time   // set on the file when not zero
}

// WriteFile replaces rel with what src yields, atomically: a temporary
// file in the same directory, renamed over rel. Whatever was at rel (a
// symlink, a FIFO, a directory) is replaced, never followed or opened; so
// is anything in the way of its directories.
func (r *Root) WriteFile(rel string, src io.Reader, o WriteOptions) error {
	if o.Perm == 0 {
		o.Perm = 0o644
	}
	if o.DirPerm == 0 {
		o.DirPerm = 0o755
	}
	dir, base, done, err := r.parent(rel, true, o.DirPerm)
	if err != nil {
		return err
	}
	defer done()
	tmp := "." + base + ".tmp-" + randomSuffix()
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|baseFlags, uint32(o.Perm.Perm()))
	if err != nil {
		return &fs.PathError{Op: "create", Path: r.display(rel), Err: err}
	}
	f := os.NewFile(uintptr(fd), r.display(rel))
	ok := false
	defer func() {
		if !ok {
			f.Close()
			_ = unix.Unlinkat(dir, tmp, 0)
		}
	}()
	if _, err := io.Copy(f, src); err != nil {
		return fmt.Errorf("writing %s: %w", r.display(rel), err)
	}
	if err := unix.Fchmod(fd, uint32(o.Perm.Perm())); err != nil {
		return &fs.PathError{Op: "chmod", Path: r.display(rel), Err: err}
	}
	if !o.ModTime.IsZero() {
		ts := unix.NsecToTimespec(o.ModTime.UnixNano())
		if err := unix.UtimesNanoAt(dir, tmp, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &fs.PathError{Op: "utimes", Path: r.display(rel), Err: err}
		}
	}
	if o.Sync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("syncing %s: %w", r.display(rel), err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", r.display(rel), err)
	}
	err = unix.Renameat(dir, tmp, dir, base)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
		// A directory in the file's place.
		if err = removeAllAt(dir, base); err == nil {
			err = unix.Renameat(dir, tmp, dir, base)
		}
	}
	if err != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
		ok = true
		return &fs.PathError{Op: "rename", Path: r.display(rel), Err: err}
	}
	ok = true
	if o.Sync {
		_ = unix.Fsync(dir)
	}
	return nil
}

// RemoveAll removes rel and, when it is a directory, everything in it,
// never following a symlink. A missing rel is not an error.
func (r *Root) RemoveAll(rel string) error {
	dir, base, done, err := r.parent(rel, false, 0)
	var nr *NotRegularError
	if errors.Is(err, fs.ErrNotExist) || errors.As(err, &nr) {
		return nil // a parent is missing or not a directory: rel is not beneath the root
	}
	if err != nil {
		return err
	}
	defer done()
	if err := removeAllAt(dir, base); err != nil {
		return &fs.PathError{Op: "remove", Path: r.display(rel), Err: err}
	}
	return nil
}

// removeAllAt removes name in dir, recursively, through directory fds only.
func removeAllAt(dir int, name string) error {
	err := unix.Unlinkat(dir, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return err
	}
	sub, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(sub), name)
	for {
		names, err := f.Readdirnames(256)
		for _, n := range names {
			if err := removeAllAt(sub, n); err != nil {
				f.Close()
				return err
			}
		}
		if err != nil || len(names) == 0 {
			break
		}
	}
	f.Close()
	err = unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
