package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// PermissionsDoc is where GitHub documents the `permissions:` key of a
// workflow, which decides what GITHUB_TOKEN may do.
const PermissionsDoc = "https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/controlling-permissions-for-github_token"

// actionsPRSettingDoc documents the repository setting "Allow GitHub Actions to
// create and approve pull requests".
const actionsPRSettingDoc = "https://docs.github.com/en/repositories/managing-your-repositorys-settings-and-features/enabling-features-for-your-repository/managing-github-actions-settings-for-a-repository#preventing-github-actions-from-creating-or-approving-pull-requests"

// RequiredPermissions is the `permissions:` block agent-loop needs in action
// mode: push the loop branch, open the PR, comment on the issue or PR.
var RequiredPermissions = []string{"contents: write", "pull-requests: write", "issues: write"}

// Permission scopes, as a workflow's `permissions:` key spells them.
const (
	needContents     = "contents: write"
	needPullRequests = "pull-requests: write"
	needIssues       = "issues: write"
	needChecks       = "checks: write"
	needActionsRead  = "actions: read"
)

// APIError is an error answer of the GitHub API that is not a permission
// problem (those are *PermissionError).
type APIError struct {
	// Status is the HTTP status (200 for a GraphQL answer with errors).
	Status int
	// Endpoint is the method and path relative to the API root,
	// e.g. "POST /repos/o/r/pulls".
	Endpoint string
	// Message is GitHub's message, with the details of a validation error.
	Message string
	// RateLimited is true for a primary or secondary rate limit that did not
	// clear within the retry bound.
	RateLimited bool
	// Reset is when a primary rate limit resets (zero when unknown).
	Reset time.Time
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s: %d %s", e.Endpoint, e.Status, e.Message)
	if e.Status == 0 {
		msg = fmt.Sprintf("%s: %s", e.Endpoint, e.Message)
	}
	if e.RateLimited {
		msg += ": GitHub API rate limit still exceeded after retrying"
		if !e.Reset.IsZero() {
			msg += fmt.Sprintf(" (resets at %s)", e.Reset.UTC().Format(time.RFC3339))
		}
		msg += "; run again later or use a token with its own quota (a GitHub App token)"
	}
	return msg
}

// PermissionError says the token may not do what agent-loop asked, and what
// to grant.
type PermissionError struct {
	// Need lists the missing permissions as a workflow's `permissions:` key
	// spells them ("pull-requests: write"), or another grant ("write access to
	// o/r", "the repo scope").
	Need []string
	// Doc is the page that explains the fix.
	Doc string
	// Endpoint and Message are the refused call and GitHub's answer.
	Endpoint string
	Message  string
	// Hint, when set, replaces the default advice (for refusals that a
	// repository setting causes, not the token).
	Hint string
}

func (e *PermissionError) Error() string {
	var b strings.Builder
	if e.Endpoint != "" {
		fmt.Fprintf(&b, "%s: ", e.Endpoint)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, "%s: ", strings.TrimSuffix(e.Message, "."))
	}
	switch {
	case e.Hint != "":
		b.WriteString(e.Hint)
	case len(e.Need) > 0:
		fmt.Fprintf(&b, "the github-token lacks %s; with the default GITHUB_TOKEN give the job\n"+
			"  permissions:\n    %s\n(or pass a GitHub App or personal access token with the same rights as github-token)",
			strings.Join(e.Need, ", "), strings.Join(RequiredPermissions, "\n    "))
	default:
		b.WriteString("the github-token is not allowed to do this")
	}
	if e.Doc != "" {
		fmt.Fprintf(&b, "; see %s", e.Doc)
	}
	return b.String()
}

// errorContext is what the caller knows about a call that failed: the
// endpoint and the permissions it needs.
type errorContext struct {
	endpoint string
	need     []string
}

// wrapErr turns an error of go-github (or of the transport) into this
// package's errors: *PermissionError for refusals the token can fix,
// *APIError for the other API answers. The token never appears in the text.
func (c *Client) wrapErr(ec errorContext, err error) error {
	if err == nil {
		return nil
	}
	var (
		er  *gh.ErrorResponse
		rl  *gh.RateLimitError
		ab  *gh.AbuseRateLimitError
		acc *gh.AcceptedError
	)
	switch {
	case errors.As(err, &rl):
		return &APIError{Status: statusOf(rl.Response), Endpoint: ec.endpoint, Message: c.redact(rl.Message),
			RateLimited: true, Reset: rl.Rate.Reset.Time}
	case errors.As(err, &ab):
		return &APIError{Status: statusOf(ab.Response), Endpoint: ec.endpoint, Message: c.redact(ab.Message), RateLimited: true}
	case errors.As(err, &acc):
		return &APIError{Status: http.StatusAccepted, Endpoint: ec.endpoint, Message: "GitHub is still preparing the answer; try again later"}
	case errors.As(err, &er):
		status := statusOf(er.Response)
		msg := c.redact(errorMessage(er))
		if status == http.StatusTooManyRequests {
			return &APIError{Status: status, Endpoint: ec.endpoint, Message: msg, RateLimited: true}
		}
		if perr := permissionError(ec, status, msg); perr != nil {
			return perr
		}
		if status == http.StatusUnauthorized {
			msg += ": the github-token is invalid or expired; pass a valid token as github-token (default ${{ github.token }})"
		}
		return &APIError{Status: status, Endpoint: ec.endpoint, Message: msg}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", ec.endpoint, err)
	default:
		return &redactedError{msg: ec.endpoint + ": " + c.redact(err.Error()), err: err}
	}
}

// redactedError is a transport error whose text has the token removed.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// permissionError recognises GitHub's permission refusals.
func permissionError(ec errorContext, status int, msg string) *PermissionError {
	if status != http.StatusForbidden {
		return nil
	}
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "not permitted to create or approve pull requests"):
		return &PermissionError{
			Need:     []string{needPullRequests},
			Endpoint: ec.endpoint, Message: msg, Doc: actionsPRSettingDoc,
			Hint: "the repository (or its organization) does not let GitHub Actions create pull requests: " +
				"enable Settings > Actions > General > Workflow permissions > \"Allow GitHub Actions to create and approve pull requests\", " +
				"or pass a GitHub App or personal access token as github-token",
		}
	case strings.Contains(lower, "resource not accessible by"),
		strings.Contains(lower, "must have admin rights"),
		strings.Contains(lower, "must have push access"),
		strings.Contains(lower, "write access to repository not granted"),
		strings.Contains(lower, "permission"):
		return &PermissionError{Need: ec.need, Doc: PermissionsDoc, Endpoint: ec.endpoint, Message: msg}
	}
	return nil
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

// errorMessage is GitHub's message with the details of validation errors.
func errorMessage(er *gh.ErrorResponse) string {
	msg := er.Message
	if msg == "" && er.Response != nil {
		msg = http.StatusText(er.Response.StatusCode)
	}
	var details []string
	for _, e := range er.Errors {
		switch {
		case e.Message != "":
			details = append(details, e.Message)
		case e.Field != "":
			details = append(details, fmt.Sprintf("%s %s is %s", e.Resource, e.Field, e.Code))
		case e.Code != "":
			details = append(details, e.Code)
		}
	}
	if len(details) > 0 {
		msg += " (" + strings.Join(details, "; ") + ")"
	}
	return msg
}

// redact removes the token from a text that came from the network.
func (c *Client) redact(s string) string {
	if c == nil || len(c.token) < 4 {
		return s
	}
	return strings.ReplaceAll(s, c.token, "***")
}
