package gitrepo

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// The trusted git directory. The agent has a shell in the work tree and,
// when it runs as the harness's own user, can write everything in .git:
// objects (a forged blob under a baseline blob's name, a pack, alternates),
// the index (an entry's object id patched, its stat data matching), the
// configuration (hooks, filters, fsmonitor, a proxy, a URL rewrite, an
// excludes file), refs (replace refs, the user's branch), the shallow list.
// So the harness's own git never reads .git. It runs with GIT_DIR set to a
// git directory of its own, in a directory the caller keeps out of the
// agent's reach (Options.PrivateDir), holding:
//
//   - a configuration the harness wrote: no include, no hook, no filter, no
//     fsmonitor, no credential helper, no proxy, no URL rewrite, no excludes
//     or attributes file outside the private directory; the few values the
//     repository's configuration legitimately decides (file modes,
//     symlinks, line endings, sparse checkout) are copied from it once, when
//     the loop starts, from an allow-list;
//   - an object store: every commit the harness reads is imported into it
//     through `git index-pack`, which names each object by the hash of its
//     content, so a forged object cannot enter under a real object's name;
//     the harness's own blobs, trees and commits are written there;
//   - its own index (the agent's .git/index is never read);
//   - its refs: the recorded value of the user's branch and the loop branch
//     (the repository's refs are a mirror the harness checks and restores);
//   - info/exclude: the repository's info/exclude, the user's global
//     excludes file and .aiwg/, as they were when the loop started.
//
// The repository's objects are reached only through the view: a directory
// of symlinks to .git/objects/00..ff and .git/objects/pack, without
// objects/info/, so the agent's alternates, commit-graph and packs list are
// never read; and only where what is read is verified by its hash (the
// import, a push, a fetch). After each commit the harness copies its new
// objects into .git/objects, moves the repository's branch and writes
// .git/index from its own, so the user's repository shows the loop branch
// as before.

// privateSub is the harness's subdirectory of Options.PrivateDir.
const privateSub = "trusted-git"

// recordVersion is the version of trust.json.
const recordVersion = 1

// record is what the harness recorded about the repository when the loop
// started (trust.json in the private directory): a resume with the same
// private directory keeps it, whatever the agent did to .git since.
type record struct {
	Version   int    `json:"version"`
	Root      string `json:"root"`
	CommonDir string `json:"common_dir"`
	// Remotes are the URLs of the remotes the harness used, resolved as
	// git resolves them (url.*.insteadOf applied) when first used.
	Remotes map[string]remoteURLs `json:"remotes,omitempty"`
	// UserBranch is the branch checked out when the loop started
	// ("" when HEAD was detached or unborn).
	UserBranch   string `json:"user_branch,omitempty"`
	ObjectFormat string `json:"object_format,omitempty"`
}

type remoteURLs struct {
	Fetch string `json:"fetch"`
	Push  string `json:"push"`
}

// private is the harness's private git directory.
type private struct {
	base string // Options.PrivateDir or a temporary directory
	dir  string // base/trusted-git
	temp bool   // Close removes base
	rec  record
	// trustedSet holds the commits whose whole tree is in the trusted
	// store (imported, fetched and completed, or written by the harness).
	trustedSet map[string]bool
	// synced holds the loose objects and packs already copied to the
	// repository's object store; dirKeys the stat data of each fan-out
	// directory when it was last listed.
	synced  map[string]bool
	dirKeys map[string]statKey
}

func (p *private) gitDir() string      { return filepath.Join(p.dir, "git") }
func (p *private) objects() string     { return filepath.Join(p.dir, "git", "objects") }
func (p *private) view() string        { return filepath.Join(p.dir, "view", "objects") }
func (p *private) home() string        { return filepath.Join(p.dir, "home") }
func (p *private) tmp() string         { return filepath.Join(p.dir, "tmp") }
func (p *private) index() string       { return filepath.Join(p.dir, "git", "index") }
func (p *private) shallow() string     { return filepath.Join(p.dir, "git", "shallow") }
func (p *private) repoShallow() string { return filepath.Join(p.dir, "git", "shallow.repo") }
func (p *private) trustedList() string { return filepath.Join(p.dir, "git", "agent-loop-trusted") }
func (p *private) recordPath() string  { return filepath.Join(p.dir, "trust.json") }

