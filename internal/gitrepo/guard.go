package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// The seal. The harness's own git never reads the repository's .git/config,
// hooks or info/ (trust.go). The agent may still plant hooks, filters, an
// fsmonitor command or a gitfile that points git at a repository it
// controls, which would run in the user's own git commands later. Seal
// records those files when the repository is opened; before every
// operation the harness checks that .git is still the sealed directory (it
// refuses to write into another one) and puts them back byte for byte.

// sealTreeMax bounds the bytes a sealed directory (hooks/, info/) may hold.
const sealTreeMax = 64 << 20

type fileID struct{ dev, ino uint64 }

// entry is one sealed file system entry.
type entry struct {
	mode fs.FileMode // type bits and permissions
	data []byte      // regular files
	link string      // symlinks
}

// snapshot is the sealed state of a repository's control files.
type snapshot struct {
	dotGit     fs.FileMode // type of <root>/.git
	dotGitID   fileID      // when it is a directory
	dotGitFile []byte      // when it is a gitfile ("gitdir: ...")
	dotGitLink string      // when it is a symlink
	gitDirID   fileID
	commonID   fileID
	head       []byte
	files      map[string]*entry            // path -> entry; nil = must not exist
	trees      map[string]map[string]*entry // dir -> relative path -> entry; nil = must not exist
	// verified caches the stat data of entries found equal to the seal. Any
	// write, rename or entry added to a directory changes the ctime, which
	// no unprivileged process can set back, so an entry whose stat data is
	// unchanged needs no second look.
	verified map[string]statKey
}

type statKey struct {
	ino, size    uint64
	mode         uint32
	mtime, ctime int64
}

func keyOf(p string) (statKey, bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return statKey{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statKey{}, false
	}
	return statKey{ino: st.Ino, size: uint64(st.Size), mode: st.Mode,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}

// fresh reports whether p is unchanged since it was last found equal to the seal.
func (s *snapshot) fresh(p string) bool {
	k, ok := keyOf(p)
	if !ok {
		return false
	}
	v, seen := s.verified[p]
	return seen && v == k
}

func (s *snapshot) remember(p string) {
	if k, ok := keyOf(p); ok {
		s.verified[p] = k
	} else {
		delete(s.verified, p)
	}
}

// treeFresh reports whether the sealed tree dir is unchanged.
func (s *snapshot) treeFresh(dir string) bool {
	t := s.trees[dir]
	if t == nil {
		_, err := os.Lstat(dir)
		return errors.Is(err, fs.ErrNotExist)
	}
	if !s.fresh(dir) {
		return false
	}
	for rel := range t {
		if !s.fresh(filepath.Join(dir, rel)) {
			return false
		}
	}
	return true
}

// sealedFiles are the single files restored before every git command:
// configuration (which can name hooks, filters, fsmonitor, credential
// helpers and includes), the gitdir redirection, the shallow list and object
// alternates.
func (r *Repo) sealedFiles() []string {
	paths := []string{
		filepath.Join(r.commonDir, "config"),
		filepath.Join(r.commonDir, "config.worktree"),
		filepath.Join(r.commonDir, "shallow"),
		filepath.Join(r.commonDir, "objects", "info", "alternates"),
		filepath.Join(r.commonDir, "objects", "info", "http-alternates"),
		filepath.Join(r.gitDir, "commondir"),
	}
	if r.gitDir != r.commonDir {
		paths = append(paths, filepath.Join(r.gitDir, "config.worktree"))
	}
	return paths
}

// sealedTrees are the directories restored before every git command.
func (r *Repo) sealedTrees() []string {
	dirs := []string{filepath.Join(r.commonDir, "hooks"), filepath.Join(r.commonDir, "info")}
	if r.gitDir != r.commonDir {
		dirs = append(dirs, filepath.Join(r.gitDir, "info"))
	}
	return dirs
}

// takeSnapshot records the current state as trusted.
func (r *Repo) takeSnapshot() (*snapshot, error) {
	s := &snapshot{files: map[string]*entry{}, trees: map[string]map[string]*entry{}, verified: map[string]statKey{}}
	dot := filepath.Join(r.root, ".git")
	fi, err := os.Lstat(dot)
	if err != nil {
		return nil, fmt.Errorf("sealing %s: %w", dot, err)
	}
	s.dotGit = fi.Mode().Type()
	switch {
	case fi.IsDir():
		s.dotGitID = idOf(fi)
	case fi.Mode()&fs.ModeSymlink != 0:
		if s.dotGitLink, err = os.Readlink(dot); err != nil {
			return nil, fmt.Errorf("sealing %s: %w", dot, err)
		}
	default:
		if s.dotGitFile, err = os.ReadFile(dot); err != nil {
			return nil, fmt.Errorf("sealing %s: %w", dot, err)
		}
	}
	if s.gitDirID, err = statID(r.gitDir); err != nil {
		return nil, fmt.Errorf("sealing %s: %w", r.gitDir, err)
	}
	if s.commonID, err = statID(r.commonDir); err != nil {
		return nil, fmt.Errorf("sealing %s: %w", r.commonDir, err)
	}
	if s.head, err = os.ReadFile(filepath.Join(r.gitDir, "HEAD")); err != nil {
		return nil, fmt.Errorf("sealing %s: %w", filepath.Join(r.gitDir, "HEAD"), err)
	}
	for _, p := range r.sealedFiles() {
		e, err := readEntry(p)
		if err != nil {
			return nil, fmt.Errorf("sealing %s: %w", p, err)
		}
		s.files[p] = e
	}
	for _, d := range r.sealedTrees() {
		t, err := readTree(d)
		if err != nil {
			return nil, fmt.Errorf("sealing %s: %w", d, err)
		}
		s.trees[d] = t
	}
	return s, nil
}

// restoreSealed puts the sealed control files back (and removes the locks
// a killed git left). The harness's own git never reads them (trust.go);
// restoring them keeps the agent's hooks, filters and configuration from
// running in the user's own git commands after the loop.
func (r *Repo) restoreSealed() error {
	s := r.seal
	if s == nil {
		return errors.New("gitrepo: the repository is not sealed (Open seals it)")
	}
	for _, p := range r.sealedFiles() {
		e := s.files[p]
		if e != nil && s.fresh(p) {
			continue
		}
		if err := restoreFile(p, e); err != nil {
			return fmt.Errorf("restoring %s: %w", p, err)
		}
		if e != nil {
			s.remember(p)
		}
	}
	for _, d := range r.sealedTrees() {
		if s.treeFresh(d) {
			continue
		}
		t := s.trees[d]
		if err := restoreTree(d, t); err != nil {
			return fmt.Errorf("restoring %s: %w", d, err)
		}
		if t != nil {
			s.remember(d)
			for rel := range t {
				s.remember(filepath.Join(d, rel))
			}
		}
	}
	for _, lock := range []string{"index.lock", "HEAD.lock"} {
		p := filepath.Join(r.gitDir, lock)
		if _, err := os.Lstat(p); err == nil {
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("removing stale %s: %w", p, err)
			}
		}
	}
	return nil
}

