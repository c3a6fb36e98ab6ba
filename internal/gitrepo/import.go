package gitrepo

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// emptyTree is the empty tree's id, which git knows without storing it.
func (r *Repo) emptyTree() string {
	if r.hashLen() == 32 {
		return "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
	}
	return "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
}

// ErrForgedObject says an object of the repository's store does not hash
// to its name: something rewrote .git/objects.
var ErrForgedObject = errors.New("an object in .git/objects does not match its name")

// ensureTrusted makes commit sha and its whole tree part of the trusted
// store. A commit the harness wrote, imported or completed before is
// trusted already. Otherwise its commit object is read from the
// repository and checked against its name here, and its tree is packed
// from the repository (through the view) and indexed into the trusted
// store by `git index-pack`, which computes every object's name from its
// content and refuses a pack that leaves an object out: an object the
// agent rewrote under a real name cannot enter. A commit whose parents are
// not in the trusted store is recorded as shallow there.
func (r *Repo) ensureTrusted(ctx context.Context, sha string) error {
	if sha == "" || r.p.trustedSet[sha] || r.weak.objects {
		return nil
	}
	if !isHex(sha) || len(sha) != 2*r.hashLen() {
		return fmt.Errorf("%q is not a commit id", sha)
	}
	raw, err := r.rawObject(ctx, "commit", sha)
	if err != nil {
		return fmt.Errorf("importing commit %.12s into the trusted store: %w", sha, err)
	}
	tree, parents, err := parseCommitHeader(raw)
	if err != nil {
		return fmt.Errorf("importing commit %.12s: %w", sha, err)
	}
	if tree != r.emptyTree() {
		if err := r.importTree(ctx, tree); err != nil {
			return fmt.Errorf("importing the tree of commit %.12s into the trusted store: %w", sha, err)
		}
	}
	if err := r.writeObject(ctx, "commit", sha, raw); err != nil {
		return fmt.Errorf("importing commit %.12s: %w", sha, err)
	}
	if len(parents) > 0 {
		missing, err := r.missingObjects(ctx, parents)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			if err := r.addShallow(sha); err != nil {
				return err
			}
		}
	}
	return r.p.markTrusted(sha)
}

// rawObject reads an object's content (commit or tree) from the trusted
// store or the repository, and checks that it hashes to its name.
func (r *Repo) rawObject(ctx context.Context, typ, sha string) ([]byte, error) {
	res, err := r.git(ctx, gitCall{scope: withRepo, args: []string{"cat-file", typ, sha}, maxOut: 64 << 20})
	if err != nil {
		return nil, err
	}
	if got := r.hashObject(typ, res.stdout); got != sha {
		return nil, fmt.Errorf("%w: %s %.12s hashes to %.12s", ErrForgedObject, typ, sha, got)
	}
	return res.stdout, nil
}

// hashObject is git's object name of content of type typ.
func (r *Repo) hashObject(typ string, content []byte) string {
	header := typ + " " + strconv.Itoa(len(content)) + "\x00"
	if r.hashLen() == 32 {
		h := sha256.New()
		h.Write([]byte(header))
		h.Write(content)
		return hex.EncodeToString(h.Sum(nil))
	}
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// parseCommitHeader returns the tree and parents of a raw commit.
func parseCommitHeader(raw []byte) (tree string, parents []string, err error) {
	for _, line := range strings.Split(string(raw), "\n") {
		if line == "" {
			break
		}
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "tree":
			tree = v
		case "parent":
			parents = append(parents, v)
		}
	}
	if !isHex(tree) {
		return "", nil, errors.New("the commit names no tree")
	}
	return tree, parents, nil
}

