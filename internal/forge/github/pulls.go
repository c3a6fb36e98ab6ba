package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/aiwg/agent-loop/internal/escape"
)

// PR is a pull request as agent-loop needs it.
type PR struct {
	Number           int
	NodeID           string // GraphQL id (for markPullRequestReadyForReview)
	URL              string // html_url
	Title, Body      string
	State            string // open, closed
	HeadRef, HeadSHA string
	BaseRef          string
	Draft            bool
	HeadRepoFullName string
	// SameRepo is false for a pull request from a fork.
	SameRepo bool
}

// PRRequest is the pull request EnsurePR wants to exist.
type PRRequest struct {
	Head  string // branch in this repository
	Base  string
	Title string
	Body  string
	// Draft opens the pull request as a draft; false on an existing draft
	// marks it ready for review (a ready one is never turned back to draft).
	Draft bool
}

func (c *Client) toPR(p *gh.PullRequest) *PR {
	pr := &PR{
		Number:  p.GetNumber(),
		NodeID:  p.GetNodeID(),
		URL:     p.GetHTMLURL(),
		Title:   p.GetTitle(),
		Body:    p.GetBody(),
		State:   p.GetState(),
		HeadRef: p.GetHead().GetRef(),
		HeadSHA: p.GetHead().GetSHA(),
		BaseRef: p.GetBase().GetRef(),
		Draft:   p.GetDraft(),
	}
	pr.HeadRepoFullName = p.GetHead().GetRepo().GetFullName()
	pr.SameRepo = strings.EqualFold(pr.HeadRepoFullName, c.owner+"/"+c.repo)
	return pr
}

