package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/refname"
	"github.com/aiwg/agent-loop/internal/weaken"
)

var (
	_ loop.Repo     = (*Repo)(nil)
	_ loop.Pusher   = (*Repo)(nil)
	_ loop.Unstager = (*Repo)(nil)
)

// StateDir is the harness's state directory, never committed.
const StateDir = ".aiwg/"

// Options configures a Repo.
type Options struct {
	// Remote is the remote name to push to and fetch from ("origin" by
	// default) or a URL. A name is resolved to its URLs from the
	// repository's configuration once, when the private directory records
	// it; later edits of .git/config do not redirect the harness.
	Remote string
	// Token, when set, authenticates HTTP(S) pushes and fetches as
	// x-access-token:<token>. It reaches git through a pipe (fd 3) read by
	// a credential helper: never a file, argv or a child's environment.
	Token string
	// AuthorName and AuthorEmail sign the harness's commits.
	AuthorName, AuthorEmail string
	// Exclude lists path prefixes never committed (".aiwg/" always is).
	Exclude []string
	// Now is the clock for commit dates (time.Now by default).
	Now func() time.Time
	// PrivateDir is a directory only the harness can write (and, when the
	// agent runs as another user, read): the loop's harness-private state
	// directory. The harness keeps its trusted git directory in
	// PrivateDir/trusted-git: object store, index, configuration and the
	// recorded values of the branches. Kept, it lets a resume trust what
	// the first run recorded. Empty: a temporary directory that Close
	// removes.
	PrivateDir string
	// MaxFileSize: a changed file larger than this is left out of the
	// index without being read, and reported (Notices, and
	// CommitResult.Excluded). 0 means DefaultMaxFileSize (100 MiB); a
	// negative value means no limit.
	MaxFileSize int64
	// TrustIndex says .git/index was written before any agent ran in this
	// work tree (a fresh checkout, or the user's own repository when a new
	// loop starts): its stat data seed the trusted index, so the first
	// staging does not read every file again. Leave it false on a resume
	// without the private directory: an index entry the agent patched
	// (another object id under matching stat data) would hide a change.
	TrustIndex bool
}

// Info describes what Open found.
type Info struct {
	Shallow bool // a shallow clone (.git/shallow exists)
	// LFS is true when .gitattributes route files through Git LFS. Filters
	// never run in the harness's git, so LFS-tracked files are committed as
	// they are in the work tree.
	LFS bool
	// Fallback lists why the git CLI replaces go-git for operations go-git
	// would otherwise do.
	Fallback []string
}

// weakness switches off one defence, for the tests that show each attack
// works against a harness without it. Production code never sets it.
type weakness struct {
	index   bool // stage through the agent-writable .git/index
	objects bool // read the repository's objects (its alternates too), no verified import
	gitDir  bool // run git on the repository's .git as the agent left it (config, includes, hooks, info/, replace refs), no restore
	home    bool // the user's HOME and global configuration (excludes and attributes files)
	refs    bool // no check of the recorded branches
	// credFile hands the token over in a file in TMPDIR, as the previous
	// harness did.
	credFile bool
	// fifos leaves a git child blocked on a FIFO to the context's deadline.
	fifos bool
	// attrs shows attribute-made binary diffs as git prints them.
	attrs bool
	// status lists changes with git status, which reads files.
	status bool
	// history takes commit messages as git prints them, unchecked.
	history bool
}

// weaknessOf is the weakness the red-team tests of the binary ask for
// (internal/weaken: only a test build honours it; none in production).
func weaknessOf() weakness {
	return weakness{
		index:    weaken.On("git-index"),
		objects:  weaken.On("git-objects"),
		gitDir:   weaken.On("git-dir"),
		home:     weaken.On("git-home"),
		refs:     weaken.On("git-refs"),
		credFile: weaken.On("git-cred"),
		fifos:    weaken.On("git-bound"),
	}
}

// Repo is a git work tree driven by the harness.
type Repo struct {
	mu        sync.Mutex
	root      string // work tree root
	gitDir    string // the work tree's git directory
	commonDir string // the repository's common directory
	gitPath   string
	opts      Options
	info      Info
	cfg       *repoConfig
	creds     *CredentialError
	start     *startState
	seal      *snapshot
	p         *private
	goGit     bool // go-git writes the harness's objects in process (SHA-1)
	passEnv   []string
	weak      weakness
	// retryDelay is the first push retry backoff (tests shorten it).
	retryDelay time.Duration
	// staged says the trusted index holds the work tree as the last Stage
	// left it and nothing has touched it since (see CommitRequest.Staged);
	// skipped are the paths that staging left out.
	staged     bool
	stagedTree string
	skipped    []Notice
	notices    []Notice
	// fifos are the FIFOs the watchdog unblocked (fifo_linux.go), moved
	// to notices after each staging.
	fifoMu sync.Mutex
	fifos  []Notice
	// pending is a merge StartMerge left in the work tree (merge.go).
	pending *pendingMerge
}