// importTree packs tree and everything it contains from the repository
// and indexes the pack into the trusted store. index-pack names objects by
// their content and, with --check-self-contained-and-connected, fails when
// an object a tree names is not in the pack: a forged object (whose
// content hashes to another name) leaves its real name missing.
func (r *Repo) importTree(ctx context.Context, tree string) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var packErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer pw.Close()
		_, packErr = r.git(ctx, gitCall{scope: withRepo, args: []string{"pack-objects", "--revs", "--stdout", "-q",
			"--no-reuse-delta"}, stdin: strings.NewReader(tree + "\n"), stdout: pw})
		if packErr != nil {
			cancel()
		}
	}()
	_, idxErr := r.git(ctx, gitCall{bare: true, args: []string{"index-pack", "--stdin", "--check-self-contained-and-connected",
		"--keep=agent-loop import"}, stdin: pr})
	pr.Close()
	wg.Wait()
	r.cleanTmpPacks()
	if packErr != nil {
		return fmt.Errorf("reading the tree %.12s from .git/objects: %w", tree, packErr)
	}
	if idxErr != nil {
		var ge *GitError
		if errors.As(idxErr, &ge) && strings.Contains(ge.Stderr, "did not receive expected object") {
			return fmt.Errorf("%w: the tree %.12s is incomplete once every object is named by its content (%s); "+
				"restore the repository (clone it again) and start a new loop", ErrForgedObject, tree, strings.TrimSpace(ge.Stderr))
		}
		return idxErr
	}
	return nil
}

// cleanTmpPacks removes what a failed index-pack left in the trusted store.
func (r *Repo) cleanTmpPacks() {
	matches, _ := filepath.Glob(filepath.Join(r.p.objects(), "pack", "tmp_*"))
	for _, m := range matches {
		os.Remove(m)
	}
}

// writeObject writes a raw object into the trusted store and checks its
// name.
func (r *Repo) writeObject(ctx context.Context, typ, sha string, raw []byte) error {
	res, err := r.git(ctx, gitCall{bare: true, args: []string{"hash-object", "-t", typ, "-w", "--literally", "--stdin"},
		stdin: bytes.NewReader(raw)})
	if err != nil {
		return err
	}
	if got := firstLine(res.stdout); got != sha {
		return fmt.Errorf("%w: %s %.12s was written as %.12s", ErrForgedObject, typ, sha, got)
	}
	return nil
}

// missingObjects lists the ids absent from the trusted store.
func (r *Repo) missingObjects(ctx context.Context, ids []string) ([]string, error) {
	res, err := r.git(ctx, gitCall{bare: true, args: []string{"cat-file", "--batch-check=%(objectname)"},
		stdin: strings.NewReader(strings.Join(ids, "\n") + "\n")})
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, line := range strings.Split(string(res.stdout), "\n") {
		if id, ok := strings.CutSuffix(strings.TrimSpace(line), " missing"); ok {
			missing = append(missing, id)
		}
	}
	return missing, nil
}

// addShallow records sha as shallow in the trusted store (its parents are
// not there).
func (r *Repo) addShallow(sha string) error {
	p := r.p.shallow()
	b, err := readSmall(p, 64<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l == sha {
			return nil
		}
	}
	return writeEntry(p, &entry{mode: 0o600, data: append(b, sha+"\n"...)})
}

// syncObjects copies the objects of the trusted store that the harness
// wrote or fetched (loose objects, and packs other than the imports) into
// the repository's object store, so the user's repository holds the loop
// branch. The repository's copy is never read back by the harness.
func (r *Repo) syncObjects(ctx context.Context) error {
	src := r.p.objects()
	dst := filepath.Join(r.commonDir, "objects")
	if fi, err := os.Lstat(dst); err != nil || !fi.IsDir() {
		return fmt.Errorf("the repository's object store %s is not a directory", dst)
	}
	for i := 0; i < 256; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		fan := fmt.Sprintf("%02x", i)
		// A directory whose stat data did not change since it was last
		// read holds no new object: one stat instead of a listing.
		k, ok := keyOf(filepath.Join(src, fan))
		if !ok || r.p.dirKeys[fan] == k {
			continue
		}
		names, err := readDirNames(filepath.Join(src, fan))
		if err != nil {
			continue
		}
		// Timestamps are coarse: a directory changed in the last moments
		// may change again under the same stat data, so it is listed
		// again next time.
		if time.Since(time.Unix(0, k.mtime)) > time.Second {
			r.p.dirKeys[fan] = k
		} else {
			delete(r.p.dirKeys, fan)
		}
		for _, n := range names {
			key := fan + n
			if r.p.synced[key] || !isHex(n) {
				continue
			}
			if err := copyObjectFile(filepath.Join(src, fan, n), filepath.Join(dst, fan), n); err != nil {
				return fmt.Errorf("copying object %s to %s: %w", key, dst, err)
			}
			r.p.synced[key] = true
		}
	}
	packs, err := readDirNames(filepath.Join(src, "pack"))
	if err != nil {
		return err
	}
	for _, n := range packs {
		base, ok := strings.CutSuffix(n, ".pack")
		if !ok || r.p.synced[n] || fileExists(filepath.Join(src, "pack", base+".keep")) {
			continue
		}
		for _, ext := range []string{".pack", ".idx"} {
			if err := copyObjectFile(filepath.Join(src, "pack", base+ext), filepath.Join(dst, "pack"), base+ext); err != nil {
				return fmt.Errorf("copying %s to %s: %w", base+ext, dst, err)
			}
		}
		r.p.synced[n] = true
	}
	return nil
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// copyObjectFile copies src into dir/name through a temporary file and a
// rename, creating dir when missing; dir must not be a symlink (the agent's
// redirection of .git/objects/xx is not followed). An object file that
// exists already is left as it is, as git does (and a rename over an
// existing file makes ext4 flush the new one first, which is slow); the
// harness never reads the repository's copy back.
func copyObjectFile(src, dir, name string) error {
	if fi, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	} else if err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
		return nil
	}
	return copyInto(src, dir, name, 0o444)
}