// startState is what Open read of the repository: the values the private
// directory records when it is created.
type startState struct {
	head       []byte // .git/HEAD
	branch     string // refs/heads/<branch> when HEAD is symbolic
	branchSHA  string // its commit ("" when unborn)
	excludes   []byte // info/exclude + the user's global excludes file
	sparse     []byte // info/sparse-checkout when core.sparseCheckout
	shallow    []byte // .git/shallow
	sshCommand string
	sshVariant string
}

// ensurePrivate opens (or creates) the private git directory.
func (r *Repo) ensurePrivate(ctx context.Context) error {
	if r.p != nil {
		return nil
	}
	base, temp := r.opts.PrivateDir, false
	if base == "" {
		removeAbandoned()
		d, err := os.MkdirTemp("", tempPrefix+strconv.Itoa(os.Getpid())+"-")
		if err != nil {
			return fmt.Errorf("creating the harness's private git directory: %w", err)
		}
		base, temp = d, true
	} else {
		abs, err := filepath.Abs(base)
		if err != nil {
			return fmt.Errorf("private directory %s: %w", base, err)
		}
		if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			abs = filepath.Join(real, filepath.Base(abs))
		}
		if within(abs, r.root) && !within(abs, r.gitDir) && !within(abs, r.commonDir) {
			return fmt.Errorf("private directory %s is inside the work tree %s, where the agent can write: "+
				"pass a directory outside it (the loop's harness-private state directory)", base, r.root)
		}
		if err := privateBase(abs); err != nil {
			return err
		}
		base = abs
	}
	p := &private{base: base, dir: filepath.Join(base, privateSub), temp: temp,
		trustedSet: map[string]bool{}, synced: map[string]bool{}, dirKeys: map[string]statKey{}}
	b, err := readSmall(p.recordPath(), 1<<20)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &p.rec); err != nil || p.rec.Version != recordVersion {
			return fmt.Errorf("the private git directory %s holds an unreadable trust.json (%v): remove %s and start a new loop", p.dir, err, p.dir)
		}
		if p.rec.Root != r.root || p.rec.CommonDir != r.commonDir {
			return fmt.Errorf("the private git directory %s belongs to the repository %s, not %s: give each loop its own private directory",
				p.dir, p.rec.Root, r.root)
		}
		if err := p.loadTrusted(); err != nil {
			return err
		}
		r.p = p
		err := r.rerecordUserBranch(ctx)
		r.p = nil
		if err != nil {
			return err
		}
	case errors.Is(err, fs.ErrNotExist):
		err := r.createPrivate(p)
		if err == nil {
			// The recorded HEAD's commit enters the trusted store at once:
			// every ref of the private directory names a complete commit.
			r.p = p
			err = r.ensureTrusted(ctx, r.start.headSHA())
			r.p = nil
		}
		if err == nil {
			err = p.saveRecord()
		}
		if err != nil {
			if temp {
				os.RemoveAll(base)
			} else {
				os.RemoveAll(p.dir)
			}
			return err
		}
	default:
		return fmt.Errorf("reading %s: %w", p.recordPath(), err)
	}
	r.p = p
	return nil
}