// Open opens the repository containing dir: it reads the repository's
// configuration once (remote URLs, the few content settings the harness
// copies, credentials it refuses), records HEAD, the excludes and the
// shallow list, seals the control files of .git and adds ".aiwg/" to
// .git/info/exclude. With Options.PrivateDir the private git directory is
// created (or reopened) at once; without it, on the first operation.
func Open(dir string, opts Options) (*Repo, error) {
	if opts.Remote == "" {
		opts.Remote = "origin"
	}
	if opts.AuthorName == "" {
		opts.AuthorName = "agent-loop"
	}
	if opts.AuthorEmail == "" {
		opts.AuthorEmail = "agent-loop@users.noreply.github.com"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	for _, v := range []string{opts.AuthorName, opts.AuthorEmail} {
		if strings.ContainsAny(v, "<>\n\r\x00") {
			return nil, fmt.Errorf("author %q must not contain <, > or line breaks", v)
		}
	}
	for _, p := range opts.Exclude {
		if _, err := normPrefix(p); err != nil {
			return nil, err
		}
	}
	gitPath, err := lookPathIn("git")
	if err != nil {
		return nil, fmt.Errorf("git is not installed or not in PATH (%w): install git 2.32 or newer", err)
	}
	root, gitDir, commonDir, err := discover(dir)
	if err != nil {
		return nil, err
	}
	r := &Repo{root: root, gitDir: gitDir, commonDir: commonDir, gitPath: gitPath, opts: opts, retryDelay: time.Second,
		weak: weaknessOf()}
	for _, k := range passedEnv {
		if v, ok := os.LookupEnv(k); ok {
			r.passEnv = append(r.passEnv, k+"="+v)
		}
	}
	// A FIFO named as an include must not hang the harness.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if r.cfg, err = r.readConfig(ctx); err != nil {
		return nil, fmt.Errorf("reading the configuration of %s: %w", root, err)
	}
	if !weaken.On("git-cred") {
		r.creds = findCredentials(r.cfg, opts.Token, r.repoConfigPath())
	}
	if err := r.sealLocked(); err != nil {
		return nil, err
	}
	if err := r.readStart(ctx); err != nil {
		return nil, err
	}
	r.detect()
	if opts.PrivateDir != "" {
		if err := r.ensurePrivate(ctx); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// lookPath is exec.LookPath (the harness's PATH).
func lookPath(name string) (string, error) { return exec.LookPath(name) }

// runPlain runs a program and returns its stdout ("" on failure).
func runPlain(ctx context.Context, path string, args, env []string) string {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// detect fills Info: a shallow clone, LFS attributes (at the root, in
// info/attributes and in every .gitattributes the index lists), and
// whether go-git can write the harness's objects.
func (r *Repo) detect() {
	if r.cfg.objectFormat != "" && r.cfg.objectFormat != "sha1" {
		r.info.Fallback = append(r.info.Fallback, "object format "+r.cfg.objectFormat+
			": go-git v5 writes SHA-1 objects only, the git CLI writes the harness's commits and the state ref")
	} else {
		r.goGit = true
	}
	if len(r.start.shallow) > 0 {
		r.info.Shallow = true
	}
	named := map[string]bool{}
	for _, p := range []string{filepath.Join(r.root, ".gitattributes"), filepath.Join(r.commonDir, "info", "attributes")} {
		if attributeDrivers(readAttributesFile(p), named) {
			r.info.LFS = true
		}
	}
	if r.info.LFS {
		return
	}
	if b, err := readSmall(filepath.Join(r.gitDir, "index"), 256<<20); err == nil {
		if s, err := scanIndex(b, r.hashLen(), nil); err == nil {
			for _, p := range s.attributes {
				if attributeDrivers(readAttributesFile(filepath.Join(r.root, filepath.FromSlash(p))), named) {
					r.info.LFS = true
				}
			}
		}
	}
}

// Seal snapshots .git/config (and worktree config), .git/hooks/,
// .git/info/, the shallow list and object alternates, and records which
// directory .git is: before every operation they are put back (for the
// user's own git; the harness's git never reads them). Call it right
// before the agent first runs. It returns the *CredentialError of
// CheckCredentials: the agent must not run while the configuration holds
// a credential.
func (r *Repo) Seal(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := r.sealLocked(); err != nil {
		return err
	}
	if r.creds != nil {
		return r.creds
	}
	return nil
}

func (r *Repo) sealLocked() error {
	if err := r.ensureExclude([]string{StateDir}); err != nil {
		return err
	}
	s, err := r.takeSnapshot()
	if err != nil {
		return err
	}
	r.seal = s
	return nil
}

// Info reports what Open found.
func (r *Repo) Info() Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.info
	i.Fallback = append([]string(nil), r.info.Fallback...)
	return i
}

// Root is the work tree's root directory.
func (r *Repo) Root() string { return r.root }

// begin starts an operation: the private git directory is open, .git is
// the sealed directory, its control files, the recorded branches and HEAD
// are put back.
func (r *Repo) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Any operation may change the index; only Stage sets this again.
	r.staged = false
	if err := r.ensurePrivate(ctx); err != nil {
		return err
	}
	r.p.clearLocks()
	return r.checkRepo(ctx)
}

func (r *Repo) hashLen() int {
	if r.cfg.objectFormat == "sha256" {
		return 32
	}
	return 20
}

func (r *Repo) zeroOID() string { return strings.Repeat("0", 2*r.hashLen()) }

// stateOnly is the prefix list of the harness's state directory.
func stateOnly() []string { return []string{strings.TrimSuffix(StateDir, "/")} }

// Head returns the harness's branch ("" when detached) and commit: the
// branch checked out when the loop started, or the loop branch.
func (r *Repo) Head(ctx context.Context) (branch, sha string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx); err != nil {
		return "", "", err
	}
	ref, sha := r.privHead()
	branch = strings.TrimPrefix(ref, "refs/heads/")
	if sha == "" {
		return branch, "", fmt.Errorf("%s: %w", r.root, ErrUnbornHead)
	}
	return branch, sha, nil
}

