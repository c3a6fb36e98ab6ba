package cifailure_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/cifailure"
	"github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
)

const (
	full    = githubtest.DefaultRepoFullName
	headSHA = "6666666666666666666666666666666666666666"
	goodSHA = "5555555555555555555555555555555555555555"
)

const workflow = `name: CI
on: [push, pull_request]
jobs:
  check:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        os: [ubuntu-latest]
        level: [1, 2]
    defaults:
      run:
        working-directory: web
    steps:
      - uses: actions/checkout@v4
      - name: Check level ${{ matrix.level }}
        env:
          LEVEL: ${{ matrix.level }}
        run: ./check.sh "$LEVEL"
`

// ciFixture is a repository checkout whose check fails at level 2 until
// web/fixed exists, and a fake GitHub with the failed run of that check on
// a pull request.
func ciFixture(t *testing.T) (*githubtest.Server, string, githubtest.WorkflowRun, int) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "web"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"checking level $1 in $(basename \"$PWD\")\"\nif [ \"$1\" = 2 ] && [ ! -e fixed ]; then echo 'FAIL: TestLevel2 (level 2 needs the fix)'; exit 1; fi\necho ok\n"
	if err := os.WriteFile(filepath.Join(dir, "web", "check.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := githubtest.New(t)
	srv.SetBranch(full, "feature", headSHA)
	srv.SetBranch(full, "main", goodSHA)
	srv.SetFile(full, headSHA, ".github/workflows/ci.yml", []byte(workflow))
	srv.AddCommit(full, githubtest.Commit{SHA: goodSHA, Message: "base"})
	srv.AddCommit(full, githubtest.Commit{SHA: headSHA, Parent: goodSHA, Message: "web: level 2\n\nbody", Author: "alice"})
	pr := srv.AddPullRequest(full, githubtest.PullRequest{Title: "Level 2", Head: "feature", Base: "main"})
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	srv.AddWorkflowRun(full, githubtest.WorkflowRun{WorkflowID: 3, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
		Conclusion: "success", HeadBranch: "feature", HeadSHA: goodSHA, RunNumber: 1, Created: t0})
	log := strings.Join([]string{
		"2025-06-01T13:00:00.0000000Z ##[group]Run ./check.sh \"$LEVEL\"",
		"2025-06-01T13:00:00.0000000Z \x1b[36;1m./check.sh \"$LEVEL\"\x1b[0m",
		"2025-06-01T13:00:00.0000000Z shell: /usr/bin/bash -e {0}",
		"2025-06-01T13:00:00.0000000Z ##[endgroup]",
		"2025-06-01T13:00:01.0000000Z checking level 2 in web",
		"2025-06-01T13:00:01.0000000Z FAIL: TestLevel2 (level 2 needs the fix)",
		"2025-06-01T13:00:01.0000000Z ##[error]Process completed with exit code 1.",
		"2025-06-01T13:00:02.0000000Z Post job cleanup.",
	}, "\n")
	run := srv.AddWorkflowRun(full, githubtest.WorkflowRun{WorkflowID: 3, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
		Conclusion: "failure", HeadBranch: "feature", HeadSHA: headSHA, RunNumber: 2, PullRequests: []int{pr}, Created: t0.Add(time.Hour),
		HeadCommitMessage: "web: level 2\n\nbody",
		Jobs: []githubtest.Job{
			{Name: "check (ubuntu-latest, 1)", Conclusion: "success", Steps: []githubtest.JobStep{
				{Name: "Set up job", Conclusion: "success"}, {Name: "Run actions/checkout@v4", Conclusion: "success"},
				{Name: "Check level 1", Conclusion: "success"}, {Name: "Complete job", Conclusion: "success"}}},
			{Name: "check (ubuntu-latest, 2)", Conclusion: "failure", Log: log, Steps: []githubtest.JobStep{
				{Name: "Set up job", Conclusion: "success"}, {Name: "Run actions/checkout@v4", Conclusion: "success"},
				{Name: "Check level 2", Conclusion: "failure"}, {Name: "Post Run actions/checkout@v4", Conclusion: "success"},
				{Name: "Complete job", Conclusion: "success"}}},
		}})
	return srv, dir, run, pr
}

func client(t *testing.T, srv *githubtest.Server) *github.Client {
	t.Helper()
	c, err := github.New(context.Background(), githubtest.DefaultToken, srv.URL, githubtest.DefaultOwner, githubtest.DefaultRepo,
		github.WithSleep(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func runCheck(t *testing.T, dir, command string) (string, bool) {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return string(out), err == nil
}

// TestPrepareFromTheLoopbackGitHub is the trigger end to end short of the
// loop: the event as GitHub delivers it, the REST answers as GitHub gives
// them (the log through its blob redirect), the decision, the failed
// matrix entry's step as the criterion run for real in its working
// directory, the prompt, and the attempt claimed so that a second failed
// run on the same commit starts nothing.
func TestPrepareFromTheLoopbackGitHub(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, dir, run, pr := ciFixture(t)
	gh := client(t, srv)
	ev, err := github.ParseWorkflowRunEvent(srv.WorkflowRunEvent(full, run.ID))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cifailure.Prepare(ctx, gh, ev, cifailure.Settings{}, cifailure.Options{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	d := tr.Decision
	if !d.Start || d.Delivery != (cifailure.Delivery{Mode: cifailure.FixPR, Base: "feature", StartSHA: headSHA, PR: pr}) || d.ReportOn.PR != pr {
		t.Fatalf("decision %+v", d)
	}
	if tr.CriterionErr != nil {
		t.Fatal(tr.CriterionErr)
	}
	c := tr.Criterion
	if len(c.Steps) != 1 || c.Steps[0].Job != "check (ubuntu-latest, 2)" || c.Steps[0].WorkingDirectory != "web" || c.Steps[0].Name != "Check level 2" {
		t.Fatalf("criterion %+v", c.Steps)
	}
	for _, want := range []string{"FAIL: TestLevel2", `job "check (ubuntu-latest, 2)", step "Check level 2"`, `6666666 "web: level 2" by alice`, run.Jobs[1].Name} {
		if !strings.Contains(tr.Prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, tr.Prompt)
		}
	}
	if srv.LogRejections() != 0 || srv.BlobHits() != 1 {
		t.Errorf("log download: %d rejections, %d blob hits", srv.LogRejections(), srv.BlobHits())
	}

	cmd, err := c.Command()
	if err != nil {
		t.Fatal(err)
	}
	out, ok := runCheck(t, dir, cmd)
	if ok || !strings.Contains(out, "checking level 2 in web") {
		t.Fatalf("the criterion must fail before the fix, in web/, at level 2:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(dir, "web", "fixed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, ok := runCheck(t, dir, cmd); !ok {
		t.Fatalf("the criterion must pass after the fix:\n%s", out)
	}

	// The loop claims its attempt in its report; the same run again (a
	// re-run) and another failed workflow on the commit start nothing.
	if _, err := gh.UpsertComment(ctx, pr, "ralph-ci-6666666-0a1b2c3d", github.CIAttemptMarker(headSHA)+"\nagent-loop is fixing CI"); err != nil {
		t.Fatal(err)
	}
	again, err := cifailure.Prepare(ctx, gh, ev, cifailure.Settings{}, cifailure.Options{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	if again.Decision.Start || !strings.Contains(again.Decision.Skip, "already had 1 loop") {
		t.Errorf("a second failed run on the commit: %+v", again.Decision)
	}
}

func TestPrepareOwnRunAndFork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, dir, _, _ := ciFixture(t)
	gh := client(t, srv)

	own := srv.AddWorkflowRun(full, githubtest.WorkflowRun{Name: "CI", Path: ".github/workflows/ci.yml", Event: "push", Conclusion: "failure",
		HeadBranch: "agent-loop/ralph-ci-1", HeadSHA: headSHA, HeadCommitMessage: "agent-loop: iteration 1\n\nAgent-Loop-Id: ralph-ci-1\nAgent-Loop-Iteration: 1"})
	ev, _ := github.ParseWorkflowRunEvent(srv.WorkflowRunEvent(full, own.ID))
	before := len(srv.Requests())
	tr, err := cifailure.Prepare(ctx, gh, ev, cifailure.Settings{}, cifailure.Options{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Decision.Start || !strings.Contains(tr.Decision.Skip, "made by agent-loop") {
		t.Errorf("our own push: %+v", tr.Decision)
	}
	for _, r := range srv.Requests()[before:] {
		if strings.Contains(r.Path, "/actions/") {
			t.Errorf("a run that starts nothing still read %s", r.Path)
		}
	}

	forkPR := srv.AddPullRequest(full, githubtest.PullRequest{Title: "From a fork", Head: "patch-1", Base: "main", HeadRepo: "mallory/demo", HeadSHA: headSHA})
	fork := srv.AddWorkflowRun(full, githubtest.WorkflowRun{Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request", Conclusion: "failure",
		HeadBranch: "patch-1", HeadSHA: headSHA, HeadRepo: "mallory/demo", PullRequests: []int{forkPR}})
	ev, _ = github.ParseWorkflowRunEvent(srv.WorkflowRunEvent(full, fork.ID))
	tr, err = cifailure.Prepare(ctx, gh, ev, cifailure.Settings{}, cifailure.Options{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Decision.Start || tr.Decision.Refuse == "" || tr.Decision.ReportOn.PR != forkPR {
		t.Fatalf("a fork's run: %+v", tr.Decision)
	}
	// The wiring posts the refusal where the decision says.
	if _, err := gh.Comment(ctx, tr.Decision.ReportOn.PR, tr.Decision.Refuse); err != nil {
		t.Fatal(err)
	}
	cs := srv.Comments(full, forkPR)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "allow-forks: true") {
		t.Errorf("comments on the fork's pull request: %+v", cs)
	}
}