// verify checks that <root>/.git, the git dir and the common dir are the ones
// sealed, not deleted, moved or replaced.
func (r *Repo) verify(s *snapshot) error {
	dot := filepath.Join(r.root, ".git")
	fi, err := os.Lstat(dot)
	if err != nil {
		return &TamperedError{Path: dot, Detail: "was deleted or moved"}
	}
	if fi.Mode().Type() != s.dotGit {
		return &TamperedError{Path: dot, Detail: "was replaced by a " + kindOf(fi.Mode())}
	}
	switch {
	case fi.IsDir():
		if idOf(fi) != s.dotGitID {
			return &TamperedError{Path: dot, Detail: "was replaced by another directory"}
		}
	case fi.Mode()&fs.ModeSymlink != 0:
		if target, err := os.Readlink(dot); err != nil || target != s.dotGitLink {
			return &TamperedError{Path: dot, Detail: "was re-pointed to another repository"}
		}
	default:
		if b, err := os.ReadFile(dot); err != nil || !bytes.Equal(b, s.dotGitFile) {
			return &TamperedError{Path: dot, Detail: "was re-pointed to another repository"}
		}
	}
	for _, d := range []struct {
		path string
		id   fileID
	}{{r.gitDir, s.gitDirID}, {r.commonDir, s.commonID}} {
		id, err := statID(d.path)
		if err != nil {
			return &TamperedError{Path: d.path, Detail: "was deleted or moved"}
		}
		if id != d.id {
			return &TamperedError{Path: d.path, Detail: "was replaced"}
		}
	}
	return nil
}

