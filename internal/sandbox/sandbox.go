package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/aiwg/agent-loop/internal/safefs"
	"github.com/aiwg/agent-loop/internal/weaken"
)

// Options configure New.
type Options struct {
	// WorkTree is the repository's work tree, which the sandboxed code may
	// write. As root it is handed to the sandbox user for the loop and
	// given back to its owner by Close.
	WorkTree string
	// PrivateBase holds the harness's private directories ("":
	// DefaultPrivateBase()).
	PrivateBase string
	// Protect lists files the sandboxed code must neither write nor read:
	// the workflow command files (GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH,
	// GITHUB_STEP_SUMMARY, GITHUB_STATE). As root New checks that the
	// sandbox user owns none of them nor a directory above them, and takes
	// away their permissions for others (Close gives them back); in both
	// modes none may lie in what the sandbox can write.
	Protect []string
	// Writable lists more directories the sandboxed code may write under
	// Landlock (a cache the completion command needs).
	Writable []string
	// Log receives what New decided (nil: discarded).
	Log io.Writer

	weak weakening // the probes' deliberately weakened sandboxes
}

// weakening turns layers off, for the tests that show each probe able to
// succeed against a weaker sandbox.
type weakening struct {
	sameUser   bool // as root, run the sandboxed code as root (the old harness)
	noSweep    bool // Sweep ends nothing
	noLandlock bool
	noPIDNS    bool
	noProtect  bool // leave the workflow command files' modes as they are
	noLifeline bool // the supervisor outlives the harness
}

// fromEnv adds the weakenings AGENT_LOOP_TEST_WEAKEN names (honoured only
// by test builds: internal/weaken), for the red-team tests of the binary.
func (w weakening) fromEnv() weakening {
	w.sameUser = w.sameUser || weaken.On("privsep")
	w.noSweep = w.noSweep || weaken.On("sweep")
	w.noLandlock = w.noLandlock || weaken.On("landlock")
	w.noPIDNS = w.noPIDNS || weaken.On("pidns")
	w.noProtect = w.noProtect || weaken.On("protect")
	w.noLifeline = w.noLifeline || weaken.On("lifeline")
	return w
}

// Mode says who the sandboxed code runs as.
type Mode string

const (
	// SeparateUser: the harness is root; the sandbox runs as another,
	// unprivileged user.
	SeparateUser Mode = "separate user"
	// SameUser: the harness is not root; the sandbox runs as its user.
	SameUser Mode = "same user"
)

// Layers says which layers of containment hold.
type Layers struct {
	Mode     Mode
	User     string // the sandbox's user name
	UID, GID int
	// Passwd: the user has an /etc/passwd entry (PasswdWhy says why not).
	Passwd    bool
	PasswdWhy string
	// Landlock is the ABI in force (0: none; LandlockWhy says why).
	Landlock    int
	LandlockWhy string
	// Scoped: signals and abstract sockets are scoped to the sandbox
	// (Landlock ABI 6 and newer).
	Scoped bool
	// PIDNamespace: the sandbox has its own PID namespace, and all of it
	// ends with its first process (PIDNamespaceWhy says why not).
	PIDNamespace    bool
	PIDNamespaceWhy string
	// Sweep is how leftover processes are ended after each run.
	Sweep string
}

// String is the line the harness logs, e.g. "containment: separate user
// agentloop (uid 47001), no capabilities, no_new_privs, own session, pid
// namespace, landlock ABI 7 (writes confined; signals and abstract sockets
// scoped), sweep: kill(-1) as agentloop".
func (l Layers) String() string {
	var parts []string
	if l.Mode == SeparateUser {
		u := fmt.Sprintf("separate user %s (uid %d)", l.User, l.UID)
		if !l.Passwd {
			u += " without a passwd entry (" + l.PasswdWhy + ")"
		}
		parts = append(parts, u, "no capabilities")
	} else {
		parts = append(parts, fmt.Sprintf("same user as the harness (uid %d; not root, so no separate user)", l.UID))
	}
	parts = append(parts, "no_new_privs", "own session")
	if l.PIDNamespace {
		parts = append(parts, "pid namespace")
	} else {
		parts = append(parts, "no pid namespace ("+l.PIDNamespaceWhy+")")
	}
	if l.Landlock > 0 {
		ll := fmt.Sprintf("landlock ABI %d (writes confined", l.Landlock)
		if l.Scoped {
			ll += "; signals and abstract sockets scoped"
		}
		parts = append(parts, ll+")")
	} else {
		parts = append(parts, "no landlock ("+l.LandlockWhy+")")
	}
	parts = append(parts, "sweep: "+l.Sweep)
	return "containment: " + strings.Join(parts, ", ")
}

