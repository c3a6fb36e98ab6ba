package heldout

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/aiwg/agent-loop/internal/spec"
)

// Entry is one path of a git tree.
type Entry struct {
	Path string
	// Mode is git's: "100644", "100755", "120000" (symlink), "160000"
	// (submodule).
	Mode string
	OID  string
}

// Objects reads trees and blobs from an object store the harness trusts
// (never one the agent can write). The integration passes the trusted
// store of gitrepo; Git reads one with the git CLI.
type Objects interface {
	// Tree lists every path of a tree or commit, recursively.
	Tree(ctx context.Context, treeish string) ([]Entry, error)
	// Blobs calls fn with the contents of each blob, in any order.
	Blobs(ctx context.Context, oids []string, fn func(oid string, data []byte) error) error
}

// Git reads objects with the git CLI, with git's configuration, hooks and
// filters out of the way (ls-tree and cat-file run none of them anyway).
type Git struct {
	// Dir is where git runs. Env is added to a hardened environment: set
	// GIT_DIR, GIT_OBJECT_DIRECTORY (and GIT_ALTERNATE_OBJECT_DIRECTORIES)
	// to read from the trusted store.
	Dir string
	Env []string
	// Bin is the git binary (default "git").
	Bin string
}

var _ Objects = (*Git)(nil)

func (g *Git) cmd(ctx context.Context, args ...string) *exec.Cmd {
	bin := g.Bin
	if bin == "" {
		bin = "git"
	}
	full := append([]string{"-c", "core.hooksPath=" + os.DevNull, "-c", "core.fsmonitor=false"}, args...)
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Dir = g.Dir
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	cmd.Env = append(env, g.Env...)
	return cmd
}

// Tree runs `git ls-tree -r -z --full-tree`.
func (g *Git) Tree(ctx context.Context, treeish string) ([]Entry, error) {
	if strings.HasPrefix(treeish, "-") {
		return nil, fmt.Errorf("listing tree %q: not a tree name", treeish)
	}
	cmd := g.cmd(ctx, "ls-tree", "-r", "-z", "--full-tree", treeish)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing tree %s: %w: %s", treeish, err, strings.TrimSpace(stderr.String()))
	}
	var entries []Entry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("listing tree %s: unreadable entry %q", treeish, rec)
		}
		entries = append(entries, Entry{Path: string(p), Mode: f[0], OID: f[2]})
	}
	return entries, nil
}