func validHead(b []byte) bool {
	s := strings.TrimSuffix(string(b), "\n")
	if ref, ok := strings.CutPrefix(s, "ref: "); ok {
		return strings.HasPrefix(ref, "refs/") && validRefName(ref)
	}
	return isHex(s) && (len(s) == 40 || len(s) == 64)
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "file"
	default:
		return "special file"
	}
}

func idOf(fi fs.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: st.Ino}
	}
	return fileID{}
}

func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	if !fi.IsDir() {
		return fileID{}, fmt.Errorf("%s is not a directory", path)
	}
	return idOf(fi), nil
}

// readEntry reads one entry without following a symlink; nil when absent.
func readEntry(p string) (*entry, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	e := &entry{mode: fi.Mode()}
	switch {
	case fi.Mode().IsRegular():
		if fi.Size() > sealTreeMax {
			return nil, fmt.Errorf("%s is %d bytes, too large to seal", p, fi.Size())
		}
		if e.data, err = os.ReadFile(p); err != nil {
			return nil, err
		}
	case fi.Mode()&fs.ModeSymlink != 0:
		if e.link, err = os.Readlink(p); err != nil {
			return nil, err
		}
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a directory, expected a file", p)
	default:
		return nil, fmt.Errorf("%s is a special file", p)
	}
	return e, nil
}

// readTree reads a directory tree (nil when absent), symlinks as symlinks.
func readTree(dir string) (map[string]*entry, error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	t := map[string]*entry{}
	total := int64(0)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			t[rel] = &entry{mode: info.Mode()}
			return nil
		}
		e, err := readEntry(p)
		if err != nil {
			return err
		}
		if e == nil {
			return nil
		}
		total += int64(len(e.data))
		if total > sealTreeMax {
			return fmt.Errorf("%s holds more than %d bytes, too large to seal", dir, sealTreeMax)
		}
		t[rel] = e
		return nil
	})
	return t, err
}

// sameEntry reports whether p is exactly e.
func sameEntry(p string, fi fs.FileInfo, e *entry) bool {
	if fi.Mode().Type() != e.mode.Type() {
		return false
	}
	switch {
	case fi.Mode().IsRegular():
		if fi.Mode().Perm() != e.mode.Perm() || fi.Size() != int64(len(e.data)) {
			return false
		}
		b, err := os.ReadFile(p)
		return err == nil && bytes.Equal(b, e.data)
	case fi.Mode()&fs.ModeSymlink != 0:
		l, err := os.Readlink(p)
		return err == nil && l == e.link
	case fi.IsDir():
		return true
	}
	return false
}

// restoreFile makes p exactly e (absent when e is nil), never following a
// symlink planted at p.
func restoreFile(p string, e *entry) error {
	fi, err := os.Lstat(p)
	exists := err == nil
	if e == nil {
		if exists {
			return os.RemoveAll(p)
		}
		return nil
	}
	if exists && sameEntry(p, fi, e) {
		return nil
	}
	if exists && (fi.IsDir() || e.mode&fs.ModeSymlink != 0) {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return writeEntry(p, e)
}

// writeEntry creates e at p: a regular file through a temporary file and a
// rename (which replaces a symlink rather than writing through it).
func writeEntry(p string, e *entry) error {
	switch {
	case e.mode.IsDir():
		if err := os.Mkdir(p, e.mode.Perm()|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	case e.mode&fs.ModeSymlink != 0:
		if err := os.RemoveAll(p); err != nil {
			return err
		}
		return os.Symlink(e.link, p)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".agent-loop-restore-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(e.data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Chmod(e.mode.Perm()); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// restoreTree makes dir exactly the sealed tree t: entries added since the
// seal are removed, changed ones rewritten, deleted ones recreated.
func restoreTree(dir string, t map[string]*entry) error {
	fi, err := os.Lstat(dir)
	exists := err == nil
	if t == nil {
		if exists {
			return os.RemoveAll(dir)
		}
		return nil
	}
	if exists && !fi.IsDir() {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		exists = false
	}
	if !exists {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		e := t[rel]
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if e != nil && sameEntry(p, info, e) {
			return nil
		}
		if err := os.RemoveAll(p); err != nil {
			return err
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return err
	}
	rels := make([]string, 0, len(t))
	for rel := range t {
		rels = append(rels, rel)
	}
	sort.Strings(rels) // parents before children
	for _, rel := range rels {
		p := filepath.Join(dir, rel)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if err := writeEntry(p, t[rel]); err != nil {
			return err
		}
	}
	return nil
}