// Sandbox runs commands for the agent, contained (see the package
// comment). It runs one command at a time.
type Sandbox struct {
	opts     Options
	weak     weakening
	log      io.Writer
	workTree string
	private  string // the harness's private directory of this work tree
	home     string // HOME of the sandboxed code
	tmp      string // its TMPDIR
	agentDir string // the agent CLIs' configuration directories
	uid, gid int
	privsep  bool
	acct     *account
	owner    treeOwner
	writable []string
	layers   Layers
	pol      string
	clone    uintptr
	userns   bool

	tightened []tightened
	busy      atomic.Bool
	report    *os.File     // the supervisor's report of the running command
	reportW   *os.File     // its write end, closed by Sweep
	before    map[int]bool // same user: the harness's children before the run
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// New sets up the sandbox of one loop (see the package comment): as root,
// it takes a sandbox user, hands it the work tree and checks the workflow
// command files; in both modes it makes the private directory and decides
// the layers. Close undoes what it changed.
func New(opts Options) (*Sandbox, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.WorkTree == "" {
		return nil, errors.New("sandbox: no work tree given")
	}
	wt, err := filepath.Abs(opts.WorkTree)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the work tree %q: %w", opts.WorkTree, err)
	}
	wt = realPath(wt)
	if fi, err := os.Stat(wt); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("sandbox: the work tree %s is not a directory (%v)", wt, err)
	}
	s := &Sandbox{opts: opts, weak: opts.weak.fromEnv(), log: opts.Log, workTree: wt}
	if s.private, err = PrivateDir(opts.PrivateBase, wt); err != nil {
		return nil, err
	}
	if beneath(realPath(s.private), wt) {
		return nil, fmt.Errorf("sandbox: the private directory %s is inside the work tree %s: choose a private base outside it", s.private, wt)
	}
	if err := privateDir(filepath.Dir(s.private)); err != nil {
		return nil, err
	}
	if err := privateDir(s.private); err != nil {
		return nil, err
	}
	if err := privateDir(s.TempDir()); err != nil {
		return nil, err
	}
	s.privsep = os.Geteuid() == 0 && !s.weak.sameUser
	if s.privsep {
		err = s.setupSeparateUser()
	} else {
		err = s.setupSameUser()
	}
	if err != nil {
		s.release()
		return nil, err
	}
	if err := s.decideLayers(); err != nil {
		_ = s.Close()
		return nil, err
	}
	fmt.Fprintln(s.log, "agent-loop: "+s.layers.String())
	return s, nil
}

