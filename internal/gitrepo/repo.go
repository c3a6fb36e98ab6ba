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
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/refname"
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
	// default) or a URL.
	Remote string
	// Token, when set, authenticates HTTP(S) pushes and fetches as
	// x-access-token:<token>. It is handed to git through a 0600 file read
	// by an askpass helper: never written to .git/config, never in argv,
	// never in a child's environment.
	Token string
	// AuthorName and AuthorEmail sign the harness's commits.
	AuthorName, AuthorEmail string
	// Exclude lists path prefixes never committed (".aiwg/" always is).
	Exclude []string
	// Now is the clock for commit dates (time.Now by default).
	Now func() time.Time
}

// Info describes what Open found.
type Info struct {
	Shallow bool // a shallow clone (.git/shallow exists)
	// LFS is true when .gitattributes route files through Git LFS. Filters
	// are disabled for safety, so LFS-tracked files are committed as they are
	// in the work tree.
	LFS bool
	// Fallback lists why the git CLI replaces go-git for operations go-git
	// would otherwise do.
	Fallback []string
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
	seal      *snapshot
	goGit     bool // go-git can open this repository
	// overrides neutralise the drivers found for the current operation
	// (drivers: their names) and undo changes made through included
	// configuration files (included).
	overrides [][2]string
	drivers   []string
	included  [][2]string
	// branch is the branch the harness commits on; tips the last commit the
	// harness made or saw on each branch (the agent cannot move them).
	branch string
	tips   map[string]string
	// retryDelay is the first push retry backoff (tests shorten it).
	retryDelay time.Duration
	// staged says the index holds the work tree as the last Stage left it
	// and nothing has touched the index since (see CommitRequest.Staged);
	// stagedTree is that index written as a tree.
	staged     bool
	stagedTree string
}

// Open opens the repository containing dir, seals its trusted control files
// (see Seal) and adds ".aiwg/" to .git/info/exclude.
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
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("git is not installed or not in PATH (%w): install git 2.32 or newer", err)
	}
	root, gitDir, commonDir, err := discover(dir)
	if err != nil {
		return nil, err
	}
	r := &Repo{root: root, gitDir: gitDir, commonDir: commonDir, gitPath: gitPath, opts: opts,
		tips: map[string]string{}, retryDelay: time.Second}
	ctx := context.Background()
	if r.cfg, err = r.readConfig(ctx, false); err != nil {
		return nil, fmt.Errorf("reading the configuration of %s: %w", root, err)
	}
	if err := r.sealLocked(ctx, false); err != nil {
		return nil, err
	}
	r.detect(ctx)
	return r, nil
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

