package state

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/aiwg/agent-loop/internal/safefs"
)

// The harness keeps a loop's live state where the sandboxed agent cannot
// reach it (a private directory laid out like the work tree:
// NewDir(private, id), NewStore(private)). What the user sees and what is
// uploaded is the seed layout under the work tree's .aiwg/ralph/, which a
// Mirror writes from that trusted copy between runs, when nothing of the
// agent's runs (after the sandbox's sweep). It never reads the seed copy
// back: the agent may have changed it.

// Mirror copies a loop's trusted directory to its seed directory.
type Mirror struct {
	Trusted Dir // the harness's copy: NewDir(privateDir, id)
	Seed    Dir // the seed layout: NewDir(workTree, id)
	// Registry also copies the trusted registry.json.
	Registry bool

	done map[string]copied // what the last Sync wrote, by loop-relative path
}

// copied identifies a source file and the copy written from it, so that a
// Sync copies only what changed on either side (a ctime cannot be set
// back: an agent that rewrites a copy and restores its mtime is seen).
type copied struct {
	srcIno                  uint64
	srcSize, srcMtime, srcC int64
	dstIno                  uint64
	dstC                    int64
}

// NewMirror returns the mirror of the loop trusted into seed.
func NewMirror(trusted, seed Dir) *Mirror {
	return &Mirror{Trusted: trusted, Seed: seed, Registry: true, done: map[string]copied{}}
}

// notMirrored are the loop directory's files that are not copied, nor
// removed from the seed: the control file is the user's way in (agent-loop
// pause writes it into the seed directory), with its temporary files.
func notMirrored(rel string) bool {
	base := path.Base(rel)
	return rel == "control" || strings.HasPrefix(base, ".control"+tempMarker) || strings.HasPrefix(base, ".") && strings.Contains(base, tempMarker)
}