// Blobs runs one `git cat-file --batch` for all the blobs.
func (g *Git) Blobs(ctx context.Context, oids []string, fn func(string, []byte) error) error {
	if len(oids) == 0 {
		return nil
	}
	cmd := g.cmd(ctx, "cat-file", "--batch")
	var in bytes.Buffer
	for _, o := range oids {
		in.WriteString(o + "\n")
	}
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("reading blobs: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("reading blobs: %w", err)
	}
	r := bufio.NewReaderSize(stdout, 1<<16)
	var cbErr error
	for range oids {
		header, err := r.ReadString('\n')
		if err != nil {
			cbErr = fmt.Errorf("reading blobs: %w", err)
			break
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			cbErr = fmt.Errorf("reading blobs: object %s: %s", f[0], strings.TrimSpace(header))
			break
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			cbErr = fmt.Errorf("reading blobs: size in %q: %w", header, err)
			break
		}
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil {
			cbErr = fmt.Errorf("reading blob %s: %w", f[0], err)
			break
		}
		if err := fn(f[0], data[:n]); err != nil {
			cbErr = err
			break
		}
	}
	_, _ = io.Copy(io.Discard, r)
	if err := cmd.Wait(); err != nil && cbErr == nil {
		cbErr = fmt.Errorf("reading blobs: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return cbErr
}

// Change is one path where the held-out tree differs from the iteration's.
type Change struct {
	Path  string
	Class Class
	// Action: "restored" (the iteration changed it), "put back" (the
	// iteration deleted it), "removed" (the iteration added it), "merged"
	// (its runner sections or inline tests are the baseline's).
	Action string
}

// String says the change in plain words.
func (c Change) String() string {
	return fmt.Sprintf("%s %s (%s: %s)", c.Path, c.Action, c.Class.Kind, c.Class.Reason)
}

// planned is one path of the held-out tree: an object, or merged content.
type planned struct {
	entry   Entry
	content []byte // set when merged
	merged  bool
}

// Plan is the held-out tree: the iteration's product source with the
// baseline's everything else.
type Plan struct {
	files   map[string]planned
	Changes []Change
	// Dropped lists symlinks left out of the scratch tree because they
	// point outside the repository.
	Dropped []string
}

// Needed reports whether the iteration touched anything but product
// source: only then does the held-out tree differ from the iteration's.
func (p *Plan) Needed() bool { return len(p.Changes) > 0 }

// Paths returns the paths of the held-out tree, sorted.
func (p *Plan) Paths() []string {
	out := make([]string, 0, len(p.files))
	for k := range p.files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MakePlan compares the baseline tree with the iteration's and builds the
// held-out tree. Paths whose object is the same on both sides are kept as
// they are; every other path is classified, and merged where it is both.
func MakePlan(ctx context.Context, obj Objects, base, iter string, crit spec.Criterion) (*Plan, error) {
	be, err := obj.Tree(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("the baseline tree: %w", err)
	}
	ie, err := obj.Tree(ctx, iter)
	if err != nil {
		return nil, fmt.Errorf("the iteration's tree: %w", err)
	}
	return planTrees(ctx, obj, be, ie, crit)
}

func planTrees(ctx context.Context, obj Objects, be, ie []Entry, crit spec.Criterion) (*Plan, error) {
	bm, im := map[string]Entry{}, map[string]Entry{}
	var bp, ip []string
	for _, e := range be {
		bm[e.Path] = e
		bp = append(bp, e.Path)
	}
	for _, e := range ie {
		im[e.Path] = e
		ip = append(ip, e.Path)
	}
	cctx := NewContext(crit, bp, ip)
	plan := &Plan{files: map[string]planned{}}
	all := map[string]bool{}
	for p := range bm {
		all[p] = true
	}
	for p := range im {
		all[p] = true
	}
	type pending struct {
		path string
		cl   Class
	}
	var needContent []pending
	for p := range all {
		b, inBase := bm[p]
		i, inIter := im[p]
		if inBase && inIter && b.OID == i.OID && b.Mode == i.Mode {
			plan.files[p] = planned{entry: i}
			continue
		}
		cl := Classify(p, cctx)
		switch {
		case cl.Kind == Dependency && !inBase:
			// A dependency vendored anew comes with the product change
			// that needs it; vendored files that were there are restored.
			plan.files[p] = planned{entry: i}
		case cl.Kind.Restored():
			plan.restore(p, cl, b, inBase, inIter)
		case b.Mode == "120000" || i.Mode == "120000" || b.Mode == "160000" || i.Mode == "160000":
			// Links and submodules have no sections: the product's.
			if inIter {
				plan.files[p] = planned{entry: i}
			}
		case cl.Kind == Source && testImportRes[ecosystemOf(p)] == nil:
			if inIter {
				plan.files[p] = planned{entry: i}
			}
		default:
			needContent = append(needContent, pending{p, cl})
		}
	}
	if len(needContent) > 0 {
		var oids []string
		for _, n := range needContent {
			if e, ok := bm[n.path]; ok {
				oids = append(oids, e.OID)
			}
			if e, ok := im[n.path]; ok {
				oids = append(oids, e.OID)
			}
		}
		blobs := map[string][]byte{}
		if err := obj.Blobs(ctx, dedupe(oids), func(oid string, data []byte) error {
			blobs[oid] = data
			return nil
		}); err != nil {
			return nil, err
		}
		content := func(m map[string]Entry, p string) []byte {
			if e, ok := m[p]; ok {
				if b, ok := blobs[e.OID]; ok {
					return b
				}
				return []byte{}
			}
			return nil
		}
		for _, n := range needContent {
			b, inBase := bm[n.path]
			i, inIter := im[n.path]
			bc, ic := content(bm, n.path), content(im, n.path)
			cl := Refine(n.path, n.cl, bc, ic)
			if cl.Kind.Restored() {
				plan.restore(n.path, cl, b, inBase, inIter)
				continue
			}
			if cl.Kind == Source {
				if inIter {
					plan.files[n.path] = planned{entry: i}
				}
				continue
			}
			out, changed, err := Merge(n.path, cl.Kind, crit, bc, ic)
			if err != nil {
				return nil, err
			}
			if out == nil {
				continue
			}
			if !changed {
				plan.files[n.path] = planned{entry: i}
				continue
			}
			mode := i.Mode
			if !inIter {
				mode = b.Mode
			}
			plan.files[n.path] = planned{entry: Entry{Path: n.path, Mode: mode}, content: out, merged: true}
			plan.Changes = append(plan.Changes, Change{Path: n.path, Class: cl, Action: "merged"})
		}
	}
	sort.Slice(plan.Changes, func(a, b int) bool { return plan.Changes[a].Path < plan.Changes[b].Path })
	return plan, nil
}

func (plan *Plan) restore(p string, cl Class, b Entry, inBase, inIter bool) {
	switch {
	case inBase:
		plan.files[p] = planned{entry: b}
		action := "restored"
		if !inIter {
			action = "put back"
		}
		plan.Changes = append(plan.Changes, Change{Path: p, Class: cl, Action: action})
	case inIter:
		plan.Changes = append(plan.Changes, Change{Path: p, Class: cl, Action: "removed"})
	}
}

// dedupe returns the distinct strings of s, sorted.
func dedupe(s []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(s)))
}

// BuildOptions says where and how to write a scratch tree.
type BuildOptions struct {
	// Dir is the scratch directory; it must not exist yet.
	Dir string
	// WorkTree is the repository's work tree: installed dependencies and
	// submodules are linked from it.
	WorkTree string
	// Links are the work-tree paths (relative) linked into the scratch
	// tree; nil means DependencyDirs(WorkTree).
	Links []string
	// Chown, when set, is called for every path written (the sandboxed
	// check runs as another user).
	Chown func(path string) error
}

// Build writes the plan's tree into opt.Dir from the objects, then links
// what the work tree has and git does not.
func (p *Plan) Build(ctx context.Context, obj Objects, opt BuildOptions) error {
	if err := os.Mkdir(opt.Dir, 0o755); err != nil {
		return fmt.Errorf("creating the scratch tree: %w", err)
	}
	// The tree's directories are the sandboxed check's too: a build writes
	// into them (out/, target/, build/) as it does in the work tree.
	if opt.Chown != nil {
		if err := opt.Chown(opt.Dir); err != nil {
			return err
		}
	}
	paths := p.Paths()
	var oids []string
	byOID := map[string][]string{}
	var links []string
	for _, rel := range paths {
		f := p.files[rel]
		switch {
		case f.merged:
			if err := writeFile(opt.Dir, rel, f.content, f.entry.Mode, opt.Chown); err != nil {
				return err
			}
		case f.entry.Mode == "120000":
			links = append(links, rel)
			oids = append(oids, f.entry.OID)
			byOID[f.entry.OID] = append(byOID[f.entry.OID], rel)
		case f.entry.Mode == "160000":
			if err := linkFromWorkTree(opt, rel); err != nil {
				return err
			}
		default:
			oids = append(oids, f.entry.OID)
			byOID[f.entry.OID] = append(byOID[f.entry.OID], rel)
		}
	}
	targets := map[string]string{}
	err := obj.Blobs(ctx, dedupe(oids), func(oid string, data []byte) error {
		for _, rel := range byOID[oid] {
			if p.files[rel].entry.Mode == "120000" {
				targets[rel] = string(data)
				continue
			}
			if err := writeFile(opt.Dir, rel, data, p.files[rel].entry.Mode, opt.Chown); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Symlinks last, so that no file is written through one; a link that
	// leaves the repository is left out.
	for _, rel := range links {
		target := targets[rel]
		if filepath.IsAbs(target) || escapes(rel, target) {
			p.Dropped = append(p.Dropped, rel)
			continue
		}
		parent, err := safeParent(opt.Dir, rel, opt.Chown)
		if err != nil {
			return err
		}
		dst := filepath.Join(parent, path.Base(rel))
		if err := os.Symlink(target, dst); err != nil {
			return fmt.Errorf("writing %s in the scratch tree: %w", rel, err)
		}
		if opt.Chown != nil {
			if err := opt.Chown(dst); err != nil {
				return err
			}
		}
	}
	ls := opt.Links
	if ls == nil && opt.WorkTree != "" {
		ls = DependencyDirs(opt.WorkTree)
	}
	for _, rel := range ls {
		if _, tracked := p.files[rel]; tracked {
			continue
		}
		if err := linkFromWorkTree(opt, rel); err != nil {
			return err
		}
	}
	return nil
}

// escapes reports a relative link target that climbs out of the root.
func escapes(rel, target string) bool {
	joined := path.Join(path.Dir(rel), target)
	return joined == ".." || strings.HasPrefix(joined, "../")
}

// safeParent creates the parent directories of rel under root, refusing
// to go through anything that is not a plain directory; each directory it
// creates is handed over with chown (when set).
func safeParent(root, rel string, chown func(string) error) (string, error) {
	dir := root
	segs := strings.Split(path.Dir(rel), "/")
	if path.Dir(rel) == "." {
		return root, nil
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return "", fmt.Errorf("writing %s in the scratch tree: unsafe path", rel)
		}
		dir = filepath.Join(dir, s)
		fi, err := os.Lstat(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if err := os.Mkdir(dir, 0o755); err != nil {
				return "", fmt.Errorf("writing %s in the scratch tree: %w", rel, err)
			}
			if chown != nil {
				if err := chown(dir); err != nil {
					return "", err
				}
			}
		case err != nil:
			return "", fmt.Errorf("writing %s in the scratch tree: %w", rel, err)
		case !fi.IsDir():
			return "", fmt.Errorf("writing %s in the scratch tree: %s is not a directory", rel, dir)
		}
	}
	return dir, nil
}

func writeFile(root, rel string, data []byte, mode string, chown func(string) error) error {
	parent, err := safeParent(root, rel, chown)
	if err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if mode == "100755" {
		perm = 0o755
	}
	dst := filepath.Join(parent, path.Base(rel))
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return fmt.Errorf("writing %s in the scratch tree: %w", rel, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s in the scratch tree: %w", rel, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s in the scratch tree: %w", rel, err)
	}
	if chown != nil {
		return chown(dst)
	}
	return nil
}

func linkFromWorkTree(opt BuildOptions, rel string) error {
	if opt.WorkTree == "" {
		return nil
	}
	src := filepath.Join(opt.WorkTree, filepath.FromSlash(rel))
	if _, err := os.Lstat(src); err != nil {
		return nil
	}
	parent, err := safeParent(opt.Dir, rel, opt.Chown)
	if err != nil {
		return err
	}
	dst := filepath.Join(parent, path.Base(rel))
	if _, err := os.Lstat(dst); err == nil {
		if err := os.Remove(dst); err != nil {
			return fmt.Errorf("linking %s into the scratch tree: %w", rel, err)
		}
	}
	if err := os.Symlink(src, dst); err != nil {
		return fmt.Errorf("linking %s into the scratch tree: %w", rel, err)
	}
	return nil
}

// dependencyNames are directories of installed dependencies that git does
// not track and a test run needs.
var dependencyNames = map[string]bool{
	"node_modules": true, ".venv": true, "venv": true, ".bundle": true, "vendor": true, "bower_components": true,
	"deps": true, "_build": true, "Pods": true, ".yarn": true, ".pnp.cjs": true, ".pnp.loader.mjs": true,
}

// DependencyDirs lists the installed-dependency directories of a work tree
// (node_modules, .venv, vendor, .bundle, Elixir's deps and _build, ...), at
// the root and up to three levels down (workspaces), relative and sorted.
// It does not descend into them.
func DependencyDirs(workTree string) []string {
	var out []string
	var walk func(rel string, depth int)
	walk = func(rel string, depth int) {
		entries, err := os.ReadDir(filepath.Join(workTree, filepath.FromSlash(rel)))
		if err != nil {
			return
		}
		for _, e := range entries {
			name := e.Name()
			r := path.Join(rel, name)
			if dependencyNames[name] {
				out = append(out, r)
				continue
			}
			if !e.IsDir() || name == ".git" || name == ".aiwg" || name == "target" || name == "build" || depth >= 3 ||
				(strings.HasPrefix(name, ".") && name != ".") {
				continue
			}
			walk(r, depth+1)
		}
	}
	walk(".", 0)
	for i := range out {
		out[i] = strings.TrimPrefix(out[i], "./")
	}
	sort.Strings(out)
	return out
}
