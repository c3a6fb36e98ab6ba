package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/process"
)

// Checkout states Prepare reports.
const (
	CheckoutCreated  = "created" // cloned from the mirror at the labelled commit
	CheckoutPresent  = "present" // already there at the labelled commit
	CheckoutUnproven = "present, not a clone (commit not verified)"
	// CheckoutReplaced: a snapshot that was not a clone (unpacked with git
	// archive, which drops export-ignore files such as tests/ and
	// .github/) was replaced by a clone at the labelled commit.
	CheckoutReplaced = "replaced a snapshot by a clone"
	CheckoutFailed   = "failed"
)

// PrepareOptions say where the mirrors are and where the checkouts go.
type PrepareOptions struct {
	// Mirrors holds the fetch tool's snapshots: <owner>+<name>/repo is a git
	// directory (or a clone whose .git is one).
	Mirrors string
	// Checkouts receives one fresh clone per label, <owner>__<name>,
	// detached at the labelled commit. It must lie outside this repository.
	Checkouts string
	// Env is the environment of the git children (filtered of secrets).
	Env []string
	// Log receives one line per label.
	Log io.Writer
}

// Prepared is what Prepare did for one label.
type Prepared struct {
	Repo  string
	Dir   string
	State string
	Err   error
}

// MirrorGitDir returns the git directory of repo's snapshot under mirrors.
func MirrorGitDir(mirrors, repo string) (string, error) {
	base := filepath.Join(mirrors, strings.Replace(repo, "/", "+", 1), "repo")
	for _, d := range []string{filepath.Join(base, ".git"), base} {
		if fi, err := os.Stat(filepath.Join(d, "objects")); err == nil && fi.IsDir() {
			return d, nil
		}
	}
	return "", fmt.Errorf("no mirror of %s under %s: fetch github:%s first", repo, mirrors, repo)
}

