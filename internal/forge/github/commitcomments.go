package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/aiwg/agent-loop/internal/escape"
)

// ReportTarget is where a loop reports: a pull request (its conversation)
// or, for a commit on a branch without one, the commit itself.
type ReportTarget struct {
	PR        int
	CommitSHA string
}

func (t ReportTarget) String() string {
	if t.PR > 0 {
		return "#" + strconv.Itoa(t.PR)
	}
	return "commit " + short(t.CommitSHA)
}

var shaPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// CIAttemptMarker is the hidden line that the report of a loop started by a
// failed workflow run carries, once per loop, naming the run's head commit.
// Counting the comments that carry it (CIAttempts) is how a later failed
// run, or a re-run, on the same commit sees the attempts already made.
func CIAttemptMarker(headSHA string) string {
	return "<!-- agent-loop:ci-attempt sha=" + strings.ToLower(headSHA) + " -->"
}

// CIAttempts counts the loops already started for headSHA at target: the
// comments there authored by this token's login that carry
// CIAttemptMarker(headSHA). A comment by anyone else that quotes the
// marker does not count.
func (c *Client) CIAttempts(ctx context.Context, target ReportTarget, headSHA string) (int, error) {
	if !shaPattern.MatchString(strings.ToLower(headSHA)) {
		return 0, fmt.Errorf("counting CI attempts: head commit %q: want a 40-hex-digit SHA", headSHA)
	}
	logins, err := c.ownLogins(ctx)
	if err != nil {
		return 0, err
	}
	marker := CIAttemptMarker(headSHA)
	n := 0
	err = c.eachComment(ctx, target, func(u *gh.User, body string, _ int64) bool {
		if strings.Contains(body, marker) && isOurs(u, logins) {
			n++
		}
		return true
	})
	if err != nil {
		return 0, fmt.Errorf("counting CI attempts on %s: %w", target, err)
	}
	return n, nil
}

// eachComment calls fn for every comment at target, oldest first, until fn
// returns false.
func (c *Client) eachComment(ctx context.Context, target ReportTarget, fn func(u *gh.User, body string, id int64) bool) error {
	q := url.Values{"per_page": {"100"}}
	for page := 1; page <= maxPages; page++ {
		q.Set("page", strconv.Itoa(page))
		var (
			resp *gh.Response
			err  error
			n    int
			more = true
		)
		if target.PR > 0 {
			var list []*gh.IssueComment
			resp, err = c.do(ctx, http.MethodGet, c.repoPath("issues", strconv.Itoa(target.PR), "comments")+"?"+q.Encode(), nil, &list, needIssues)
			for _, cm := range list {
				if more {
					more = fn(cm.GetUser(), cm.GetBody(), cm.GetID())
				}
			}
			n = len(list)
		} else {
			var list []*gh.RepositoryComment
			resp, err = c.do(ctx, http.MethodGet, c.repoPath("commits", target.CommitSHA, "comments")+"?"+q.Encode(), nil, &list, needContents)
			for _, cm := range list {
				if more {
					more = fn(cm.GetUser(), cm.GetBody(), cm.GetID())
				}
			}
			n = len(list)
		}
		if err != nil {
			return err
		}
		if !more || resp == nil || resp.NextPage == 0 || n == 0 {
			return nil
		}
	}
	return nil
}

// CommitComment adds a comment on commit sha (a refusal, or the report of a
// loop on a branch without a pull request). It needs `contents: write`.
func (c *Client) CommitComment(ctx context.Context, sha, body string) (int64, error) {
	if !shaPattern.MatchString(sha) {
		return 0, fmt.Errorf("commenting on a commit: %q: want a 40-hex-digit SHA", sha)
	}
	body = escape.Truncate(body, maxCommentBytes, truncatedNote)
	var cm gh.RepositoryComment
	if _, err := c.do(ctx, http.MethodPost, c.repoPath("commits", sha, "comments"), map[string]string{"body": body}, &cm, needContents); err != nil {
		return 0, fmt.Errorf("commenting on commit %s: %w", short(sha), err)
	}
	c.learnLogin(cm.GetUser().GetLogin())
	return cm.GetID(), nil
}

// UpsertCommitComment keeps ONE comment per loop on commit sha, as
// UpsertComment does on a pull request: the comment of ours that starts
// with StickyMarker(loopID) is updated in place, or created.
func (c *Client) UpsertCommitComment(ctx context.Context, sha, loopID, body string) (int64, error) {
	if !loopIDPattern.MatchString(loopID) {
		return 0, fmt.Errorf("sticky commit comment: loop id %q: want letters, digits, '.', '_' or '-' (such as ralph-fix-tests-1a2b3c4d)", loopID)
	}
	if !shaPattern.MatchString(sha) {
		return 0, fmt.Errorf("sticky commit comment: %q: want a 40-hex-digit SHA", sha)
	}
	marker := StickyMarker(loopID)
	full := escape.Truncate(marker+"\n"+body, maxCommentBytes, truncatedNote)
	logins, err := c.ownLogins(ctx)
	if err != nil {
		return 0, err
	}
	var id int64
	var old string
	err = c.eachComment(ctx, ReportTarget{CommitSHA: sha}, func(u *gh.User, b string, cid int64) bool {
		if strings.HasPrefix(b, marker) && isOurs(u, logins) {
			id, old = cid, b
			return false
		}
		return true
	})
	if err != nil {
		return 0, fmt.Errorf("listing the comments of commit %s: %w", short(sha), err)
	}
	if id == 0 {
		return c.CommitComment(ctx, sha, full)
	}
	if old == full {
		return id, nil
	}
	rel := c.repoPath("comments", strconv.FormatInt(id, 10))
	if _, err := c.do(ctx, http.MethodPatch, rel, map[string]string{"body": full}, nil, needContents); err != nil {
		return 0, fmt.Errorf("updating the report comment %d on commit %s: %w", id, short(sha), err)
	}
	return id, nil
}
