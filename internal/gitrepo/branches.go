package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Branches. The private git directory holds the value of every branch the
// harness knows: the user's branch as it was when the loop started (the
// README promises it never moves) and the loop branch as the harness last
// committed it. The repository's refs are a mirror. After every agent run
// (before every operation) the mirror is compared with the record and put
// back where the agent moved, deleted, packed or re-pointed a branch, and
// each repair is reported as a Notice. .git/HEAD is put back to the
// harness's branch the same way.

// checkRepo runs before every operation: .git must be the directory sealed
// when the repository was opened, the sealed control files are restored
// for the user's sake (the harness's git does not read them), and the
// recorded branches and HEAD are put back.
func (r *Repo) checkRepo(ctx context.Context) error {
	if err := r.verify(r.seal); err != nil {
		return err
	}
	if !r.weak.gitDir {
		if err := r.restoreSealed(); err != nil {
			return err
		}
	}
	if r.weak.refs {
		return nil
	}
	if err := r.restoreBranches(ctx); err != nil {
		return err
	}
	return r.restoreRepoHead()
}

// recordedBranches lists the branches of the private git directory.
func (r *Repo) recordedBranches() ([]string, error) {
	root := filepath.Join(r.p.gitDir(), "refs", "heads")
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(filepath.Join(r.p.gitDir()), p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// restoreBranches puts every recorded branch back in the repository.
func (r *Repo) restoreBranches(ctx context.Context) error {
	refs, err := r.recordedBranches()
	if err != nil {
		return fmt.Errorf("reading the recorded branches: %w", err)
	}
	for _, ref := range refs {
		want := r.readPrivRef(ref)
		if want == "" {
			continue
		}
		got, known := r.readRepoRef(ref)
		if known && got == want {
			continue
		}
		if err := r.clearStaleRefLock(ctx, ref); err != nil {
			return err
		}
		if !known {
			got = ""
		}
		if err := r.updateRef(ref, want, got, "agent-loop: restore the recorded branch"); err != nil {
			return fmt.Errorf("restoring %s to %.12s: %w", ref, want, err)
		}
		was := "deleted or replaced"
		if got != "" {
			was = "moved to " + got[:min(12, len(got))]
		}
		r.notice(Notice{Kind: NoticeBranchRestored, Path: ref,
			Detail: fmt.Sprintf("%s was %s while the agent ran; the harness put it back at %.12s", ref, was, want)})
	}
	return nil
}

// privHead reads the private HEAD: the branch ref ("" when detached) and
// the commit ("" when unborn).
func (r *Repo) privHead() (ref, sha string) {
	b, err := readSmall(filepath.Join(r.p.gitDir(), "HEAD"), 4096)
	if err != nil {
		return "", ""
	}
	s := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(s, "ref: "); ok {
		return ref, r.readPrivRef(ref)
	}
	return "", s
}

func (r *Repo) privHeadSHA() string {
	_, sha := r.privHead()
	return sha
}

// setHeads points the private HEAD and the repository's HEAD at branch.
func (r *Repo) setHeads(branch string) error {
	want := []byte("ref: refs/heads/" + branch + "\n")
	if err := writeEntry(filepath.Join(r.p.gitDir(), "HEAD"), &entry{mode: 0o600, data: want}); err != nil {
		return fmt.Errorf("pointing the harness's HEAD at %s: %w", branch, err)
	}
	p := filepath.Join(r.gitDir, "HEAD")
	if err := restoreFile(p, &entry{mode: 0o644, data: want}); err != nil {
		return fmt.Errorf("pointing %s at %s: %w", p, branch, err)
	}
	return nil
}

// restoreRepoHead makes .git/HEAD name what the private HEAD names.
func (r *Repo) restoreRepoHead() error {
	want, err := readSmall(filepath.Join(r.p.gitDir(), "HEAD"), 4096)
	if err != nil {
		return fmt.Errorf("reading the harness's HEAD: %w", err)
	}
	p := filepath.Join(r.gitDir, "HEAD")
	if got, err := readSmall(p, 4096); err == nil && bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		return nil
	}
	if err := restoreFile(p, &entry{mode: 0o644, data: want}); err != nil {
		return fmt.Errorf("restoring %s: %w", p, err)
	}
	r.notice(Notice{Kind: NoticeHeadRestored, Path: "HEAD",
		Detail: fmt.Sprintf("HEAD no longer named %s after the agent ran; the harness put it back", strings.TrimSpace(string(want)))})
	return nil
}

// mirrorBranch moves the repository's branch from old to sha, then records
// sha: objects first, the mirror next (it can fail on a held lock), the
// record last (a crash in between leaves the record, which the next
// operation puts back).
func (r *Repo) mirrorBranch(ctx context.Context, ref, sha, old, msg string) error {
	if err := r.syncObjects(ctx); err != nil {
		return err
	}
	if r.weak.gitDir || r.weak.refs {
		// The weakened harness of the tests has no record to keep the
		// mirror honest: it takes the repository's value as it finds it.
		if cur, known := r.readRepoRef(ref); known {
			old = cur
		}
	}
	if cur, known := r.readRepoRef(ref); !known || cur != sha {
		if err := r.updateRef(ref, sha, old, msg); err != nil {
			return fmt.Errorf("moving %s to %.12s: %w", ref, sha, err)
		}
	}
	return r.setPrivRef(ref, sha)
}