func (s *Sandbox) setupSeparateUser() error {
	forbidden := map[int]bool{0: true}
	var st unix.Stat_t
	if unix.Stat(s.workTree, &st) == nil {
		forbidden[int(st.Uid)] = true
	}
	for _, p := range s.opts.Protect {
		if unix.Stat(p, &st) == nil {
			forbidden[int(st.Uid)] = true
		}
	}
	// A harness weakened to leave processes behind (test builds only)
	// takes the last free slot: the first ones are the other loops', whose
	// sweeps would end the leftovers its tests must see alive.
	acct, err := takeSlot(forbidden, s.weak.noSweep || s.weak.noLifeline)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	s.acct, s.uid, s.gid = acct, acct.uid, acct.gid
	if acct.created {
		fmt.Fprintf(s.log, "agent-loop: created the sandbox user %s (uid %d)\n", acct.name, acct.uid)
	}
	// What a loop that crashed left running as this user.
	if left := processesOf(s.uid, -1); len(left) > 0 {
		if _, err := s.sweepUser(0); err != nil {
			return fmt.Errorf("sandbox: ending what an earlier loop left running as %s: %w", acct.name, err)
		}
		fmt.Fprintf(s.log, "agent-loop: ended %d process(es) an earlier loop left running as %s\n", len(left), acct.name)
	}
	s.home = acct.home
	if err := s.ownedDir(s.home, true); err != nil {
		return err
	}
	home, err := safefs.OpenRoot(s.home)
	if err != nil {
		return err
	}
	defer home.Close()
	// A fresh temporary directory; what was there is removed without
	// following any link the sandbox left in it.
	if err := home.RemoveAll("tmp"); err != nil {
		return fmt.Errorf("sandbox: clearing %s/tmp: %w", s.home, err)
	}
	s.tmp = filepath.Join(s.home, "tmp")
	if err := s.ownedDir(s.tmp, false); err != nil {
		return err
	}
	s.agentDir = filepath.Join(s.home, ".agent-loop", filepath.Base(s.private))
	if err := s.ownedDir(filepath.Join(s.home, ".agent-loop"), false); err != nil {
		return err
	}
	if err := s.ownedDir(s.agentDir, false); err != nil {
		return err
	}
	if !s.weak.noProtect {
		if err := s.protect(); err != nil {
			_ = s.restoreModes()
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	if err := s.reachable(filepath.Dir(s.workTree)); err != nil {
		_ = s.restoreModes()
		return err
	}
	if err := s.takeWorkTree(); err != nil {
		_ = s.restoreModes()
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

// reachable checks that the sandbox user can search dir, and so reach the
// work tree below it (every directory above must let others through).
func (s *Sandbox) reachable(dir string) error {
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{stageAccess, dir}, Env: helperEnv(),
		SysProcAttr: &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid), Groups: []uint32{}}}}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("sandbox: the sandbox user %s (uid %d) cannot reach the work tree %s: a directory above it does not let other users through; "+
			"allow it (chmod o+x on each directory above) or run the loop in a clone elsewhere", s.acct.name, s.uid, s.workTree)
	}
	return nil
}

// ownedDir makes dir a directory of the sandbox user, mode 0700; create
// also makes missing parents (root's, 0755). An existing dir must already
// be the sandbox user's: a directory of root or of someone else is never
// given away.
func (s *Sandbox) ownedDir(dir string, create bool) error {
	if create {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return fmt.Errorf("sandbox: creating %s: %w", filepath.Dir(dir), err)
		}
	}
	made := true
	if err := unix.Mkdir(dir, 0o700); errors.Is(err, unix.EEXIST) {
		made = false
	} else if err != nil {
		return fmt.Errorf("sandbox: creating %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("sandbox: checking %s: %w", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("sandbox: %s is not a directory (%s): remove it", dir, modeName(st.Mode))
	}
	if !made {
		if int(st.Uid) != s.uid {
			return fmt.Errorf("sandbox: %s belongs to uid %d, not to the sandbox user %s (uid %d): remove it or give it to that user", dir, st.Uid, s.acct.name, s.uid)
		}
		return nil
	}
	if err := unix.Fchownat(unix.AT_FDCWD, dir, s.uid, s.gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("sandbox: giving %s to %s: %w", dir, s.acct.name, err)
	}
	return chmodNoFollow(dir, 0o700)
}

func (s *Sandbox) setupSameUser() error {
	s.uid, s.gid = os.Geteuid(), os.Getegid()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: becoming the subreaper of the agent's processes: %w", err)
	}
	s.home = os.Getenv("HOME")
	// The sandbox's temporary directory is writable by it: never inside
	// the private directory, even when the harness's TMPDIR is.
	tmpBase := os.TempDir()
	if beneath(realPath(tmpBase), s.private) {
		tmpBase = "/tmp"
	}
	tmp, err := os.MkdirTemp(tmpBase, "agent-loop-sandbox-")
	if err != nil {
		return fmt.Errorf("sandbox: creating its temporary directory: %w", err)
	}
	s.tmp = realPath(tmp)
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" && s.home != "" {
		cache = filepath.Join(s.home, ".cache")
	}
	if cache == "" {
		cache = s.tmp
	}
	s.agentDir = filepath.Join(cache, "agent-loop", "agents", filepath.Base(s.private))
	if err := os.MkdirAll(s.agentDir, 0o700); err != nil {
		return fmt.Errorf("sandbox: creating %s: %w", s.agentDir, err)
	}
	return nil
}

