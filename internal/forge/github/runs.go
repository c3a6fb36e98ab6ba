package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// This file reads GitHub Actions workflow runs for the "CI failed: fix it"
// trigger: the run from the workflow_run event or by id, its jobs and their
// steps, each job's log, and the run's previous successful run.

// WorkflowRun is a run of a GitHub Actions workflow, as the workflow_run
// event and GET /repos/{o}/{r}/actions/runs/{id} describe it.
type WorkflowRun struct {
	ID         int64
	WorkflowID int64
	// Name is the workflow's name ("CI"); Path its file
	// (".github/workflows/ci.yml", without the "@ref" some payloads add).
	Name string
	Path string
	// Event is what started the run: push, pull_request, schedule, ...
	Event      string
	Status     string // queued, in_progress, completed
	Conclusion string // success, failure, timed_out, cancelled, ...
	HeadBranch string
	HeadSHA    string
	// Repo is the full name of the repository the run belongs to; HeadRepo
	// the repository of the head commit (a fork's for a pull request from a
	// fork).
	Repo       string
	HeadRepo   string
	RunNumber  int
	RunAttempt int
	HTMLURL    string
	// Actor started the run; TriggeringActor started this attempt (a
	// re-run).
	Actor           string
	TriggeringActor string
	// HeadCommitMessage is the full message of the head commit (trailers
	// included).
	HeadCommitMessage string
	// PullRequests are the pull requests of this repository whose head is
	// the run's head. GitHub leaves it empty for pull requests from forks.
	PullRequests []RunPR
	CreatedAt    time.Time
}

// RunPR is a pull request as a workflow run lists it.
type RunPR struct {
	Number  int
	HeadRef string
	HeadSHA string
	BaseRef string
}

// Fork reports whether the run's head is in another repository than the run.
func (r WorkflowRun) Fork() bool {
	return r.HeadRepo != "" && r.Repo != "" && !strings.EqualFold(r.HeadRepo, r.Repo)
}

// WorkflowRunEvent is the payload of a workflow_run event.
type WorkflowRunEvent struct {
	// Action is "requested", "in_progress" or "completed".
	Action string
	Run    WorkflowRun
	// Repository is the full name of the repository the event is for;
	// DefaultBranch its default branch.
	Repository    string
	DefaultBranch string
	// Sender is the login of who caused the event.
	Sender string
}

// wireRun is the JSON of a run: go-github's type plus what it lacks.
type wireRun struct {
	gh.WorkflowRun
	Path string `json:"path"`
}

func (w *wireRun) toRun() WorkflowRun {
	r := WorkflowRun{
		ID:                w.GetID(),
		WorkflowID:        w.GetWorkflowID(),
		Name:              w.GetName(),
		Path:              w.Path,
		Event:             w.GetEvent(),
		Status:            w.GetStatus(),
		Conclusion:        w.GetConclusion(),
		HeadBranch:        w.GetHeadBranch(),
		HeadSHA:           w.GetHeadSHA(),
		Repo:              w.GetRepository().GetFullName(),
		HeadRepo:          w.GetHeadRepository().GetFullName(),
		RunNumber:         w.GetRunNumber(),
		RunAttempt:        w.GetRunAttempt(),
		HTMLURL:           w.GetHTMLURL(),
		Actor:             w.GetActor().GetLogin(),
		TriggeringActor:   w.GetTriggeringActor().GetLogin(),
		HeadCommitMessage: w.GetHeadCommit().GetMessage(),
		CreatedAt:         w.GetCreatedAt().Time,
	}
	if i := strings.Index(r.Path, "@"); i >= 0 {
		r.Path = r.Path[:i]
	}
	for _, p := range w.PullRequests {
		r.PullRequests = append(r.PullRequests, RunPR{
			Number:  p.GetNumber(),
			HeadRef: p.GetHead().GetRef(),
			HeadSHA: p.GetHead().GetSHA(),
			BaseRef: p.GetBase().GetRef(),
		})
	}
	return r
}

