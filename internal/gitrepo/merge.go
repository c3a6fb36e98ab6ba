package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/protected"
)

// This file is the harness's side of two things the engine does around an
// iteration's commit: undoing the agent's changes to protected paths
// (loop.Protector), and bringing the new commits of the branch the result
// is for into the loop branch before it is published (loop.Merger). Every
// file comes from the harness's own objects, every path reaches git as a
// literal pathspec, and a merge runs with git's own merge-tree (no work
// tree of the user's, no hook, no merge driver of the repository's).

var (
	_ loop.Protector = (*Repo)(nil)
	_ loop.Merger    = (*Repo)(nil)
)

// pendingMerge is a merge StartMerge left in the work tree.
type pendingMerge struct {
	target    string // the branch
	head      string // its commit, the merge commit's second parent
	onto      string // the loop branch's tip when the merge started
	tree      string // the merged tree, conflicted paths with their markers
	conflicts []string
}

// StagedChanges lists the changes of the index from commit or tree from
// (git diff --cached --name-status, renames detected), .aiwg/ left out:
// what Stage just recorded of the agent's work.
func (r *Repo) StagedChanges(ctx context.Context, from string) ([]protected.Change, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validRev(from); err != nil {
		return nil, err
	}
	args := append([]string{"diff", "--cached", "-z", "--name-status", "--find-renames", "--no-ext-diff", "--no-textconv",
		"--ignore-submodules=none", "--end-of-options", from, "--", "."}, excludeSpecs([]string{strings.TrimSuffix(StateDir, "/")})...)
	res, err := r.git(ctx, gitCall{args: args})
	if err != nil {
		return nil, fmt.Errorf("listing the changes from %.12s: %w", from, err)
	}
	return parseNameStatus(res.stdout), nil
}

// parseNameStatus reads `git diff -z --name-status`: a status (R and C
// with a score, followed by two paths), then the path.
func parseNameStatus(out []byte) []protected.Change {
	f := splitZ(out)
	var cs []protected.Change
	for i := 0; i < len(f); i++ {
		st := f[i]
		if st == "" {
			continue
		}
		c := protected.Change{Status: st[0]}
		switch c.Status {
		case 'R', 'C':
			if i+2 >= len(f) {
				return cs
			}
			c.OldPath, c.Path = f[i+1], f[i+2]
			i += 2
		default:
			if i+1 >= len(f) {
				return cs
			}
			c.Path = f[i+1]
			i++
		}
		cs = append(cs, c)
	}
	return cs
}

