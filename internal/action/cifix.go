package action

import (
	"context"
	"errors"
	"fmt"
	pathpkg "path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aiwg/agent-loop/internal/cifailure"
	"github.com/aiwg/agent-loop/internal/criteria"
	"github.com/aiwg/agent-loop/internal/escape"
	"github.com/aiwg/agent-loop/internal/exitcode"
	ghforge "github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/safefs"
	"github.com/aiwg/agent-loop/internal/shellcmd"
	"github.com/aiwg/agent-loop/internal/spec"
)

// The workflow_run trigger ("CI failed: fix it"): a failed run of the
// workflows the user names starts a loop whose criterion is the failed
// steps (internal/cifailure decides and resolves; this file wires it into
// the Action: the loop's Spec, where the fix and the report go, the
// attempt claimed in the report).

// ciRun is what the Action knows of a workflow_run event.
type ciRun struct {
	event ghforge.WorkflowRunEvent
	// trigger is cifailure's decision and criterion, once prepared (nil
	// for a resumed loop: its Spec is saved).
	trigger *cifailure.Trigger
}

// ciSettings are the user's choices for the trigger, from the inputs.
func ciSettings(s spec.Settings) cifailure.Settings {
	return cifailure.Settings{FixCI: s.Action.FixCI, MaxAttempts: s.Action.MaxAttempts, AllowForks: s.Action.AllowForks,
		AllowOwnRuns: s.Action.AllowOwnRuns}
}

// resolveCITrigger reads a workflow_run event: the trigger's key (the
// failed commit: a re-run of this workflow resumes the same loop), and,
// from the event alone, whether it can start anything at all (a run that
// succeeded, one agent-loop caused, a merge queue's), before any request
// that reads the run.
func resolveCITrigger(ctx context.Context, payload map[string]any, repoFull string, s spec.Settings, gh *ghforge.Client) (trigger, *ciRun, error) {
	t := trigger{Event: "workflow_run", DefaultBranch: pstr(payload, "repository.default_branch"), Task: strings.TrimSpace(s.Spec.Task)}
	ev, err := ghforge.ParseWorkflowRunEvent(payload)
	if err != nil {
		return t, nil, err
	}
	sha := strings.ToLower(ev.Run.HeadSHA)
	t.Key = fmt.Sprintf("%s#ci-%s", nonEmpty(ev.Repository, repoFull), sha)
	t.Slug = "ci " + short7(sha)
	t.HeadSHA = sha
	cs := ciSettings(s)
	if gh != nil {
		logins, err := gh.OwnLogins(ctx)
		if err != nil {
			return t, nil, fmt.Errorf("reading agent-loop's own logins: %w", err)
		}
		cs.OwnLogins = logins
	}
	t.Skip = cifailure.Screen(ev, cs)
	return t, &ciRun{event: ev}, nil
}

// provisionalTarget is where a resumed CI loop reports (a new one's
// target comes from cifailure's decision): the run's pull request of this
// repository, else the failed commit.
func (a *actionRun) provisionalTarget() {
	run := a.ci.event.Run
	if len(run.PullRequests) > 0 {
		a.setReportTarget(ghforge.ReportTarget{PR: run.PullRequests[0].Number})
		return
	}
	a.setReportTarget(ghforge.ReportTarget{CommitSHA: run.HeadSHA})
}

