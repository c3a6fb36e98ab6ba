package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
)

const (
	headSHA = "1111111111111111111111111111111111111111"
	goodSHA = "0000000000000000000000000000000000000aaa"
)

// failedRun adds a failed CI run on a pull request of the default
// repository and returns it.
func failedRun(t *testing.T, srv *githubtest.Server) (githubtest.WorkflowRun, int) {
	t.Helper()
	srv.SetBranch(full, "feature", headSHA)
	srv.SetBranch(full, "main", goodSHA)
	pr := srv.AddPullRequest(full, githubtest.PullRequest{Title: "Add parser", Head: "feature", Base: "main"})
	run := srv.AddWorkflowRun(full, githubtest.WorkflowRun{
		WorkflowID: 77, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
		Conclusion: "failure", HeadBranch: "feature", HeadSHA: headSHA, RunNumber: 12, PullRequests: []int{pr},
		HeadCommitMessage: "parser: handle tabs\n\nSigned-off-by: A U Thor <a@example.com>",
		Jobs: []githubtest.Job{
			{Name: "lint", Conclusion: "success", Steps: []githubtest.JobStep{{Name: "Set up job", Conclusion: "success"}}},
			{Name: "test (ubuntu-latest, 20)", Conclusion: "failure", Steps: []githubtest.JobStep{
				{Name: "Set up job", Conclusion: "success"},
				{Name: "Run npm ci", Conclusion: "success"},
				{Name: "Run npm test", Conclusion: "failure"},
				{Name: "Complete job", Conclusion: "success"},
			}, Log: "2025-01-01T00:00:00.0000000Z ##[group]Run npm test\n2025-01-01T00:00:01.0000000Z FAIL src/a.test.js\n"},
		},
	})
	return run, pr
}