// rerecordUserBranch runs when a new harness process reopens a private
// directory (a resume): the user may have committed on their branch while
// no loop ran, and the harness never decides anything from that branch,
// so its value now is recorded (and said) rather than undone. The loop
// branch keeps its record: what the loop committed is decided there.
func (r *Repo) rerecordUserBranch(ctx context.Context) error {
	name := r.p.rec.UserBranch
	ref := "refs/heads/" + name
	head, _ := r.privHead()
	if name == "" || ref == head {
		return nil
	}
	was := r.readPrivRef(ref)
	now, known := r.readRepoRef(ref)
	if !known || now == "" || now == was {
		return nil
	}
	if err := r.ensureTrusted(ctx, now); err != nil {
		return err
	}
	if err := r.setPrivRef(ref, now); err != nil {
		return err
	}
	r.notice(Notice{Kind: NoticeBranchRerecorded, Path: ref,
		Detail: fmt.Sprintf("%s moved from %.12s to %.12s since the loop last ran; the loop keeps it there", ref, was, now)})
	return nil
}

// tempPrefix names the temporary private directories (Options.PrivateDir
// empty): agent-loop-git-<pid>-<random>.
const tempPrefix = "agent-loop-git-"

// removeAbandoned removes the temporary private directories of this user's
// harness processes that are gone (a caller that never called Close, a
// killed harness): each holds a copy of a tree's objects.
func removeAbandoned() {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*-*"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), tempPrefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		fi, err := os.Lstat(m)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(m)
		}
	}
}

