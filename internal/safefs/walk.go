package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"sort"

	"golang.org/x/sys/unix"
)

// Entry is one file or directory met by Walk, described by lstat (a
// symlink is an entry of its own, never followed). Its methods act on the
// entry through the directory fd Walk holds, so a rename of a parent in
// the meantime cannot redirect them.
type Entry struct {
	Rel   string // slash-separated, relative to the walked directory's root
	Mode  fs.FileMode
	Size  int64
	UID   int
	GID   int
	Nlink uint64
	Ctime int64 // nanoseconds; a change of content, owner or mode moves it
	Mtime int64
	Ino   uint64

	dir     int
	name    string
	display string
}

// IsDir reports whether the entry is a directory (not a symlink to one).
func (e *Entry) IsDir() bool { return e.Mode.IsDir() }

// IsRegular reports whether the entry is a regular file.
func (e *Entry) IsRegular() bool { return e.Mode.IsRegular() }

// Open opens a regular file entry for reading (see safefs.Open).
func (e *Entry) Open() (*os.File, error) {
	return openChecked(e.dir, e.name, e.display, unix.O_RDONLY)
}

// Lchown changes the owner of the entry itself (a symlink's own owner).
func (e *Entry) Lchown(uid, gid int) error {
	if err := unix.Fchownat(e.dir, e.name, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "lchown", Path: e.display, Err: err}
	}
	return nil
}

// Chmod changes the permission bits of a directory or regular file entry
// (opened without following, then fchmod; other kinds are left alone).
func (e *Entry) Chmod(mode fs.FileMode) error {
	if !e.IsDir() && !e.IsRegular() {
		return nil
	}
	fd, err := unix.Openat(e.dir, e.name, unix.O_RDONLY|baseFlags, 0)
	if err != nil {
		return &fs.PathError{Op: "chmod", Path: e.display, Err: err}
	}
	defer unix.Close(fd)
	m := uint32(mode.Perm())
	if mode&fs.ModeSticky != 0 {
		m |= unix.S_ISVTX
	}
	if mode&fs.ModeSetgid != 0 {
		m |= unix.S_ISGID
	}
	if mode&fs.ModeSetuid != 0 {
		m |= unix.S_ISUID
	}
	if err := unix.Fchmod(fd, m); err != nil {
		return &fs.PathError{Op: "chmod", Path: e.display, Err: err}
	}
	return nil
}

// SkipDir, returned by a Walk callback for a directory, skips its content.
var SkipDir = fs.SkipDir

// Walk calls fn for rel ("" or "." for the root itself) and everything
// beneath it, parents before children, entries of a directory in name
// order. Directories are entered through O_NOFOLLOW|O_DIRECTORY fds: a
// symlink is reported, never followed. A missing rel is not an error.
func (r *Root) Walk(rel string, fn func(e *Entry) error) error {
	if rel == "" || rel == "." {
		var st unix.Stat_t
		if err := unix.Fstat(r.fd(), &st); err != nil {
			return &fs.PathError{Op: "fstat", Path: r.path, Err: err}
		}
		e := entryOf(&st, r.fd(), ".", ".", r.path)
		if err := fn(e); err != nil {
			if errors.Is(err, SkipDir) {
				return nil
			}
			return err
		}
		return r.walkDir(r.fd(), "", fn)
	}
	dir, base, done, err := r.parent(rel, false, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer done()
	parts, _ := split(rel)
	return r.walkEntry(dir, base, path.Join(parts...), fn)
}

func (r *Root) walkEntry(dir int, name, rel string, fn func(e *Entry) error) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return &fs.PathError{Op: "lstat", Path: r.display(rel), Err: err}
	}
	e := entryOf(&st, dir, name, rel, r.display(rel))
	if err := fn(e); err != nil {
		if errors.Is(err, SkipDir) && e.IsDir() {
			return nil
		}
		return err
	}
	if !e.IsDir() {
		return nil
	}
	sub, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return &fs.PathError{Op: "open", Path: r.display(rel), Err: err}
	}
	defer unix.Close(sub)
	return r.walkDir(sub, rel, fn)
}

func (r *Root) walkDir(dir int, rel string, fn func(e *Entry) error) error {
	// Read the names through a duplicate: os.File closes its fd.
	dup, err := unix.Dup(dir)
	if err != nil {
		return &fs.PathError{Op: "dup", Path: r.display(rel), Err: err}
	}
	unix.CloseOnExec(dup)
	if _, err := unix.Seek(dup, 0, 0); err != nil {
		unix.Close(dup)
		return &fs.PathError{Op: "seek", Path: r.display(rel), Err: err}
	}
	f := os.NewFile(uintptr(dup), r.display(rel))
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return &fs.PathError{Op: "readdir", Path: r.display(rel), Err: err}
	}
	sort.Strings(names)
	for _, n := range names {
		if err := r.walkEntry(dir, n, path.Join(rel, n), fn); err != nil {
			return err
		}
	}
	return nil
}

func entryOf(st *unix.Stat_t, dir int, name, rel, display string) *Entry {
	return &Entry{
		Rel: rel, Mode: modeOf(st), Size: st.Size, UID: int(st.Uid), GID: int(st.Gid), Nlink: uint64(st.Nlink),
		Ctime: st.Ctim.Nano(), Mtime: st.Mtim.Nano(), Ino: st.Ino,
		dir: dir, name: name, display: display,
	}
}
