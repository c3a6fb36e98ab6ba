// Package safefs is how the harness opens files that the sandboxed agent
// could have made or replaced: the loop directory in the work tree, the
// control file, a registry the user edits, the workflow command files.
//
// Every open refuses to follow a symbolic link (O_NOFOLLOW on the last
// component; beneath a Root, on every component), never blocks (O_NONBLOCK:
// a FIFO or a device does not hang the harness), and hands back only a
// regular file (fstat after the open, so a swap between a check and the
// open cannot win). Reads are bounded: ReadFile refuses a file above its
// limit without reading it, and the walkers hand out streams, never whole
// files, so a 1.5 GiB file in the loop directory costs the harness a
// buffer, not 1.5 GiB.
//
// Root resolves every path beneath one directory, component by component
// with O_NOFOLLOW|O_DIRECTORY, so neither a symlink nor ".." can lead a
// write outside it; its writers replace whatever is in their way (a
// symlink, a FIFO, a file where a directory belongs) instead of following
// it. It is what writes the seed layout under .aiwg/ralph/ from the
// harness's trusted copy.
package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/aiwg/agent-loop/internal/weaken"
)

// NotRegularError says a path the harness was to open is not a regular
// file (a symlink, a FIFO, a device, a socket or a directory).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file (%s); refusing to open it", e.Path, describeMode(e.Mode))
}

// TooLargeError says a file is larger than the harness reads.
type TooLargeError struct {
	Path        string
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, more than the limit of %d bytes; refusing to read it", e.Path, e.Size, e.Limit)
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.String()
}

// flags every open of this package carries.
const baseFlags = unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY

// Open opens path for reading when it is a regular file. The last
// component must not be a symlink; a FIFO is refused without blocking.
func Open(path string) (*os.File, error) {
	return openChecked(unix.AT_FDCWD, path, path, unix.O_RDONLY)
}

// OpenAppend opens an existing regular file for appending (a workflow
// command file: the runner creates it, so a missing one is an error).
func OpenAppend(path string) (*os.File, error) {
	return openChecked(unix.AT_FDCWD, path, path, unix.O_WRONLY|unix.O_APPEND)
}

// OpenLog opens a regular file for appending, creating it (mode 0644)
// when missing: a log or a transcript the harness writes.
func OpenLog(path string) (*os.File, error) {
	return openChecked(unix.AT_FDCWD, path, path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT)
}

// OpenRewrite opens a regular file for writing (creating it, mode 0644,
// when missing) and truncates it once it is known to be one (the step
// summary).
func OpenRewrite(path string) (*os.File, error) {
	f, err := openChecked(unix.AT_FDCWD, path, path, unix.O_WRONLY|unix.O_CREAT)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("truncating %s: %w", path, err)
	}
	return f, nil
}

// ReadFile reads path, a regular file of at most limit bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, path, limit)
}

// openChecked opens name relative to dirfd with flag plus baseFlags and
// returns it only when it is a regular file; display names it in errors.
func openChecked(dirfd int, name, display string, flag int) (*os.File, error) {
	if weaken.On("safefs") {
		// The opens of the harness before this package: symlinks followed,
		// FIFOs waited on, anything taken.
		fd, err := unix.Openat(dirfd, name, flag|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: display, Err: err}
		}
		return os.NewFile(uintptr(fd), display), nil
	}
	fd, err := unix.Openat(dirfd, name, flag|baseFlags, 0o644)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, &NotRegularError{Path: display, Mode: fs.ModeSymlink}
		}
		if errors.Is(err, unix.ENXIO) {
			// O_WRONLY|O_NONBLOCK on a FIFO without a reader.
			return nil, &NotRegularError{Path: display, Mode: fs.ModeNamedPipe}
		}
		return nil, &fs.PathError{Op: "open", Path: display, Err: err}
	}
	f := os.NewFile(uintptr(fd), display)
	if err := checkRegular(f, display); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func checkRegular(f *os.File, display string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return &fs.PathError{Op: "fstat", Path: display, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return &NotRegularError{Path: display, Mode: modeOf(&st)}
	}
	return nil
}

// readLimited reads all of f when its size is within limit; it reads at
// most limit+1 bytes whatever fstat said (the file may grow).
func readLimited(f *os.File, display string, limit int64) ([]byte, error) {
	if weaken.On("safefs") {
		return io.ReadAll(f)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if limit >= 0 && fi.Size() > limit {
		return nil, &TooLargeError{Path: display, Size: fi.Size(), Limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", display, err)
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: display, Size: int64(len(b)), Limit: limit}
	}
	return b, nil
}

// modeOf converts a stat mode to an fs.FileMode (type bits and permissions).
func modeOf(st *unix.Stat_t) fs.FileMode {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