func short7(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// prepareCI decides what a failed run starts and fills the new loop's
// Spec: the failed steps as the criterion (unless the completion input is
// given), the first prompt's material, where the fix goes. It returns
// done with the step's exit code when nothing starts (skipped, refused,
// a criterion that cannot be taken).
func (a *actionRun) prepareCI(ctx context.Context, s *spec.Settings) (code int, done bool) {
	run := a.ci.event.Run
	opts := cifailure.Options{Workspace: a.repoRoot(), IsSetup: a.isSetup}
	if _, head, err := a.repo.Head(ctx); err == nil && strings.EqualFold(head, run.HeadSHA) {
		// The checkout is the failed commit (the example checks it out):
		// its files, read before the agent ever runs.
		opts.ReadFile = a.readWorkspaceFile
	}
	tr, err := cifailure.Prepare(ctx, a.gh, a.ci.event, ciSettings(*s), opts)
	if err != nil {
		return a.fail(exitcode.NotCompleted, fmt.Errorf("reading the failed run %d: %w", run.ID, err)), true
	}
	a.ci.trigger = tr
	d := tr.Decision
	for _, n := range d.Notes {
		fmt.Fprintf(a.stdout, "agent-loop: %s\n", n)
	}
	switch {
	case d.Skip != "":
		fmt.Fprintf(a.stdout, "agent-loop: nothing to do: %s\n", d.Skip)
		_ = a.w.SetOutput("status", "skipped")
		return 0, true
	case d.Refuse != "":
		a.setReportTarget(d.ReportOn)
		return a.refuse(ctx, d.Refuse), true
	}
	a.setReportTarget(d.ReportOn)

	sp := &s.Spec
	if !s.Given("task") || strings.TrimSpace(sp.Task) == "" {
		sp.Task = fmt.Sprintf("Make the failed CI run of %q pass again: %s", run.Name, run.HTMLURL)
	}
	sp.Context = tr.Prompt
	if strings.TrimSpace(sp.Criterion.Command) == "" {
		c, err := a.ciCriterion(ctx, tr, sp.Criterion.Setup)
		if err != nil {
			var r *ciRefusal
			if errors.As(err, &r) {
				a.postAtTarget(ctx, "**agent-loop did not start:** the failed step cannot be the criterion.\n\n"+fenced(r.msg))
			}
			return a.fail(exitcode.BadInput, err), true
		}
		sp.Criterion = c
	}
	// Where the fix goes: the loop branch is the pull request's own
	// (fix-ci: push) or agent-loop/<loop_id> with a pull request into the
	// branch the run was on; the result is merged with that branch's new
	// commits before it is published.
	dl := d.Delivery
	sp.Publish.Base = dl.Base
	if dl.Mode == cifailure.FixPush {
		a.trig.HeadRef, a.trig.HeadSHA = dl.Base, dl.StartSHA
		sp.Publish.PR = "comment"
	}
	if err := a.startAt(ctx, dl.Base, dl.StartSHA); err != nil {
		return a.fail(exitcode.NotCompleted, err), true
	}
	// The attempt is claimed before the baseline: a second failed run on
	// the commit (or a re-run of this one) sees it and starts nothing.
	body := fmt.Sprintf("**agent-loop is fixing the failed run of %s** (%s) on %s at %s; the criterion is %s.",
		escape.Text(strconv.Quote(run.Name)), escape.Link("the run", run.HTMLURL), escape.Code(dl.Base), short7(dl.StartSHA), sp.Criterion.Source.Phrase())
	if _, err := a.upsertReport(ctx, s.Start.LoopID, body, "", false); err != nil {
		return a.fail(exitcode.NotCompleted, fmt.Errorf("claiming the attempt for %s at %s: %w", short7(run.HeadSHA), d.ReportOn, err)), true
	}
	return 0, false
}

// ciRefusal is a criterion that cannot be taken from the failed run.
type ciRefusal struct{ msg string }

func (r *ciRefusal) Error() string { return r.msg }

// ciCriterion is the loop's criterion from the failed run: the failed
// steps (each must pass), their setup unless setup was given, the steps
// that run an action inferred with their job as context (adopted at high
// confidence only), with the evidence naming the workflow, job, step and
// run.
func (a *actionRun) ciCriterion(ctx context.Context, tr *cifailure.Trigger, setupInput string) (spec.Criterion, error) {
	run := tr.Event.Run
	if err := tr.CriterionErr; err != nil {
		if cifailure.IsRefusal(err) {
			return spec.Criterion{}, &ciRefusal{msg: err.Error()}
		}
		return spec.Criterion{}, &ciRefusal{msg: fmt.Sprintf("the criterion could not be taken from %s (%s): %v; set the completion input", run.Path, run.HTMLURL, err)}
	}
	c := tr.Criterion
	var evidence []string
	for _, f := range c.Fallbacks {
		p, err := criteria.InferWithHint(ctx, a.repoRoot(), f.Task, f.Hint)
		if err != nil || p.Command == "" || p.Confidence != criteria.ConfidenceHigh {
			why := "nothing could be inferred"
			if err != nil {
				why = err.Error()
			} else if p.Command != "" {
				why = fmt.Sprintf("the inferred %q has %s confidence", p.Command, p.Confidence)
			}
			if len(c.Steps) == 0 {
				return spec.Criterion{}, &ciRefusal{msg: fmt.Sprintf("job %q failed in %s, %s, and its criterion could not be inferred: %s; set the completion input",
					f.Job, run.HTMLURL, f.Reason, why)}
			}
			evidence = append(evidence, fmt.Sprintf("%s: job %q: %s; not checked (%s)", criteria.LayerCIConfig, f.Job, f.Reason, why))
			continue
		}
		c.AddStep("inferred: "+p.Command, p.Command, p.Workdir)
		evidence = append(evidence, fmt.Sprintf("%s: job %q: %s; inferred %q instead (with the job as context)", criteria.LayerCIConfig, f.Job, f.Reason, p.Command))
	}
	cmd, err := c.Command()
	if err != nil {
		return spec.Criterion{}, &ciRefusal{msg: err.Error()}
	}
	setup := strings.TrimSpace(setupInput)
	if setup == "" {
		if setup, err = c.SetupCommand(); err != nil {
			return spec.Criterion{}, &ciRefusal{msg: err.Error()}
		}
	}
	var origin *spec.Origin
	for _, s := range c.Steps {
		src := s.File
		if s.Line > 0 {
			src += ":" + strconv.Itoa(s.Line)
		}
		evidence = append(evidence, fmt.Sprintf("%s: %s: %s", criteria.LayerCIConfig, src, s.Evidence(c.RunURL)))
		if origin == nil && s.File != "" {
			origin = &spec.Origin{File: s.File, Job: s.Job, Step: s.Name, Run: c.RunURL}
		}
	}
	for _, n := range c.Notes {
		evidence = append(evidence, criteria.LayerCIConfig+": "+c.WorkflowPath+": "+n)
	}
	return spec.Criterion{Command: cmd, Workdir: ".", Setup: setup, Source: spec.SourceCI, Confidence: criteria.ConfidenceHigh,
		Evidence: evidence, Origin: origin}, nil
}

// isSetup says whether a run: script of the failed job installs what the
// failed step needs: every command it runs is a setup command in the one
// shell-command model.
func (a *actionRun) isSetup(script, dir string) bool {
	an, err := shellcmd.AnalyzeDir(a.repoRoot(), script, dir)
	if err != nil || len(an.Steps) == 0 {
		return false
	}
	for _, s := range an.Steps {
		if s.Role != shellcmd.RoleSetup {
			return false
		}
	}
	return true
}

// maxWorkflowFile bounds a workflow file read from the checkout.
const maxWorkflowFile = 4 << 20

// readWorkspaceFile reads a repository file of the checkout (a workflow
// file at the failed commit), never through a symbolic link.
func (a *actionRun) readWorkspaceFile(p string) ([]byte, error) {
	clean := pathpkg.Clean(strings.TrimPrefix(p, "./"))
	if pathpkg.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return nil, fmt.Errorf("%s: outside the repository", p)
	}
	root, err := safefs.OpenRoot(a.repoRoot())
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(filepath.FromSlash(clean), maxWorkflowFile)
}

