package cifailure

import (
	"context"
	"errors"
	"fmt"

	"github.com/aiwg/agent-loop/internal/forge/github"
)

// GitHub is what Prepare reads from GitHub; *github.Client satisfies it.
type GitHub interface {
	OwnLogins(ctx context.Context) ([]string, error)
	PullRequestsForRun(ctx context.Context, run github.WorkflowRun) ([]github.PR, error)
	CIAttempts(ctx context.Context, target github.ReportTarget, headSHA string) (int, error)
	FileAt(ctx context.Context, path, ref string) ([]byte, error)
	RunJobs(ctx context.Context, runID int64) ([]github.WorkflowJob, error)
	JobLog(ctx context.Context, jobID int64, max int) (github.JobLog, error)
	PreviousSuccess(ctx context.Context, run github.WorkflowRun) (*github.WorkflowRun, error)
	CompareCommits(ctx context.Context, base, head string) (github.Comparison, error)
}

var _ GitHub = (*github.Client)(nil)

// Options are what Prepare needs besides the event and the settings.
type Options struct {
	// ReadFile reads a file of the repository at the run's head commit,
	// from the checkout when it is at that commit (the example workflow
	// checks it out); nil reads the workflow files through the contents API.
	ReadFile func(path string) ([]byte, error)
	// Workspace, IsSetup and LookPath are passed to Resolve.
	Workspace string
	IsSetup   func(script, workdir string) bool
	LookPath  func(string) (string, error)
	// MaxLog bounds the prompt's log text (0: MaxPromptLog).
	MaxLog int
}

// Trigger is what a workflow_run event starts.
type Trigger struct {
	Event    github.WorkflowRunEvent
	Decision Decision
	// Criterion is the failed steps as the criterion, when Decision.Start
	// and they could be taken; CriterionErr says why not (a *Refusal, to
	// post as a comment and stop with a configuration error unless the
	// completion input was given).
	Criterion    *Criterion
	CriterionErr error
	// Excerpts, Culprit and Prompt are the first prompt's material.
	Excerpts []LogExcerpt
	Culprit  Culprit
	Prompt   string
}

// Prepare reads what a workflow_run event needs and decides: the event is
// screened first (no API call for a run that starts nothing), then the
// pull requests and the attempts already made decide, then the workflow
// file, the jobs and the failed jobs' logs give the criterion and the
// prompt. Only API and transport failures are errors; a refusal is in the
// Decision or in CriterionErr.
func Prepare(ctx context.Context, gh GitHub, ev github.WorkflowRunEvent, s Settings, o Options) (*Trigger, error) {
	t := &Trigger{Event: ev}
	run := ev.Run
	logins, err := gh.OwnLogins(ctx)
	if err != nil {
		return nil, err
	}
	s.OwnLogins = append(append([]string(nil), s.OwnLogins...), logins...)
	if why := Screen(ev, s); why != "" {
		t.Decision = Decide(ev, s, Facts{})
		return t, nil
	}
	prs, err := gh.PullRequestsForRun(ctx, run)
	if err != nil {
		return nil, err
	}
	attempts, err := gh.CIAttempts(ctx, ReportTarget(run, prs), run.HeadSHA)
	if err != nil {
		return nil, err
	}
	t.Decision = Decide(ev, s, Facts{PRs: prs, Attempts: attempts})
	if !t.Decision.Start {
		return t, nil
	}

	read := o.ReadFile
	if read == nil {
		read = func(p string) ([]byte, error) { return gh.FileAt(ctx, p, run.HeadSHA) }
	}
	wf, err := read(run.Path)
	if err != nil {
		return nil, fmt.Errorf("reading the workflow %s at %s: %w", run.Path, short7(run.HeadSHA), err)
	}
	jobs, err := gh.RunJobs(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	in := Input{Run: run, Jobs: jobs, Workflow: wf, ReadFile: read, Workspace: o.Workspace, IsSetup: o.IsSetup, LookPath: o.LookPath}
	for _, p := range run.PullRequests {
		if p.Number == t.Decision.Delivery.PR {
			pp := p
			in.PR = &pp
		}
	}
	if in.PR == nil && len(prs) > 0 {
		in.PR = &github.RunPR{Number: prs[0].Number, HeadRef: prs[0].HeadRef, HeadSHA: prs[0].HeadSHA, BaseRef: prs[0].BaseRef}
	}
	t.Criterion, t.CriterionErr = Resolve(in)

	logs := map[string]string{}
	for _, j := range jobs {
		if j.Conclusion != "failure" && j.Conclusion != "timed_out" {
			continue
		}
		l, err := gh.JobLog(ctx, j.ID, 0)
		if err != nil {
			if github.IsNotFound(err) {
				continue // the log expired: the prompt goes without it
			}
			return nil, err
		}
		logs[j.Name] = l.Text
	}
	if t.Criterion != nil {
		t.Excerpts = Excerpts(t.Criterion, logs, o.MaxLog)
	} else {
		t.Excerpts = wholeLogs(jobs, logs, o.MaxLog)
	}

	prev, err := gh.PreviousSuccess(ctx, run)
	if err != nil {
		return nil, err
	}
	t.Culprit = Culprit{LastGreen: prev, HeadSHA: run.HeadSHA}
	if prev != nil {
		cmp, err := gh.CompareCommits(ctx, prev.HeadSHA, run.HeadSHA)
		switch {
		case err == nil:
			t.Culprit.Comparison = cmp
		case github.IsNotFound(err):
			// The old commit is gone (a force push): name no commit.
			t.Culprit.Comparison = github.Comparison{Status: "diverged"}
		default:
			return nil, err
		}
	}
	c := t.Criterion
	if c == nil {
		c = &Criterion{Workflow: run.Name, WorkflowPath: run.Path, RunURL: run.HTMLURL, HeadSHA: run.HeadSHA}
	}
	t.Prompt = Prompt(c, t.Excerpts, t.Culprit)
	return t, nil
}

// wholeLogs trims the failed jobs' whole logs, for a run whose steps could
// not be taken as the criterion.
func wholeLogs(jobs []github.WorkflowJob, logs map[string]string, max int) []LogExcerpt {
	c := &Criterion{}
	for _, j := range jobs {
		if _, ok := logs[j.Name]; ok {
			c.Fallbacks = append(c.Fallbacks, Fallback{Job: j.Name, Step: firstFailedName(j)})
		}
	}
	return Excerpts(c, logs, max)
}

// IsRefusal reports whether err (from Resolve) is a refusal to post, as
// opposed to a failure to read the workflow.
func IsRefusal(err error) bool {
	var r *Refusal
	return errors.As(err, &r)
}