func TestWorkflowRunEventAndREST(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t)
	run, pr := failedRun(t, srv)
	c, _ := newClient(t, srv, githubtest.DefaultToken)

	ev, err := github.ParseWorkflowRunEvent(srv.WorkflowRunEvent(full, run.ID))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Action != "completed" || ev.Repository != full || ev.DefaultBranch != "main" {
		t.Errorf("event %+v", ev)
	}
	want := github.WorkflowRun{
		ID: run.ID, WorkflowID: 77, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
		Status: "completed", Conclusion: "failure", HeadBranch: "feature", HeadSHA: headSHA, Repo: full, HeadRepo: full,
		RunNumber: 12, RunAttempt: 1, HTMLURL: fmt.Sprintf("https://github.com/%s/actions/runs/%d", full, run.ID),
		Actor: "octocat", TriggeringActor: "octocat", HeadCommitMessage: run.HeadCommitMessage,
		PullRequests: []github.RunPR{{Number: pr, HeadRef: "feature", HeadSHA: headSHA, BaseRef: "main"}},
		CreatedAt:    run.Created,
	}
	if diff := cmp.Diff(want, ev.Run); diff != "" {
		t.Errorf("run from the event (-want +got):\n%s", diff)
	}
	byID, err := c.WorkflowRun(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, *byID); diff != "" {
		t.Errorf("run by id (-want +got):\n%s", diff)
	}
	if ev.Run.Fork() {
		t.Error("a same-repository run reads as a fork")
	}

	jobs, err := c.RunJobs(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[1].Name != "test (ubuntu-latest, 20)" || jobs[1].Conclusion != "failure" {
		t.Fatalf("jobs %+v", jobs)
	}
	wantSteps := []github.JobStep{
		{Number: 1, Name: "Set up job", Status: "completed", Conclusion: "success"},
		{Number: 2, Name: "Run npm ci", Status: "completed", Conclusion: "success"},
		{Number: 3, Name: "Run npm test", Status: "completed", Conclusion: "failure"},
		{Number: 4, Name: "Complete job", Status: "completed", Conclusion: "success"},
	}
	if diff := cmp.Diff(wantSteps, jobs[1].Steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}

	log, err := c.JobLog(ctx, jobs[1].ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if log.Text != run.Jobs[1].Log || log.Omitted != 0 {
		t.Errorf("log %q (omitted %d)", log.Text, log.Omitted)
	}
	if srv.BlobHits() != 1 || srv.LogRejections() != 0 {
		t.Errorf("blob hits %d, rejections %d", srv.BlobHits(), srv.LogRejections())
	}
	if _, err := c.WorkflowRun(ctx, 999999); !github.IsNotFound(err) {
		t.Errorf("a run that does not exist: %v, want a 404", err)
	}
	if _, err := c.JobLog(ctx, 999999, 0); !github.IsNotFound(err) {
		t.Errorf("a job that does not exist: %v, want a 404", err)
	}
}

// TestJobLogWithoutToken shows that the blob host refuses a download that
// carries the token, and that JobLog does not send it: a transport that
// forwards the Authorization header on every request (as a naive
// redirect-following client does) is refused.
func TestJobLogWithoutToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t)
	run, _ := failedRun(t, srv)
	jobID := run.Jobs[1].ID

	leaky := roundTripper(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+githubtest.DefaultToken)
		return http.DefaultTransport.RoundTrip(req)
	})
	bad, err := github.New(ctx, githubtest.DefaultToken, srv.URL, owner, repo, github.WithTransport(leaky),
		github.WithSleep(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.JobLog(ctx, jobID, 0); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("a download with the token: %v, want the blob host's 400", err)
	}
	if srv.LogRejections() != 1 {
		t.Errorf("rejections %d, want 1", srv.LogRejections())
	}

	good, _ := newClient(t, srv, githubtest.DefaultToken)
	if _, err := good.JobLog(ctx, jobID, 0); err != nil {
		t.Fatal(err)
	}
	if srv.LogRejections() != 1 {
		t.Errorf("JobLog sent the token to the blob host")
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestJobLogBoundedAndGone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t)
	var b strings.Builder
	for i := 0; b.Len() < 200_000; i++ {
		fmt.Fprintf(&b, "2025-01-01T00:00:00.0000000Z line %06d\n", i)
	}
	b.WriteString("2025-01-01T00:00:09.0000000Z ##[error]Process completed with exit code 1.\n")
	run := srv.AddWorkflowRun(full, githubtest.WorkflowRun{Name: "CI", Path: ".github/workflows/ci.yml", Conclusion: "failure",
		HeadSHA: headSHA, Jobs: []githubtest.Job{
			{Name: "big", Conclusion: "failure", Log: b.String()},
			{Name: "old", Conclusion: "failure", LogGone: true},
		}})
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	log, err := c.JobLog(ctx, run.Jobs[0].ID, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	if log.Omitted <= 0 || len(log.Text) > 64<<10+200 {
		t.Errorf("a 200 KB log with a 64 KB bound: %d bytes kept, %d omitted", len(log.Text), log.Omitted)
	}
	if !strings.HasPrefix(log.Text, "2025-01-01T00:00:00.0000000Z line 000000\n") || !strings.HasSuffix(log.Text, "exit code 1.\n") {
		t.Errorf("the start and the end must be kept:\n%.200s\n...\n%s", log.Text, log.Text[len(log.Text)-200:])
	}
	if _, err := c.JobLog(ctx, run.Jobs[1].ID, 0); !github.IsNotFound(err) {
		t.Errorf("an expired log: %v, want 410 (IsNotFound)", err)
	}
}

func TestRunJobsPaginatedAndPermissions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t, githubtest.WithToken(githubtest.Token{Value: "ghs_noactions", Permissions: map[string]string{"contents": "write"}}))
	var jobs []githubtest.Job
	for i := 0; i < 230; i++ {
		jobs = append(jobs, githubtest.Job{Name: fmt.Sprintf("shard %d", i), Conclusion: "success"})
	}
	run := srv.AddWorkflowRun(full, githubtest.WorkflowRun{Name: "CI", Path: ".github/workflows/ci.yml", Conclusion: "failure", HeadSHA: headSHA, Jobs: jobs})
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	got, err := c.RunJobs(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 230 || got[229].Name != "shard 229" {
		t.Errorf("%d jobs, want 230 over three pages", len(got))
	}
	if n := srv.Hits(http.MethodGet, fmt.Sprintf("/repos/%s/actions/runs/%d/jobs", full, run.ID)); n != 3 {
		t.Errorf("%d requests for the jobs, want 3 pages", n)
	}

	narrow, _ := newClient(t, srv, "ghs_noactions")
	_, err = narrow.RunJobs(ctx, run.ID)
	var perr *github.PermissionError
	if !errors.As(err, &perr) || !strings.Contains(err.Error(), "actions: read") {
		t.Errorf("without actions: read: %v, want a PermissionError naming it", err)
	}
}

