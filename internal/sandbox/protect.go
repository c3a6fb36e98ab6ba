package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// tightened is a file or directory whose mode New changed; Close puts the
// mode back.
type tightened struct {
	path string
	mode uint32
}

// protect makes the files of Options.Protect (the workflow command files)
// unreachable for the sandbox user: not its own, no permission for
// "other" (nor for the group when it is the sandbox's), and no directory
// above them it could write (rename the file away, put another in its
// place). Only as root; without root, they must lie outside what Landlock
// lets the sandbox write (checked with the writable set).
func (s *Sandbox) protect() error {
	for _, p := range s.opts.Protect {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			return fmt.Errorf("the protected file %q is not an absolute path", p)
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return fmt.Errorf("checking %s: %w", p, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return fmt.Errorf("the workflow command file %s is not a regular file (%s); refusing to run the agent next to it", p, modeName(st.Mode))
		}
		if int(st.Uid) == s.uid {
			return fmt.Errorf("the workflow command file %s belongs to the sandbox user %s (uid %d); refusing to run the agent", p, s.acct.name, s.uid)
		}
		if err := s.tighten(p, &st); err != nil {
			return err
		}
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			var ds unix.Stat_t
			if err := unix.Lstat(dir, &ds); err != nil {
				return fmt.Errorf("checking %s: %w", dir, err)
			}
			if int(ds.Uid) == s.uid {
				return fmt.Errorf("%s, above the workflow command file %s, belongs to the sandbox user %s; refusing to run the agent", dir, p, s.acct.name)
			}
			if ds.Mode&unix.S_ISVTX == 0 {
				if err := s.tighten(dir, &ds); err != nil {
					return err
				}
			}
			if dir == "/" || dir == "." {
				break
			}
		}
	}
	return nil
}

// tighten removes what the sandbox user could do with p through the
// "other" bits (all of them for a file, write for a directory) or through
// its group.
func (s *Sandbox) tighten(p string, st *unix.Stat_t) error {
	mode := st.Mode & 0o7777
	var drop uint32 = 0o007
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		drop = 0o002
	}
	if int(st.Gid) == s.gid {
		drop |= drop << 3
	}
	if mode&drop == 0 {
		return nil
	}
	if err := chmodNoFollow(p, mode&^drop); err != nil {
		return fmt.Errorf("taking %s out of the sandbox user's reach (chmod %o): %w", p, mode&^drop, err)
	}
	s.tightened = append(s.tightened, tightened{path: p, mode: mode})
	return nil
}

// restoreModes puts back the modes tighten changed, last first.
func (s *Sandbox) restoreModes() error {
	var errs []error
	for i := len(s.tightened) - 1; i >= 0; i-- {
		t := s.tightened[i]
		if err := chmodNoFollow(t.path, t.mode); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("restoring the mode of %s: %w", t.path, err))
		}
	}
	s.tightened = nil
	return errors.Join(errs...)
}

// chmodNoFollow changes the mode of a directory or regular file p, never
// through a symlink at its last component.
func chmodNoFollow(p string, mode uint32) error {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, mode)
}

func modeName(m uint32) string {
	switch m & unix.S_IFMT {
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFSOCK:
		return "a socket"
	}
	return "a device"
}