// decideLayers probes the kernel, builds the writable set and the policy.
func (s *Sandbox) decideLayers() error {
	l := Layers{UID: s.uid, GID: s.gid, Mode: SameUser}
	if s.privsep {
		l.Mode, l.User, l.Passwd, l.PasswdWhy = SeparateUser, s.acct.name, s.acct.passwd, s.acct.why
		l.Sweep = "kill(-1) as " + s.acct.name
	} else {
		l.User = os.Getenv("USER")
		l.Sweep = "stop and kill the harness's new descendants (child subreaper)"
	}
	l.Landlock, l.LandlockWhy = landlockABI()
	if s.weak.noLandlock {
		l.Landlock, l.LandlockWhy = 0, "turned off"
	}
	l.Scoped = l.Landlock >= 6
	if s.weak.noSweep {
		l.Sweep = "none (turned off)"
	}
	if s.weak.noPIDNS {
		l.PIDNamespaceWhy = "turned off"
	} else {
		s.clone, s.userns, l.PIDNamespaceWhy = s.probePIDNS()
		l.PIDNamespace = s.clone != 0
	}

	var want []string
	if s.privsep {
		want = []string{s.workTree, s.home, "/dev/shm"}
	} else {
		want = append([]string{s.workTree, s.tmp, s.agentDir, "/dev/shm"}, cacheDirs(s.home)...)
	}
	want = append(want, s.opts.Writable...)
	keepOut := append([]string{s.private}, s.opts.Protect...)
	seen := map[string]bool{}
	for _, w := range want {
		if w == "" || !filepath.IsAbs(w) {
			continue
		}
		rw := realPath(w)
		if seen[rw] || !exists(rw) {
			continue
		}
		seen[rw] = true
		var clash string
		for _, k := range keepOut {
			if k != "" && beneath(realPath(k), rw) {
				clash = k
				break
			}
		}
		if clash != "" {
			if rw == s.workTree {
				return fmt.Errorf("sandbox: %s is inside the work tree %s, which the agent writes: refusing to run the agent", clash, s.workTree)
			}
			fmt.Fprintf(s.log, "agent-loop: %s is not writable in the sandbox: it holds %s\n", rw, clash)
			continue
		}
		s.writable = append(s.writable, rw)
	}
	pol := policy{UID: -1, GID: -1, Landlock: l.Landlock > 0, Scoped: l.Scoped, Writable: s.writable, Devices: devices, Lifeline: !s.weak.noLifeline}
	if s.privsep {
		pol.UID, pol.GID = s.uid, s.gid
	}
	// The supervisor's kill(-1) reaches only the sandbox: its user's
	// processes, or its PID namespace's.
	pol.Sweep = !s.weak.noSweep && (s.privsep || s.clone != 0)
	s.pol = pol.encode()
	s.layers = l
	return nil
}

// probePIDNS tries to start the probe stage in a new PID namespace (in a
// new user namespace mapping only this user, without root).
func (s *Sandbox) probePIDNS() (uintptr, bool, string) {
	attr, userns := s.cloneAttr(unix.CLONE_NEWPID)
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{stageProbe}, Env: helperEnv(), SysProcAttr: attr}
	if err := cmd.Run(); err != nil {
		return 0, false, "cannot make one: " + err.Error()
	}
	return unix.CLONE_NEWPID, userns, ""
}

// cloneAttr is the SysProcAttr of a sandboxed start with the clone flags.
func (s *Sandbox) cloneAttr(flags uintptr) (*syscall.SysProcAttr, bool) {
	attr := &syscall.SysProcAttr{Setsid: true, Cloneflags: flags}
	if flags != 0 && os.Geteuid() != 0 {
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: s.uid, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: s.gid, HostID: os.Getegid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		return attr, true
	}
	return attr, false
}

// Layers says which layers hold.
func (s *Sandbox) Layers() Layers { return s.layers }

// String is the containment line of the log.
func (s *Sandbox) String() string { return s.layers.String() }

// PrivateDir is the harness's private directory of this work tree (see
// the package-level PrivateDir).
func (s *Sandbox) PrivateDir() string { return s.private }

// TempDir is a private temporary directory of the harness (for
// credentials, a private index, scratch files).
func (s *Sandbox) TempDir() string { return filepath.Join(s.private, "tmp") }

// Home is the sandboxed code's HOME.
func (s *Sandbox) Home() string { return s.home }