// resolve returns the commit rev names, "" when it does not exist: HEAD
// and branch names from the harness's records first, then the
// repository's refs (a branch the harness does not know yet), any other
// revision through git.
func (r *Repo) resolve(ctx context.Context, rev string) (string, error) {
	if err := validRev(rev); err != nil {
		return "", err
	}
	if rev == "HEAD" {
		return r.privHeadSHA(), nil
	}
	if len(rev) == 2*r.hashLen() && isHex(rev) && r.p.trustedSet[rev] {
		return rev, nil // a commit the trusted store holds: no process
	}
	refs := []string{rev}
	if !strings.HasPrefix(rev, "refs/") {
		refs = []string{"refs/heads/" + rev, "refs/tags/" + rev}
	}
	if !isHex(rev) && validRefName(refs[0]) {
		for _, ref := range refs {
			if v := r.readPrivRef(ref); v != "" {
				return v, nil
			}
		}
		if v, known := r.readRepoRef(refs[0]); known && v != "" {
			return r.peelCommit(ctx, v)
		}
	}
	return r.peelCommit(ctx, rev)
}

// peelCommit asks git (the trusted store and the repository's objects) for
// the commit rev names.
func (r *Repo) peelCommit(ctx context.Context, rev string) (string, error) {
	res, err := r.git(ctx, gitCall{scope: withRepo, args: []string{"rev-parse", "-q", "--verify", "--end-of-options", rev + "^{commit}"},
		okCodes: []int{1, 128}})
	if err != nil {
		return "", err
	}
	if res.code != 0 {
		return "", nil
	}
	return firstLine(res.stdout), nil
}

// mustResolve is resolve with an error for a missing commit.
func (r *Repo) mustResolve(ctx context.Context, rev string) (string, error) {
	sha, err := r.resolve(ctx, rev)
	if err != nil {
		return "", err
	}
	if sha == "" {
		return "", fmt.Errorf("%q is not a commit of %s: pass a commit SHA or branch that exists", rev, r.root)
	}
	return sha, nil
}

// Dirty lists changed or untracked paths, ignoring ignored files and .aiwg/,
// compared with the harness's HEAD: the work tree is staged into the
// trusted index as Stage does (within its limits; a path left out counts as
// changed), and the index compared with HEAD.
func (r *Repo) Dirty(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	if err := r.ensureIndex(ctx); err != nil {
		return nil, err
	}
	skipped, err := r.stageWorkTree(ctx, stateOnly())
	if err != nil {
		return nil, err
	}
	r.notices = append(r.notices, skipped...)
	paths := skippedPaths(skipped)
	if head := r.privHeadSHA(); head != "" {
		res, err := r.git(ctx, gitCall{args: append([]string{"diff-index", "--cached", "-z", "--name-only", "--no-renames",
			"--ignore-submodules=dirty", head, "--", "."}, excludeSpecs(stateOnly())...)})
		if err != nil {
			return nil, err
		}
		paths = append(paths, splitZ(res.stdout)...)
	} else {
		res, err := r.git(ctx, gitCall{args: []string{"ls-files", "-z", "--cached"}})
		if err != nil {
			return nil, err
		}
		paths = append(paths, splitZ(res.stdout)...)
	}
	return dedupe(paths), nil
}

// StartBranch creates branch name at sha (or reuses it when it exists and
// contains sha) and checks it out, keeping the work tree. The commit is
// imported into the trusted store first.
func (r *Repo) StartBranch(ctx context.Context, name, sha string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validBranch(name); err != nil {
		return err
	}
	if err := r.begin(ctx); err != nil {
		return err
	}
	start, err := r.mustResolve(ctx, sha)
	if err != nil {
		return err
	}
	if err := r.ensureTrusted(ctx, start); err != nil {
		return err
	}
	ref := "refs/heads/" + name
	if err := r.clearStaleRefLock(ctx, ref); err != nil {
		return err
	}
	tip := r.readPrivRef(ref)
	repoTip, known := r.readRepoRef(ref)
	if tip == "" && known {
		tip = repoTip
	}
	if tip == "" {
		tip = start
	} else if tip != start {
		res, err := r.git(ctx, gitCall{scope: withRepo, args: []string{"merge-base", "--is-ancestor", start, tip}, okCodes: []int{1}})
		if err != nil {
			return err
		}
		if res.code != 0 {
			return fmt.Errorf("branch %q already exists at %.12s and does not contain %.12s: "+
				"pick another branch name (--branch) or delete the branch (`git branch -D %s`)", name, tip, start, name)
		}
		if err := r.ensureTrusted(ctx, tip); err != nil {
			return err
		}
	}
	if err := r.ensureIndex(ctx); err != nil {
		return err
	}
	if !known {
		repoTip = ""
	}
	if err := r.mirrorBranch(ctx, ref, tip, repoTip, "agent-loop: start branch"); err != nil {
		return err
	}
	if err := r.setHeads(name); err != nil {
		return err
	}
	// Index = branch tip, work tree untouched (git reset --mixed).
	if _, err := r.git(ctx, gitCall{args: []string{"read-tree", "--reset", tip}}); err != nil {
		return err
	}
	return r.mirrorIndex()
}