// detect fills Info and decides whether go-git can be used.
func (r *Repo) detect(ctx context.Context) {
	_, err := git.PlainOpenWithOptions(r.root, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	switch {
	case r.cfg.worktreeConfig:
		r.info.Fallback = append(r.info.Fallback, "extensions.worktreeConfig is set (sparse checkout): "+
			"go-git cannot open the repository, the git CLI writes and reads the state ref")
	case r.cfg.partialClone:
		r.info.Fallback = append(r.info.Fallback, "partial clone (promisor remote): "+
			"go-git cannot open the repository, the git CLI writes and reads the state ref")
	case r.cfg.objectFormat != "" && r.cfg.objectFormat != "sha1":
		r.info.Fallback = append(r.info.Fallback, "object format "+r.cfg.objectFormat+
			": go-git v5 reads SHA-1 repositories only, the git CLI writes and reads the state ref")
	case err != nil:
		r.info.Fallback = append(r.info.Fallback, fmt.Sprintf("go-git cannot open the repository (%v): "+
			"the git CLI writes and reads the state ref", err))
	default:
		r.goGit = true
	}
	if fi, err := os.Stat(filepath.Join(r.commonDir, "shallow")); err == nil && fi.Size() > 0 {
		r.info.Shallow = true
	}
	named := map[string]bool{}
	for _, p := range []string{filepath.Join(r.root, ".gitattributes"), filepath.Join(r.commonDir, "info", "attributes")} {
		if attributeDrivers(readAttributesFile(p), named) {
			r.info.LFS = true
		}
	}
	if !r.info.LFS {
		res, err := r.git(ctx, gitCall{args: []string{"ls-files", "-z", "--", ":(glob)**/.gitattributes"}})
		if err == nil {
			for _, p := range splitZ(res.stdout) {
				if attributeDrivers(readAttributesFile(filepath.Join(r.root, filepath.FromSlash(p))), named) {
					r.info.LFS = true
				}
			}
		}
	}
}

// Seal snapshots the trusted .git/config (and worktree config), .git/hooks/,
// .git/info/, the shallow list and object alternates, and records which
// directory .git is. Open seals; call Seal again only while no agent has run
// since the last legitimate change to those files.
func (r *Repo) Seal(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sealLocked(ctx, true)
}

func (r *Repo) sealLocked(ctx context.Context, reread bool) error {
	if err := r.ensureExclude([]string{StateDir}); err != nil {
		return err
	}
	if reread {
		cfg, err := r.readConfig(ctx, false)
		if err != nil {
			return fmt.Errorf("reading the configuration of %s: %w", r.root, err)
		}
		r.cfg = cfg
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

// begin starts an operation: the repository is verified and restored, and
// the drivers to neutralise are collected.
func (r *Repo) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Any operation may change the index; only Stage sets this again.
	r.staged, r.stagedTree = false, ""
	r.overrides = nil
	if err := r.guard(); err != nil {
		return err
	}
	drivers := r.cfg.drivers
	var included [][2]string
	if r.cfg.hasIncludes {
		// Included files may live where the agent can write: neutralise the
		// drivers they define and undo changes to command-running keys.
		cur, err := r.readConfig(ctx, true)
		if err != nil {
			return fmt.Errorf("reading the configuration of %s: %w", r.root, err)
		}
		if included, err = includedOverrides(r.cfg, cur); err != nil {
			return err
		}
		drivers = dedupe(append(append([]string(nil), r.cfg.drivers...), cur.drivers...))
	}
	r.drivers = drivers
	named := map[string]bool{}
	for _, p := range r.attributesPaths(nil) {
		attributeDrivers(readAttributesFile(p), named)
	}
	r.included = included
	r.overrides = append(driverOverrides(drivers, named), included...)
	return nil
}

// addAttributeDrivers neutralises the drivers named by the attribute files
// the index lists.
func (r *Repo) addAttributeDrivers(indexed []string) {
	if len(indexed) == 0 {
		return
	}
	named := map[string]bool{}
	for _, p := range r.attributesPaths(indexed) {
		attributeDrivers(readAttributesFile(p), named)
	}
	r.overrides = append(driverOverrides(r.drivers, named), r.included...)
}

func (r *Repo) hashLen() int {
	if r.cfg.objectFormat == "sha256" {
		return 32
	}
	return 20
}

func (r *Repo) zeroOID() string { return strings.Repeat("0", 2*r.hashLen()) }

// neverPrefixes are the prefixes never committed whatever the request says.
func (r *Repo) neverPrefixes() []string {
	out := []string{strings.TrimSuffix(StateDir, "/")}
	for _, p := range r.opts.Exclude {
		n, _ := normPrefix(p)
		out = append(out, n)
	}
	return dedupe(out)
}

// prepareIndex makes the index trustworthy before git compares it with the
// work tree: flags that hide changes are cleared, a corrupt index is
// dropped (git then rebuilds it from the work tree), and the attribute files
// it lists are scanned for drivers.
func (r *Repo) prepareIndex(ctx context.Context, prefixes []string) (indexScan, error) {
	slashed := make([]string, len(prefixes))
	for i, p := range prefixes {
		slashed[i] = p + "/"
	}
	path := filepath.Join(r.gitDir, "index")
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return indexScan{}, nil
	}
	var s indexScan
	if err == nil && fi.Mode().IsRegular() {
		var b []byte
		if b, err = os.ReadFile(path); err == nil {
			s, err = scanIndex(b, r.hashLen(), slashed)
		}
	} else if err == nil {
		err = fmt.Errorf("%s is a %s", path, kindOf(fi.Mode()))
	}
	if errors.Is(err, errSplitIndex) {
		res, lerr := r.git(ctx, gitCall{args: []string{"ls-files", "-v", "-z"}})
		if lerr != nil {
			return s, lerr
		}
		s, err = parseLsFilesV(res.stdout, slashed), nil
	}
	if err != nil {
		if r.cfg.sparse {
			return s, fmt.Errorf("the index %s is unreadable (%v) in a sparse checkout: "+
				"run `git read-tree --reset HEAD` (or re-clone) and resume", path, err)
		}
		// Without an index git rehashes the work tree: slow, but exact.
		if rerr := os.RemoveAll(path); rerr != nil {
			return s, fmt.Errorf("removing the unreadable index %s: %w", path, rerr)
		}
		return indexScan{}, nil
	}
	if len(s.assumeValid) > 0 {
		if _, err := r.git(ctx, gitCall{args: []string{"update-index", "--no-assume-unchanged", "-z", "--stdin"},
			stdin: strings.NewReader(strings.Join(s.assumeValid, "\x00") + "\x00")}); err != nil {
			return s, err
		}
	}
	if len(s.skipWorktree) > 0 && !r.cfg.sparse {
		if _, err := r.git(ctx, gitCall{args: []string{"update-index", "--no-skip-worktree", "-z", "--stdin"},
			stdin: strings.NewReader(strings.Join(s.skipWorktree, "\x00") + "\x00")}); err != nil {
			return s, err
		}
	}
	r.addAttributeDrivers(s.attributes)
	return s, nil
}

// Head returns the checked-out branch ("" when detached) and commit.
func (r *Repo) Head(ctx context.Context) (branch, sha string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx); err != nil {
		return "", "", err
	}
	res, err := r.git(ctx, gitCall{args: []string{"symbolic-ref", "-q", "HEAD"}, okCodes: []int{1}})
	if err != nil {
		return "", "", err
	}
	branch = strings.TrimPrefix(firstLine(res.stdout), "refs/heads/")
	sha, err = r.resolve(ctx, "HEAD")
	if err != nil {
		return branch, "", err
	}
	if sha == "" {
		return branch, "", fmt.Errorf("%s: %w", r.root, ErrUnbornHead)
	}
	return branch, sha, nil
}

