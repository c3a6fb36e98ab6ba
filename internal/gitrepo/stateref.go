package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// The durable state ref. Every iteration the engine commits the loop state
// (state.json, checkpoints) on a private ref such as refs/agent-loop/<id>:
// a tree built directly in the trusted store from the given bytes (the work
// tree is never involved), parent = the ref's previous value, then pushed.
// The ref lives in the private git directory only: the agent cannot point
// it at a state of its own. A re-run on a fresh runner reads it back from
// the remote with FetchRef.

// PushRef commits files on ref (parent: the ref's previous value, fetched
// from the remote first when the ref is not known locally) and pushes it,
// forcing. Without a remote the commit stays local. When the push fails the
// commit is kept locally and its sha is returned with the *PushError.
func (r *Repo) PushRef(ctx context.Context, ref string, files map[string][]byte, message string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validStateRef(ref); err != nil {
		return "", err
	}
	tree, err := buildFileTree(files)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(message) == "" {
		message = "agent-loop state"
	}
	if !strings.HasSuffix(message, "\n") {
		message += "\n"
	}
	if err := r.begin(ctx); err != nil {
		return "", err
	}
	parent := r.readPrivRef(ref)
	fetchURL, pushURL, display, hasRemote := r.remoteURLs()
	if parent == "" && hasRemote {
		remote, err := r.fetchRef(ctx, fetchURL, display, ref)
		if err != nil {
			return "", err
		}
		parent = remote
	}
	if err := r.ensureTrusted(ctx, parent); err != nil {
		return "", err
	}
	var sha string
	if r.goGit {
		sha, err = r.writeStateGoGit(tree, message, parent)
	} else {
		sha, err = r.writeStateFastImport(ctx, files, message, parent)
	}
	if err != nil {
		return "", fmt.Errorf("writing the state commit for %s: %w", ref, err)
	}
	if err := r.setPrivRef(ref, sha); err != nil {
		return "", err
	}
	if err := r.p.markTrusted(sha); err != nil {
		return "", err
	}
	if !hasRemote {
		return sha, nil
	}
	return sha, r.push(ctx, pushURL, display, "+"+ref+":"+ref, ref)
}

// FetchRef reads back the newest state: the remote's ref (fetched) or the
// local one, whichever descends from the other (or is newer when they
// diverged); the local ref is moved to it. Without a remote it reads the
// local ref. A ref found nowhere is ErrNoRef.
func (r *Repo) FetchRef(ctx context.Context, ref string) (map[string][]byte, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validStateRef(ref); err != nil {
		return nil, "", err
	}
	if err := r.begin(ctx); err != nil {
		return nil, "", err
	}
	local := r.readPrivRef(ref)
	chosen := local
	if fetchURL, _, display, ok := r.remoteURLs(); ok {
		remote, err := r.fetchRef(ctx, fetchURL, display, ref)
		if err != nil {
			return nil, "", err
		}
		if chosen, err = r.newest(ctx, local, remote); err != nil {
			return nil, "", err
		}
		if chosen != local {
			if err := r.setPrivRef(ref, chosen); err != nil {
				return nil, "", err
			}
		}
	}
	if chosen == "" {
		return nil, "", fmt.Errorf("%s: %w", ref, ErrNoRef)
	}
	// A fetch takes from the repository's objects what they already hold:
	// the state is read from the trusted store once checked into it.
	if err := r.ensureTrusted(ctx, chosen); err != nil {
		return nil, "", fmt.Errorf("reading %s at %.12s: %w", ref, chosen, err)
	}
	var files map[string][]byte
	var err error
	if r.goGit {
		files, err = r.readStateGoGit(chosen)
	} else {
		files, err = r.readStateCLI(ctx, chosen)
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading %s at %.12s: %w", ref, chosen, err)
	}
	return files, chosen, nil
}

// fetchRef fetches the remote's ref into the trusted store and returns its
// commit ("" when the remote does not have it).
func (r *Repo) fetchRef(ctx context.Context, fetchURL, display, ref string) (string, error) {
	tmp := "refs/agent-loop-fetch/" + strings.TrimPrefix(ref, "refs/")
	args := []string{"fetch", "-q", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-gc",
		"--end-of-options", fetchURL, "+" + ref + ":" + tmp}
	err := r.remoteOp(ctx, trusted, "fetch", display, ref, args)
	var pe *PushError
	if errors.As(err, &pe) {
		var ge *GitError
		if errors.As(pe.Err, &ge) && strings.Contains(strings.ToLower(ge.Stderr), "couldn't find remote ref") {
			return "", nil
		}
	}
	if err != nil {
		return "", err
	}
	sha := r.readPrivRef(tmp)
	if sha == "" {
		// Stored some other way (a packed ref): ask git.
		res, err := r.git(ctx, gitCall{bare: true, args: []string{"rev-parse", "-q", "--verify", "--end-of-options", tmp}, okCodes: []int{1}})
		if err != nil {
			return "", err
		}
		sha = firstLine(res.stdout)
	}
	if err := writePrivateRef(r.p, tmp, ""); err != nil {
		return "", err
	}
	return sha, nil
}