// Checkout checks out an existing branch: the harness's record of it, else
// the repository's (imported into the trusted store).
func (r *Repo) Checkout(ctx context.Context, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validBranch(name); err != nil {
		return err
	}
	if err := r.begin(ctx); err != nil {
		return err
	}
	ref := "refs/heads/" + name
	if err := r.clearStaleRefLock(ctx, ref); err != nil {
		return err
	}
	tip := r.readPrivRef(ref)
	repoTip, known := r.readRepoRef(ref)
	if !known {
		repoTip = ""
	}
	if tip == "" {
		tip = repoTip
	}
	if tip == "" {
		return fmt.Errorf("branch %q does not exist in %s: create it with StartBranch (or `git branch %s`)", name, r.root, name)
	}
	if err := r.ensureTrusted(ctx, tip); err != nil {
		return err
	}
	if err := r.ensureIndex(ctx); err != nil {
		return err
	}
	if err := r.ensureTrusted(ctx, r.privHeadSHA()); err != nil {
		return err
	}
	cur := r.privHeadSHA()
	if err := r.mirrorBranch(ctx, ref, tip, repoTip, "agent-loop: checkout"); err != nil {
		return err
	}
	// On the branch's commit already (a resume): the work tree stays as it
	// is, nothing to compare. Otherwise git checkout, which keeps local
	// changes and refuses to overwrite them.
	if cur != tip {
		if _, err := r.git(ctx, gitCall{args: []string{"checkout", "-q", "--no-guess", "--no-recurse-submodules", name, "--"}}); err != nil {
			return fmt.Errorf("checking out %q: %w", name, err)
		}
	}
	if err := r.setHeads(name); err != nil {
		return err
	}
	return r.mirrorIndex()
}

// ownBranch returns the branch the harness commits on and its recorded
// tip.
func (r *Repo) ownBranch() (branch, tip string, err error) {
	ref, sha := r.privHead()
	if ref == "" || validBranch(strings.TrimPrefix(ref, "refs/heads/")) != nil || !strings.HasPrefix(ref, "refs/heads/") {
		return "", "", fmt.Errorf("HEAD of %s is detached: the loop commits on a branch; start one with "+
			"StartBranch (agent-loop does this with --branch)", r.root)
	}
	return strings.TrimPrefix(ref, "refs/heads/"), sha, nil
}

// Commit stages every change except .aiwg/ and the excluded prefixes and
// commits it on the harness's branch; with nothing to commit it still makes
// an empty commit, so every iteration has exactly one commit. With
// req.Staged, right after Stage, the index Stage wrote is committed as it
// is. Paths staging left out (too large, unreadable) are in Excluded too.
func (r *Repo) Commit(ctx context.Context, req loop.CommitRequest) (loop.CommitResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	staged := req.Staged && r.staged // begin clears r.staged
	msg, err := buildMessage(req)
	if err != nil {
		return loop.CommitResult{}, err
	}
	user := make([]string, 0, len(req.Exclude)+len(r.opts.Exclude))
	for _, p := range append(append([]string(nil), r.opts.Exclude...), req.Exclude...) {
		n, err := normPrefix(p)
		if err != nil {
			return loop.CommitResult{}, err
		}
		user = append(user, n)
	}
	user = dedupe(user)
	if err := r.begin(ctx); err != nil {
		return loop.CommitResult{}, err
	}
	branch, tip, err := r.ownBranch()
	if err != nil {
		return loop.CommitResult{}, err
	}
	if err := r.ensureTrusted(ctx, tip); err != nil {
		return loop.CommitResult{}, err
	}
	skipped := r.skipped
	if !staged {
		if skipped, err = r.stageWorkTree(ctx, stateOnly()); err != nil {
			return loop.CommitResult{}, err
		}
		r.notices = append(r.notices, skipped...)
	}
	excluded, err := r.unstage(ctx, tip, user)
	if err != nil {
		return loop.CommitResult{}, err
	}
	excluded = dedupe(append(excluded, skippedPaths(skipped)...))
	// The index is the new tree: write it and measure it against the
	// parent at the same time (two read-only views of one index).
	numstat := []string{"diff", "--cached", "-z", "--numstat", "--find-renames", "--no-ext-diff", "--no-textconv",
		"--ignore-submodules=none"}
	if tip != "" {
		numstat = append(numstat, "--end-of-options", tip)
	}
	var (
		wg      sync.WaitGroup
		statRes result
		statErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		statRes, statErr = r.git(ctx, gitCall{args: append(numstat, "--")})
	}()
	res, err := r.git(ctx, gitCall{args: []string{"write-tree"}})
	wg.Wait()
	if err != nil {
		return loop.CommitResult{}, err
	}
	if statErr != nil {
		return loop.CommitResult{}, statErr
	}
	sha, err := r.commitTree(ctx, branch, firstLine(res.stdout), tip, msg)
	if err != nil {
		return loop.CommitResult{}, err
	}
	if err := r.mirrorIndex(); err != nil {
		return loop.CommitResult{}, err
	}
	return loop.CommitResult{SHA: sha, Stat: parseNumstat(statRes.stdout), Excluded: excluded}, nil
}

// unstage keeps the caller's excluded prefixes at the tip's content in the
// index and lists the changed paths under them.
func (r *Repo) unstage(ctx context.Context, tip string, user []string) ([]string, error) {
	if len(user) == 0 {
		return nil, nil
	}
	var changed []string
	if tip != "" {
		res, err := r.git(ctx, gitCall{args: append([]string{"diff-index", "--cached", "-z", "--name-only", "--no-renames",
			"--ignore-submodules=dirty", tip, "--"}, includeSpecs(user)...)})
		if err != nil {
			return nil, err
		}
		changed = splitZ(res.stdout)
	} else {
		res, err := r.git(ctx, gitCall{args: append([]string{"ls-files", "-z", "--cached", "--"}, includeSpecs(user)...)})
		if err != nil {
			return nil, err
		}
		changed = splitZ(res.stdout)
	}
	if len(changed) == 0 {
		return nil, nil
	}
	args := append([]string{"reset", "-q", "--no-recurse-submodules", tip, "--"}, includeSpecs(user)...)
	if tip == "" {
		args = append([]string{"rm", "-r", "-q", "--cached", "--ignore-unmatch", "--"}, includeSpecs(user)...)
	}
	if _, err := r.git(ctx, gitCall{args: args}); err != nil {
		return nil, fmt.Errorf("keeping %s out of the commit: %w", strings.Join(user, ", "), err)
	}
	return dedupe(changed), nil
}

