package gitrepo

import (
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

// Refs without a git process. The harness reads and moves its branch every
// iteration; doing it the way git does (loose ref file, packed-refs, a
// ref.lock created exclusively and renamed into place, a reflog line) saves
// a process each time. Anything unusual is left to git.

// readRef reads a ref: a loose ref file, else its packed-refs line. known is
// false when git must decide (symbolic ref, symlink, malformed file); a
// known ref that exists nowhere has sha "".
func (r *Repo) readRef(ref string) (sha string, known bool) {
	p, ok := r.refPath(ref)
	if !ok {
		return "", false
	}
	fi, err := os.Lstat(p)
	if err == nil {
		if !fi.Mode().IsRegular() || fi.Size() > 128 {
			return "", false
		}
		b, err := os.ReadFile(p)
		v := strings.TrimSpace(string(b))
		if err != nil || !isHex(v) || len(v) != 2*r.hashLen() {
			return "", false
		}
		return v, true
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	packed := filepath.Join(r.commonDir, "packed-refs")
	if fi, err := os.Lstat(packed); errors.Is(err, fs.ErrNotExist) {
		return "", true
	} else if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	b, err := os.ReadFile(packed)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, name, found := strings.Cut(line, " "); found && name == ref {
			if !isHex(v) || len(v) != 2*r.hashLen() {
				return "", false
			}
			return v, true
		}
	}
	return "", true
}

// refPath is the loose file of ref, provided no directory on the way is a
// symlink (a planted symlink would redirect the write).
func (r *Repo) refPath(ref string) (string, bool) {
	if !validRefName(ref) || !strings.HasPrefix(ref, "refs/") {
		return "", false
	}
	dir := r.commonDir
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
	return filepath.Join(r.commonDir, filepath.FromSlash(ref)), true
}

// refValue returns the commit ref points at ("" when it does not exist),
// without a process when the ref is plain.
func (r *Repo) refValue(ctx context.Context, ref string) (string, error) {
	if v, ok := r.readRef(ref); ok {
		return v, nil
	}
	return r.resolve(ctx, ref)
}

// moveRef moves ref from old ("" = must not exist) to sha, in process when
// the ref is plain, else with git update-ref.
func (r *Repo) moveRef(ctx context.Context, ref, sha, old, msg string) error {
	done, err := r.updateRef(ref, sha, old, msg)
	if err == nil && !done {
		if old == "" {
			old = r.zeroOID()
		}
		_, err = r.git(ctx, gitCall{args: []string{"update-ref", "-m", msg, ref, sha, old}})
	}
	if err != nil {
		return fmt.Errorf("moving %s to %.12s: %w", ref, sha, err)
	}
	return nil
}

// updateRef moves ref from oldSHA ("" = must not exist) to newSHA like
// `git update-ref -m msg ref new old`. done is false when git should do it
// instead (unusual ref storage, a lock held).
func (r *Repo) updateRef(ref, newSHA, oldSHA, msg string) (done bool, err error) {
	p, ok := r.refPath(ref)
	if !ok {
		return false, nil
	}
	cur, ok := r.readRef(ref)
	if !ok {
		return false, nil
	}
	if cur != oldSHA {
		return true, fmt.Errorf("%s is at %q, expected %q: it moved concurrently", ref, cur, oldSHA)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, nil
	}
	lock := p + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, nil // held or unwritable: git reports it properly
	}
	_, werr := f.WriteString(newSHA + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	crashpoint.Hit("ref-locked")
	if now, ok := r.readRef(ref); werr == nil && (!ok || now != oldSHA) {
		werr = fmt.Errorf("%s moved while it was locked", ref)
	}
	if werr == nil {
		werr = os.Rename(lock, p)
	}
	if werr != nil {
		os.Remove(lock)
		return true, fmt.Errorf("updating %s: %w", ref, werr)
	}
	r.appendReflog(ref, oldSHA, newSHA, msg)
	return true, nil
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
	p, ok := r.refPath(ref)
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

// appendReflog records a ref update as git does (best effort, like git).
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
	if b, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD")); err == nil && strings.TrimSpace(string(b)) == "ref: "+ref {
		logs = append(logs, filepath.Join(r.gitDir, "logs", "HEAD"))
	}
	for _, l := range logs {
		if fi, err := os.Lstat(l); err == nil && !fi.Mode().IsRegular() {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
			continue
		}
		f, err := os.OpenFile(l, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			continue
		}
		f.WriteString(line)
		f.Close()
	}
}