// privateBase checks (or creates) the caller's private directory: a
// directory of this user that no one else can write.
func privateBase(base string) error {
	if err := os.MkdirAll(base, 0o700); err != nil {
		return fmt.Errorf("creating the private directory %s: %w", base, err)
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return fmt.Errorf("private directory %s: %w", base, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok {
		return fmt.Errorf("private directory %s is not a directory (a symlink?): pass a directory only the harness can write", base)
	}
	if int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("private directory %s is owned by uid %d with mode %s: it must belong to the harness (uid %d) "+
			"and be writable by no one else (chmod 700)", base, st.Uid, fi.Mode().Perm(), os.Geteuid())
	}
	return nil
}

// createPrivate lays out a new private git directory from what Open read.
func (r *Repo) createPrivate(p *private) error {
	if err := os.RemoveAll(p.dir); err != nil {
		return fmt.Errorf("clearing %s: %w", p.dir, err)
	}
	for _, d := range []string{p.dir, p.gitDir(), filepath.Join(p.objects(), "info"), filepath.Join(p.objects(), "pack"),
		filepath.Join(p.gitDir(), "refs", "heads"), filepath.Join(p.gitDir(), "refs", "tags"), filepath.Join(p.gitDir(), "info"),
		p.home(), p.tmp(), p.view()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	// The trusted store's fan-out directories exist from the start: git
	// would otherwise create one (a journalled mkdir) for most new objects
	// of the first iterations.
	for i := 0; i < 256; i++ {
		if err := os.Mkdir(filepath.Join(p.objects(), fmt.Sprintf("%02x", i)), 0o700); err != nil {
			return fmt.Errorf("creating the trusted store: %w", err)
		}
	}
	// The view of the repository's objects: every fan-out directory (also
	// those git creates later) and the packs, never objects/info/.
	src := filepath.Join(r.commonDir, "objects")
	for i := 0; i < 256; i++ {
		n := fmt.Sprintf("%02x", i)
		if err := os.Symlink(filepath.Join(src, n), filepath.Join(p.view(), n)); err != nil {
			return fmt.Errorf("creating the object view: %w", err)
		}
	}
	if err := os.Symlink(filepath.Join(src, "pack"), filepath.Join(p.view(), "pack")); err != nil {
		return fmt.Errorf("creating the object view: %w", err)
	}
	s := r.start
	head := s.head
	if s.branch != "" {
		head = []byte("ref: " + s.branch + "\n")
	}
	files := map[string][]byte{
		filepath.Join(p.gitDir(), "HEAD"):               head,
		filepath.Join(p.gitDir(), "config"):             []byte(r.privateConfig()),
		filepath.Join(p.gitDir(), "info", "exclude"):    s.excludes,
		p.repoShallow():                                 s.shallow,
		p.trustedList():                                 nil,
		filepath.Join(p.gitDir(), "description"):        []byte("agent-loop's trusted git directory\n"),
		filepath.Join(p.gitDir(), "info", "attributes"): nil,
	}
	if s.sparse != nil {
		files[filepath.Join(p.gitDir(), "info", "sparse-checkout")] = s.sparse
	}
	for path, data := range files {
		if err := writeEntry(path, &entry{mode: 0o600, data: data}); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if s.branch != "" && s.branchSHA != "" {
		if err := writePrivateRef(p, s.branch, s.branchSHA); err != nil {
			return err
		}
	}
	p.rec = record{Version: recordVersion, Root: r.root, CommonDir: r.commonDir, Remotes: map[string]remoteURLs{},
		UserBranch: strings.TrimPrefix(s.branch, "refs/heads/"), ObjectFormat: r.cfg.objectFormat}
	return nil
}

// headSHA is the commit HEAD named when the repository was opened ("" when
// unborn).
func (s *startState) headSHA() string {
	if s.branch != "" {
		return s.branchSHA
	}
	return strings.TrimSpace(string(s.head))
}

func (p *private) saveRecord() error {
	b, err := json.MarshalIndent(p.rec, "", "  ")
	if err != nil {
		return err
	}
	if err := writeEntry(p.recordPath(), &entry{mode: 0o600, data: append(b, '\n')}); err != nil {
		return fmt.Errorf("writing %s: %w", p.recordPath(), err)
	}
	return nil
}

// loadTrusted reads the list of trusted commits.
func (p *private) loadTrusted() error {
	f, err := os.Open(p.trustedList())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", p.trustedList(), err)
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	for sc.Scan() {
		if v := strings.TrimSpace(sc.Text()); isHex(v) {
			p.trustedSet[v] = true
		}
	}
	return sc.Err()
}

// markTrusted records that commit sha's whole tree is in the trusted store.
func (p *private) markTrusted(sha string) error {
	if p.trustedSet[sha] {
		return nil
	}
	f, err := os.OpenFile(p.trustedList(), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("recording trusted commit %.12s: %w", sha, err)
	}
	_, werr := f.WriteString(sha + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("recording trusted commit %.12s: %w", sha, werr)
	}
	p.trustedSet[sha] = true
	return nil
}

// clearLocks removes what a git process the harness killed (its context
// ended) left in the private git directory: only the harness runs git
// there, one operation at a time, so a lock at the start of an operation
// is a dead process's.
func (p *private) clearLocks() {
	for _, name := range []string{"index.lock", "shallow.lock", "HEAD.lock", "config.lock", "packed-refs.lock"} {
		os.Remove(filepath.Join(p.gitDir(), name))
	}
	matches, _ := filepath.Glob(filepath.Join(p.objects(), "pack", "tmp_*"))
	for _, m := range matches {
		os.Remove(m)
	}
}

// Close removes the private git directory when Open created it in the
// temporary directory (Options.PrivateDir empty). A private directory the
// caller gave is kept: a resume reuses what it recorded.
func (r *Repo) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p == nil || !r.p.temp {
		return nil
	}
	err := os.RemoveAll(r.p.base)
	r.p = nil
	return err
}

// privateConfig is the whole configuration of the harness's git. Rather
// than deny-listing the keys that run a program, send data elsewhere or
// change what git sees (a list that grows with every git release: hooks,
// fsmonitor, filters, textconv, credential helpers, ssh commands, proxies,
// http.curloptResolve, url.*.insteadOf, includes, excludes and attributes
// files, ...), the harness writes its own configuration and copies from
// the repository's only keys that change how the work tree's bytes are
// read, from an allow-list, once, when the loop starts.
func (r *Repo) privateConfig() string {
	var b strings.Builder
	format := "0"
	if r.cfg.objectFormat != "" && r.cfg.objectFormat != "sha1" {
		format = "1"
	}
	b.WriteString("# Written by agent-loop: the configuration of the harness's own git. Nothing includes another file.\n")
	b.WriteString("[core]\n\trepositoryformatversion = " + format + "\n\tbare = false\n")
	for _, k := range copiedCoreKeys {
		if v, ok := r.cfg.last("core." + k); ok {
			b.WriteString("\t" + k + " = " + quoteConfig(v) + "\n")
		}
	}
	b.WriteString("\thooksPath = /dev/null\n\tfsmonitor = false\n\tuntrackedCache = false\n\tsplitIndex = false\n" +
		"\texcludesFile = /dev/null\n\tattributesFile = /dev/null\n\tmultiPackIndex = false\n\tcommitGraph = false\n" +
		"\ttrustctime = true\n\tcheckStat = default\n\tlogAllRefUpdates = false\n\tpreloadIndex = true\n" +
		"\taskPass =\n\tsshCommand = " + quoteConfig(r.start.sshCommand) + "\n")
	if format == "1" {
		b.WriteString("[extensions]\n\tobjectFormat = " + quoteConfig(r.cfg.objectFormat) + "\n")
	}
	if r.start.sshVariant != "" {
		b.WriteString("[ssh]\n\tvariant = " + quoteConfig(r.start.sshVariant) + "\n")
	}
	b.WriteString("[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n[fetch]\n\twriteCommitGraph = false\n\trecurseSubmodules = false\n" +
		"[pack]\n\tuseBitmaps = false\n[protocol]\n\tallow = never\n[protocol \"file\"]\n\tallow = always\n" +
		"[protocol \"http\"]\n\tallow = always\n[protocol \"https\"]\n\tallow = always\n[protocol \"ssh\"]\n\tallow = always\n" +
		"[submodule]\n\trecurse = false\n[commit]\n\tgpgSign = false\n[tag]\n\tgpgSign = false\n" +
		"[push]\n\tgpgSign = false\n\trecurseSubmodules = no\n\tfollowTags = false\n[color]\n\tui = false\n" +
		"[credential]\n\tuseHttpPath = false\n[advice]\n\taddIgnoredFile = false\n\tdetachedHead = false\n")
	return b.String()
}

// copiedCoreKeys are the core.* keys copied from the repository: how the
// work tree's files are read (modes, symlinks, case, line endings) and
// which part of it is checked out (sparse checkout).
var copiedCoreKeys = []string{"filemode", "symlinks", "ignorecase", "precomposeunicode", "protecthfs", "protectntfs",
	"autocrlf", "eol", "safecrlf", "checkroundtripencoding", "sparsecheckout", "sparsecheckoutcone"}

// quoteConfig quotes a value for a git configuration file.
func quoteConfig(v string) string {
	v = strings.NewReplacer("\\", "\\\\", "\"", "\\\"", "\n", "\\n", "\t", "\\t").Replace(v)
	return "\"" + v + "\""
}

// readSmall reads a regular file of at most max bytes without following a
// symlink and without blocking on a FIFO.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, more than %d", path, fi.Size(), max)
	}
	return io.ReadAll(io.LimitReader(f, max+1))
}