// AgentDir is where the agent CLIs keep their configuration across
// iterations (provider.Config.StateDir): the sandbox's to write.
func (s *Sandbox) AgentDir() string { return s.agentDir }

// Writable lists the directories the sandboxed code may write under
// Landlock (as root, its user may also write what it owns).
func (s *Sandbox) Writable() []string { return append([]string(nil), s.writable...) }

// UID is the uid the sandboxed code runs as.
func (s *Sandbox) UID() int { return s.uid }

// Scratch makes a new directory for trees the harness writes for the
// sandboxed code to run in, outside the work tree (the held-out check's):
// under the sandbox's TMPDIR, which its Landlock policy lets it write,
// owned by its user (Chown). Close removes it with the TMPDIR.
func (s *Sandbox) Scratch(prefix string) (string, error) {
	dir, err := os.MkdirTemp(s.tmp, prefix)
	if err != nil {
		return "", fmt.Errorf("sandbox: creating a scratch directory: %w", err)
	}
	if err := s.Chown(dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// Chown gives path (never through a symlink) to the sandbox's user, so
// that the sandboxed code may write what the harness wrote for it; without
// privilege separation it does nothing.
func (s *Sandbox) Chown(path string) error {
	if !s.privsep {
		return nil
	}
	if err := unix.Fchownat(unix.AT_FDCWD, path, s.uid, s.gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("sandbox: handing %s to %s: %w", path, s.acct.name, err)
	}
	return nil
}

// Wrap turns cmd, not yet started, into a command that runs inside the
// sandbox: through the trampoline, in a new session (and PID namespace),
// with the sandbox's HOME and TMPDIR. cmd.Path must be the program's path
// (as exec.LookPath gives it). One command runs at a time: after Wrap,
// the caller must call Sweep once the command has ended, or if it could
// not start.
func (s *Sandbox) Wrap(cmd *exec.Cmd) error {
	if s.closed.Load() {
		return errors.New("sandbox: closed")
	}
	if cmd.Path == "" || cmd.Process != nil {
		return errors.New("sandbox: Wrap needs a command with a path, not yet started")
	}
	if !s.busy.CompareAndSwap(false, true) {
		return errors.New("sandbox: another command is running in it; the sandbox runs one at a time (each sweep ends every process in it)")
	}
	if s.privsep {
		if err := s.HandOver(); err != nil {
			s.busy.Store(false)
			return err
		}
	}
	argv := cmd.Args
	if len(argv) == 0 {
		argv = []string{cmd.Path}
	}
	r, w, err := os.Pipe()
	if err != nil {
		s.busy.Store(false)
		return fmt.Errorf("sandbox: the report pipe: %w", err)
	}
	s.report, s.reportW = r, w
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	cmd.Args = trampolineArgs(stageSupervise, s.pol, 2+len(cmd.ExtraFiles), cmd.Path, argv)
	cmd.Path = "/proc/self/exe"
	cmd.Env = s.env(cmd.Env)
	cmd.SysProcAttr, _ = s.cloneAttr(s.clone)
	if !s.privsep {
		s.before = map[int]bool{}
		for _, c := range children(scanProcs(), os.Getpid()) {
			s.before[c.pid] = true
		}
	}
	return nil
}

// HandOver gives the sandbox user what the harness wrote since the last
// run in the work tree and in AgentDir (a provider writes the CLI's
// settings there before it starts it), as root; Wrap calls it. Without
// root it does nothing.
func (s *Sandbox) HandOver() error {
	if !s.privsep {
		return nil
	}
	r, err := safefs.OpenRoot(s.workTree)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	defer r.Close()
	if err := s.handOver(r, false); err != nil {
		return err
	}
	a, err := safefs.OpenRoot(s.agentDir)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	defer a.Close()
	err = a.Walk("", func(e *safefs.Entry) error {
		if e.UID != 0 || e.IsRegular() && e.Nlink > 1 {
			return nil
		}
		return e.Lchown(s.uid, s.gid)
	})
	if err != nil {
		return fmt.Errorf("sandbox: handing %s to %s: %w", s.agentDir, s.acct.name, err)
	}
	return nil
}

// Sweep ends every process the last wrapped command left behind (leader
// is its pid, 0 when it did not start) and frees the sandbox for the next
// command. It returns how many processes it ended outside the leader's
// process group, and a *LeftError when some survived its bound.
func (s *Sandbox) Sweep(leader int) (int, error) {
	defer s.busy.Store(false)
	// What the supervisor ended, when it got that far.
	reported := 0
	if s.reportW != nil {
		s.reportW.Close()
		_ = s.report.SetReadDeadline(time.Now().Add(2 * time.Second))
		b, _ := io.ReadAll(io.LimitReader(s.report, 64))
		s.report.Close()
		s.report, s.reportW = nil, nil
		reported, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	n, err := s.sweep(leader)
	if n += reported; n > 0 {
		fmt.Fprintf(s.log, "agent-loop: the sandboxed command left %d process(es) running when it ended; the sandbox ended them\n", n)
	}
	return n, err
}

// sweep is the harness's own sweep after a run: the supervisor has ended
// everything already, unless something ended the supervisor first; this
// one does not take its word for it.
func (s *Sandbox) sweep(leader int) (int, error) {
	if s.weak.noSweep {
		return 0, nil
	}
	if s.privsep {
		if len(processesOf(s.uid, -1)) == 0 {
			s.reapUIDs(func(p procInfo) bool { return p.hasUID(s.uid) })
			return 0, nil
		}
		return s.sweepUser(leader)
	}
	if s.before == nil {
		return 0, nil
	}
	return s.sweepTree(s.before)
}

// CheckExec says whether the sandboxed code can run path (as root, the
// sandbox user must be able to reach and execute it). Call it in
// preflight for the agent CLI.
func (s *Sandbox) CheckExec(path string) error {
	if !s.privsep {
		return nil
	}
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{stageAccess, path}, Env: helperEnv(),
		SysProcAttr: &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid), Groups: []uint32{}}}}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the sandbox user %s (uid %d) cannot run %s: install it where every user can read and run it (not under /root or another private home), or give its path in a readable place", s.acct.name, s.uid, path)
	}
	return nil
}

