package gitrepo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aiwg/agent-loop/internal/crashpoint"
)

// Refs without a git process. The harness's refs live in its private git
// directory (the recorded values); the repository's refs are a mirror the
// harness moves with git's lock-file protocol (a ref.lock created
// exclusively and renamed into place, a reflog line) and checks after
// every agent run.

// refDir is where refs are read and written: the repository (common dir,
// its own git dir for HEAD, reflogs kept) or the private git directory.
type refDir struct {
	common, gitDir string
	reflog         bool
}

// repoRefs is the repository's ref store.
func (r *Repo) repoRefs() refDir {
	return refDir{common: r.commonDir, gitDir: r.gitDir, reflog: true}
}

// privRefs is the private git directory's ref store.
func (r *Repo) privRefs() refDir {
	return refDir{common: r.p.gitDir(), gitDir: r.p.gitDir()}
}

// maxPackedRefs bounds the packed-refs file read in process.
const maxPackedRefs = 64 << 20

// readRef reads a ref: a loose ref file, else its packed-refs line. known is
// false when the storage is unusual (symbolic ref, symlink, malformed file,
// an oversized packed-refs); a known ref that exists nowhere has sha "".
func (r *Repo) readRef(d refDir, ref string) (sha string, known bool) {
	p, ok := refPath(d, ref)
	if !ok {
		return "", false
	}
	b, err := readSmall(p, 128)
	if err == nil {
		v := strings.TrimSpace(string(b))
		if !isHex(v) || len(v) != 2*r.hashLen() {
			return "", false
		}
		return v, true
	}
	if fi, lerr := os.Lstat(p); lerr == nil || !errors.Is(lerr, fs.ErrNotExist) {
		_ = fi
		return "", false
	}
	f, err := os.OpenFile(filepath.Join(d.common, "packed-refs"), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", true
	}
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxPackedRefs {
		return "", false
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 4096)
	for sc.Scan() {
		if v, name, found := strings.Cut(sc.Text(), " "); found && name == ref {
			if !isHex(v) || len(v) != 2*r.hashLen() {
				return "", false
			}
			return v, true
		}
	}
	if sc.Err() != nil {
		return "", false
	}
	return "", true
}

// readRepoRef reads a ref of the repository.
func (r *Repo) readRepoRef(ref string) (string, bool) { return r.readRef(r.repoRefs(), ref) }

// readPrivRef reads a ref of the private git directory ("" when absent).
func (r *Repo) readPrivRef(ref string) string {
	v, _ := r.readRef(r.privRefs(), ref)
	return v
}

// refPath is the loose file of ref, provided no directory on the way is a
// symlink (a planted symlink would redirect the write).
func refPath(d refDir, ref string) (string, bool) {
	if !validRefName(ref) || !strings.HasPrefix(ref, "refs/") {
		return "", false
	}
	dir := d.common
	comps := strings.Split(ref, "/")
	for _, c := range comps[:len(comps)-1] {
		dir = filepath.Join(dir, c)
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || !fi.IsDir() {
			return "", false
		}
	}
	return filepath.Join(d.common, filepath.FromSlash(ref)), true
}

// writePrivateRef sets a ref of the private git directory.
func writePrivateRef(p *private, ref, sha string) error {
	path := filepath.Join(p.gitDir(), filepath.FromSlash(ref))
	if !validRefName(ref) || !strings.HasPrefix(ref, "refs/") {
		return fmt.Errorf("ref %q is not valid", ref)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("recording %s: %w", ref, err)
	}
	if sha == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("recording %s: %w", ref, err)
		}
		return nil
	}
	if err := writeEntry(path, &entry{mode: 0o600, data: []byte(sha + "\n")}); err != nil {
		return fmt.Errorf("recording %s: %w", ref, err)
	}
	return nil
}

// setPrivRef records ref = sha in the private git directory.
func (r *Repo) setPrivRef(ref, sha string) error { return writePrivateRef(r.p, ref, sha) }