// resolve returns the commit rev names, "" when it does not exist.
func (r *Repo) resolve(ctx context.Context, rev string) (string, error) {
	if err := validRev(rev); err != nil {
		return "", err
	}
	res, err := r.git(ctx, gitCall{args: []string{"rev-parse", "-q", "--verify", "--end-of-options", rev + "^{commit}"},
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

// Dirty lists changed or untracked paths, ignoring ignored files and .aiwg/.
func (r *Repo) Dirty(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	if _, err := r.prepareIndex(ctx, r.neverPrefixes()); err != nil {
		return nil, err
	}
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
		"--ignore-submodules=dirty", "--", "."}
	args = append(args, excludeSpecs([]string{strings.TrimSuffix(StateDir, "/")})...)
	res, err := r.git(ctx, gitCall{args: args})
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, st := range parseStatus(res.stdout) {
		paths = append(paths, st.path)
	}
	return dedupe(paths), nil
}

// StartBranch creates branch name at sha (or reuses it when it exists and
// contains sha) and checks it out, keeping the work tree.
func (r *Repo) StartBranch(ctx context.Context, name, sha string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validBranch(name); err != nil {
		return err
	}
	if err := r.begin(ctx); err != nil {
		return err
	}
	if _, err := r.git(ctx, gitCall{args: []string{"check-ref-format", "refs/heads/" + name}}); err != nil {
		return fmt.Errorf("branch name %q is not valid (see `git check-ref-format`): %w", name, err)
	}
	start, err := r.mustResolve(ctx, sha)
	if err != nil {
		return err
	}
	ref := "refs/heads/" + name
	if err := r.clearStaleRefLock(ctx, ref); err != nil {
		return err
	}
	tip, err := r.resolve(ctx, ref)
	if err != nil {
		return err
	}
	if tip == "" {
		if _, err := r.git(ctx, gitCall{args: []string{"update-ref", "-m", "agent-loop: start branch", ref, start, r.zeroOID()}}); err != nil {
			return err
		}
		tip = start
	} else if tip != start {
		res, err := r.git(ctx, gitCall{args: []string{"merge-base", "--is-ancestor", start, tip}, okCodes: []int{1}})
		if err != nil {
			return err
		}
		if res.code != 0 {
			return fmt.Errorf("branch %q already exists at %.12s and does not contain %.12s: "+
				"pick another branch name (--branch) or delete the branch (`git branch -D %s`)", name, tip, start, name)
		}
	}
	if err := r.setHead(name); err != nil {
		return err
	}
	// Index = branch tip, work tree untouched (git reset --mixed).
	if _, err := r.git(ctx, gitCall{args: []string{"reset", "-q", "--no-recurse-submodules", tip, "--"}}); err != nil {
		return err
	}
	r.branch, r.tips[name] = name, tip
	return nil
}

// Checkout checks out an existing branch.
func (r *Repo) Checkout(ctx context.Context, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validBranch(name); err != nil {
		return err
	}
	if err := r.begin(ctx); err != nil {
		return err
	}
	if err := r.clearStaleRefLock(ctx, "refs/heads/"+name); err != nil {
		return err
	}
	tip, err := r.resolve(ctx, "refs/heads/"+name)
	if err != nil {
		return err
	}
	if tip == "" {
		return fmt.Errorf("branch %q does not exist in %s: create it with StartBranch (or `git branch %s`)", name, r.root, name)
	}
	if _, err := r.git(ctx, gitCall{args: []string{"checkout", "-q", "--no-guess", "--no-recurse-submodules", name, "--"}}); err != nil {
		return fmt.Errorf("checking out %q: %w", name, err)
	}
	r.branch, r.tips[name] = name, tip
	return nil
}

// setHead points HEAD at refs/heads/name without touching index or work tree.
func (r *Repo) setHead(name string) error {
	p := filepath.Join(r.gitDir, "HEAD")
	want := []byte("ref: refs/heads/" + name + "\n")
	if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, want) {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			return nil
		}
	}
	if err := restoreFile(p, &entry{mode: 0o644, data: want}); err != nil {
		return fmt.Errorf("pointing HEAD at %s: %w", name, err)
	}
	return nil
}