// newest picks between two state commits.
func (r *Repo) newest(ctx context.Context, local, remote string) (string, error) {
	switch {
	case remote == "" || remote == local:
		return local, nil
	case local == "":
		return remote, nil
	}
	for _, c := range [][2]string{{local, remote}, {remote, local}} {
		res, err := r.git(ctx, gitCall{scope: withRepo, args: []string{"merge-base", "--is-ancestor", c[0], c[1]}, okCodes: []int{1}})
		if err != nil {
			return "", err
		}
		if res.code == 0 {
			return c[1], nil
		}
	}
	res, err := r.git(ctx, gitCall{scope: withRepo, args: []string{"show", "-s", "--format=%ct", local, remote, "--"}})
	if err != nil {
		return "", err
	}
	times := strings.Fields(string(res.stdout))
	if len(times) == 2 {
		l, _ := strconv.ParseInt(times[0], 10, 64)
		m, _ := strconv.ParseInt(times[1], 10, 64)
		if l > m {
			return local, nil
		}
	}
	return remote, nil
}

// fileTree is a directory of the state tree.
type fileTree struct {
	files map[string][]byte
	dirs  map[string]*fileTree
}

// buildFileTree checks the paths and nests them.
func buildFileTree(files map[string][]byte) (*fileTree, error) {
	if len(files) == 0 {
		return nil, errors.New("no state files to commit: pass at least one file")
	}
	root := &fileTree{files: map[string][]byte{}, dirs: map[string]*fileTree{}}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := validStatePath(p); err != nil {
			return nil, err
		}
		comps := strings.Split(p, "/")
		t := root
		for _, c := range comps[:len(comps)-1] {
			if _, clash := t.files[c]; clash {
				return nil, fmt.Errorf("state path %q is both a file and a directory", p)
			}
			sub := t.dirs[c]
			if sub == nil {
				sub = &fileTree{files: map[string][]byte{}, dirs: map[string]*fileTree{}}
				t.dirs[c] = sub
			}
			t = sub
		}
		name := comps[len(comps)-1]
		if _, clash := t.dirs[name]; clash {
			return nil, fmt.Errorf("state path %q is both a file and a directory", p)
		}
		t.files[name] = files[p]
	}
	return root, nil
}

// validStatePath accepts a relative slash-separated path.
func validStatePath(p string) error {
	bad := p == "" || len(p) > 4096 || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `"`) ||
		strings.ContainsAny(p, "\x00\n\r\\")
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("state path %q is not valid: use a relative path with / separators, no . or .. components", p)
	}
	return nil
}

// validStateRef accepts a full ref name outside branches and tags.
func validStateRef(ref string) error {
	if !strings.HasPrefix(ref, "refs/") || strings.HasPrefix(ref, "refs/heads/") ||
		strings.HasPrefix(ref, "refs/tags/") || strings.HasPrefix(ref, "refs/remotes/") ||
		strings.HasPrefix(ref, "refs/agent-loop-fetch/") || !validRefName(ref) || strings.Count(ref, "/") < 2 {
		return fmt.Errorf("state ref %q is not valid: use a private ref such as refs/agent-loop/<loop_id>", ref)
	}
	return nil
}

// objectWriter is the part of go-git's object storage the harness uses.
type objectWriter interface {
	NewEncodedObject() plumbing.EncodedObject
	SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error)
}

// objectStore is go-git's object database of the trusted store (no
// configuration is read).
func (r *Repo) objectStore() *filesystem.Storage {
	return filesystem.NewStorage(osfs.New(r.p.gitDir()), cache.NewObjectLRUDefault())
}

// writeStateGoGit writes blobs, trees and the commit with go-git.
func (r *Repo) writeStateGoGit(tree *fileTree, message, parent string) (string, error) {
	st := r.objectStore()
	treeHash, err := writeTreeGoGit(st, tree)
	if err != nil {
		return "", err
	}
	return r.writeCommitWith(st, treeHash.String(), parent, message)
}

// writeCommitObject writes a commit object of tree with go-git.
func (r *Repo) writeCommitObject(tree, parent, message string) (string, error) {
	return r.writeCommitWith(r.objectStore(), tree, parent, message)
}