// ParseWorkflowRunEvent reads a workflow_run event payload (the event.json
// of the Action, as internal/actions.Runtime.Event returns it).
func ParseWorkflowRunEvent(payload map[string]any) (WorkflowRunEvent, error) {
	data, err := json.Marshal(payload)
	if err != nil {
		return WorkflowRunEvent{}, fmt.Errorf("reading the workflow_run event: %w", err)
	}
	var wire struct {
		Action      string         `json:"action"`
		WorkflowRun *wireRun       `json:"workflow_run"`
		Repository  *gh.Repository `json:"repository"`
		Sender      *gh.User       `json:"sender"`
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		return WorkflowRunEvent{}, fmt.Errorf("reading the workflow_run event: %w", err)
	}
	if wire.WorkflowRun == nil || wire.WorkflowRun.GetID() == 0 {
		return WorkflowRunEvent{}, errors.New("reading the workflow_run event: it has no workflow_run object with an id " +
			"(is the workflow triggered by `on: workflow_run`?)")
	}
	ev := WorkflowRunEvent{
		Action:        wire.Action,
		Run:           wire.WorkflowRun.toRun(),
		Repository:    wire.Repository.GetFullName(),
		DefaultBranch: wire.Repository.GetDefaultBranch(),
		Sender:        wire.Sender.GetLogin(),
	}
	if ev.Run.Repo == "" {
		ev.Run.Repo = ev.Repository
	}
	return ev, nil
}

// WorkflowRun reads run id (GET /repos/{o}/{r}/actions/runs/{id}).
func (c *Client) WorkflowRun(ctx context.Context, id int64) (*WorkflowRun, error) {
	var w wireRun
	if _, err := c.do(ctx, http.MethodGet, c.repoPath("actions", "runs", strconv.FormatInt(id, 10)), nil, &w, needActionsRead); err != nil {
		return nil, fmt.Errorf("reading workflow run %d: %w", id, err)
	}
	r := w.toRun()
	return &r, nil
}

// WorkflowJob is one job of a workflow run, with its steps.
type WorkflowJob struct {
	ID    int64
	RunID int64
	// Name is the job's name as GitHub renders it: "test (ubuntu-latest,
	// 20)" for a matrix entry, "caller / called" for a job of a reusable
	// workflow.
	Name       string
	Status     string
	Conclusion string
	HTMLURL    string
	Labels     []string
	RunAttempt int
	Steps      []JobStep
}

// JobStep is one step of a job as GitHub ran it: "Set up job", the
// workflow's steps ("Run go test ./..." for an unnamed run: step), the post
// steps and "Complete job".
type JobStep struct {
	Number     int
	Name       string
	Status     string
	Conclusion string // success, failure, skipped, cancelled
}

// RunJobs lists the jobs of the latest attempt of run id, every page
// (GET /repos/{o}/{r}/actions/runs/{id}/jobs?filter=latest).
func (c *Client) RunJobs(ctx context.Context, runID int64) ([]WorkflowJob, error) {
	q := url.Values{"filter": {"latest"}, "per_page": {"100"}}
	var out []WorkflowJob
	for page := 1; page <= maxPages; page++ {
		q.Set("page", strconv.Itoa(page))
		var list gh.Jobs
		rel := c.repoPath("actions", "runs", strconv.FormatInt(runID, 10), "jobs") + "?" + q.Encode()
		resp, err := c.do(ctx, http.MethodGet, rel, nil, &list, needActionsRead)
		if err != nil {
			return nil, fmt.Errorf("listing the jobs of workflow run %d: %w", runID, err)
		}
		for _, j := range list.Jobs {
			job := WorkflowJob{
				ID: j.GetID(), RunID: j.GetRunID(), Name: j.GetName(), Status: j.GetStatus(),
				Conclusion: j.GetConclusion(), HTMLURL: j.GetHTMLURL(), Labels: j.Labels, RunAttempt: int(j.GetRunAttempt()),
			}
			for _, s := range j.Steps {
				job.Steps = append(job.Steps, JobStep{Number: int(s.GetNumber()), Name: s.GetName(), Status: s.GetStatus(), Conclusion: s.GetConclusion()})
			}
			out = append(out, job)
		}
		if resp == nil || resp.NextPage == 0 || len(list.Jobs) == 0 {
			break
		}
	}
	return out, nil
}

// DefaultMaxLogBytes bounds a job log kept in memory.
const DefaultMaxLogBytes = 16 << 20

// JobLog is the text of a job's log, bounded.
type JobLog struct {
	Text string
	// Omitted is the number of bytes left out of the middle of a log longer
	// than the bound (its first part and its end are kept).
	Omitted int64
}