// env is the environment of a sandboxed command: in with HOME, USER,
// LOGNAME (separate user) and TMPDIR set to the sandbox's, and git told to
// trust the repository its user does not own.
func (s *Sandbox) env(in []string) []string {
	set := map[string]string{"TMPDIR": s.tmp}
	if s.privsep {
		set["HOME"], set["USER"], set["LOGNAME"] = s.home, s.acct.name, s.acct.name
	}
	out := make([]string, 0, len(in)+8)
	count := 0
	for _, kv := range in {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok {
			continue
		}
		if k == "GIT_CONFIG_COUNT" {
			count, _ = strconv.Atoi(v)
			continue
		}
		out = append(out, kv)
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	if s.privsep {
		n := strconv.Itoa(count)
		out = append(out, "GIT_CONFIG_KEY_"+n+"=safe.directory", "GIT_CONFIG_VALUE_"+n+"=*", "GIT_CONFIG_COUNT="+strconv.Itoa(count+1))
	} else if count > 0 {
		out = append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(count))
	}
	return out
}

// Close ends every process of the sandbox, gives the work tree back to its
// owner, restores the modes New changed and removes the sandbox's
// temporary directory. Call it on every way out of the loop; it is safe to
// call more than once.
func (s *Sandbox) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		var errs []error
		if s.reportW != nil {
			s.reportW.Close()
			s.report.Close()
			s.report, s.reportW = nil, nil
		}
		if _, err := s.sweep(0); err != nil {
			errs = append(errs, err)
		}
		if s.privsep {
			errs = append(errs, s.giveBack(), s.restoreModes())
			if home, err := safefs.OpenRoot(s.home); err == nil {
				errs = append(errs, home.RemoveAll("tmp"))
				home.Close()
			}
		} else if s.tmp != "" {
			errs = append(errs, os.RemoveAll(s.tmp))
		}
		s.release()
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// helperEnv is the environment of the harness's own helper stages (the
// sweeper, the probes): empty but for GORACE, so that a race-enabled test
// binary does not sleep a second at each exit.
func helperEnv() []string {
	if v, ok := os.LookupEnv("GORACE"); ok {
		return []string{"GORACE=" + v}
	}
	return []string{}
}

func (s *Sandbox) release() {
	if s.acct != nil && s.acct.lock != nil {
		s.acct.lock.Close()
		s.acct.lock = nil
	}
}