// FindPR returns the open pull request whose head is branch head of this
// repository (owner:head), or nil when there is none.
func (c *Client) FindPR(ctx context.Context, head string) (*PR, error) {
	if head == "" {
		return nil, errors.New("finding the pull request: the head branch is empty")
	}
	owner, branch := c.owner, head
	if i := strings.IndexByte(head, ':'); i >= 0 {
		owner, branch = head[:i], head[i+1:]
	}
	q := url.Values{"state": {"open"}, "head": {owner + ":" + branch}, "per_page": {"100"}}
	for page := 1; page <= maxPages; page++ {
		q.Set("page", strconv.Itoa(page))
		var pulls []*gh.PullRequest
		resp, err := c.do(ctx, http.MethodGet, c.repoPath("pulls")+"?"+q.Encode(), nil, &pulls, needPullRequests)
		if err != nil {
			return nil, fmt.Errorf("finding the pull request of %s: %w", head, err)
		}
		for _, p := range pulls {
			if p.GetHead().GetRef() == branch && strings.EqualFold(p.GetHead().GetRepo().GetOwner().GetLogin(), owner) {
				return c.toPR(p), nil
			}
			// Some servers omit head.repo for a deleted fork: match on the label.
			if p.GetHead().GetRepo() == nil && strings.EqualFold(p.GetHead().GetLabel(), owner+":"+branch) {
				return c.toPR(p), nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
	}
	return nil, nil
}

// GetPR returns pull request number.
func (c *Client) GetPR(ctx context.Context, number int) (*PR, error) {
	var p gh.PullRequest
	if _, err := c.do(ctx, http.MethodGet, c.repoPath("pulls", strconv.Itoa(number)), nil, &p, needPullRequests); err != nil {
		return nil, fmt.Errorf("reading pull request #%d: %w", number, err)
	}
	return c.toPR(&p), nil
}

// EnsurePR makes the pull request of req.Head exist with req's title and
// body: it creates it (created = true) or updates the open one in place. An
// existing draft is marked ready for review when req.Draft is false; a ready
// pull request is left ready.
func (c *Client) EnsurePR(ctx context.Context, req PRRequest) (*PR, bool, error) {
	// The title is plain text (often from the task): one line, no control
	// or bidi characters. The body is Markdown the caller escaped; one
	// over GitHub's limit is cut without leaving a <details> open.
	req.Title = escape.Terminal(req.Title)
	req.Body = escape.Truncate(req.Body, maxCommentBytes, truncatedNote)
	if req.Head == "" || req.Base == "" || strings.TrimSpace(req.Title) == "" {
		return nil, false, fmt.Errorf("pull request %q -> %q: the head branch, base branch and title are all required", req.Head, req.Base)
	}
	existing, err := c.FindPR(ctx, req.Head)
	if err != nil {
		return nil, false, err
	}
	if existing == nil {
		pr, err := c.createPR(ctx, req)
		if err == nil {
			return pr, true, nil
		}
		if !isAlreadyExists(err) {
			return nil, false, err
		}
		// Someone (a concurrent run, a retried POST) opened it meanwhile.
		if existing, err = c.FindPR(ctx, req.Head); err != nil {
			return nil, false, err
		}
		if existing == nil {
			return nil, false, fmt.Errorf("pull request of %s: GitHub says it exists but lists no open one", req.Head)
		}
	}
	pr, err := c.updatePR(ctx, existing, req)
	return pr, false, err
}

func (c *Client) createPR(ctx context.Context, req PRRequest) (*PR, error) {
	newPR := &gh.NewPullRequest{
		Title: gh.String(req.Title),
		Head:  gh.String(req.Head),
		Base:  gh.String(req.Base),
		Body:  gh.String(req.Body),
		Draft: gh.Bool(req.Draft),
	}
	var p gh.PullRequest
	_, err := c.do(ctx, http.MethodPost, c.repoPath("pulls"), newPR, &p, needPullRequests)
	if err != nil && req.Draft && isDraftUnsupported(err) {
		// Draft pull requests need a paid plan on private repositories.
		newPR.Draft = gh.Bool(false)
		_, err = c.do(ctx, http.MethodPost, c.repoPath("pulls"), newPR, &p, needPullRequests)
	}
	if err != nil {
		return nil, fmt.Errorf("opening a pull request from %s into %s: %w", req.Head, req.Base, err)
	}
	return c.toPR(&p), nil
}

func (c *Client) updatePR(ctx context.Context, pr *PR, req PRRequest) (*PR, error) {
	if pr.Title != req.Title || pr.Body != req.Body {
		var p gh.PullRequest
		edit := &gh.PullRequest{Title: gh.String(req.Title), Body: gh.String(req.Body)}
		if _, err := c.do(ctx, http.MethodPatch, c.repoPath("pulls", strconv.Itoa(pr.Number)), edit, &p, needPullRequests); err != nil {
			return nil, fmt.Errorf("updating pull request #%d: %w", pr.Number, err)
		}
		pr = c.toPR(&p)
	}
	if pr.Draft && !req.Draft {
		if err := c.markReady(ctx, pr); err != nil {
			return pr, err
		}
		pr.Draft = false
	}
	return pr, nil
}

const markReadyMutation = `mutation($id: ID!) {
  markPullRequestReadyForReview(input: {pullRequestId: $id}) {
    pullRequest { number isDraft }
  }
}`

// markReady marks a draft pull request ready for review (GraphQL only).
func (c *Client) markReady(ctx context.Context, pr *PR) error {
	if pr.NodeID == "" {
		return fmt.Errorf("marking pull request #%d ready for review: GitHub gave no node_id", pr.Number)
	}
	var data struct {
		MarkPullRequestReadyForReview *struct {
			PullRequest struct {
				Number  int  `json:"number"`
				IsDraft bool `json:"isDraft"`
			} `json:"pullRequest"`
		} `json:"markPullRequestReadyForReview"`
	}
	err := c.graphql(ctx, "markPullRequestReadyForReview", markReadyMutation, map[string]any{"id": pr.NodeID}, &data, needPullRequests)
	if err != nil {
		return fmt.Errorf("marking pull request #%d ready for review: %w", pr.Number, err)
	}
	if data.MarkPullRequestReadyForReview == nil || data.MarkPullRequestReadyForReview.PullRequest.IsDraft {
		return fmt.Errorf("marking pull request #%d ready for review: GitHub still reports it as a draft", pr.Number)
	}
	return nil
}

// isAlreadyExists recognises the 422 of creating a second pull request for
// the same head and base.
func isAlreadyExists(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusUnprocessableEntity &&
		strings.Contains(strings.ToLower(apiErr.Message), "already exists")
}

func isDraftUnsupported(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusUnprocessableEntity &&
		strings.Contains(strings.ToLower(apiErr.Message), "draft")
}

// maxPages bounds every paginated listing (100 items a page).
const maxPages = 50