// JobLog downloads the log of job id. GitHub answers with a redirect to a
// signed blob URL that is fetched without the token (the blob storage
// refuses a request that carries one). A log longer than max bytes (0:
// DefaultMaxLogBytes) keeps its first sixteenth and its end. It needs
// `actions: read`; a job whose log is gone answers *APIError 404 or 410.
func (c *Client) JobLog(ctx context.Context, jobID int64, max int) (JobLog, error) {
	if max <= 0 {
		max = DefaultMaxLogBytes
	}
	rel := c.repoPath("actions", "jobs", strconv.FormatInt(jobID, 10), "logs")
	ec := errorContext{endpoint: endpoint(http.MethodGet, rel), need: []string{needActionsRead}}
	req, err := c.gh.NewRequest(http.MethodGet, rel, nil)
	if err != nil {
		return JobLog{}, fmt.Errorf("%s: %w", ec.endpoint, err)
	}
	resp, err := c.api.Do(req.WithContext(ctx))
	if err != nil {
		return JobLog{}, c.wrapErr(ec, err)
	}
	defer resp.Body.Close()
	keep := func(r *http.Response) (*headTail, error) {
		ht := newHeadTail(max/16, max-max/16)
		if err := ht.readFrom(r.Body); err != nil {
			return nil, fmt.Errorf("reading the log: %w", err)
		}
		return ht, nil
	}
	switch resp.StatusCode {
	case http.StatusFound, http.StatusMovedPermanently, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
		if err != nil || resp.Header.Get("Location") == "" {
			return JobLog{}, fmt.Errorf("%s: redirect without a usable Location", ec.endpoint)
		}
		var omitted int64
		data, err := c.fetchSigned(ctx, loc, func(r *http.Response) ([]byte, error) {
			ht, err := keep(r)
			if err != nil {
				return nil, err
			}
			omitted = ht.omitted
			return ht.bytes(), nil
		})
		if err != nil {
			return JobLog{}, fmt.Errorf("downloading the log of job %d: %w", jobID, err)
		}
		return JobLog{Text: string(data), Omitted: omitted}, nil
	case http.StatusOK:
		// GitHub Enterprise Server may answer with the log itself.
		ht, err := keep(resp)
		if err != nil {
			return JobLog{}, fmt.Errorf("%s: %w", ec.endpoint, err)
		}
		return JobLog{Text: string(ht.bytes()), Omitted: ht.omitted}, nil
	default:
		return JobLog{}, fmt.Errorf("downloading the log of job %d: %w", jobID, c.wrapErr(ec, gh.CheckResponse(resp)))
	}
}

// PreviousSuccess returns the newest successful run of run's workflow on
// the same branch that started before run and is for another commit, or
// nil when the branch has none (in the newest 100 successful runs). It is
// how the commit that broke the build is found.
func (c *Client) PreviousSuccess(ctx context.Context, run WorkflowRun) (*WorkflowRun, error) {
	if run.WorkflowID == 0 || run.HeadBranch == "" {
		return nil, nil
	}
	q := url.Values{"branch": {run.HeadBranch}, "status": {"success"}, "per_page": {"100"}, "page": {"1"}}
	rel := c.repoPath("actions", "workflows", strconv.FormatInt(run.WorkflowID, 10), "runs") + "?" + q.Encode()
	var list struct {
		TotalCount   int        `json:"total_count"`
		WorkflowRuns []*wireRun `json:"workflow_runs"`
	}
	if _, err := c.do(ctx, http.MethodGet, rel, nil, &list, needActionsRead); err != nil {
		return nil, fmt.Errorf("finding the last successful run of %q on %s: %w", run.Name, run.HeadBranch, err)
	}
	var best *WorkflowRun
	for _, w := range list.WorkflowRuns {
		r := w.toRun()
		if r.ID == run.ID || r.HeadSHA == run.HeadSHA || r.Conclusion != "success" || r.HeadBranch != run.HeadBranch {
			continue
		}
		if run.RunNumber > 0 && r.RunNumber >= run.RunNumber {
			continue
		}
		if !run.CreatedAt.IsZero() && r.CreatedAt.After(run.CreatedAt) {
			continue
		}
		if best == nil || r.RunNumber > best.RunNumber || r.RunNumber == best.RunNumber && r.CreatedAt.After(best.CreatedAt) {
			rr := r
			best = &rr
		}
	}
	return best, nil
}

// Commit is a commit as a comparison lists it.
type Commit struct {
	SHA     string
	Message string
	Author  string // the GitHub login, or the git author name
}

// Subject is the first line of the commit message.
func (c Commit) Subject() string {
	s, _, _ := strings.Cut(c.Message, "\n")
	return strings.TrimSpace(s)
}

// Comparison is what GET /repos/{o}/{r}/compare/{base}...{head} says.
type Comparison struct {
	// Status is "ahead", "behind", "diverged" or "identical".
	Status   string
	AheadBy  int
	BehindBy int
	// Commits are the commits of head not in base, oldest first (GitHub
	// lists at most 250).
	Commits []Commit
	// Total is how many commits head has that base has not.
	Total int
}