// commitTree writes a commit of tree on top of parent into the trusted
// store and moves the branch to it (the repository's mirror, then the
// record).
func (r *Repo) commitTree(ctx context.Context, branch, tree, parent, msg string) (string, error) {
	var sha string
	if r.goGit {
		// In process: one git process less per iteration.
		var err error
		if sha, err = r.writeCommitObject(tree, parent, msg); err != nil {
			return "", fmt.Errorf("writing the commit: %w", err)
		}
	} else {
		args := []string{"commit-tree", "--no-gpg-sign", tree}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		args = append(args, "-F", "-")
		res, err := r.git(ctx, gitCall{bare: true, args: args, stdin: strings.NewReader(msg), env: r.authorEnv()})
		if err != nil {
			return "", fmt.Errorf("writing the commit: %w", err)
		}
		sha = firstLine(res.stdout)
	}
	if err := r.mirrorBranch(ctx, "refs/heads/"+branch, sha, parent, "agent-loop: commit"); err != nil {
		return "", err
	}
	if err := r.p.markTrusted(sha); err != nil {
		return "", err
	}
	return sha, nil
}

// authorEnv signs commits as the harness, dated by its clock.
func (r *Repo) authorEnv() []string {
	now := r.opts.Now()
	date := fmt.Sprintf("@%d %s", now.Unix(), now.Format("-0700"))
	return []string{
		"GIT_AUTHOR_NAME=" + r.opts.AuthorName, "GIT_AUTHOR_EMAIL=" + r.opts.AuthorEmail, "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=" + r.opts.AuthorName, "GIT_COMMITTER_EMAIL=" + r.opts.AuthorEmail, "GIT_COMMITTER_DATE=" + date,
	}
}

// stat measures commit sha against parent ("" for a root commit).
func (r *Repo) stat(ctx context.Context, parent, sha string) (loop.DiffStat, error) {
	args := []string{"diff-tree", "-r", "-z", "--numstat", "--find-renames", "--no-ext-diff", "--no-textconv"}
	if parent == "" {
		args = append(args, "--root", sha)
	} else {
		args = append(args, parent, sha)
	}
	res, err := r.git(ctx, gitCall{bare: true, args: append(args, "--")})
	if err != nil {
		return loop.DiffStat{}, err
	}
	return parseNumstat(res.stdout), nil
}

// Diff returns the unified diff from commit from to the work tree, untracked
// (not ignored) files included as additions, renames detected, binary files
// summarised, .aiwg/ left out; the same inputs give the same text. It stages
// the work tree in the trusted index, as Stage does.
func (r *Repo) Diff(ctx context.Context, from string) (string, error) {
	d, err := r.Stage(ctx, from)
	if err != nil {
		return "", err
	}
	return d[0], nil
}

// Stage records the work tree in the trusted index (every change but
// .aiwg/, within the limits of stage.go) and returns the diff from each
// commit in froms to it, in order (`git diff --cached`: that is what makes
// untracked files and renames visible). Both sides come from the trusted
// store: a baseline blob the agent rewrote in .git/objects, or an entry it
// patched in .git/index, is not seen. The diffs run side by side. A Commit
// with Staged set then commits this index without walking the work tree
// again, so one iteration stages once and commits what was judged.
func (r *Repo) Stage(ctx context.Context, froms ...string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, from := range froms {
		if err := validRev(from); err != nil {
			return nil, err
		}
	}
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	commits := make([]string, len(froms))
	for i, from := range froms {
		sha, err := r.mustResolve(ctx, from)
		if err != nil {
			return nil, err
		}
		if err := r.ensureTrusted(ctx, sha); err != nil {
			return nil, err
		}
		commits[i] = sha
	}
	skipped, err := r.stageWorkTree(ctx, stateOnly())
	if err != nil {
		return nil, fmt.Errorf("staging the work tree of %s: %w", r.root, err)
	}
	r.notices = append(r.notices, skipped...)
	// The trusted index written as a tree once: the held-out check reads
	// the iteration's product source from it (StagedTree).
	tree, err := r.git(ctx, gitCall{args: []string{"write-tree"}})
	if err != nil {
		return nil, fmt.Errorf("writing the staged tree of %s: %w", r.root, err)
	}
	r.staged, r.skipped, r.stagedTree = true, skipped, firstLine(tree.stdout)
	out := make([]string, len(froms))
	errs := make([]error, len(froms))
	var wg sync.WaitGroup
	// The staged blobs are final: they are copied to the repository while
	// git diffs (the commit copies only its trees and itself).
	var syncErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		syncErr = r.syncObjects(ctx)
	}()
	for i, sha := range commits {
		if i > 0 && sha == commits[i-1] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = r.diffCached(ctx, sha, stateOnly())
		}()
	}
	wg.Wait()
	if syncErr != nil {
		r.staged = false
		return nil, syncErr
	}
	for i, sha := range commits {
		if i > 0 && sha == commits[i-1] {
			out[i], errs[i] = out[i-1], errs[i-1]
		}
		if errs[i] != nil {
			r.staged = false
			return nil, errs[i]
		}
	}
	return out, nil
}