// readStart reads what the private directory records when it is created:
// HEAD and its branch, the excludes, the sparse-checkout patterns, the
// shallow list and the ssh command.
func (r *Repo) readStart(ctx context.Context) error {
	s := &startState{}
	head, err := readSmall(filepath.Join(r.gitDir, "HEAD"), 4096)
	if err != nil || !validHead(head) {
		return fmt.Errorf("reading %s: HEAD is not a valid reference (%v): repair it (`git symbolic-ref HEAD refs/heads/main`)",
			filepath.Join(r.gitDir, "HEAD"), err)
	}
	s.head = head
	if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: "); ok {
		if strings.HasPrefix(ref, "refs/heads/") {
			s.branch = ref
			sha, known := r.readRepoRef(ref)
			if !known {
				res, err := r.exec(ctx, gitCall{scope: inRepo, args: []string{"rev-parse", "-q", "--verify", "--end-of-options", ref},
					okCodes: []int{1}})
				if err != nil {
					return err
				}
				sha = firstLine(res.stdout)
			}
			s.branchSHA = sha
		}
	}
	var ex []byte
	if b, err := readSmall(filepath.Join(r.commonDir, "info", "exclude"), 1<<20); err == nil {
		ex = append(ex, b...)
		if len(ex) > 0 && ex[len(ex)-1] != '\n' {
			ex = append(ex, '\n')
		}
	}
	if p := r.globalExcludes(ctx); p != "" {
		if b, err := readSmall(p, 1<<20); err == nil {
			ex = append(ex, "# "+strings.ReplaceAll(p, "\n", " ")+", as it was when the loop started\n"...)
			ex = append(ex, b...)
			if len(ex) > 0 && ex[len(ex)-1] != '\n' {
				ex = append(ex, '\n')
			}
		}
	}
	s.excludes = append(ex, "# agent-loop's state\n"+StateDir+"\n"...)
	if v, _ := r.cfg.last("core.sparsecheckout"); isTrue(v) {
		if b, err := readSmall(filepath.Join(r.commonDir, "info", "sparse-checkout"), 16<<20); err == nil {
			s.sparse = b
		} else {
			s.sparse = []byte{}
		}
	}
	if b, err := readSmall(filepath.Join(r.commonDir, "shallow"), 64<<20); err == nil {
		s.shallow = b
	}
	// How to reach an ssh remote is the user's: GIT_SSH_COMMAND in the
	// harness's environment, else core.sshCommand as the repository's
	// configuration said when the loop started (a deploy key), unless it
	// names a file of the work tree, which the agent can rewrite.
	s.sshCommand = os.Getenv("GIT_SSH_COMMAND")
	if v, ok := r.cfg.last("core.sshcommand"); ok && s.sshCommand == "" && strings.TrimSpace(v) != "" {
		if strings.Contains(v, r.root) {
			return fmt.Errorf("core.sshCommand %q names a file in the work tree, which the agent can rewrite: "+
				"move it out of %s, or set GIT_SSH_COMMAND for agent-loop", v, r.root)
		}
		s.sshCommand = v
	}
	s.sshVariant, _ = r.cfg.last("ssh.variant")
	if s.sshCommand == "" {
		ssh := "ssh"
		if p, err := lookPathIn("ssh"); err == nil {
			ssh = p
		}
		s.sshCommand = shellQuote(ssh) + " -F /dev/null -o BatchMode=yes"
	}
	r.start = s
	return nil
}

// globalExcludes is the excludes file git would read besides the
// repository's: core.excludesFile (repository, then global configuration),
// else $XDG_CONFIG_HOME/git/ignore or ~/.config/git/ignore.
func (r *Repo) globalExcludes(ctx context.Context) string {
	home := os.Getenv("HOME")
	expand := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		return p
	}
	if v, ok := r.cfg.last("core.excludesfile"); ok && v != "" {
		return expand(v)
	}
	if home != "" {
		c := runPlain(ctx, r.gitPath, []string{"config", "--global", "--includes", "-z", "--get", "core.excludesFile"},
			[]string{"PATH=" + r.systemPath(), "HOME=" + home, "XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME"), "GIT_CONFIG_NOSYSTEM=1"})
		if v := strings.TrimRight(c, "\x00"); v != "" {
			return expand(v)
		}
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "ignore")
	}
	if home != "" {
		return filepath.Join(home, ".config", "git", "ignore")
	}
	return ""
}

// lookPathIn finds a program in the system directories first, then in the
// harness's PATH.
func lookPathIn(name string) (string, error) {
	for _, d := range safeBinDirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return lookPath(name)
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