// CompareCommits compares base with head.
func (c *Client) CompareCommits(ctx context.Context, base, head string) (Comparison, error) {
	if base == "" || head == "" {
		return Comparison{}, errors.New("comparing commits: base and head must both be set")
	}
	var cmp gh.CommitsComparison
	rel := c.repoPath("compare", url.PathEscape(base)+"..."+url.PathEscape(head)) + "?per_page=100"
	if _, err := c.do(ctx, http.MethodGet, rel, nil, &cmp, "contents: read"); err != nil {
		return Comparison{}, fmt.Errorf("comparing %s with %s: %w", short(base), short(head), err)
	}
	out := Comparison{Status: cmp.GetStatus(), AheadBy: cmp.GetAheadBy(), BehindBy: cmp.GetBehindBy(), Total: cmp.GetTotalCommits()}
	for _, rc := range cmp.Commits {
		author := rc.GetAuthor().GetLogin()
		if author == "" {
			author = rc.GetCommit().GetAuthor().GetName()
		}
		out.Commits = append(out.Commits, Commit{SHA: rc.GetSHA(), Message: rc.GetCommit().GetMessage(), Author: author})
	}
	return out, nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// MaxFileBytes bounds a file read through the contents API (GitHub serves
// files up to 1 MB that way; workflows are far smaller).
const MaxFileBytes = 1 << 20

// FileAt returns the content of the file at path in commit (or branch) ref,
// through the contents API. A path that is not a file there is an
// *APIError with Status 404 (IsNotFound).
func (c *Client) FileAt(ctx context.Context, path, ref string) ([]byte, error) {
	path = strings.TrimPrefix(path, "/")
	if path == "" || strings.Contains(path, "..") {
		return nil, fmt.Errorf("reading a file: path %q: want a path inside the repository such as .github/workflows/ci.yml", path)
	}
	var elems []string
	for _, e := range strings.Split(path, "/") {
		elems = append(elems, url.PathEscape(e))
	}
	rel := c.repoPath(append([]string{"contents"}, elems...)...)
	if ref != "" {
		rel += "?ref=" + url.QueryEscape(ref)
	}
	var raw json.RawMessage
	if _, err := c.do(ctx, http.MethodGet, rel, nil, &raw, "contents: read"); err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", path, short(ref), err)
	}
	var fc gh.RepositoryContent
	if err := json.Unmarshal(raw, &fc); err != nil || fc.GetType() != "file" {
		return nil, &APIError{Status: http.StatusNotFound, Endpoint: endpoint(http.MethodGet, rel), Message: path + " is not a file at " + short(ref)}
	}
	if fc.GetSize() > MaxFileBytes {
		return nil, fmt.Errorf("reading %s at %s: it is %d bytes, more than the %d read", path, short(ref), fc.GetSize(), MaxFileBytes)
	}
	s, err := fc.GetContent()
	if err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", path, short(ref), err)
	}
	return []byte(s), nil
}

// IsNotFound reports an API answer 404 (or 410: gone).
func IsNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && (apiErr.Status == http.StatusNotFound || apiErr.Status == http.StatusGone)
}

// PullRequestsForRun returns the open pull requests whose head is the run's
// head commit. GitHub lists them in the run for pull requests of this
// repository only; for a fork they are found by the fork's owner and
// branch.
func (c *Client) PullRequestsForRun(ctx context.Context, run WorkflowRun) ([]PR, error) {
	var out []PR
	if len(run.PullRequests) > 0 {
		for _, p := range run.PullRequests {
			pr, err := c.GetPR(ctx, p.Number)
			if err != nil {
				return nil, err
			}
			out = append(out, *pr)
		}
		return out, nil
	}
	if run.HeadBranch == "" || run.HeadRepo == "" {
		return nil, nil
	}
	headOwner, _, _ := strings.Cut(run.HeadRepo, "/")
	q := url.Values{"state": {"open"}, "head": {headOwner + ":" + run.HeadBranch}, "per_page": {"100"}}
	var list []*gh.PullRequest
	if _, err := c.do(ctx, http.MethodGet, c.repoPath("pulls")+"?"+q.Encode(), nil, &list, needPullRequests); err != nil {
		return nil, fmt.Errorf("finding the pull request of %s:%s: %w", headOwner, run.HeadBranch, err)
	}
	for _, p := range list {
		pr := c.toPR(p)
		if strings.EqualFold(pr.HeadRepoFullName, run.HeadRepo) && pr.HeadRef == run.HeadBranch {
			out = append(out, *pr)
		}
	}
	return out, nil
}
