package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aiwg/agent-loop/internal/safefs"
)

// treeOwner is who owned the work tree before the loop, and the mode of
// its root directory; it is recorded in the private directory, so that a
// loop started after a crash can still give the tree back.
type treeOwner struct {
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	Mode uint32 `json:"mode"` // permission, sticky, setgid bits of the root
}

const ownerRecord = "worktree-owner.json"

// handedOverMode is the work tree root's mode during the loop: the
// sandbox's group may create entries, and the sticky bit keeps it from
// renaming or removing the ones it does not own (.git, .aiwg).
const handedOverMode = fs.ModeSticky | 0o775

// Top-level entries of the work tree the sandbox user never owns: git's
// data (the agent may read it, as its git does) and the harness's seed
// directory.
var keptFromAgent = map[string]bool{".git": true, ".aiwg": true}

// takeWorkTree records the owner and hands the work tree to the sandbox
// user (see handOver); it runs once, at New.
func (s *Sandbox) takeWorkTree() error {
	r, err := safefs.OpenRoot(s.workTree)
	if err != nil {
		return err
	}
	defer r.Close()
	var rootEntry *safefs.Entry
	_ = r.Walk("", func(e *safefs.Entry) error { rootEntry = e; return safefs.SkipDir })
	if rootEntry == nil {
		return fmt.Errorf("reading the work tree %s", s.workTree)
	}
	owner := treeOwner{UID: rootEntry.UID, GID: rootEntry.GID, Mode: modeBits(rootEntry.Mode)}
	recPath := filepath.Join(s.private, ownerRecord)
	if b, err := safefs.ReadFile(recPath, 4096); err == nil {
		var rec treeOwner
		// The tree still looks handed over: a loop crashed before Close.
		if json.Unmarshal(b, &rec) == nil && (rootEntry.UID == 0 && rootEntry.GID == s.gid || rootEntry.UID == s.uid) {
			fmt.Fprintf(s.log, "agent-loop: the work tree was still handed to the sandbox (an earlier loop ended without giving it back); its owner was uid %d\n", rec.UID)
			owner = rec
		}
	}
	if owner.UID == s.uid {
		return fmt.Errorf("the work tree %s belongs to the sandbox user %s (uid %d): a loop that crashed left it so; give it back with `chown -R <you> %s`", s.workTree, s.acct.name, s.uid, s.workTree)
	}
	rec, _ := json.Marshal(owner)
	if err := os.WriteFile(recPath, rec, 0o600); err != nil {
		return fmt.Errorf("recording the work tree's owner: %w", err)
	}
	s.owner = owner
	// git's data: never the sandbox user's, never writable by others.
	err = r.Walk(".git", func(e *safefs.Entry) error {
		if e.Mode&fs.ModeSymlink != 0 {
			return nil
		}
		if e.UID == s.uid || e.GID == s.gid {
			if err := e.Lchown(owner.UID, owner.GID); err != nil {
				return err
			}
		}
		if e.Mode.Perm()&0o002 != 0 {
			return e.Chmod(e.Mode &^ 0o002)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("taking .git out of the sandbox's reach: %w", err)
	}
	// The seed directory is the harness's (root's) for the loop; made now
	// if missing, or the agent could make it (the root is group-writable).
	if err := r.MkdirAll(".aiwg", 0o755); err != nil {
		return fmt.Errorf("creating .aiwg: %w", err)
	}
	err = r.Walk(".aiwg", func(e *safefs.Entry) error {
		if e.UID != 0 || e.GID != 0 {
			return e.Lchown(0, 0)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("taking .aiwg out of the sandbox's reach: %w", err)
	}
	return s.handOver(r, true)
}

// handOver gives the sandbox user the work tree's files but .git and
// .aiwg: at first (initial) those of the owner and of root, later those of
// root only (what the harness wrote between runs: git restored a file, the
// judge reverted one). A regular file with more than one link is handed
// over only at first and only when it is the owner's: chowning a link
// chowns the file it shares, and a link the agent made could be to any
// file it can name. The root directory becomes root's, group of the
// sandbox, sticky.
func (s *Sandbox) handOver(r *safefs.Root, initial bool) error {
	var skipped []string
	err := r.Walk("", func(e *safefs.Entry) error {
		if e.Rel == "." {
			if err := e.Lchown(0, s.gid); err != nil {
				return err
			}
			if e.Mode&(fs.ModePerm|fs.ModeSticky) != handedOverMode {
				return e.Chmod(handedOverMode)
			}
			return nil
		}
		if top, _, _ := strings.Cut(e.Rel, "/"); keptFromAgent[top] {
			return safefs.SkipDir
		}
		switch {
		case e.UID == s.uid:
			return nil
		case e.UID != 0 && (!initial || e.UID != s.owner.UID):
			return nil
		case e.IsRegular() && e.Nlink > 1 && (!initial || e.UID != s.owner.UID):
			skipped = append(skipped, e.Rel)
			return nil
		}
		return e.Lchown(s.uid, s.gid)
	})
	if err != nil {
		return fmt.Errorf("handing the work tree to the sandbox user: %w", err)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(s.log, "agent-loop: left %d hard-linked file(s) of the work tree as they are (the sandbox cannot change them): %s\n", len(skipped), strings.Join(capList(skipped, 5), ", "))
	}
	return nil
}

// giveBack returns the work tree to its owner: every entry of the sandbox
// user, of root or of the sandbox's group becomes the owner's (a hard
// link to a file of root is left alone), and the root directory gets its
// mode back.
func (s *Sandbox) giveBack() error {
	r, err := safefs.OpenRoot(s.workTree)
	if err != nil {
		return err
	}
	defer r.Close()
	var skipped []string
	var errs []error
	err = r.Walk("", func(e *safefs.Entry) error {
		if e.UID == s.owner.UID && e.GID == s.owner.GID {
			return nil
		}
		if e.UID != s.uid && e.UID != 0 && e.GID != s.gid {
			return nil // someone else's: not ours to change
		}
		if e.IsRegular() && e.Nlink > 1 && e.UID == 0 && s.owner.UID != 0 {
			skipped = append(skipped, e.Rel)
			return nil
		}
		if err := e.Lchown(s.owner.UID, s.owner.GID); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		return nil
	})
	errs = append(errs, err)
	errs = append(errs, r.Walk("", func(e *safefs.Entry) error {
		if err := e.Chmod(fromModeBits(s.owner.Mode)); err != nil {
			return err
		}
		return safefs.SkipDir
	}))
	if len(skipped) > 0 {
		fmt.Fprintf(s.log, "agent-loop: left %d hard-linked file(s) owned by root in the work tree: %s\n", len(skipped), strings.Join(capList(skipped, 5), ", "))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("giving the work tree %s back to uid %d: %w", s.workTree, s.owner.UID, err)
	}
	_ = os.Remove(filepath.Join(s.private, ownerRecord))
	return nil
}

func modeBits(m fs.FileMode) uint32 {
	b := uint32(m.Perm())
	if m&fs.ModeSticky != 0 {
		b |= 0o1000
	}
	if m&fs.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&fs.ModeSetuid != 0 {
		b |= 0o4000
	}
	return b
}

func fromModeBits(b uint32) fs.FileMode {
	m := fs.FileMode(b & 0o777)
	if b&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	if b&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if b&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	return m
}

func capList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("and %d more", len(s)-n))
}