// diffCached is the unified diff from commit from to the trusted index.
func (r *Repo) diffCached(ctx context.Context, from string, state []string) (string, error) {
	args := append(append(diffArgs(from), "."), excludeSpecs(state)...)
	res, err := r.git(ctx, gitCall{args: args})
	if err != nil {
		return "", fmt.Errorf("diffing %.12s against the work tree: %w", from, err)
	}
	d, err := r.mendBinary(ctx, from, string(res.stdout), state)
	if err != nil {
		return "", fmt.Errorf("diffing %.12s against the work tree: %w", from, err)
	}
	return d, nil
}

// Unstage makes the trusted index equal to the harness's HEAD again,
// keeping the work tree (and the stat data). The repository's .git/index
// was never written by Stage: the user's index stays as it was.
func (r *Repo) Unstage(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx); err != nil {
		return err
	}
	head := r.privHeadSHA()
	args := []string{"read-tree", "--reset", head}
	if head == "" {
		args = []string{"read-tree", "--empty"}
	}
	if _, err := r.git(ctx, gitCall{args: args}); err != nil {
		return fmt.Errorf("unstaging the changes in %s: %w", r.root, err)
	}
	return nil
}

// ResetTo makes the work tree and index equal to commit sha's tree without
// moving the branch: tracked files are reset and untracked (not ignored)
// files removed; .aiwg/ and ignored files stay. The files come from the
// trusted store.
func (r *Repo) ResetTo(ctx context.Context, sha string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx); err != nil {
		return err
	}
	commit, err := r.mustResolve(ctx, sha)
	if err != nil {
		return err
	}
	if err := r.ensureTrusted(ctx, commit); err != nil {
		return err
	}
	if err := r.ensureIndex(ctx); err != nil {
		return err
	}
	if _, err := r.git(ctx, gitCall{args: []string{"read-tree", "-u", "--reset", commit}}); err != nil {
		return fmt.Errorf("resetting the work tree to %.12s: %w", commit, err)
	}
	args := append([]string{"clean", "-f", "-d", "-q", "--", "."}, excludeSpecs(stateOnly())...)
	if _, err := r.git(ctx, gitCall{args: args}); err != nil {
		return fmt.Errorf("removing untracked files: %w", err)
	}
	return r.mirrorIndex()
}

// CommitTreeOf adds a commit on the current branch whose tree equals the tree
// of commit sha, and makes the index and tracked files match it. The tree is
// taken as it is (it was committed by Commit, exclusions applied), so
// req.Exclude is not used and Excluded is empty.
func (r *Repo) CommitTreeOf(ctx context.Context, sha string, req loop.CommitRequest) (loop.CommitResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	msg, err := buildMessage(req)
	if err != nil {
		return loop.CommitResult{}, err
	}
	if err := r.begin(ctx); err != nil {
		return loop.CommitResult{}, err
	}
	src, err := r.mustResolve(ctx, sha)
	if err != nil {
		return loop.CommitResult{}, err
	}
	if err := r.ensureTrusted(ctx, src); err != nil {
		return loop.CommitResult{}, err
	}
	branch, tip, err := r.ownBranch()
	if err != nil {
		return loop.CommitResult{}, err
	}
	if err := r.ensureTrusted(ctx, tip); err != nil {
		return loop.CommitResult{}, err
	}
	res, err := r.git(ctx, gitCall{bare: true, args: []string{"rev-parse", "--verify", "--end-of-options", src + "^{tree}"}})
	if err != nil {
		return loop.CommitResult{}, err
	}
	newSHA, err := r.commitTree(ctx, branch, firstLine(res.stdout), tip, msg)
	if err != nil {
		return loop.CommitResult{}, err
	}
	if err := r.ensureIndex(ctx); err != nil {
		return loop.CommitResult{}, err
	}
	if _, err := r.git(ctx, gitCall{args: []string{"read-tree", "-u", "--reset", newSHA}}); err != nil {
		return loop.CommitResult{}, fmt.Errorf("updating the work tree to %.12s: %w", newSHA, err)
	}
	if err := r.mirrorIndex(); err != nil {
		return loop.CommitResult{}, err
	}
	stat, err := r.stat(ctx, tip, newSHA)
	if err != nil {
		return loop.CommitResult{}, err
	}
	return loop.CommitResult{SHA: newSHA, Stat: stat}, nil
}

// Bundle returns a git bundle of branch with the commits that are not in
// base (`git bundle create - refs/heads/<branch> ^<base>`): a file a person
// can fetch the branch from (`git fetch x.bundle <branch>:<branch>`) in any
// clone that has base, when the branch could not be pushed. It is made
// from the trusted store.
func (r *Repo) Bundle(ctx context.Context, branch, base string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validBranch(branch); err != nil {
		return nil, err
	}
	if err := validRev(base); err != nil {
		return nil, err
	}
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	baseSHA, err := r.mustResolve(ctx, base)
	if err != nil {
		return nil, err
	}
	// The loop's history may be in the repository's objects only (a resume
	// with a new private directory); whoever fetches the bundle checks every
	// object by its hash.
	res, err := r.git(ctx, gitCall{scope: withRepo, args: []string{"bundle", "create", "-q", "-", "refs/heads/" + branch, "^" + baseSHA}})
	if err != nil {
		return nil, fmt.Errorf("bundling %s: %w", branch, err)
	}
	return res.stdout, nil
}