// RestorePaths puts the paths in restore back as they are in from (a
// commit or a tree of the harness's) and removes the paths in remove, in
// the work tree and the index. Paths are literal: no glob, no magic.
func (r *Repo) RestorePaths(ctx context.Context, from string, restore, remove []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validRev(from); err != nil {
		return err
	}
	if err := r.begin(ctx); err != nil {
		return err
	}
	// from is the loop's head or the merged tree: both are in the
	// harness's store already (Stage imported the head, StartMerge wrote
	// the tree).
	literal := []string{"GIT_LITERAL_PATHSPECS=1"}
	if len(remove) > 0 {
		args := []string{"rm", "-f", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"}
		if _, err := r.git(ctx, gitCall{args: args, stdin: nulList(remove), env: literal}); err != nil {
			return fmt.Errorf("removing %s: %w", strings.Join(remove, ", "), err)
		}
	}
	if len(restore) > 0 {
		args := []string{"checkout", "--no-overlay", "--pathspec-from-file=-", "--pathspec-file-nul", from}
		if _, err := r.git(ctx, gitCall{args: args, stdin: nulList(restore), env: literal}); err != nil {
			return fmt.Errorf("restoring %s from %.12s: %w", strings.Join(restore, ", "), from, err)
		}
	}
	return nil
}

func nulList(paths []string) io.Reader {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return &b
}

// maxMergeCommitsListed bounds the commits a MergeResult lists.
const maxMergeCommitsListed = 50

// StartMerge fetches branch target and merges its new commits into the
// work tree and the index with git merge-tree, without committing: a
// conflicted path holds git's conflict markers. The merge stays pending
// until CommitMerge or AbortMerge. A target the loop branch already has is
// UpToDate, and nothing changes.
func (r *Repo) StartMerge(ctx context.Context, target string) (loop.MergeResult, error) {
	head, err := r.FetchBranch(ctx, target)
	if err != nil {
		return loop.MergeResult{}, fmt.Errorf("fetching %s: %w", target, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res := loop.MergeResult{Target: target, Head: head}
	if err := r.begin(ctx); err != nil {
		return res, err
	}
	_, tip, err := r.ownBranch()
	if err != nil {
		return res, err
	}
	if err := r.ensureTrusted(ctx, tip); err != nil {
		return res, err
	}
	if err := r.ensureTrusted(ctx, head); err != nil {
		return res, err
	}
	anc, err := r.git(ctx, gitCall{bare: true, args: []string{"merge-base", "--is-ancestor", head, tip}, okCodes: []int{1}})
	if err != nil {
		return res, fmt.Errorf("comparing %s with the loop branch: %w", target, err)
	}
	if anc.code == 0 {
		res.UpToDate = true
		return res, nil
	}
	log, err := r.git(ctx, gitCall{bare: true, args: []string{"log", "-z", "--reverse", "--no-decorate", "--format=%H%x1f%s", "--end-of-options", tip + ".." + head}})
	if err != nil {
		return res, fmt.Errorf("listing the new commits of %s: %w", target, err)
	}
	for _, e := range splitZ(log.stdout) {
		sha, subject, _ := strings.Cut(strings.TrimLeft(e, "\n"), "\x1f")
		if len(res.Commits) < maxMergeCommitsListed {
			res.Commits = append(res.Commits, loop.Commit{SHA: sha, Subject: subject})
		}
	}
	mt, err := r.git(ctx, gitCall{bare: true, args: []string{"merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", tip, head}, okCodes: []int{1}})
	if err != nil {
		return res, fmt.Errorf("merging %s into the loop branch: %w", target, err)
	}
	fields := splitZ(mt.stdout)
	if len(fields) == 0 || !isHex(fields[0]) {
		return res, fmt.Errorf("merging %s into the loop branch: git merge-tree gave no tree", target)
	}
	res.Tree = fields[0]
	if mt.code == 1 {
		res.Conflicts = dedupe(fields[1:])
	}
	if _, err := r.git(ctx, gitCall{args: []string{"read-tree", "-u", "--reset", res.Tree}}); err != nil {
		return res, fmt.Errorf("writing the merge of %s into the work tree: %w", target, err)
	}
	r.pending = &pendingMerge{target: target, head: head, onto: tip, tree: res.Tree, conflicts: res.Conflicts}
	return res, nil
}

// MergeMarkers lists the pending merge's conflicted paths whose file in
// the work tree still holds a conflict marker line. A symbolic link or
// special file is read as nothing.
func (r *Repo) MergeMarkers(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		return nil, nil
	}
	var left []string
	for _, p := range r.pending.conflicts {
		has, err := hasConflictMarker(filepath.Join(r.root, filepath.FromSlash(p)))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		if has {
			left = append(left, p)
		}
	}
	return left, nil
}

// maxMarkerScan bounds what is read of one file for conflict markers.
const maxMarkerScan = 64 << 20

func hasConflictMarker(p string) (bool, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return false, nil
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxMarkerScan))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		l := sc.Bytes()
		if bytes.HasPrefix(l, []byte("<<<<<<< ")) || bytes.HasPrefix(l, []byte(">>>>>>> ")) || bytes.Equal(bytes.TrimRight(l, "\r"), []byte("=======")) {
			return true, nil
		}
	}
	return false, sc.Err()
}

// AbortMerge forgets the pending merge and makes the work tree and the
// index the loop branch's tip again.
func (r *Repo) AbortMerge(ctx context.Context) error {
	r.mu.Lock()
	p := r.pending
	r.pending = nil
	r.mu.Unlock()
	if p == nil {
		return nil
	}
	return r.ResetTo(ctx, p.onto)
}

// CommitMerge commits the work tree as Commit does, as the merge commit of
// the pending merge: its parents are the loop branch's tip and the
// target's head. Without a pending merge it is Commit.
func (r *Repo) CommitMerge(ctx context.Context, req loop.CommitRequest) (loop.CommitResult, error) {
	r.mu.Lock()
	p := r.pending
	r.mu.Unlock()
	cr, err := r.Commit(ctx, req)
	if err != nil || p == nil {
		return cr, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = nil
	branch, tip, err := r.ownBranch()
	if err != nil {
		return cr, err
	}
	if tip != cr.SHA {
		return cr, fmt.Errorf("making the merge commit: the branch %s is at %.12s, not at the commit just made", branch, tip)
	}
	tree, err := r.git(ctx, gitCall{bare: true, args: []string{"rev-parse", "--verify", "--end-of-options", cr.SHA + "^{tree}"}})
	if err != nil {
		return cr, err
	}
	msg, err := buildMessage(req)
	if err != nil {
		return cr, err
	}
	args := []string{"commit-tree", "--no-gpg-sign", firstLine(tree.stdout), "-p", p.onto, "-p", p.head, "-F", "-"}
	res, err := r.git(ctx, gitCall{bare: true, args: args, stdin: strings.NewReader(msg), env: r.authorEnv()})
	if err != nil {
		return cr, fmt.Errorf("writing the merge commit: %w", err)
	}
	sha := firstLine(res.stdout)
	if err := r.setBranchTip(ctx, branch, sha, cr.SHA); err != nil {
		return cr, err
	}
	cr.SHA = sha
	return cr, nil
}

// setBranchTip moves the harness's branch from old to sha, a commit the
// harness wrote in its own store.
func (r *Repo) setBranchTip(ctx context.Context, branch, sha, old string) error {
	if err := r.mirrorBranch(ctx, "refs/heads/"+branch, sha, old, "agent-loop: merge"); err != nil {
		return err
	}
	return r.p.markTrusted(sha)
}
