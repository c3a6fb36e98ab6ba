package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Staging is bounded by construction. `git add -A` hashes whatever the
// agent left in the work tree: a sparse 1 TiB file keeps it busy for
// hours. The harness lists what changed instead (`git diff-files` for
// tracked paths, whose stat data differ from the trusted index; `git
// ls-files -o` for new ones; neither reads a file's content, where `git
// status` would read a tracked file whose index entry has no stat data or
// is racily clean, both marked by git with size 0), looks at each path
// itself, and hands git (`git update-index`) only the paths it can
// stage: a file above Options.MaxFileSize, a file the harness cannot read,
// a FIFO, socket or device, and an embedded repository without a commit
// are left out of the index (a tracked one keeps its previous content) and
// reported as Notices. Every step runs under the caller's context: a
// cancelled context kills git's process group.

// DefaultMaxFileSize is the size above which a changed file is left out of
// the commit (Options.MaxFileSize).
const DefaultMaxFileSize = 100 << 20

// Notice kinds.
const (
	// NoticeTooLarge: a file above Options.MaxFileSize was left out of
	// the index without being read.
	NoticeTooLarge = "file-too-large"
	// NoticeUnreadable: a file the harness cannot read was left out.
	NoticeUnreadable = "file-unreadable"
	// NoticeSpecialFile: a FIFO, socket or device was left out.
	NoticeSpecialFile = "special-file"
	// NoticeEmbeddedRepo: a nested repository without a commit was left out.
	NoticeEmbeddedRepo = "embedded-repository"
	// NoticeBranchRestored: a branch the harness recorded was moved,
	// deleted or replaced in the repository; it was put back.
	NoticeBranchRestored = "branch-restored"
	// NoticeHeadRestored: .git/HEAD no longer named the harness's branch;
	// it was put back.
	NoticeHeadRestored = "head-restored"
	// NoticeBranchRerecorded: a resumed loop found the user's branch
	// elsewhere than recorded and records it where it is.
	NoticeBranchRerecorded = "branch-rerecorded"
)

// Notice is something the harness did about what the agent left behind:
// a path kept out of the index, a branch put back. Callers log them (the
// text is agent-controlled: escape it for its medium).
type Notice struct {
	Kind   string
	Path   string // the work-tree path, or the ref
	Detail string // one sentence for the log
}

// Notices returns what happened since the last call, and forgets it.
func (r *Repo) Notices() []Notice {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.notices
	r.notices = nil
	return n
}

func (r *Repo) notice(n Notice) { r.notices = append(r.notices, n) }

// maxFileSize is the effective limit (0: none).
func (r *Repo) maxFileSize() int64 {
	switch {
	case r.opts.MaxFileSize < 0:
		return 0
	case r.opts.MaxFileSize == 0:
		return DefaultMaxFileSize
	}
	return r.opts.MaxFileSize
}

// stageWorkTree records the work tree in the trusted index, every path
// but those under never (and those the checks leave out, returned).
func (r *Repo) stageWorkTree(ctx context.Context, never []string) ([]Notice, error) {
	if err := r.ensureIndex(ctx); err != nil {
		return nil, err
	}
	listed, stderr, err := r.listChanged(ctx, never)
	if err != nil {
		return nil, err
	}
	var (
		paths    []string
		nested   []string
		skipped  []Notice
		seen     = map[string]bool{}
		maxBytes = r.maxFileSize()
	)
	for _, p := range listed {
		if p == "" || seen[p] || underAny(p, never) {
			continue
		}
		seen[p] = true
		if strings.HasSuffix(p, "/") {
			nested = append(nested, strings.TrimSuffix(p, "/"))
			continue
		}
		if n, ok := r.checkPath(p, maxBytes); !ok {
			skipped = append(skipped, n)
			continue
		}
		paths = append(paths, p)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// git's warnings about directories it could not read name more
	// unreadable paths.
	for _, line := range strings.Split(stderr, "\n") {
		if p, ok := unreadableDir(line); ok && !underAny(p, never) {
			skipped = append(skipped, Notice{Kind: NoticeUnreadable, Path: p,
				Detail: fmt.Sprintf("%s: the harness cannot read this directory; its files were left out of the commit", p)})
		}
	}
	if len(paths) > 0 {
		if _, err := r.git(ctx, gitCall{args: []string{"update-index", "--add", "--remove", "--replace", "-z", "--stdin"},
			stdin: strings.NewReader(strings.Join(paths, "\x00") + "\x00")}); err != nil {
			return nil, fmt.Errorf("staging %d changed paths of %s: %w", len(paths), r.root, err)
		}
	}
	for _, p := range nested {
		if _, err := r.git(ctx, gitCall{args: []string{"update-index", "--add", "--", p}}); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			skipped = append(skipped, Notice{Kind: NoticeEmbeddedRepo, Path: p,
				Detail: fmt.Sprintf("%s: a nested git repository without a checked-out commit was left out of the commit", p)})
		}
	}
	r.fifoMu.Lock()
	skipped = append(skipped, r.fifos...)
	r.fifos = nil
	r.fifoMu.Unlock()
	return skipped, nil
}