// Sync makes the seed loop directory equal to the trusted one: each
// regular file of the trusted copy that changed (or whose copy changed)
// is written again, atomically, through opens that never follow a
// symlink; whatever else is in the seed directory (a file the agent
// planted, a symlink, a FIFO) is removed, but the control file. Files are
// streamed: a large log costs a buffer, not its size.
func (m *Mirror) Sync() error {
	if m.done == nil {
		m.done = map[string]copied{}
	}
	src, err := safefs.OpenRoot(m.Trusted.Root)
	if err != nil {
		return fmt.Errorf("mirroring the loop state: %w", err)
	}
	defer src.Close()
	dst, err := safefs.OpenRoot(m.Seed.Root)
	if err != nil {
		return fmt.Errorf("mirroring the loop state: %w", err)
	}
	defer dst.Close()
	loopRel := path.Join(LoopsDir, m.Trusted.LoopID)
	seedRel := path.Join(LoopsDir, m.Seed.LoopID)
	keep := map[string]bool{}
	err = src.Walk(loopRel, func(e *safefs.Entry) error {
		rel := strings.TrimPrefix(strings.TrimPrefix(e.Rel, loopRel), "/")
		if rel == "" {
			return nil
		}
		if notMirrored(rel) {
			return nil
		}
		keep[rel] = true
		if e.IsDir() {
			return dst.MkdirAll(path.Join(seedRel, rel), 0o755)
		}
		if !e.IsRegular() {
			return nil // the harness writes none; nothing to copy
		}
		return m.copyFile(dst, e, path.Join(seedRel, rel), rel)
	})
	if err != nil {
		return fmt.Errorf("mirroring %s: %w", m.Trusted.Path(), err)
	}
	// What the seed directory holds that the trusted one does not.
	var extra []string
	err = dst.Walk(seedRel, func(e *safefs.Entry) error {
		rel := strings.TrimPrefix(strings.TrimPrefix(e.Rel, seedRel), "/")
		if rel == "" || notMirrored(rel) && !e.IsDir() {
			return nil
		}
		if !keep[rel] || e.IsDir() != isDirIn(src, path.Join(loopRel, rel)) {
			extra = append(extra, rel)
			if e.IsDir() {
				return safefs.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mirroring %s: %w", m.Seed.Path(), err)
	}
	for _, rel := range extra {
		delete(m.done, rel)
		if err := dst.RemoveAll(path.Join(seedRel, rel)); err != nil {
			return err
		}
	}
	if m.Registry {
		if err := m.copyRegistry(src, dst); err != nil {
			return err
		}
	}
	return nil
}

func isDirIn(r *safefs.Root, rel string) bool {
	mode, _, err := r.Lstat(rel)
	return err == nil && mode.IsDir()
}

// copyFile writes the trusted entry e to dstRel unless neither side
// changed since the last copy.
func (m *Mirror) copyFile(dst *safefs.Root, e *safefs.Entry, dstRel, key string) error {
	if c, ok := m.done[key]; ok && c.srcIno == e.Ino && c.srcSize == e.Size && c.srcMtime == e.Mtime && c.srcC == e.Ctime {
		if ino, ctime, ok := identity(dst, dstRel); ok && ino == c.dstIno && ctime == c.dstC {
			return nil
		}
	}
	f, err := e.Open()
	if err != nil {
		return err
	}
	defer f.Close()
	perm := e.Mode.Perm()
	if err := dst.WriteFile(dstRel, f, safefs.WriteOptions{Perm: perm}); err != nil {
		return err
	}
	ino, ctime, _ := identity(dst, dstRel)
	m.done[key] = copied{srcIno: e.Ino, srcSize: e.Size, srcMtime: e.Mtime, srcC: e.Ctime, dstIno: ino, dstC: ctime}
	return nil
}

// identity is the inode and ctime of rel beneath r (no symlink followed).
func identity(r *safefs.Root, rel string) (uint64, int64, bool) {
	var ino uint64
	var ctime int64
	found := false
	_ = r.Walk(rel, func(e *safefs.Entry) error {
		if e.IsRegular() {
			ino, ctime, found = e.Ino, e.Ctime, true
		}
		return safefs.SkipDir
	})
	return ino, ctime, found
}

func (m *Mirror) copyRegistry(src, dst *safefs.Root) error {
	err := src.Walk(RegistryFile, func(e *safefs.Entry) error {
		if !e.IsRegular() {
			return nil
		}
		return m.copyFile(dst, e, RegistryFile, "\x00registry")
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed meanwhile by another loop's update
	}
	return err
}

// LoopFile is one regular file of a loop directory, for the state ref and
// the artifact.
type LoopFile struct {
	Rel  string // relative to the loop directory, slash-separated
	Size int64
}

// Files streams the regular files of the loop directory to fn, in name
// order, each through an open that refuses symlinks and FIFOs; a file
// above max bytes is not read, only listed in skipped (with the reason),
// as are entries that are not regular files. A 1.5 GiB file costs nothing
// but its entry. fn must not keep r after it returns.
func (d Dir) Files(max int64, fn func(f LoopFile, r io.Reader) error) (skipped []string, err error) {
	root, err := safefs.OpenRoot(d.Root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	loopRel := path.Join(LoopsDir, d.LoopID)
	err = root.Walk(loopRel, func(e *safefs.Entry) error {
		rel := strings.TrimPrefix(strings.TrimPrefix(e.Rel, loopRel), "/")
		switch {
		case rel == "" || e.IsDir():
			return nil
		case !e.IsRegular():
			skipped = append(skipped, rel+" (not a regular file)")
			return nil
		case e.Size > max:
			skipped = append(skipped, fmt.Sprintf("%s (%d bytes, over the limit of %d)", rel, e.Size, max))
			return nil
		}
		f, err := e.Open()
		if err != nil {
			skipped = append(skipped, rel+" ("+err.Error()+")")
			return nil
		}
		defer f.Close()
		return fn(LoopFile{Rel: rel, Size: e.Size}, io.LimitReader(f, max))
	})
	return skipped, err
}