// ownBranch returns the branch the harness commits on and its tip, putting
// HEAD and the branch back where the harness left them: an agent that
// switched branches, committed or reset gets its work folded into the
// harness's next commit instead.
func (r *Repo) ownBranch(ctx context.Context) (branch, tip string, err error) {
	if r.branch == "" {
		b, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
		if err != nil {
			return "", "", fmt.Errorf("reading HEAD: %w", err)
		}
		ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: refs/heads/")
		if !ok || validBranch(ref) != nil {
			return "", "", fmt.Errorf("HEAD of %s is detached: the loop commits on a branch; start one with "+
				"StartBranch (agent-loop does this with --branch)", r.root)
		}
		r.branch = ref
	}
	branch = r.branch
	if err := r.setHead(branch); err != nil {
		return "", "", err
	}
	ref := "refs/heads/" + branch
	tip, known := r.tips[branch]
	if known && tip != "" {
		if v, ok := r.readRef(ref); ok && v == tip {
			return branch, tip, nil
		}
	}
	actual, err := r.resolve(ctx, ref)
	if err != nil {
		return "", "", err
	}
	if !known {
		r.tips[branch] = actual
		return branch, actual, nil
	}
	if actual != tip {
		args := []string{"update-ref", "-m", "agent-loop: restore branch", ref, tip}
		if tip == "" {
			args = []string{"update-ref", "-d", ref}
		}
		if _, err := r.git(ctx, gitCall{args: args}); err != nil {
			return "", "", fmt.Errorf("restoring %s to %.12s: %w", ref, tip, err)
		}
	}
	return branch, tip, nil
}

