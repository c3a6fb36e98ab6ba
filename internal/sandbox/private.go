package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"golang.org/x/sys/unix"
)

// DefaultPrivateBase is where the harness keeps its private directories
// when the caller names none: /var/lib/agent-loop as root; otherwise
// $XDG_RUNTIME_DIR/agent-loop (a directory only this user can enter),
// or <temp>/agent-loop-<uid>. None of them is in what the sandbox may
// write.
func DefaultPrivateBase() string {
	if os.Geteuid() == 0 {
		return "/var/lib/agent-loop"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		var st unix.Stat_t
		if unix.Lstat(d, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && int(st.Uid) == os.Geteuid() && st.Mode&0o077 == 0 {
			return filepath.Join(d, "agent-loop")
		}
	}
	return filepath.Join(os.TempDir(), "agent-loop-"+strconv.Itoa(os.Geteuid()))
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// PrivateDir is the harness-private directory of the repository whose
// work tree is workTree, under base ("": DefaultPrivateBase()). The
// harness's live state is laid out in it as in the work tree
// (state.NewDir(PrivateDir, id), state.NewStore(PrivateDir)); CLI verbs
// that read a running loop's state (status, attach, pause) find it here.
// It does not create the directory.
func PrivateDir(base, workTree string) (string, error) {
	if base == "" {
		base = DefaultPrivateBase()
	}
	abs, err := filepath.Abs(workTree)
	if err != nil {
		return "", fmt.Errorf("the work tree %q: %w", workTree, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	sum := sha256.Sum256([]byte(abs))
	name := unsafeName.ReplaceAllString(filepath.Base(abs), "_")
	if len(name) > 40 {
		name = name[:40]
	}
	return filepath.Join(base, name+"-"+hex.EncodeToString(sum[:8])), nil
}

// privateDir makes path (and missing parents) a directory that only this
// process's user can enter, and checks that it is one: not a symlink,
// owned by this user, no group or other permission. A directory someone
// else made in a shared place (/tmp) is refused.
func privateDir(path string) error {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return fmt.Errorf("creating the private directory %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fmt.Errorf("checking the private directory %s: %w", path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("the private directory %s is not a directory (a symlink?): remove it", path)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("the private directory %s belongs to uid %d, not to this user (%d): someone else made it; remove it or choose another place", path, st.Uid, os.Geteuid())
	case st.Mode&0o077 != 0:
		if err := unix.Chmod(path, 0o700); err != nil {
			return fmt.Errorf("making %s private (chmod 700): %w", path, err)
		}
	}
	return nil
}

// beneath reports whether p is dir or inside it (both cleaned, absolute).
func beneath(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/'
}

// realPath resolves p's symlinks; a path that does not exist (yet) keeps
// its existing prefix resolved.
func realPath(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(p)
	if dir == "" || dir == p || dir == "/" {
		return p
	}
	return filepath.Join(realPath(filepath.Clean(dir)), base)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}