// updateRef moves ref from oldSHA ("" = must not exist) to newSHA in the
// repository like `git update-ref -m msg ref new old`, in process. A lock
// another process holds, a ref that moved, or storage the harness cannot
// write safely (a symlink on the way) is an error.
func (r *Repo) updateRef(ref, newSHA, oldSHA, msg string) error {
	d := r.repoRefs()
	p, ok := refPath(d, ref)
	if !ok {
		return fmt.Errorf("%s cannot be written safely (a symlink or a file where git keeps its directories): "+
			"repair .git/refs and resume", ref)
	}
	cur, known := r.readRef(d, ref)
	if known && cur != oldSHA {
		return fmt.Errorf("%s is at %q, expected %q: it moved concurrently", ref, cur, oldSHA)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("updating %s: %w", ref, err)
	}
	if !known {
		// A symbolic ref, a symlink or a malformed file where the branch
		// should be: the recorded value replaces it.
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("updating %s: %w", ref, err)
		}
	}
	lock := p + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("updating %s: cannot lock it (%w): another git process holds %s; wait for it or remove the stale lock", ref, err, lock)
	}
	var werr error
	if newSHA == "" {
		f.Close()
		werr = os.Remove(p)
		if errors.Is(werr, fs.ErrNotExist) {
			werr = nil
		}
		os.Remove(lock)
	} else {
		_, werr = f.WriteString(newSHA + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		crashpoint.Hit("ref-locked")
		if now, ok := r.readRef(d, ref); werr == nil && ok && now != oldSHA && known {
			werr = fmt.Errorf("%s moved while it was locked", ref)
		}
		if werr == nil {
			werr = os.Rename(lock, p)
		}
		if werr != nil {
			os.Remove(lock)
		}
	}
	if werr != nil {
		return fmt.Errorf("updating %s: %w", ref, werr)
	}
	if newSHA != "" {
		r.appendReflog(ref, oldSHA, newSHA, msg)
	}
	return nil
}

// staleLockAge is how old a lock on the harness's own branch must be before
// clearStaleRefLock removes it.
const staleLockAge = 2 * time.Second

// clearStaleRefLock removes the lock a killed harness left on the branch it
// is about to work on: updateRef (like git update-ref) holds <ref>.lock for
// a moment, and a SIGKILL in that moment leaves it behind, which would stop
// every later commit of the loop. Only the loop's harness moves its branch
// (the registry admits one per loop), so such a lock is a dead process's,
// or a git maintenance command's (pack-refs holds it for milliseconds): a
// lock younger than staleLockAge is waited for first.
func (r *Repo) clearStaleRefLock(ctx context.Context, ref string) error {
	p, ok := refPath(r.repoRefs(), ref)
	if !ok {
		return nil
	}
	lock := p + ".lock"
	for {
		fi, err := os.Lstat(lock)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if age := time.Since(fi.ModTime()); age >= staleLockAge || age < -time.Minute {
			if err := os.Remove(lock); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing the stale lock %s: %w", lock, err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// fileExists reports whether p exists (without following a symlink).
func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// appendReflog records a ref update in the repository as git does (best
// effort, like git).
func (r *Repo) appendReflog(ref, oldSHA, newSHA, msg string) {
	if oldSHA == "" {
		oldSHA = r.zeroOID()
	}
	now := r.opts.Now()
	line := fmt.Sprintf("%s %s %s <%s> %d %s\t%s\n", oldSHA, newSHA, r.opts.AuthorName, r.opts.AuthorEmail,
		now.Unix(), now.Format("-0700"), msg)
	var logs []string
	// git keeps reflogs for branches, and for other refs whose log exists.
	if l := filepath.Join(r.commonDir, "logs", filepath.FromSlash(ref)); strings.HasPrefix(ref, "refs/heads/") || fileExists(l) {
		logs = append(logs, l)
	}
	if b, err := readSmall(filepath.Join(r.gitDir, "HEAD"), 4096); err == nil && strings.TrimSpace(string(b)) == "ref: "+ref {
		logs = append(logs, filepath.Join(r.gitDir, "logs", "HEAD"))
	}
	for _, l := range logs {
		if fi, err := os.Lstat(l); err == nil && !fi.Mode().IsRegular() {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
			continue
		}
		f, err := os.OpenFile(l, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
		if err != nil {
			continue
		}
		f.WriteString(line)
		f.Close()
	}
}