// Commit stages every change except .aiwg/ and the excluded prefixes and
// commits it on the current branch; with nothing to commit it still makes an
// empty commit, so every iteration has exactly one commit. With req.Staged,
// right after Stage, the index Stage wrote is committed as it is.
func (r *Repo) Commit(ctx context.Context, req loop.CommitRequest) (loop.CommitResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	staged := req.Staged && r.staged // begin clears r.staged
	stagedTree := r.stagedTree
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
	branch, tip, err := r.ownBranch(ctx)
	if err != nil {
		return loop.CommitResult{}, err
	}
	state := strings.TrimSuffix(StateDir, "/")
	all := dedupe(append([]string{state}, user...))
	scan, err := r.prepareIndex(ctx, all)
	if err != nil {
		return loop.CommitResult{}, err
	}
	// Stage everything but the excluded prefixes (a .gitignore of the agent
	// cannot un-ignore .aiwg/ past a pathspec), unless Stage just did and
	// no flag that hides a change has appeared since.
	if !staged || len(scan.assumeValid) > 0 || len(scan.skipWorktree) > 0 {
		if err := r.addAll(ctx, all); err != nil {
			return loop.CommitResult{}, fmt.Errorf("staging the changes in %s: %w", r.root, err)
		}
	}
	var excluded []string
	if len(user) > 0 || len(scan.excluded) > 0 {
		if excluded, err = r.unstage(ctx, tip, all, user); err != nil {
			return loop.CommitResult{}, err
		}
	}
	// The index is the new tree: write it and measure it against the
	// parent at the same time (two read-only views of one index).
	if err := r.guard(); err != nil {
		return loop.CommitResult{}, err
	}
	if staged && stagedTree != "" && tip != "" && len(excluded) == 0 && len(user) == 0 && len(scan.excluded) == 0 &&
		len(scan.assumeValid) == 0 && len(scan.skipWorktree) == 0 {
		// The index is still the tree Stage wrote: the commit's size is a
		// diff of two trees, which reads only the subtrees that changed.
		stat, err := r.exec(ctx, gitCall{args: []string{"diff", "-z", "--numstat", "--find-renames", "--no-ext-diff", "--no-textconv",
			"--ignore-submodules=none", "--end-of-options", tip, stagedTree, "--"}})
		if err != nil {
			return loop.CommitResult{}, err
		}
		sha, err := r.commitTree(ctx, branch, stagedTree, tip, msg)
		if err != nil {
			return loop.CommitResult{}, err
		}
		return loop.CommitResult{SHA: sha, Stat: parseNumstat(stat.stdout)}, nil
	}
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
		statRes, statErr = r.exec(ctx, gitCall{args: append(numstat, "--")})
	}()
	res, err := r.exec(ctx, gitCall{args: []string{"write-tree"}})
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
	return loop.CommitResult{SHA: sha, Stat: parseNumstat(statRes.stdout), Excluded: excluded}, nil
}

// addAll runs `git add -A` on the work tree without the given prefixes.
// git exits 1 when an exclude pathspec names an ignored directory (.aiwg/
// always is) after staging everything else; that report alone is not a
// failure.
func (r *Repo) addAll(ctx context.Context, excluded []string) error {
	args := append([]string{"add", "-A", "--", "."}, excludeSpecs(excluded)...)
	_, err := r.git(ctx, gitCall{args: args, config: [][2]string{{"advice.addIgnoredFile", "false"}}})
	var ge *GitError
	if errors.As(err, &ge) && ge.ExitCode == 1 && onlyIgnoredReport(ge.Stderr) {
		return nil
	}
	return err
}

// onlyIgnoredReport reports whether git add's stderr is nothing but the
// list of ignored paths matched by a pathspec.
func onlyIgnoredReport(stderr string) bool {
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) == 0 || lines[0] != "The following paths are ignored by one of your .gitignore files:" {
		return false
	}
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "error:") || strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "warning:") {
			return false
		}
	}
	return true
}