// History lists the commits reachable from branch and not from base,
// oldest first, with their trailers parsed. The branch is the recorded
// one; its history may be in the repository's objects only (a resume with
// a new private directory), so every commit listed is checked against its
// name: a forged commit is an error. The repository's shallow list, grafts
// and replace refs as the agent left them play no part.
func (r *Repo) History(ctx context.Context, branch, base string) ([]loop.Commit, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validRev(branch); err != nil {
		return nil, err
	}
	if base != "" {
		if err := validRev(base); err != nil {
			return nil, err
		}
	}
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	tip, err := r.mustResolve(ctx, branch)
	if err != nil {
		return nil, err
	}
	args := []string{"rev-list", "--reverse", "--end-of-options", tip}
	if base != "" {
		baseSHA, err := r.mustResolve(ctx, base)
		if err != nil {
			return nil, err
		}
		args = append(args, "^"+baseSHA)
	}
	res, err := r.git(ctx, gitCall{scope: withRepo, args: append(args, "--")})
	if err != nil {
		return nil, fmt.Errorf("listing the commits of %s: %w", branch, err)
	}
	shas := strings.Fields(string(res.stdout))
	raws, err := r.verifiedCommits(ctx, shas)
	if err != nil {
		return nil, fmt.Errorf("reading the commits of %s: %w", branch, err)
	}
	out := make([]loop.Commit, 0, len(shas))
	for _, sha := range shas {
		header, msg, _ := strings.Cut(string(raws[sha]), "\n\n")
		out = append(out, loop.Commit{SHA: sha, Subject: subjectOf(msg), Trailers: parseTrailers(msg),
			Time: committerTime(header)})
	}
	return out, nil
}

// verifiedCommits reads commit objects (from the trusted store or the
// repository) and checks that each hashes to its name: a walk through a
// forged commit (another parent, other trailers) is an error, not a
// history. Every commit listed is checked, so the chain is the real one.
func (r *Repo) verifiedCommits(ctx context.Context, shas []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(shas))
	if len(shas) == 0 {
		return out, nil
	}
	res, err := r.git(ctx, gitCall{scope: withRepo, args: []string{"cat-file", "--batch"},
		stdin: strings.NewReader(strings.Join(shas, "\n") + "\n")})
	if err != nil {
		return nil, err
	}
	check := !r.weak.history
	b := res.stdout
	for _, sha := range shas {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return nil, fmt.Errorf("git cat-file: output ends before %.12s", sha)
		}
		f := strings.Fields(string(b[:nl]))
		if len(f) != 3 || f[0] != sha || f[1] != "commit" {
			return nil, fmt.Errorf("git cat-file: %q is not commit %.12s", string(b[:nl]), sha)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || nl+1+n+1 > len(b) {
			return nil, fmt.Errorf("git cat-file: bad size for %.12s", sha)
		}
		content := b[nl+1 : nl+1+n]
		if got := r.hashObject("commit", content); check && got != sha {
			return nil, fmt.Errorf("%w: commit %.12s hashes to %.12s", ErrForgedObject, sha, got)
		}
		out[sha] = content
		b = b[nl+1+n+1:]
	}
	return out, nil
}

// committerTime reads the committer date of a commit header.
func committerTime(header string) time.Time {
	for _, line := range strings.Split(header, "\n") {
		if rest, ok := strings.CutPrefix(line, "committer "); ok {
			f := strings.Fields(rest)
			if len(f) >= 2 {
				if sec, err := strconv.ParseInt(f[len(f)-2], 10, 64); err == nil {
					return time.Unix(sec, 0).UTC()
				}
			}
		}
	}
	return time.Time{}
}