func TestPreviousSuccessAndCompare(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t)
	base := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	shas := []string{"a000000000000000000000000000000000000001", "a000000000000000000000000000000000000002",
		"a000000000000000000000000000000000000003", "a000000000000000000000000000000000000004"}
	for i, sha := range shas {
		parent := ""
		if i > 0 {
			parent = shas[i-1]
		}
		srv.AddCommit(full, githubtest.Commit{SHA: sha, Parent: parent, Message: fmt.Sprintf("change %d\n\nbody", i+1), Author: "alice"})
	}
	add := func(n int, sha, conclusion, branch string, at time.Duration) githubtest.WorkflowRun {
		return srv.AddWorkflowRun(full, githubtest.WorkflowRun{WorkflowID: 5, Name: "CI", Path: ".github/workflows/ci.yml", Event: "push",
			Conclusion: conclusion, HeadBranch: branch, HeadSHA: sha, RunNumber: n, Created: base.Add(at)})
	}
	add(1, shas[0], "success", "main", 0)
	add(2, shas[1], "success", "main", time.Hour)
	add(3, shas[1], "success", "other", 2*time.Hour)
	failed := add(4, shas[3], "failure", "main", 3*time.Hour)
	add(5, shas[3], "success", "main", 4*time.Hour) // a later re-run that passed: not "before"

	c, _ := newClient(t, srv, githubtest.DefaultToken)
	fr, err := c.WorkflowRun(ctx, failed.ID)
	if err != nil {
		t.Fatal(err)
	}
	prev, err := c.PreviousSuccess(ctx, *fr)
	if err != nil {
		t.Fatal(err)
	}
	if prev == nil || prev.HeadSHA != shas[1] || prev.RunNumber != 2 {
		t.Fatalf("previous success %+v, want run 2 at %s", prev, shas[1])
	}
	cmpr, err := c.CompareCommits(ctx, prev.HeadSHA, fr.HeadSHA)
	if err != nil {
		t.Fatal(err)
	}
	if cmpr.Status != "ahead" || cmpr.Total != 2 || len(cmpr.Commits) != 2 ||
		cmpr.Commits[0].SHA != shas[2] || cmpr.Commits[1].Subject() != "change 4" || cmpr.Commits[0].Author != "alice" {
		t.Errorf("comparison %+v", cmpr)
	}
	if _, err := c.CompareCommits(ctx, "f00d", shas[3]); !github.IsNotFound(err) {
		t.Errorf("an unknown base: %v, want 404", err)
	}

	none, err := c.PreviousSuccess(ctx, github.WorkflowRun{ID: 1, WorkflowID: 5, HeadBranch: "nowhere", HeadSHA: shas[0], RunNumber: 9})
	if err != nil || none != nil {
		t.Errorf("a branch without a success: %+v, %v", none, err)
	}
}

func TestFileAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t)
	wf := strings.Repeat("# a long comment line to make the base64 text wrap over several lines\n", 5) + "name: CI\n"
	srv.SetFile(full, headSHA, ".github/workflows/ci.yml", []byte(wf))
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	got, err := c.FileAt(ctx, ".github/workflows/ci.yml", headSHA)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != wf {
		t.Errorf("content %q", got)
	}
	if _, err := c.FileAt(ctx, ".github/workflows/ci.yml", goodSHA); !github.IsNotFound(err) {
		t.Errorf("the file at another commit: %v, want 404", err)
	}
	if _, err := c.FileAt(ctx, "../etc/passwd", headSHA); err == nil {
		t.Error("a path outside the repository was accepted")
	}
}

func TestPullRequestsForRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t)
	run, pr := failedRun(t, srv)
	fork := srv.AddPullRequest(full, githubtest.PullRequest{Title: "From a fork", Head: "patch-1", Base: "main", HeadRepo: "mallory/demo", HeadSHA: headSHA})
	forkRun := srv.AddWorkflowRun(full, githubtest.WorkflowRun{Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
		Conclusion: "failure", HeadBranch: "patch-1", HeadSHA: headSHA, HeadRepo: "mallory/demo", PullRequests: []int{fork}})
	c, _ := newClient(t, srv, githubtest.DefaultToken)

	ev, _ := github.ParseWorkflowRunEvent(srv.WorkflowRunEvent(full, run.ID))
	prs, err := c.PullRequestsForRun(ctx, ev.Run)
	if err != nil || len(prs) != 1 || prs[0].Number != pr || !prs[0].SameRepo {
		t.Errorf("same-repository run: %+v, %v", prs, err)
	}
	fev, _ := github.ParseWorkflowRunEvent(srv.WorkflowRunEvent(full, forkRun.ID))
	if len(fev.Run.PullRequests) != 0 || !fev.Run.Fork() {
		t.Fatalf("a fork's run must list no pull request and read as a fork: %+v", fev.Run)
	}
	prs, err = c.PullRequestsForRun(ctx, fev.Run)
	if err != nil || len(prs) != 1 || prs[0].Number != fork || prs[0].SameRepo {
		t.Errorf("fork run: %+v, %v", prs, err)
	}
}

func TestCommitCommentsAndAttempts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t, githubtest.WithToken(githubtest.Token{Value: "ghs_readonly", Permissions: map[string]string{"contents": "read", "issues": "read"}}))
	_, pr := failedRun(t, srv)
	c, _ := newClient(t, srv, githubtest.DefaultToken)

	n, err := c.CIAttempts(ctx, github.ReportTarget{CommitSHA: headSHA}, headSHA)
	if err != nil || n != 0 {
		t.Fatalf("attempts before any: %d, %v", n, err)
	}
	// Someone quoting the marker does not count.
	srv.AddCommitComment(full, headSHA, "mallory", "look: "+github.CIAttemptMarker(headSHA))
	body := github.CIAttemptMarker(headSHA) + "\nThe loop is running."
	id, err := c.UpsertCommitComment(ctx, headSHA, "ralph-ci-1a2b3c4d", body)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := c.UpsertCommitComment(ctx, headSHA, "ralph-ci-1a2b3c4d", body+"\nDone.")
	if err != nil || id2 != id {
		t.Fatalf("the second upsert: id %d, %v; want the same comment %d", id2, err, id)
	}
	comments := srv.CommitComments(full, headSHA)
	if len(comments) != 2 || !strings.HasSuffix(comments[1].Body, "Done.") || comments[1].Author != githubtest.ActionsLogin {
		t.Errorf("commit comments %+v", comments)
	}
	n, err = c.CIAttempts(ctx, github.ReportTarget{CommitSHA: headSHA}, headSHA)
	if err != nil || n != 1 {
		t.Errorf("attempts on the commit: %d, %v; want 1", n, err)
	}
	// On a pull request: the sticky report comment carries the marker.
	if _, err := c.UpsertComment(ctx, pr, "ralph-ci-1a2b3c4d", body); err != nil {
		t.Fatal(err)
	}
	if n, err := c.CIAttempts(ctx, github.ReportTarget{PR: pr}, headSHA); err != nil || n != 1 {
		t.Errorf("attempts on the pull request: %d, %v; want 1", n, err)
	}
	if n, err := c.CIAttempts(ctx, github.ReportTarget{PR: pr}, goodSHA); err != nil || n != 0 {
		t.Errorf("attempts for another commit: %d, %v; want 0", n, err)
	}

	ro, _ := newClient(t, srv, "ghs_readonly")
	_, err = ro.CommitComment(ctx, headSHA, "x")
	var perr *github.PermissionError
	if !errors.As(err, &perr) || !strings.Contains(err.Error(), "contents: write") {
		t.Errorf("a read-only token: %v, want a PermissionError naming contents: write", err)
	}
	if _, err := c.CommitComment(ctx, "not-a-sha", "x"); err == nil {
		t.Error("a malformed SHA was accepted")
	}
}