// unstage keeps the excluded prefixes at the tip's content in the index and
// lists the changed paths under the caller's prefixes (user).
func (r *Repo) unstage(ctx context.Context, tip string, all, user []string) ([]string, error) {
	args := append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
		"--ignore-submodules=dirty", "--"}, includeSpecs(all)...)
	res, err := r.git(ctx, gitCall{args: args})
	if err != nil {
		return nil, err
	}
	staged := false
	var excluded []string
	for _, st := range parseStatus(res.stdout) {
		if st.x != ' ' && st.x != '?' && st.x != '!' {
			staged = true
		}
		for _, p := range user {
			if st.path == p || strings.HasPrefix(st.path, p+"/") {
				excluded = append(excluded, st.path)
				break
			}
		}
	}
	if staged {
		args := append([]string{"reset", "-q", "--no-recurse-submodules", tip, "--"}, includeSpecs(all)...)
		if tip == "" {
			args = append([]string{"rm", "-r", "-q", "--cached", "--ignore-unmatch", "--"}, includeSpecs(all)...)
		}
		if _, err := r.git(ctx, gitCall{args: args}); err != nil {
			return nil, fmt.Errorf("keeping %s out of the commit: %w", strings.Join(all, ", "), err)
		}
	}
	return dedupe(excluded), nil
}

// commitTree writes a commit of tree on top of parent and moves the branch
// to it (only if the branch is still at parent).
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
		res, err := r.git(ctx, gitCall{args: args, stdin: strings.NewReader(msg), env: r.authorEnv()})
		if err != nil {
			return "", fmt.Errorf("writing the commit: %w", err)
		}
		sha = firstLine(res.stdout)
	}
	if err := r.moveRef(ctx, "refs/heads/"+branch, sha, parent, "agent-loop: commit"); err != nil {
		return "", err
	}
	r.tips[branch] = sha
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
	res, err := r.git(ctx, gitCall{args: append(args, "--")})
	if err != nil {
		return loop.DiffStat{}, err
	}
	return parseNumstat(res.stdout), nil
}

// Diff returns the unified diff from commit from to the work tree, untracked
// (not ignored) files included as additions, renames detected, binary files
// summarised, .aiwg/ left out; the same inputs give the same text. It stages
// the work tree in the index, as Stage does.
func (r *Repo) Diff(ctx context.Context, from string) (string, error) {
	d, err := r.Stage(ctx, from)
	if err != nil {
		return "", err
	}
	return d[0], nil
}

// Stage records the work tree in the index (`git add -A`, .aiwg/ left out)
// and returns the diff from each commit in froms to it, in order (staging
// is what makes untracked files and renames visible). The index is written
// as a tree once and each diff compares two trees, side by side. A Commit
// with Staged set then commits that tree without walking the work tree or
// the index again, so one iteration stages once and commits what was
// judged.
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
	state := []string{strings.TrimSuffix(StateDir, "/")}
	if _, err := r.prepareIndex(ctx, state); err != nil {
		return nil, err
	}
	if err := r.addAll(ctx, state); err != nil {
		return nil, fmt.Errorf("staging the work tree of %s: %w", r.root, err)
	}
	// One check of the repository for the diffs, which then run side by
	// side without it (guard restores files; it must not run twice at once).
	if err := r.guard(); err != nil {
		return nil, err
	}
	// The index written as a tree once (the commit reuses it): each diff
	// is then of two trees and reads only the subtrees that changed, where
	// a diff against the index would compare every entry.
	tree, err := r.exec(ctx, gitCall{args: []string{"write-tree"}})
	if err != nil {
		return nil, fmt.Errorf("writing the staged tree of %s: %w", r.root, err)
	}
	r.staged, r.stagedTree = true, firstLine(tree.stdout)
	out := make([]string, len(froms))
	errs := make([]error, len(froms))
	var wg sync.WaitGroup
	for i, from := range froms {
		if i > 0 && from == froms[i-1] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = r.diffTrees(ctx, from, r.stagedTree, state)
		}()
	}
	wg.Wait()
	for i, from := range froms {
		if i > 0 && from == froms[i-1] {
			out[i], errs[i] = out[i-1], errs[i-1]
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
	}
	return out, nil
}

