package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// pushAttempts is one push plus three retries (network errors only).
const pushAttempts = 4

// remoteURLs returns the URL to fetch from, the URL to push to and a
// printable name of Options.Remote, as recorded in the private directory
// when the harness first used it (url.*.insteadOf applied). ok is false
// when the remote is a name that is not configured.
func (r *Repo) remoteURLs() (fetch, push, display string, ok bool) {
	name := r.opts.Remote
	display = name
	if isURL(name) {
		display = redactURL(name)
	}
	if u, found := r.p.rec.Remotes[name]; found {
		return u.Fetch, u.Push, display, u.Fetch != ""
	}
	fetch, push, ok = r.cfg.resolveRemote(name)
	if !ok {
		return "", "", display, false
	}
	r.p.rec.Remotes[name] = remoteURLs{Fetch: fetch, Push: push}
	if err := r.p.saveRecord(); err != nil {
		return "", "", display, false
	}
	return fetch, push, display, true
}

// isURL tells a URL or path from a remote name (names cannot hold ':').
func isURL(s string) bool {
	return strings.Contains(s, "://") || strings.Contains(s, ":") || filepath.IsAbs(s) ||
		strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../")
}

// redactURL removes user information from a URL for messages.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("***")
		return u.String()
	}
	return s
}

// Push pushes refs/heads/<branch> to the remote, never forcing. A rejected
// or failed push is a *PushError; network failures are retried three times
// with backoff, authentication and non-fast-forward failures are not. The
// branch is pushed from the trusted store, to the URL recorded when the
// loop started.
func (r *Repo) Push(ctx context.Context, branch string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validBranch(branch); err != nil {
		return err
	}
	if err := r.begin(ctx); err != nil {
		return err
	}
	ref := "refs/heads/" + branch
	_, push, display, ok := r.remoteURLs()
	if !ok {
		return &PushError{Op: "push", Remote: display, Ref: ref, Reason: ReasonNoRemote,
			Err: fmt.Errorf("remote %q is not configured in %s", display, r.root)}
	}
	if r.readPrivRef(ref) == "" {
		sha, known := r.readRepoRef(ref)
		if !known || sha == "" {
			return fmt.Errorf("branch %q does not exist in %s: nothing to push", branch, r.root)
		}
		// A branch the harness did not record (the user's own): record it,
		// checked, before pushing it.
		if err := r.ensureTrusted(ctx, sha); err != nil {
			return err
		}
		if err := r.setPrivRef(ref, sha); err != nil {
			return err
		}
	}
	if r.weak.gitDir {
		// The weakened harness of the tests pushes by remote name, as git
		// resolves it from the repository's configuration now.
		push = r.opts.Remote
	}
	return r.push(ctx, push, display, ref+":"+ref, ref)
}

// push runs git push with retries.
func (r *Repo) push(ctx context.Context, target, display, refspec, ref string) error {
	args := []string{"push", "--porcelain", "--no-verify", "--no-signed", "--no-follow-tags",
		"--recurse-submodules=no", "--end-of-options", target, refspec}
	return r.remoteOp(ctx, withRepo, "push", display, ref, args)
}

// remoteOp runs a network git command with the token's credentials and
// retries network failures. A push runs withRepo (the history below the
// loop's base may be in the repository's objects only; the remote hashes
// what it receives); a fetch runs in the trusted store alone, so what it
// brings is checked by index-pack and complete there.
func (r *Repo) remoteOp(ctx context.Context, sc scope, op, display, ref string, args []string) error {
	delay := r.retryDelay
	for attempt := 1; ; attempt++ {
		call := gitCall{scope: sc, bare: true, args: args}
		cleanup := func() {}
		if r.opts.Token != "" {
			files, cfg, done, err := r.credentialHelper()
			if err != nil {
				return err
			}
			call.files, call.config, cleanup = files, cfg, done
		}
		res, err := r.git(ctx, call)
		cleanup()
		if err == nil {
			return nil
		}
		var ge *GitError
		if !errors.As(err, &ge) {
			return err
		}
		reason := classify(ge.Stderr + "\n" + r.redact(string(res.stdout)))
		if reason != ReasonNetwork || attempt >= pushAttempts {
			return &PushError{Op: op, Remote: display, Ref: ref, Reason: reason, Err: err}
		}
		select {
		case <-ctx.Done():
			return &PushError{Op: op, Remote: display, Ref: ref, Reason: reason, Err: errors.Join(err, ctx.Err())}
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// classify maps git's push/fetch output to a PushError reason.
func classify(out string) string {
	s := strings.ToLower(out)
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case has("refusing to allow") && has("workflow"):
		return ReasonWorkflowPermission
	case has("non-fast-forward", "fetch first", "updates were rejected because the tip", "(stale info)"):
		return ReasonNonFastForward
	case has("[remote rejected]", "pre-receive hook declined", "protected branch", "gh006"):
		return ReasonRejected
	case has("does not appear to be a git repository"):
		// A local path or URL that holds no repository (moved, deleted, a
		// typo): retrying cannot help.
		return ReasonNoRemote
	case has("authentication failed", "could not read username", "could not read password",
		"terminal prompts disabled", "returned error: 401", "returned error: 403", "permission denied", "permission to",
		"invalid username or password", "write access to repository not granted", "repository not found",
		"invalid credentials", "bad credentials"):
		return ReasonAuth
	case has("could not resolve host", "connection refused", "connection timed out", "timed out",
		"failed to connect", "network is unreachable", "remote end hung up", "early eof", "rpc failed",
		"connection reset", "returned error: 5", "gnutls", "ssl", "unable to access",
		"temporary failure", "broken pipe", "empty reply from server", "recv failure"):
		return ReasonNetwork
	}
	return ReasonUnknown
}