func (r *Repo) writeCommitWith(st objectWriter, tree, parent, message string) (string, error) {
	sig := object.Signature{Name: r.opts.AuthorName, Email: r.opts.AuthorEmail, When: r.opts.Now()}
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: plumbing.NewHash(tree)}
	if parent != "" {
		c.ParentHashes = []plumbing.Hash{plumbing.NewHash(parent)}
	}
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return "", err
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

func writeTreeGoGit(st objectWriter, t *fileTree) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	for name, data := range t.files {
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		obj.SetSize(int64(len(data)))
		w, err := obj.Writer()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if _, err := w.Write(data); err != nil {
			return plumbing.ZeroHash, err
		}
		if err := w.Close(); err != nil {
			return plumbing.ZeroHash, err
		}
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	for name, sub := range t.dirs {
		h, err := writeTreeGoGit(st, sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	sort.Sort(object.TreeEntrySorter(entries))
	obj := st.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// writeStateFastImport writes the commit with git fast-import (for
// repositories go-git cannot open). The commit goes to a scratch ref; the
// caller moves the state ref.
func (r *Repo) writeStateFastImport(ctx context.Context, files map[string][]byte, message, parent string) (string, error) {
	scratch := "refs/agent-loop-fetch/import"
	var b bytes.Buffer
	now := r.opts.Now()
	who := fmt.Sprintf("%s <%s> %d %s", r.opts.AuthorName, r.opts.AuthorEmail, now.Unix(), now.Format("-0700"))
	fmt.Fprintf(&b, "feature done\nreset %s\ncommit %s\nmark :1\nauthor %s\ncommitter %s\ndata %d\n%s\n",
		scratch, scratch, who, who, len(message), message)
	if parent != "" {
		fmt.Fprintf(&b, "from %s\n", parent)
	}
	b.WriteString("deleteall\n")
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n", p, len(files[p]))
		b.Write(files[p])
		b.WriteString("\n")
	}
	b.WriteString("\nget-mark :1\ndone\n")
	res, err := r.git(ctx, gitCall{bare: true, args: []string{"fast-import", "--quiet", "--force", "--date-format=raw", "--cat-blob-fd=1"},
		stdin: &b})
	if err != nil {
		return "", err
	}
	sha := firstLine(res.stdout)
	if !isHex(sha) {
		return "", fmt.Errorf("git fast-import printed %q, not a commit id", sha)
	}
	if _, err := r.git(ctx, gitCall{bare: true, args: []string{"update-ref", "-d", scratch}}); err != nil {
		return "", err
	}
	return sha, nil
}

// readStateGoGit reads the regular files of commit sha with go-git.
func (r *Repo) readStateGoGit(sha string) (map[string][]byte, error) {
	c, err := object.GetCommit(r.objectStore(), plumbing.NewHash(sha))
	if err != nil {
		return nil, err
	}
	t, err := c.Tree()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	err = t.Files().ForEach(func(f *object.File) error {
		if f.Mode != filemode.Regular && f.Mode != filemode.Executable {
			return nil
		}
		rd, err := f.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		b, err := io.ReadAll(rd)
		if err != nil {
			return err
		}
		out[f.Name] = b
		return nil
	})
	return out, err
}

// readStateCLI reads the regular files of commit sha with ls-tree and
// cat-file --batch.
func (r *Repo) readStateCLI(ctx context.Context, sha string) (map[string][]byte, error) {
	res, err := r.git(ctx, gitCall{bare: true, args: []string{"ls-tree", "-r", "-z", "--full-tree", sha}})
	if err != nil {
		return nil, err
	}
	var oids, paths []string
	for _, rec := range splitZ(res.stdout) {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		oids, paths = append(oids, f[2]), append(paths, path)
	}
	out := map[string][]byte{}
	if len(oids) == 0 {
		return out, nil
	}
	res, err = r.git(ctx, gitCall{bare: true, args: []string{"cat-file", "--batch"},
		stdin: strings.NewReader(strings.Join(oids, "\n") + "\n")})
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(bytes.NewReader(res.stdout))
	for i := range oids {
		header, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("reading git cat-file output: %w", err)
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			return nil, fmt.Errorf("git cat-file: unexpected header %q", strings.TrimSpace(header))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("git cat-file: bad size in %q", strings.TrimSpace(header))
		}
		data := make([]byte, n+1)
		if _, err := io.ReadFull(br, data); err != nil {
			return nil, fmt.Errorf("reading git cat-file output: %w", err)
		}
		out[paths[i]] = data[:n]
	}
	return out, nil
}