// diffTrees is the unified diff from commit from to tree (the staged
// index, written). It runs git without guard: the caller has just checked
// the repository.
func (r *Repo) diffTrees(ctx context.Context, from, tree string, state []string) (string, error) {
	args := append([]string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames",
		"--diff-algorithm=myers", "--indent-heuristic", "--src-prefix=a/", "--dst-prefix=b/", "--no-relative",
		"-U3", "--inter-hunk-context=0", "--ignore-submodules=dirty", "-O/dev/null",
		"--end-of-options", from, tree, "--", "."}, excludeSpecs(state)...)
	res, err := r.exec(ctx, gitCall{args: args})
	if err != nil {
		return "", fmt.Errorf("diffing %s against the work tree: %w", from, err)
	}
	return string(res.stdout), nil
}

// Unstage makes the index equal to HEAD again, keeping the work tree: the
// changes Stage recorded become unstaged (new files untracked), as they were
// before the loop looked at them.
func (r *Repo) Unstage(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.begin(ctx); err != nil {
		return err
	}
	if _, err := r.git(ctx, gitCall{args: []string{"reset", "-q", "--no-recurse-submodules"}}); err != nil {
		return fmt.Errorf("unstaging the changes in %s: %w", r.root, err)
	}
	return nil
}

// ResetTo makes the work tree and index equal to commit sha's tree without
// moving the branch: tracked files are reset and untracked (not ignored)
// files removed; .aiwg/ and ignored files stay.
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
	if _, err := r.git(ctx, gitCall{args: []string{"read-tree", "-u", "--reset", commit}}); err != nil {
		return fmt.Errorf("resetting the work tree to %.12s: %w", commit, err)
	}
	args := append([]string{"clean", "-f", "-d", "-q", "--", "."}, excludeSpecs([]string{strings.TrimSuffix(StateDir, "/")})...)
	if _, err := r.git(ctx, gitCall{args: args}); err != nil {
		return fmt.Errorf("removing untracked files: %w", err)
	}
	return nil
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
	branch, tip, err := r.ownBranch(ctx)
	if err != nil {
		return loop.CommitResult{}, err
	}
	res, err := r.git(ctx, gitCall{args: []string{"rev-parse", "--verify", "--end-of-options", src + "^{tree}"}})
	if err != nil {
		return loop.CommitResult{}, err
	}
	newSHA, err := r.commitTree(ctx, branch, firstLine(res.stdout), tip, msg)
	if err != nil {
		return loop.CommitResult{}, err
	}
	if _, err := r.git(ctx, gitCall{args: []string{"read-tree", "-u", "--reset", newSHA}}); err != nil {
		return loop.CommitResult{}, fmt.Errorf("updating the work tree to %.12s: %w", newSHA, err)
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
// clone that has base, when the branch could not be pushed.
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
	res, err := r.git(ctx, gitCall{args: []string{"bundle", "create", "-q", "-", "refs/heads/" + branch, "^" + base}})
	if err != nil {
		return nil, fmt.Errorf("bundling %s: %w", branch, err)
	}
	return res.stdout, nil
}

// History lists the commits reachable from branch and not from base, oldest
// first, with their trailers parsed.
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
	args := []string{"log", "--no-color", "--no-show-signature", "--reverse", "-z", "--format=%H%n%ct%n%B",
		"--end-of-options", branch}
	if base != "" {
		args = append(args, "^"+base)
	}
	res, err := r.git(ctx, gitCall{args: append(args, "--"), config: [][2]string{{"log.showSignature", "false"}}})
	if err != nil {
		return nil, fmt.Errorf("listing the commits of %s: %w", branch, err)
	}
	var out []loop.Commit
	for _, rec := range splitZ(res.stdout) {
		sha, rest, _ := strings.Cut(rec, "\n")
		ct, msg, _ := strings.Cut(rest, "\n")
		if sha == "" {
			continue
		}
		var sec int64
		fmt.Sscan(ct, &sec)
		out = append(out, loop.Commit{SHA: sha, Subject: subjectOf(msg), Trailers: parseTrailers(msg),
			Time: time.Unix(sec, 0).UTC()})
	}
	return out, nil
}

// Exclude appends patterns to .git/info/exclude, each once, and seals the
// result.
func (r *Repo) Exclude(ctx context.Context, patterns ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := r.guard(); err != nil {
		return err
	}
	return r.ensureExclude(patterns)
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
	b, err := os.ReadFile(p)
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