// Prepare materialises every label's commit as a clone in opts.Checkouts,
// skipping those already there at the right commit. A clone is made in a
// sibling ".part" directory and renamed into place only when complete, so a
// failure leaves nothing half-written. It returns one Prepared per label and
// an error joining every failure.
func Prepare(ctx context.Context, labels []Label, opts PrepareOptions) ([]Prepared, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if err := os.MkdirAll(opts.Checkouts, 0o755); err != nil {
		return nil, fmt.Errorf("creating checkouts directory %s: %w", opts.Checkouts, err)
	}
	var out []Prepared
	var errs []error
	for _, l := range labels {
		p := prepareOne(ctx, l, opts)
		if p.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", l.Repo, p.Err))
		}
		fmt.Fprintf(opts.Log, "%-45s %s", l.Repo, p.State)
		if p.Err != nil {
			fmt.Fprintf(opts.Log, ": %v", p.Err)
		}
		fmt.Fprintln(opts.Log)
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

func prepareOne(ctx context.Context, l Label, opts PrepareOptions) Prepared {
	dest := filepath.Join(opts.Checkouts, l.Slug())
	p := Prepared{Repo: l.Repo, Dir: dest, State: CheckoutFailed}
	if fi, err := os.Stat(dest); err == nil {
		if !fi.IsDir() {
			p.Err = fmt.Errorf("%s exists and is not a directory: remove it", dest)
			return p
		}
		head, isClone, err := CheckoutHead(ctx, dest, opts.Env)
		switch {
		case err != nil:
			p.Err = err
		case !isClone:
			// A snapshot unpacked without git (git archive honours
			// export-ignore and drops tests/, .github/, phpunit.xml.dist):
			// replaced by a clone when the mirror has the commit, kept
			// unverified otherwise.
			if _, merr := MirrorGitDir(opts.Mirrors, l.Repo); merr != nil {
				p.State = CheckoutUnproven
				return p
			}
			return replaceSnapshot(ctx, l, opts, dest)
		case head == l.Commit:
			p.State = CheckoutPresent
		default:
			p.Err = fmt.Errorf("%s is at %s, the label at %s: remove the directory and prepare again", dest, head, l.Commit)
		}
		return p
	}
	if err := cloneInto(ctx, l, opts, dest); err != nil {
		p.Err = err
		return p
	}
	p.State = CheckoutCreated
	return p
}

// replaceSnapshot clones the labelled commit next to a snapshot that is not
// a clone, then swaps the two: the snapshot is removed only once the clone
// is complete, so a failure leaves the snapshot as it was.
func replaceSnapshot(ctx context.Context, l Label, opts PrepareOptions, dest string) Prepared {
	p := Prepared{Repo: l.Repo, Dir: dest, State: CheckoutFailed}
	fresh := dest + ".clone"
	if err := os.RemoveAll(fresh); err != nil {
		p.Err = fmt.Errorf("removing stale %s: %w", fresh, err)
		return p
	}
	if err := cloneInto(ctx, l, opts, fresh); err != nil {
		p.Err = fmt.Errorf("replacing the snapshot %s by a clone: %w", dest, err)
		return p
	}
	old := dest + ".snapshot"
	if err := os.RemoveAll(old); err != nil {
		_ = os.RemoveAll(fresh)
		p.Err = fmt.Errorf("removing stale %s: %w", old, err)
		return p
	}
	if err := os.Rename(dest, old); err != nil {
		_ = os.RemoveAll(fresh)
		p.Err = fmt.Errorf("moving the snapshot %s aside: %w", dest, err)
		return p
	}
	if err := os.Rename(fresh, dest); err != nil {
		_ = os.Rename(old, dest)
		_ = os.RemoveAll(fresh)
		p.Err = fmt.Errorf("moving the clone into %s: %w", dest, err)
		return p
	}
	if err := os.RemoveAll(old); err != nil {
		p.Err = fmt.Errorf("removing the replaced snapshot %s: %w", old, err)
		return p
	}
	p.State = CheckoutReplaced
	return p
}

// cloneInto clones the mirror of l into dest, detached at the labelled
// commit. The clone is made in dest+".part" and renamed into place only when
// complete.
func cloneInto(ctx context.Context, l Label, opts PrepareOptions, dest string) error {
	mirror, err := MirrorGitDir(opts.Mirrors, l.Repo)
	if err != nil {
		return err
	}
	if _, err := gitOut(ctx, opts.Env, "", "--git-dir="+mirror, "cat-file", "-e", l.Commit+"^{commit}"); err != nil {
		return fmt.Errorf("the mirror %s lacks commit %s (fetch the repository again, or relabel at its HEAD): %w", mirror, l.Commit, err)
	}
	part := dest + ".part"
	if err := os.RemoveAll(part); err != nil {
		return fmt.Errorf("removing stale %s: %w", part, err)
	}
	if _, err := gitOut(ctx, opts.Env, "", "clone", "--quiet", "--no-checkout", mirror, part); err != nil {
		_ = os.RemoveAll(part)
		return fmt.Errorf("cloning %s: %w", mirror, err)
	}
	if _, err := gitOut(ctx, opts.Env, part, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", l.Commit); err != nil {
		_ = os.RemoveAll(part)
		return fmt.Errorf("checking out %s: %w", l.Commit, err)
	}
	if err := os.Rename(part, dest); err != nil {
		_ = os.RemoveAll(part)
		return fmt.Errorf("moving %s into place: %w", part, err)
	}
	return nil
}

// CheckoutHead returns the commit checked out in dir, and whether dir is a
// git clone at all (a snapshot unpacked with git archive is not).
func CheckoutHead(ctx context.Context, dir string, env []string) (string, bool, error) {
	if _, err := os.Stat(filepath.Join(dir, ".git")); errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	out, err := gitOut(ctx, env, dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", true, fmt.Errorf("reading the commit of %s: %w", dir, err)
	}
	return strings.TrimSpace(out), true, nil
}

// gitOut runs git with a filtered environment and returns its stdout.
func gitOut(ctx context.Context, env []string, dir string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	res, err := process.Run(ctx, process.Spec{
		Path: "git", Args: args, Dir: dir, Env: env,
		Stdout: &stdout, Stderr: &stderr, Timeout: 10 * time.Minute,
	})
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	if res.ExitCode != 0 || res.Stopped() {
		return "", fmt.Errorf("git %s: exit %d: %s", strings.Join(args, " "), res.ExitCode, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