// copyInto copies the regular file src (no symlink or FIFO followed) to
// dir/name with mode perm, through a temporary file and a rename (which
// replaces a symlink at dir/name instead of writing through it).
func copyInto(src, dir, name string, perm os.FileMode) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", src)
	}
	tmp, err := os.CreateTemp(dir, ".agent-loop-copy-*")
	if err != nil {
		return err
	}
	_, werr := io.Copy(tmp, in)
	if err := tmp.Chmod(perm); werr == nil {
		werr = err
	}
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// mirrorIndex writes the trusted index as the repository's .git/index, so
// that `git status` in the work tree compares with the loop branch. The
// harness never reads .git/index back.
func (r *Repo) mirrorIndex() error {
	if r.weak.index {
		return nil
	}
	err := copyInto(r.p.index(), r.gitDir, "index", 0o644)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("writing %s: %w", filepath.Join(r.gitDir, "index"), err)
	}
	return nil
}

// ensureIndex creates the trusted index when it does not exist: the tree
// of the harness's HEAD, with the stat data of .git/index when the caller
// said it is trusted (Options.TrustIndex), else none (the first staging
// hashes every file). Flags that hide a change (assume unchanged; skip
// worktree outside a sparse checkout) are cleared.
func (r *Repo) ensureIndex(ctx context.Context) error {
	if r.weak.index {
		return nil
	}
	if fi, err := os.Lstat(r.p.index()); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	head := r.privHeadSHA()
	if err := r.ensureTrusted(ctx, head); err != nil {
		return err
	}
	args := []string{"read-tree", "--reset", head}
	if head == "" {
		args = []string{"read-tree", "--empty"}
	}
	if r.opts.TrustIndex && copyInto(filepath.Join(r.gitDir, "index"), r.p.gitDir(), "index", 0o600) == nil {
		if _, err := r.git(ctx, gitCall{args: args}); err == nil {
			return r.clearHidingFlags(ctx)
		}
		// A split, sparse or unreadable index: start without it.
		os.Remove(r.p.index())
	}
	if _, err := r.git(ctx, gitCall{args: args}); err != nil {
		return fmt.Errorf("building the trusted index from %.12s: %w", head, err)
	}
	return nil
}

// clearHidingFlags clears "assume unchanged" (and "skip worktree" outside a
// sparse checkout) in the trusted index.
func (r *Repo) clearHidingFlags(ctx context.Context) error {
	res, err := r.git(ctx, gitCall{args: []string{"ls-files", "-v", "-z"}})
	if err != nil {
		return err
	}
	s := parseLsFilesV(res.stdout, nil)
	if len(s.assumeValid) > 0 {
		if _, err := r.git(ctx, gitCall{args: []string{"update-index", "--no-assume-unchanged", "-z", "--stdin"},
			stdin: strings.NewReader(strings.Join(s.assumeValid, "\x00") + "\x00")}); err != nil {
			return err
		}
	}
	if len(s.skipWorktree) > 0 && !r.cfg.sparse {
		if _, err := r.git(ctx, gitCall{args: []string{"update-index", "--no-skip-worktree", "-z", "--stdin"},
			stdin: strings.NewReader(strings.Join(s.skipWorktree, "\x00") + "\x00")}); err != nil {
			return err
		}
	}
	return nil
}