// fenced is untrusted text as a Markdown code block.
func fenced(text string) string { return cifailure.Fence(escape.Block(text)) }

// startAt makes branch, at sha, the checked-out branch with its tree in
// the work tree: the failed commit the loop starts from. The branch is
// fetched first, so a checkout of another commit has its objects.
func (a *actionRun) startAt(ctx context.Context, branch, sha string) error {
	if _, err := a.repo.FetchBranch(ctx, branch); err != nil {
		fmt.Fprintf(a.stdout, "agent-loop: fetching %s: %v\n", branch, a.w.Redact(err.Error()))
	}
	if err := a.repo.StartBranch(ctx, branch, sha); err != nil {
		return fmt.Errorf("starting from %s at %s: %w", branch, short7(sha), err)
	}
	return a.repo.ResetTo(ctx, sha)
}

// setReportTarget makes target (the pull request, or the failed commit)
// where the report and refusals go.
func (a *actionRun) setReportTarget(t ghforge.ReportTarget) {
	a.reportOn = t
	if t.PR > 0 {
		a.trig.Number, a.trig.IsPR = t.PR, true
	}
}

// ciMarker is the hidden line the report of a CI loop carries, by which a
// later failed run on the same commit counts the attempt.
func (a *actionRun) ciMarker() string {
	if a.ciHead == "" {
		return ""
	}
	return ghforge.CIAttemptMarker(a.ciHead) + "\n"
}

// upsertReport writes the loop's one report comment where it goes: the
// pull request, or the failed commit.
func (a *actionRun) upsertReport(ctx context.Context, loopID, body, repoURL string, onPR bool) (string, error) {
	body = a.ciMarker() + body
	switch {
	case a.reportOn.PR > 0:
		id, err := a.gh.UpsertComment(ctx, a.reportOn.PR, loopID, body)
		if err != nil || id <= 0 {
			return "", err
		}
		kind := "issues"
		if onPR || a.reportOn.PR != a.trig.Number {
			kind = "pull"
		}
		return fmt.Sprintf("%s/%s/%d#issuecomment-%d", repoURL, kind, a.reportOn.PR, id), nil
	case a.reportOn.CommitSHA != "":
		id, err := a.gh.UpsertCommitComment(ctx, a.reportOn.CommitSHA, loopID, body)
		if err != nil || id <= 0 {
			return "", err
		}
		return fmt.Sprintf("%s/commit/%s#commitcomment-%d", repoURL, a.reportOn.CommitSHA, id), nil
	default:
		id, err := a.gh.UpsertComment(ctx, a.trig.Number, loopID, body)
		if err != nil || id <= 0 {
			return "", err
		}
		return fmt.Sprintf("%s/issues/%d#issuecomment-%d", repoURL, a.trig.Number, id), nil
	}
}

// postAtTarget posts a one-off comment where the report goes.
func (a *actionRun) postAtTarget(ctx context.Context, body string) {
	var err error
	switch {
	case a.reportOn.CommitSHA != "" && a.reportOn.PR == 0:
		_, err = a.gh.CommitComment(ctx, a.reportOn.CommitSHA, body)
	case a.trig.Number > 0:
		_, err = a.gh.Comment(ctx, a.trig.Number, body)
	default:
		return
	}
	if err != nil {
		fmt.Fprintf(a.stdout, "agent-loop: could not post the comment: %v\n", a.w.Redact(err.Error()))
	}
}
