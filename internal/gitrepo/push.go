package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// pushAttempts is one push plus three retries (network errors only).
const pushAttempts = 4

// remoteURLs resolves Options.Remote from the sealed configuration: the URL
// to fetch from, the URL to push to, a printable name. ok is false when the
// remote is a name that is not configured.
func (r *Repo) remoteURLs() (fetch, push, display string, ok bool) {
	name := r.opts.Remote
	if isURL(name) {
		return name, name, redactURL(name), true
	}
	urls := r.cfg.urls[name]
	if len(urls) == 0 {
		return "", "", name, false
	}
	fetch, push = urls[0], urls[0]
	if p := r.cfg.pushURLs[name]; len(p) > 0 {
		push = p[0]
	}
	return fetch, push, name, true
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
// with backoff, authentication and non-fast-forward failures are not.
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
	if v, ok := r.readRef(ref); !ok || v == "" {
		if sha, err := r.resolve(ctx, ref); err != nil {
			return err
		} else if sha == "" {
			return fmt.Errorf("branch %q does not exist in %s: nothing to push", branch, r.root)
		}
	}
	return r.push(ctx, push, display, ref+":"+ref, ref)
}

// push runs git push with retries.
func (r *Repo) push(ctx context.Context, target, display, refspec, ref string) error {
	args := []string{"push", "--porcelain", "--no-verify", "--no-signed", "--no-follow-tags",
		"--recurse-submodules=no", "--end-of-options", target, refspec}
	return r.remoteOp(ctx, "push", display, ref, args)
}

// remoteOp runs a network git command with the token's credentials and
// retries network failures.
func (r *Repo) remoteOp(ctx context.Context, op, display, ref string, args []string) error {
	call := gitCall{args: args}
	if r.opts.Token != "" {
		cleanup, cfg, err := r.credentials()
		if err != nil {
			return err
		}
		defer cleanup()
		call.config = cfg
	}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		call.env = append(call.env, "SSH_AUTH_SOCK="+sock)
	}
	delay := r.retryDelay
	for attempt := 1; ; attempt++ {
		res, err := r.git(ctx, call)
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

// credentials writes the token to a 0600 file in a private temporary
// directory and returns command-scope configuration that makes git read it
// through a credential helper (run by the shell, so a noexec TMPDIR does not
// matter). Helpers configured elsewhere are disabled so none stores the
// token, and http.extraheader values (actions/checkout persists one) are
// reset so the token is what authenticates.
func (r *Repo) credentials() (cleanup func(), cfg [][2]string, err error) {
	dir, err := os.MkdirTemp("", "agent-loop-cred-")
	if err != nil {
		return nil, nil, fmt.Errorf("creating the credential directory: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte(r.opts.Token), 0o600); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("writing the credential file: %w", err)
	}
	helper := `!f() { test "$1" = get || exit 0; echo username=x-access-token; printf 'password='; cat ` +
		shellQuote(tok) + `; echo; }; f`
	cfg = [][2]string{{"credential.helper", ""}, {"credential.helper", helper}, {"credential.interactive", "false"},
		{"core.askPass", ""}}
	for _, k := range r.cfg.extraHeaders {
		cfg = append(cfg, [2]string{k, ""})
	}
	return cleanup, cfg, nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

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