// listChanged lists, without reading any file's content, the paths whose
// work-tree state differs from the trusted index (stat data) and the new
// paths (not ignored). stderr holds git's warnings.
func (r *Repo) listChanged(ctx context.Context, never []string) (paths []string, stderr string, err error) {
	pathspec := append([]string{"--", "."}, excludeSpecs(never)...)
	if r.weak.status {
		// The weakened harness of the tests: git status, which reads a
		// tracked file whose entry has no stat data.
		res, err := r.git(ctx, gitCall{args: append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=all",
			"--no-renames", "--ignore-submodules=dirty"}, pathspec...)})
		if err != nil {
			return nil, "", err
		}
		for _, st := range parseStatus(res.stdout) {
			paths = append(paths, st.path)
		}
		return paths, res.stderr, nil
	}
	calls := []gitCall{
		{args: append([]string{"diff-files", "-z", "--name-only", "--no-renames", "--ignore-submodules=dirty"}, pathspec...)},
		{args: append([]string{"ls-files", "-z", "-o", "--exclude-standard"}, pathspec...)},
	}
	res := make([]result, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = r.git(ctx, c)
		}()
	}
	wg.Wait()
	for i := range calls {
		if errs[i] != nil {
			return nil, "", fmt.Errorf("listing the changes in %s: %w", r.root, errs[i])
		}
		paths = append(paths, splitZ(res[i].stdout)...)
		stderr += res[i].stderr
	}
	return paths, stderr, nil
}

// checkPath looks at one changed path before git may read it: ok when git
// can stage it (a regular file within the limit that the harness can open,
// a symlink, a directory, or a path that is gone).
func (r *Repo) checkPath(p string, maxBytes int64) (Notice, bool) {
	full := filepath.Join(r.root, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return Notice{}, true // deleted: git removes it from the index
	default:
		return Notice{Kind: NoticeUnreadable, Path: p,
			Detail: fmt.Sprintf("%s: the harness cannot look at this file (%v); it was left out of the commit", p, errors.Unwrap(err))}, false
	}
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0 || m.IsDir():
		return Notice{}, true
	case !m.IsRegular():
		return Notice{Kind: NoticeSpecialFile, Path: p,
			Detail: fmt.Sprintf("%s: a %s, not a file; it was left out of the commit", p, kindOf(m))}, false
	case maxBytes > 0 && fi.Size() > maxBytes:
		return Notice{Kind: NoticeTooLarge, Path: p,
			Detail: fmt.Sprintf("%s: %s, more than the %s limit; it was left out of the commit without being read",
				p, humanBytes(fi.Size()), humanBytes(maxBytes))}, false
	}
	f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return Notice{Kind: NoticeUnreadable, Path: p,
			Detail: fmt.Sprintf("%s: the harness cannot read this file (%v); it was left out of the commit", p, errors.Unwrap(err))}, false
	}
	f.Close()
	return Notice{}, true
}

// unreadableDir reads git's "warning: could not open directory 'x/':
// Permission denied".
func unreadableDir(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "warning: could not open directory '")
	if !ok {
		return "", false
	}
	i := strings.Index(rest, "': ")
	if i <= 0 {
		return "", false
	}
	return strings.TrimSuffix(rest[:i], "/"), true
}

// underAny reports whether p is one of prefixes or below one.
func underAny(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// humanBytes formats a size for a message.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// skippedPaths lists the paths of notices about files.
func skippedPaths(ns []Notice) []string {
	var out []string
	for _, n := range ns {
		switch n.Kind {
		case NoticeTooLarge, NoticeUnreadable, NoticeSpecialFile, NoticeEmbeddedRepo:
			out = append(out, n.Path)
		}
	}
	return out
}
