package gitrepo

import (
	"errors"
	"fmt"
	"strings"
)

// GitError is a failed git CLI invocation. Args are the git arguments after
// the harness's hardening options; they never hold a secret (tokens travel
// through a pipe read by a credential helper).
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if len(msg) > 2000 {
		msg = msg[:2000] + "…"
	}
	if msg == "" {
		msg = "no error output"
	}
	return fmt.Sprintf("git %s: exit status %d: %s", strings.Join(e.Args, " "), e.ExitCode, msg)
}

// PushError is a failed push (or fetch) to the remote, classified so that
// callers can decide whether to retry or stop.
type PushError struct {
	Op     string // "push" or "fetch"
	Remote string // remote name or URL (credentials removed)
	Ref    string
	// Reason is one of "non-fast-forward", "auth", "network",
	// "workflow-permission", "rejected", "no-remote" or "unknown".
	Reason string
	Err    error
}

// Push failure reasons.
const (
	ReasonNonFastForward     = "non-fast-forward"
	ReasonAuth               = "auth"
	ReasonNetwork            = "network"
	ReasonWorkflowPermission = "workflow-permission"
	ReasonRejected           = "rejected"
	ReasonNoRemote           = "no-remote"
	ReasonUnknown            = "unknown"
)

func (e *PushError) Error() string {
	var fix string
	switch e.Reason {
	case ReasonNonFastForward:
		fix = "the remote branch has commits the local branch does not have; pick another branch name (--branch) " +
			"or delete the remote branch, agent-loop never force-pushes a branch"
	case ReasonAuth:
		fix = "the remote refused the credentials; pass a token that can push (action input github-token with " +
			"`permissions: contents: write`, or a GitHub App / fine-grained PAT), or use a remote you can push to"
	case ReasonNetwork:
		fix = "the remote could not be reached (retried); check the network and the remote URL, then resume the loop"
	case ReasonWorkflowPermission:
		fix = "the token may not change .github/workflows/; use a token with the `workflows` permission, " +
			"or leave workflow files out of the commit"
	case ReasonRejected:
		fix = "the remote rejected the update (branch protection or a server hook); push to an unprotected branch"
	case ReasonNoRemote:
		fix = "the remote is not configured or holds no repository: add it with `git remote add origin URL`, " +
			"or correct its URL (`git remote -v`), then resume the loop"
	default:
		fix = "see the git output above"
	}
	op := e.Op
	if op == "" {
		op = "push"
	}
	return fmt.Sprintf("%s %s to %s failed (%s): %v; %s", op, e.Ref, e.Remote, e.Reason, e.Err, fix)
}

func (e *PushError) Unwrap() error { return e.Err }

// ErrNoRef says a state ref exists neither locally nor on the remote.
var ErrNoRef = errors.New("ref not found")

// ErrUnbornHead says the repository has no commit yet.
var ErrUnbornHead = errors.New("the repository has no commits yet: make a first commit " +
	"(`git commit --allow-empty -m init`) before running a loop")

// TamperedError says the repository's .git was deleted, moved or replaced
// since Seal; the harness refuses to run git on it.
type TamperedError struct {
	Path   string
	Detail string
}

func (e *TamperedError) Error() string {
	return fmt.Sprintf("refusing to run git: %s %s since the repository was sealed (the agent tampered with it); "+
		"the loop stops, as it cannot commit safely: put the original .git back (or clone the repository again; "+
		"with --push the loop's commits are on the remote's loop branch) and start a new loop", e.Path, e.Detail)
}
