package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/aiwg/agent-loop/internal/escape"
)

// ActionsBotLogin is the author of everything GITHUB_TOKEN writes.
const ActionsBotLogin = "github-actions[bot]"

// maxCommentBytes is GitHub's limit on a comment body (65536 characters);
// bodies are cut, on a rune boundary, below it.
const maxCommentBytes = 65536

var loopIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// StickyMarker is the hidden line that starts the one report comment of a
// loop, by which UpsertComment finds it again.
func StickyMarker(loopID string) string {
	return fmt.Sprintf("<!-- agent-loop:sticky loop=%s -->", loopID)
}

// UpsertComment keeps ONE comment per loop on issue or pull request number:
// it updates in place the comment that starts with StickyMarker(loopID) and
// is authored by this token's login, or creates it. A comment by anyone else
// that carries the marker (a user quoting it) is ignored.
func (c *Client) UpsertComment(ctx context.Context, number int, loopID, body string) (int64, error) {
	if !loopIDPattern.MatchString(loopID) {
		return 0, fmt.Errorf("sticky comment: loop id %q: want letters, digits, '.', '_' or '-' (such as ralph-fix-tests-1a2b3c4d)", loopID)
	}
	marker := StickyMarker(loopID)
	full := escape.Truncate(marker+"\n"+body, maxCommentBytes, truncatedNote)

	existing, err := c.findSticky(ctx, number, marker)
	if err != nil {
		return 0, err
	}
	if existing == nil {
		return c.Comment(ctx, number, full)
	}
	if existing.GetBody() == full {
		return existing.GetID(), nil
	}
	rel := c.repoPath("issues", "comments", strconv.FormatInt(existing.GetID(), 10))
	var updated gh.IssueComment
	if _, err := c.do(ctx, http.MethodPatch, rel, map[string]string{"body": full}, &updated, needIssues); err != nil {
		return 0, fmt.Errorf("updating the report comment %d on #%d: %w", existing.GetID(), number, err)
	}
	return existing.GetID(), nil
}

const truncatedNote = "\n\n_(cut: the report is longer than a GitHub comment allows; the full report is in the step summary and the loop's artifact)_"

// findSticky returns the first comment on number that starts with marker
// and is ours, or nil.
func (c *Client) findSticky(ctx context.Context, number int, marker string) (*gh.IssueComment, error) {
	logins, err := c.ownLogins(ctx)
	if err != nil {
		return nil, err
	}
	q := url.Values{"per_page": {"100"}}
	for page := 1; page <= maxPages; page++ {
		q.Set("page", strconv.Itoa(page))
		var comments []*gh.IssueComment
		resp, err := c.do(ctx, http.MethodGet, c.repoPath("issues", strconv.Itoa(number), "comments")+"?"+q.Encode(), nil, &comments, needIssues)
		if err != nil {
			return nil, fmt.Errorf("listing the comments of #%d: %w", number, err)
		}
		for _, cm := range comments {
			if strings.HasPrefix(cm.GetBody(), marker) && isOurs(cm.GetUser(), logins) {
				return cm, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
	}
	return nil, nil
}

func isOurs(u *gh.User, logins []string) bool {
	login := u.GetLogin()
	for _, l := range logins {
		if !strings.EqualFold(login, l) {
			continue
		}
		// A [bot] login can only be an App; be strict about it anyway.
		if strings.HasSuffix(l, "[bot]") && u.GetType() != "" && u.GetType() != "Bot" {
			return false
		}
		return true
	}
	return false
}

// ownLogins learns, once, the login our comments are authored by: GET /user
// for a user token; for GITHUB_TOKEN and App tokens (403 there) the GraphQL
// viewer, and failing that github-actions[bot].
func (c *Client) ownLogins(ctx context.Context) ([]string, error) {
	c.loginMu.Lock()
	defer c.loginMu.Unlock()
	if len(c.logins) > 0 {
		return c.logins, nil
	}
	var u gh.User
	_, err := c.do(ctx, http.MethodGet, "user", nil, &u)
	switch {
	case err == nil && u.GetLogin() != "":
		c.logins = []string{u.GetLogin()}
		return c.logins, nil
	case err != nil && !isForbidden(err):
		return nil, fmt.Errorf("learning the token's own login: %w", err)
	}
	// An installation token: its comments are authored by "<app>[bot]".
	var data struct {
		Viewer struct {
			Login string `json:"login"`
		} `json:"viewer"`
	}
	login := ActionsBotLogin
	if err := c.graphql(ctx, "viewer", `query { viewer { login } }`, nil, &data); err == nil && data.Viewer.Login != "" {
		login = data.Viewer.Login
		if !strings.HasSuffix(login, "[bot]") {
			login += "[bot]"
		}
	}
	c.logins = []string{login}
	return c.logins, nil
}

// learnLogin records the author of a comment we just wrote.
func (c *Client) learnLogin(login string) {
	if login == "" {
		return
	}
	c.loginMu.Lock()
	defer c.loginMu.Unlock()
	for _, l := range c.logins {
		if strings.EqualFold(l, login) {
			return
		}
	}
	c.logins = append(c.logins, login)
}

func isForbidden(err error) bool {
	var perr *PermissionError
	if errors.As(err, &perr) {
		return true
	}
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusForbidden
}

// Comment adds a comment to issue or pull request number. body is
// Markdown whose untrusted parts the caller escaped (internal/escape, as
// internal/report does); one over GitHub's limit is cut with
// escape.Truncate, which closes an open <details> or code fence first.
func (c *Client) Comment(ctx context.Context, number int, body string) (int64, error) {
	body = escape.Truncate(body, maxCommentBytes, truncatedNote)
	var cm gh.IssueComment
	rel := c.repoPath("issues", strconv.Itoa(number), "comments")
	if _, err := c.do(ctx, http.MethodPost, rel, map[string]string{"body": body}, &cm, needIssues); err != nil {
		return 0, fmt.Errorf("commenting on #%d: %w", number, err)
	}
	// The author of what we just wrote is us, whatever the token kind.
	c.learnLogin(cm.GetUser().GetLogin())
	return cm.GetID(), nil
}

// Reactions GitHub accepts on a comment.
var reactionContents = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

// React adds a reaction ("eyes", "rocket", "+1", "confused", ...) to an issue
// or pull request comment. Reacting twice with the same content is not an
// error (GitHub answers 200 with the existing reaction).
func (c *Client) React(ctx context.Context, commentID int64, content string) error {
	valid := false
	for _, r := range reactionContents {
		if content == r {
			valid = true
		}
	}
	if !valid {
		return fmt.Errorf("reaction %q: want one of %s", content, strings.Join(reactionContents, ", "))
	}
	rel := c.repoPath("issues", "comments", strconv.FormatInt(commentID, 10), "reactions")
	if _, err := c.do(ctx, http.MethodPost, rel, map[string]string{"content": content}, nil, needIssues); err != nil {
		return fmt.Errorf("reacting %q to comment %d: %w", content, commentID, err)
	}
	return nil
}

// IssueTitleBody returns the title and body of issue (or pull request)
// number: the task of a loop started from an issue.
func (c *Client) IssueTitleBody(ctx context.Context, number int) (string, string, error) {
	var is gh.Issue
	if _, err := c.do(ctx, http.MethodGet, c.repoPath("issues", strconv.Itoa(number)), nil, &is); err != nil {
		return "", "", fmt.Errorf("reading issue #%d: %w", number, err)
	}
	return is.GetTitle(), is.GetBody(), nil
}