// Exclude appends patterns to .git/info/exclude and to the harness's own
// excludes, each once.
func (r *Repo) Exclude(ctx context.Context, patterns ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := r.verify(r.seal); err != nil {
		return err
	}
	if err := r.restoreSealed(); err != nil {
		return err
	}
	if err := r.ensureExclude(patterns); err != nil {
		return err
	}
	add := func(b []byte) []byte {
		have := map[string]bool{}
		for _, l := range strings.Split(string(b), "\n") {
			have[strings.TrimSpace(l)] = true
		}
		for _, pat := range patterns {
			if !have[pat] {
				if len(b) > 0 && b[len(b)-1] != '\n' {
					b = append(b, '\n')
				}
				b = append(b, pat+"\n"...)
				have[pat] = true
			}
		}
		return b
	}
	r.start.excludes = add(r.start.excludes)
	if r.p != nil {
		p := filepath.Join(r.p.gitDir(), "info", "exclude")
		b, err := readSmall(p, 16<<20)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		if err := writeEntry(p, &entry{mode: 0o600, data: add(b)}); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}

// ensureExclude adds the missing patterns to info/exclude and updates the
// seal with the new content.
func (r *Repo) ensureExclude(patterns []string) error {
	info := filepath.Join(r.commonDir, "info")
	p := filepath.Join(info, "exclude")
	for _, pat := range patterns {
		if strings.TrimSpace(pat) == "" || strings.ContainsAny(pat, "\n\r\x00") {
			return fmt.Errorf("exclude pattern %q must be one non-empty line", pat)
		}
	}
	b, err := readSmall(p, 16<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	add := ""
	for _, pat := range patterns {
		if !have[pat] {
			add += pat + "\n"
			have[pat] = true
		}
	}
	if add != "" {
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
		b = append(b, add...)
		if err := os.MkdirAll(info, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", info, err)
		}
		if err := writeEntry(p, &entry{mode: 0o644, data: b}); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	if r.seal != nil {
		t := r.seal.trees[info]
		if t == nil {
			t = map[string]*entry{}
			r.seal.trees[info] = t
		}
		e, err := readEntry(p)
		if err != nil {
			return fmt.Errorf("sealing %s: %w", p, err)
		}
		t["exclude"] = e
	}
	return nil
}

// discover finds the work tree root and git directories of dir, as git
// does: the nearest ancestor with a valid .git directory or gitfile.
func discover(dir string) (root, gitDir, commonDir string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", "", "", fmt.Errorf("%s is not a directory: pass -C DIR with the repository's directory", dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	for d := abs; ; d = filepath.Dir(d) {
		if g, c, ok := gitDirOf(d); ok {
			return d, g, c, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", "", "", fmt.Errorf("%s is not a git repository (nor is any parent directory): "+
		"run `git init` there (then commit once), or pass -C DIR with a repository's directory", abs)
}

// gitDirOf reports the git and common directories of the work tree d.
func gitDirOf(d string) (gitDir, commonDir string, ok bool) {
	dot := filepath.Join(d, ".git")
	fi, err := os.Stat(dot)
	if err != nil {
		return "", "", false
	}
	gitDir = dot
	if !fi.IsDir() {
		b, err := os.ReadFile(dot)
		if err != nil {
			return "", "", false
		}
		p, found := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !found {
			return "", "", false
		}
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(d, p)
		}
		gitDir = p
	}
	if real, err := filepath.EvalSymlinks(gitDir); err == nil {
		gitDir = real
	}
	commonDir = gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		p := strings.TrimSpace(string(b))
		if !filepath.IsAbs(p) {
			p = filepath.Join(gitDir, p)
		}
		commonDir = filepath.Clean(p)
		if real, err := filepath.EvalSymlinks(commonDir); err == nil {
			commonDir = real
		}
	}
	if fi, err := os.Stat(filepath.Join(gitDir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return "", "", false
	}
	if fi, err := os.Stat(filepath.Join(commonDir, "objects")); err != nil || !fi.IsDir() {
		return "", "", false
	}
	return gitDir, commonDir, true
}

// statusEntry is one record of `git status --porcelain=v1 -z --no-renames`.
type statusEntry struct {
	x, y byte
	path string
}

func parseStatus(out []byte) []statusEntry {
	var s []statusEntry
	for _, rec := range splitZ(out) {
		if len(rec) < 4 || rec[2] != ' ' {
			continue
		}
		s = append(s, statusEntry{x: rec[0], y: rec[1], path: rec[3:]})
	}
	return s
}

// parseNumstat reads `git diff-tree -z --numstat` output.
func parseNumstat(out []byte) loop.DiffStat {
	var st loop.DiffStat
	recs := splitZ(out)
	for i := 0; i < len(recs); i++ {
		fields := strings.SplitN(recs[i], "\t", 3)
		if len(fields) != 3 {
			continue
		}
		var paths []string
		if fields[2] == "" { // rename or copy: the two paths follow
			if i+2 >= len(recs) {
				break
			}
			paths = []string{recs[i+1], recs[i+2]}
			i += 2
		} else {
			paths = []string{fields[2]}
		}
		st.Files++
		var a, d int
		if fields[0] != "-" {
			fmt.Sscan(fields[0], &a)
			fmt.Sscan(fields[1], &d)
		}
		st.Additions += a
		st.Deletions += d
		st.Paths = append(st.Paths, paths...)
	}
	st.Paths = dedupe(st.Paths)
	return st
}

// excludeSpecs are pathspecs leaving each prefix out.
func excludeSpecs(prefixes []string) []string {
	out := make([]string, len(prefixes))
	for i, p := range prefixes {
		out[i] = ":(top,exclude,literal)" + p
	}
	return out
}

// includeSpecs are pathspecs selecting each prefix.
func includeSpecs(prefixes []string) []string {
	out := make([]string, len(prefixes))
	for i, p := range prefixes {
		out[i] = ":(top,literal)" + p
	}
	return out
}

// normPrefix normalises a path prefix ("./a/b/" -> "a/b").
func normPrefix(p string) (string, error) {
	n := strings.Trim(filepath.ToSlash(strings.TrimSpace(p)), "/")
	n = strings.TrimPrefix(n, "./")
	bad := n == "" || n == "." || strings.ContainsAny(n, "\x00\n")
	for _, c := range strings.Split(n, "/") {
		if c == ".." || c == "" {
			bad = true
		}
	}
	if bad {
		return "", fmt.Errorf("exclude prefix %q is not a relative path inside the repository "+
			"(valid: a directory or file path such as .github/workflows/)", p)
	}
	return n, nil
}

// dedupe sorts and removes duplicates.
func dedupe(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	sort.Strings(s)
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// validRev accepts a revision the harness passes to git: never an option.
func validRev(rev string) error {
	if rev == "" || strings.HasPrefix(rev, "-") || len(rev) > 255 || strings.ContainsAny(rev, " \t\n\r\x00\\") {
		return fmt.Errorf("%q is not a valid revision: pass a commit SHA or a branch name", rev)
	}
	return nil
}

// validBranch checks a branch name before git does (refs/heads/<name>),
// with the same rules the loop's specification checked at preflight.
func validBranch(name string) error { return refname.Branch(name) }

// validRefName applies git-check-ref-format's rules.
func validRefName(ref string) bool { return refname.Check(ref) == nil }

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}
