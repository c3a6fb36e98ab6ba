package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// devices the sandboxed code may read, write and ioctl (a terminal, the
// null device, a pseudo-terminal for CLIs that spawn one).
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// landlockABI is the kernel's Landlock ABI version (0: none) and why not.
func landlockABI() (int, string) {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case err == nil && v > 0:
		return v, ""
	case errors.Is(err, unix.ENOSYS):
		return 0, "the kernel has no Landlock, or a seccomp profile (a container's) blocks it"
	case errors.Is(err, unix.EOPNOTSUPP):
		return 0, "Landlock is built in but not enabled at boot (add landlock to lsm=)"
	case err != nil:
		return 0, err.Error()
	}
	return 0, "Landlock ABI 0"
}

// Landlock access rights (go-landlock's syscall constants) by group.
const (
	llRead     = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	llFileOnly = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// handledFS is every filesystem right the kernel's ABI knows, up to ABI 8
// (ABI 9's resolve-unix right is not handled: pathname sockets stay under
// their file permissions).
func handledFS(abi int) uint64 {
	m := uint64(ll.AccessFSRefer - 1) // ABI 1: the first 13 rights
	if abi >= 2 {
		m |= ll.AccessFSRefer
	}
	if abi >= 3 {
		m |= ll.AccessFSTruncate
	}
	if abi >= 5 {
		m |= ll.AccessFSIoctlDev
	}
	return m
}

// restrict applies the policy's Landlock ruleset to the calling thread
// only (the trampoline execs from it, so the target gets exactly this
// thread's restrictions; nothing here signals other threads, which some
// all-threads mechanisms cannot do from PID 1 of a namespace): read and
// execute everywhere; write only beneath the writable directories and to
// the devices; on ABI 6 and newer, no signal and no abstract-socket
// connection to a process outside the domain. Network access is not
// restricted (the agent CLIs need their APIs). no_new_privs must be set.
func restrict(p policy) error {
	abi, why := landlockABI()
	if abi <= 0 {
		return errors.New(why)
	}
	handled := handledFS(abi)
	attr := ll.RulesetAttr{HandledAccessFS: handled}
	if p.Scoped && abi >= 6 {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	rs, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	defer unix.Close(rs)
	add := func(path string, access uint64) error {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("opening %s for a landlock rule: %w", path, err)
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= llFileOnly
		}
		rule := ll.PathBeneathAttr{AllowedAccess: access & handled, ParentFd: fd}
		if err := ll.LandlockAddPathBeneathRule(rs, &rule, 0); err != nil {
			return fmt.Errorf("landlock rule for %s: %w", path, err)
		}
		return nil
	}
	if err := add("/", llRead); err != nil {
		return err
	}
	for _, w := range p.Writable {
		if err := add(w, handled); err != nil {
			return err
		}
	}
	for _, d := range p.Devices {
		if err := add(d, llRead|ll.AccessFSWriteFile|ll.AccessFSTruncate|ll.AccessFSIoctlDev); err != nil {
			return err
		}
	}
	if err := ll.LandlockRestrictSelf(rs, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// cacheDirs are the directories of the user's home that toolchains write
// to (the completion command builds and tests): given to the sandbox
// without root, where it keeps the user's HOME. Not ~/.config nor
// ~/.local (startup files of shells and desktops), nor a bin directory
// the harness's PATH could hold.
func cacheDirs(home string) []string {
	var out []string
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) {
			out = append(out, p)
		}
	}
	if c := os.Getenv("XDG_CACHE_HOME"); c != "" {
		add(c)
	} else if home != "" {
		add(filepath.Join(home, ".cache"))
	}
	for _, v := range []string{"GOMODCACHE", "GOCACHE", "npm_config_cache", "PIP_CACHE_DIR"} {
		add(os.Getenv(v))
	}
	if ch := os.Getenv("CARGO_HOME"); ch != "" {
		add(filepath.Join(ch, "registry"))
		add(filepath.Join(ch, "git"))
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		for _, p := range filepath.SplitList(gp) {
			add(filepath.Join(p, "pkg", "mod"))
		}
	}
	if home != "" {
		for _, rel := range []string{"go/pkg/mod", ".npm", ".cargo/registry", ".cargo/git", ".m2/repository", ".gradle/caches", ".factory"} {
			add(filepath.Join(home, rel))
		}
	}
	return out
}
