package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aiwg/agent-loop/internal/actions"
	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/criteria"
	"github.com/aiwg/agent-loop/internal/escape"
	"github.com/aiwg/agent-loop/internal/exitcode"
	ghforge "github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/gitrepo"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/report"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// Keys the main step saves for the post step (GITHUB_STATE).
const (
	stLoopID    = "loop_id"
	stBaseID    = "base_id"
	stWorkspace = "workspace"
	stNumber    = "number"
	stPublished = "published"
	stUploaded  = "uploaded"
	stPR        = "pr"
	stDraft     = "draft"
	stBase      = "base"
	stPRNumber  = "pr_number"
	stActor     = "actor"
	stCIHead    = "ci_head"
	stReportSHA = "report_sha"
)

// artifactName is the name of a loop's state artifact.
func artifactName(baseID string) string { return "agent-loop-state-" + baseID }

// stateRef is the private ref the state is pushed to every iteration. It is
// not refs/agent-loop/<id>: git resolves the short name agent-loop/<id> (the
// loop branch) to refs/agent-loop/<id> before refs/heads/agent-loop/<id>, so
// that name would make the branch ambiguous.
func stateRef(baseID string) string { return "refs/agent-loop-state/" + baseID }

// Main is the container action's main step. It returns the exit code.
func Main(ctx context.Context, o app.IO, getenv actions.Env, stdout io.Writer) int {
	w := actions.NewWriter(stdout, getenv)
	rt, err := actions.NewRuntime(getenv, stdout)
	if err != nil {
		w.Annotate("error", "", 0, "agent-loop", err.Error())
		return exitcode.BadInput
	}
	_ = w.MarkMainStarted()
	rt.MaskSecretInputs(w, spec.SecretInputs())
	gctx := rt.Context()
	workspace := getenv("GITHUB_WORKSPACE")
	if workspace == "" {
		workspace = "."
	}
	defer chownToWorkspaceOwner(workspace)
	a := &actionRun{w: w, rt: rt, o: o, stdout: stdout, workspace: workspace, getenv: getenv}
	return a.main(ctx, gctx.EventName, gctx.Repository, gctx.APIURL, gctx.ServerURL)
}

type actionRun struct {
	getenv    actions.Env
	w         *actions.Writer
	rt        *actions.Runtime
	o         app.IO
	stdout    io.Writer
	workspace string
	gh        *ghforge.Client
	repo      *gitrepo.Repo
	s         spec.Settings
	trig      trigger
	baseID    string
	obs       *actionObserver
	// ci is the workflow_run event of a failed CI run (nil for other
	// events); ciHead its failed commit, whose attempt the report claims;
	// reportOn where the report goes when it is not trig.Number (a commit).
	ci       *ciRun
	ciHead   string
	reportOn ghforge.ReportTarget
}

func (a *actionRun) fail(code int, err error) int {
	a.w.Annotate("error", "", 0, "agent-loop", a.w.Redact(err.Error()))
	fmt.Fprintf(a.stdout, "agent-loop: %s\n", a.w.Redact(err.Error()))
	_ = a.w.SetOutput("status", map[int]string{exitcode.BadInput: "configuration-error"}[code])
	return code
}

func (a *actionRun) main(ctx context.Context, event, repoFull, apiURL, serverURL string) int {
	s := settingsFromInputs(a.getenv, a.workspace)
	for _, v := range s.Action.Credentials {
		a.w.Mask(v)
	}
	a.w.Mask(s.Action.Token)
	ev, err := a.rt.Event()
	if err != nil {
		return a.fail(exitcode.BadInput, err)
	}
	owner, name, _ := strings.Cut(repoFull, "/")
	if strings.TrimSpace(s.Action.Token) != "" {
		if a.gh, err = ghforge.New(ctx, s.Action.Token, apiURL, owner, name); err != nil {
			return a.fail(exitcode.BadInput, err)
		}
	}
	var trig trigger
	if event == "workflow_run" {
		trig, a.ci, err = resolveCITrigger(ctx, ev, repoFull, s, a.gh)
		if a.ci == nil && err != nil {
			return a.fail(exitcode.BadInput, err)
		}
		if a.ci != nil {
			a.ciHead = a.ci.event.Run.HeadSHA
			a.trig = trig
			a.provisionalTarget()
			trig = a.trig
		}
	} else {
		trig, err = resolveTrigger(ctx, event, ev, repoFull, s.Spec.Task, s.Action.TriggerPhrase, a.gh)
	}
	if err != nil {
		return a.fail(exitcode.NotCompleted, err)
	}
	a.trig = trig
	// A check the task names came from the comment when the comment is the
	// task (no task input).
	taskFromComment := trig.Event == "issue_comment" && strings.TrimSpace(s.Spec.Task) == ""
	if trig.Skip != "" {
		fmt.Fprintf(a.stdout, "agent-loop: nothing to do: %s\n", trig.Skip)
		_ = a.w.SetOutput("status", "skipped")
		return 0
	}
	s.Spec.Task = trig.Task
	if s.Spec.Criterion.Command == "" {
		// "loop until coverage is above 80%": what done means, in the
		// commenter's words, refines the inference.
		s.Spec.Criterion.Hint = trig.Hint
	}
	if a.gh == nil {
		// No token, nothing can be asked of GitHub: report the inputs.
		_, err := spec.Validate(s, spec.DoorAction)
		return a.fail(exitcode.BadInput, app.ProblemList(err))
	}
	a.baseID = s.Start.LoopID
	if a.baseID == "" || !spec.ValidLoopID(a.baseID) {
		a.baseID = state.DerivedLoopID(trig.Slug, trig.Key)
	}
	_ = a.w.SaveState(stBaseID, a.baseID)
	_ = a.w.SaveState(stWorkspace, a.workspace)
	_ = a.w.SaveState(stNumber, strconv.Itoa(trig.Number))
	_ = a.w.SaveState(stPR, s.Spec.Publish.PR)
	_ = a.w.SaveState(stDraft, strconv.FormatBool(s.Spec.Publish.Draft))

	// Refusals: a clear comment, never a silent no-op.
	if trig.Fork && !s.Action.AllowForks {
		return a.refuse(ctx, "agent-loop does not run on pull requests from forks: the fork's code would run with this repository's token and secrets. A maintainer can set `allow-forks: true` to allow it (read the security notes in the README first).")
	}
	if trig.CheckActor {
		perm, err := a.gh.ActorPermission(ctx, trig.Actor)
		if err != nil {
			return a.fail(exitcode.NotCompleted, fmt.Errorf("checking the permission of @%s: %w", trig.Actor, err))
		}
		if !ghforge.CanTrigger(perm) {
			return a.refuse(ctx, fmt.Sprintf("@%s, agent-loop only runs for people with write, maintain or admin permission on this repository (yours: %s).", trig.Actor, perm))
		}
	}

	repo, err := gitrepo.Open(a.workspace, gitrepo.Options{Remote: "origin", Token: s.Action.Token})
	if err != nil {
		return a.fail(exitcode.BadInput, err)
	}
	a.repo = repo
	// Resume from the newest state of this trigger, if there is one.
	prev, err := a.restore(ctx)
	if err != nil {
		fmt.Fprintf(a.stdout, "agent-loop: no state restored: %v\n", err)
	}
	if prev != nil && a.ci != nil && strings.TrimSpace(s.Spec.Task) == "" {
		// The event of a failed run names no task: the loop's own.
		s.Spec.Task = prev.Harness.Spec.Task
	}
	if prev == nil {
		s.Start.LoopID = a.baseID
		if d := app.LoopDir(a.repoRoot(), a.baseID, a.o.Environ); d.Exists() {
			// This trigger's earlier loop is finished: a new one.
			s.Start.LoopID = state.DerivedLoopID(trig.Slug, trig.Key+"#"+strconv.FormatInt(a.rt.Context().RunID, 10))
		}
		if a.ci != nil {
			// A failed CI run: cifailure decides, and the criterion and
			// the first prompt come from the run.
			if code, done := a.prepareCI(ctx, &s); done {
				return code
			}
			trig = a.trig
			_ = a.w.SaveState(stCIHead, a.ciHead)
			_ = a.w.SaveState(stReportSHA, a.reportOn.CommitSHA)
			_ = a.w.SaveState(stNumber, strconv.Itoa(trig.Number))
			_ = a.w.SaveState(stPR, s.Spec.Publish.PR)
		}
		if trig.HeadRef != "" && !trig.Fork {
			// Work on the pull request's own branch, from its head (not
			// the merge commit actions/checkout made).
			s.Spec.Publish.Branch = trig.HeadRef
		}
		if s.Spec.Publish.Base == "" {
			// The branch the result is for: its new commits are merged
			// into the loop branch before publishing.
			switch {
			case trig.HeadRef != "" && !trig.Fork:
				s.Spec.Publish.Base = trig.HeadRef
			default:
				s.Spec.Publish.Base = nonEmpty(trig.BaseRef, trig.DefaultBranch)
			}
		}
	}
	// The one check of the inputs, now that the trigger has said what it
	// adds (the task, the branch): every problem at once, each naming its
	// input.
	v, err := spec.Validate(s, spec.DoorAction)
	if err != nil {
		return a.fail(exitcode.BadInput, app.ProblemList(err))
	}
	a.s = v.Settings()
	if prev != nil && a.ci != nil {
		// A resumed CI loop publishes where it started to: its saved
		// Spec says whether the loop branch is the pull request's own.
		pub := prev.Harness.Spec.Publish
		a.s.Spec.Publish.PR, a.s.Spec.Publish.Base = pub.PR, pub.Base
		if pub.Base != "" && pub.Branch == pub.Base {
			a.trig.HeadRef = pub.Base
		}
	}
	if trig.CommentID != 0 {
		if err := a.gh.React(ctx, trig.CommentID, "eyes"); err != nil {
			fmt.Fprintf(a.stdout, "agent-loop: could not react to the comment: %v\n", err)
		}
	}
	if info := repo.Info(); info.LFS {
		a.w.Annotate("warning", "", 0, "agent-loop", "this repository uses Git LFS: agent-loop commits LFS-tracked files as they are in the work tree (pointers are not re-created); check the loop's changes to such files")
	}
	environ := append([]string(nil), a.o.Environ...)
	for k, v := range a.s.Action.Credentials {
		environ = append(environ, k+"="+v)
	}
	untrusted := a.w.Untrusted(a.stdout)
	defer untrusted.Close()
	runIO := app.IO{Stdin: strings.NewReader(""), Stdout: untrusted, Stderr: untrusted, Environ: environ}
	actor := nonEmpty(trig.Actor, a.rt.Context().Actor)
	_ = a.w.SaveState(stActor, actor)
	a.obs = &actionObserver{run: a, serverURL: serverURL, repoFull: repoFull, actor: actor}
	hooks := app.Hooks{Observer: a.obs, Repo: a.repo, Token: a.s.Action.Token, Remote: "origin", Owner: actor,
		Protect: a.commandFiles(), TaskFromComment: taskFromComment}

	var res *app.RunResult
	if prev != nil {
		_ = a.w.SaveState(stLoopID, prev.LoopID)
		fmt.Fprintf(a.stdout, "agent-loop: resuming %s from iteration %d\n", prev.LoopID, prev.Iteration)
		if err := a.checkout(ctx, prev.Harness.Branch, prev.Harness.HeadSHA); err != nil {
			// Stopped before its first commit was pushed: the loop
			// branch starts again at the loop's starting commit.
			base := prev.Harness.BaseSHA
			if len(prev.IterationHistory) > 0 || base == "" || a.repo.StartBranch(ctx, prev.Harness.Branch, base) != nil || a.repo.ResetTo(ctx, base) != nil {
				return a.fail(exitcode.NotCompleted, err)
			}
			fmt.Fprintf(a.stdout, "agent-loop: %s was never pushed; it starts again at %.8s\n", prev.Harness.Branch, base)
		}
		ro := app.ResumeOptions{Door: spec.DoorAction}
		if g := prev.Harness.PendingGate; g != nil && g.Decision == "" {
			// A loop paused by the human-gate regression policy: the
			// decision is the comment "/agent-loop approve" or "reject".
			switch gateDecision(trig.Task) {
			case "approve":
				ro.Approve = true
			case "reject":
				ro.Reject = true
			default:
				msg := fmt.Sprintf("loop %s waits for a decision on iteration %d (%s): comment `%s approve` to accept the change or `%s reject` to revert it and go on.",
					prev.LoopID, g.Iteration, g.Reason, a.s.Action.TriggerPhrase, a.s.Action.TriggerPhrase)
				return a.refuse(ctx, msg)
			}
		}
		res, err = app.Resume(ctx, a.workspace, prev.LoopID, ro, runIO, hooks)
	} else {
		_ = a.w.SaveState(stLoopID, a.s.Start.LoopID)
		if trig.HeadRef != "" && !trig.Fork {
			if err := a.checkout(ctx, trig.HeadRef, trig.HeadSHA); err != nil {
				return a.fail(exitcode.NotCompleted, err)
			}
		}
		// Preflight of the token: it must be able to push (the state ref).
		if _, err := repo.PushRef(ctx, stateRef(a.baseID), map[string][]byte{"README": []byte("agent-loop state for " + a.s.Start.LoopID + "\n")}, "agent-loop: preflight"); err != nil {
			return a.fail(exitcode.BadInput, fmt.Errorf("the github-token cannot push to this repository (%v); grant `permissions: contents: write` (and pull-requests: write, issues: write) to the job, or pass a token that can", err))
		}
		res, err = app.Run(ctx, v, runIO, hooks)
	}
	if err != nil && res == nil {
		if prop, ok := app.NotAdopted(err); ok {
			return a.notAdopted(ctx, prop, err)
		}
		if app.IsUsage(err) {
			return a.fail(exitcode.BadInput, err)
		}
		return a.fail(exitcode.NotCompleted, err)
	}
	cancelled := ctx.Err() != nil
	var unpushed error
	// Processes of the agent's code outlived their run: nothing is pushed.
	if !cancelled && !res.Outcome.Uncontained {
		unpushed = a.pushResult(ctx, res.State)
		unpushed = a.bundleUnpushed(ctx, res, unpushed)
	}
	a.setOutputs(res)
	if !cancelled {
		// Cancelled: the post step publishes and uploads (the runner kills
		// this step 10 s after its first signal).
		if err := a.upload(ctx, res.Dir); err != nil {
			fmt.Fprintf(a.stdout, "agent-loop: uploading the state artifact failed (the state ref %s keeps it): %v\n", stateRef(a.baseID), err)
		} else {
			_ = a.w.SaveState(stUploaded, "1")
		}
		_ = a.w.SaveState(stPublished, "1")
	}
	return a.exitCode(res, err, unpushed)
}

// exitCode is the step's exit code: 0 completed, 2 bad input, 1 not
// completed unless fail-on-incomplete is false; a result that did not
// reach the repository is never a success.
func (a *actionRun) exitCode(res *app.RunResult, err, unpushed error) int {
	code := exitcode.NotCompleted
	switch {
	case app.IsUsage(err):
		code = exitcode.BadInput
	case err == nil && res.Completed():
		code = exitcode.Completed
	}
	if err != nil {
		a.w.Annotate("error", "", 0, "agent-loop", a.w.Redact(err.Error()))
	}
	if code == exitcode.NotCompleted && !a.s.Action.FailOnIncomplete {
		code = exitcode.Completed
	}
	if unpushed != nil {
		// Whatever the loop's status, its result did not reach the
		// repository: the step must not look successful.
		a.w.Annotate("error", "", 0, "agent-loop: the result was not pushed", a.w.Redact(unpushed.Error()))
		fmt.Fprintf(a.stdout, "agent-loop: %s\n", a.w.Redact(unpushed.Error()))
		code = max(code, exitcode.NotCompleted)
	}
	return code
}

// pushResult pushes the loop branch once more when a push failed during
// the loop (the fault may have passed: a network outage, a token refreshed).
// An error means the remote branch lacks the loop's last commits, which
// exist only in this runner.
func (a *actionRun) pushResult(ctx context.Context, st *state.State) error {
	h := st.Harness
	if !h.Spec.Publish.Push || h.Branch == "" || h.HeadSHA == "" || len(h.PushErrors) == 0 {
		return nil
	}
	if err := a.repo.Push(ctx, h.Branch); err != nil {
		return fmt.Errorf("the loop branch %s could not be pushed, so the pull request and the report link commits the repository does not have (the branch head %.12s exists only in this runner; the loop's state is kept in the state artifact): %w", h.Branch, h.HeadSHA, err)
	}
	fmt.Fprintf(a.stdout, "agent-loop: pushed %s (%.12s) after the earlier push failures\n", h.Branch, h.HeadSHA)
	return nil
}

// bundleFile is the loop branch as a git bundle, kept in the state artifact
// when the branch could not be pushed.
const bundleFile = "branch.bundle"

// bundleUnpushed keeps the commits the remote does not have: when the loop
// branch could not be pushed (unpushed is pushResult's error), the branch
// is bundled into the loop directory, so the state artifact carries it and a
// maintainer can fetch it; otherwise an earlier run's bundle is removed. It
// returns unpushed, completed with how to get the commits.
func (a *actionRun) bundleUnpushed(ctx context.Context, res *app.RunResult, unpushed error) error {
	p := res.Dir.File(bundleFile)
	h := res.State.Harness
	if unpushed == nil || h.Branch == "" || h.BaseSHA == "" {
		_ = os.Remove(p)
		return unpushed
	}
	b, err := a.repo.Bundle(ctx, h.Branch, h.BaseSHA)
	if err == nil {
		err = state.WriteFileAtomic(p, b, 0o644)
	}
	if err != nil {
		return fmt.Errorf("%w; bundling the branch failed too: %v", unpushed, err)
	}
	return fmt.Errorf("%w; the commits are kept as %s in the state artifact %s: download it and run `git fetch %s %s:%s`",
		unpushed, bundleFile, artifactName(a.baseID), bundleFile, h.Branch, h.Branch)
}

// commandFiles are the workflow command files of this step: the agent's
// environment does not name them, but a container action finds them in
// /github/file_commands, and a line appended there would set an output,
// the post step's state, or the environment of every later step.
func (a *actionRun) commandFiles() map[string]string {
	files := map[string]string{}
	for _, k := range []string{"GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY"} {
		if p := a.getenv(k); p != "" {
			files[p] = k
		}
	}
	return files
}

// gateDecision reads a human-gate decision from a comment's task text.
func gateDecision(task string) string {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(task), ".!")) {
	case "approve", "approved", "accept", "lgtm":
		return "approve"
	case "reject", "rejected", "revert":
		return "reject"
	}
	return ""
}

func (a *actionRun) repoRoot() string {
	if a.repo != nil {
		return a.repo.Root()
	}
	return a.workspace
}

// checkout makes branch (fetched from the remote, at sha when given) the
// checked-out branch with its tree in the work tree.
func (a *actionRun) checkout(ctx context.Context, branch, sha string) error {
	if branch == "" {
		return nil
	}
	got, err := a.repo.FetchBranch(ctx, branch)
	if err != nil {
		return fmt.Errorf("fetching branch %s: %w", branch, err)
	}
	if sha != "" && got != sha {
		fmt.Fprintf(a.stdout, "agent-loop: %s is at %.8s on the remote, the state says %.8s; the history is reconciled from the commit trailers\n", branch, got, sha)
	}
	if err := a.repo.StartBranch(ctx, branch, got); err != nil {
		return err
	}
	return a.repo.ResetTo(ctx, got)
}

func (a *actionRun) refuse(ctx context.Context, msg string) int {
	fmt.Fprintf(a.stdout, "agent-loop: refused: %s\n", msg)
	a.w.Annotate("warning", "", 0, "agent-loop refused", msg)
	a.postAtTarget(ctx, "**agent-loop did not start.** "+escapeProse(msg))
	if a.trig.CommentID != 0 {
		_ = a.gh.React(ctx, a.trig.CommentID, "confused")
	}
	_ = a.w.SetOutput("status", "refused")
	return 0
}

// escapeProse escapes a sentence or more of prose for a comment
// (escape.Text, which keeps one value to escape.MaxInline characters, on
// runs of words short enough to be kept whole).
func escapeProse(s string) string {
	var out, run []string
	n := 0
	for _, w := range strings.Fields(s) {
		if n+len(w) > escape.MaxInline/2 && len(run) > 0 {
			out = append(out, escape.Text(strings.Join(run, " ")))
			run, n = nil, 0
		}
		run = append(run, w)
		n += len(w) + 1
	}
	if len(run) > 0 {
		out = append(out, escape.Text(strings.Join(run, " ")))
	}
	return strings.Join(out, " ")
}

// notAdopted reports an inferred completion check the Action did not
// adopt (its confidence is below high, or running it showed it runs no
// test): the proposal, with its evidence and the exact inputs to set, is
// commented on the issue or pull request, and the step fails as a
// configuration error (exit 2).
func (a *actionRun) notAdopted(ctx context.Context, prop criteria.Proposal, err error) int {
	if a.trig.Number > 0 {
		in := criteria.InputNames{Completion: inputName("completion"), Workdir: inputName("workdir"), Setup: inputName("setup")}
		if _, cerr := a.gh.Comment(ctx, a.trig.Number, prop.AdoptionComment(in)); cerr != nil {
			fmt.Fprintf(a.stdout, "agent-loop: could not post the proposal: %v\n", a.w.Redact(cerr.Error()))
		}
	}
	if a.trig.CommentID != 0 {
		_ = a.gh.React(ctx, a.trig.CommentID, "confused")
	}
	return a.fail(exitcode.BadInput, err)
}

// inputName is the Action input of a parameter of the Spec's table.
func inputName(param string) string {
	if p := spec.Lookup(param); p != nil && p.Input != "" {
		return p.Input
	}
	return param
}

// restore finds the newest state of this trigger (state ref or artifact of
// an earlier run), writes it into .aiwg/ralph/loops/<id>/ and returns it when
// the loop can be resumed.
func (a *actionRun) restore(ctx context.Context) (*state.State, error) {
	type candidate struct {
		files map[string][]byte
		st    *state.State
		from  string
	}
	var cands []candidate
	parse := func(files map[string][]byte, from string) {
		b, ok := files["state.json"]
		if !ok {
			return
		}
		var st state.State
		if json.Unmarshal(b, &st) != nil || !state.ValidLoopID(st.LoopID) {
			return
		}
		cands = append(cands, candidate{files, &st, from})
	}
	var errs []error
	if files, _, err := a.repo.FetchRef(ctx, stateRef(a.baseID)); err == nil {
		parse(files, "the state ref "+stateRef(a.baseID))
	} else {
		errs = append(errs, err)
	}
	if arts, err := a.gh.FindArtifacts(ctx, artifactName(a.baseID)); err == nil && len(arts) > 0 {
		if files, err := a.gh.DownloadArtifact(ctx, arts[0].ID); err == nil {
			parse(files, fmt.Sprintf("the artifact of run %d", arts[0].RunID))
		} else {
			errs = append(errs, err)
		}
	} else if err != nil {
		errs = append(errs, err)
	}
	if len(cands) == 0 {
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].st.LastUpdated.After(cands[j].st.LastUpdated) })
	c := cands[0]
	if !(c.st.Status == state.Paused || c.st.Status == state.Crashed || c.st.Status == state.Running || c.st.Status == state.Completing) {
		return nil, nil
	}
	d := state.NewDir(a.repoRoot(), c.st.LoopID)
	for rel, b := range c.files {
		if strings.Contains(rel, "..") || filepath.IsAbs(rel) {
			continue
		}
		if err := state.WriteFileAtomic(d.File(filepath.FromSlash(rel)), b, 0o644); err != nil {
			return nil, err
		}
	}
	// The process that ran it is gone: it crashed or was cancelled.
	st, err := d.Load()
	if err != nil {
		return nil, err
	}
	if st.Status == state.Running || st.Status == state.Completing {
		state.MarkCrashed(st, "the workflow run that ran it ended without finishing it", time.Now())
		if err := d.Save(st, time.Now()); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(a.stdout, "agent-loop: restored %s (%s, iteration %d) from %s\n", st.LoopID, st.Status, st.Iteration, c.from)
	return st, nil
}

// upload uploads the loop directory as this run's state artifact.
func (a *actionRun) upload(ctx context.Context, d state.Dir) error {
	return uploadState(ctx, a.rt, a.w, a.o.Environ, d, a.baseID)
}

func uploadState(ctx context.Context, rt *actions.Runtime, w *actions.Writer, environ []string, d state.Dir, baseID string) error {
	client, err := actions.NewArtifactClient(func(k string) string { return lookupEnv(environ, k) }, nil)
	if err != nil {
		return err
	}
	var skipped []string
	src := loopSource(d, w, &skipped)
	name := artifactName(baseID)
	if _, _, err := client.UploadFrom(ctx, name, src); err != nil {
		if !errors.Is(err, actions.ErrArtifactExists) {
			return err
		}
		// A re-run attempt of the same run: names are unique per run.
		if _, derr := client.Delete(ctx, name); derr != nil {
			return fmt.Errorf("%w (and deleting the earlier one failed: %v)", err, derr)
		}
		skipped = nil
		if _, _, err := client.UploadFrom(ctx, name, src); err != nil {
			return err
		}
	}
	noteSkipped(w, "the state artifact", skipped)
	return nil
}

func lookupEnv(environ []string, k string) string {
	v, _ := process.Lookup(environ, k)
	return v
}

func (a *actionRun) setOutputs(res *app.RunResult) {
	st := res.State
	set := func(k, v string) {
		if err := a.w.SetOutput(k, v); err != nil {
			fmt.Fprintf(a.stdout, "agent-loop: output %s: %v\n", k, err)
		}
	}
	set("status", string(st.Status))
	set("loop-id", st.LoopID)
	set("iterations", strconv.Itoa(st.Iteration))
	best, score, sha := "0", "0", ""
	if st.BestIteration != nil {
		best = strconv.Itoa(st.BestIteration.Iteration)
		score = strconv.FormatFloat(st.BestIteration.QualityScore, 'f', -1, 64)
		sha = st.BestIteration.Commit
	}
	set("best-iteration", best)
	set("best-sha", sha)
	set("quality-score", score)
	set("branch", st.Harness.Branch)
	pr := ""
	if st.Harness.PRNumber > 0 {
		pr = strconv.Itoa(st.Harness.PRNumber)
	}
	set("pr-number", pr)
	set("pr-url", st.Harness.PRURL)
	set("completion-command", st.Harness.Spec.Criterion.Command)
	set("completion-confidence", st.Harness.Spec.Criterion.Confidence)
	set("total-cost-usd", strconv.FormatFloat(st.Metrics.TotalCostUSD, 'f', -1, 64))
	set("total-tokens", strconv.FormatInt(st.Metrics.TotalTokens, 10))
	set("report-path", res.Dir.Rel("report.md"))
}

// actionObserver keeps GitHub up to date as the loop goes: log group and
// annotations per iteration, the state ref, the (draft) PR, the sticky
// comment, the step summary.
type actionObserver struct {
	run       *actionRun
	serverURL string
	repoFull  string
	pr        *ghforge.PR
	// actor is the login of the person who started the loop: the
	// notification mentions them.
	actor string
}

func (ob *actionObserver) Observe(ctx context.Context, ev loop.Event) {
	a := ob.run
	st := ev.State
	if ev.Kind == loop.EventIteration && ev.Record != nil {
		r := ev.Record
		end := a.w.Group(fmt.Sprintf("agent-loop iteration %d: check %s, score %.0f", r.Iteration, map[bool]string{true: "pass", false: "fail"}[r.Check.Passed], r.Verdict.Score))
		for _, g := range r.Verdict.Regressions {
			file, line := "", 0
			if len(g.Evidence) > 0 {
				file, line = g.Evidence[0].Path, g.Evidence[0].Line
			}
			level := "warning"
			if g.Severity == "critical" {
				level = "error"
			}
			a.w.Annotate(level, file, line, fmt.Sprintf("agent-loop: %s in iteration %d", g.Type, r.Iteration), g.Summary)
		}
		fmt.Fprintf(a.stdout, "commit %s, %d files changed\n", r.Commit, r.Stat.Files)
		end()
	}
	// The state ref: durable state beyond artifacts, every iteration.
	d := app.LoopDir(a.repoRoot(), st.LoopID, a.o.Environ)
	if files, err := loopFiles(d, a.w); err == nil {
		if _, err := a.repo.PushRef(ctx, stateRef(a.baseID), files, fmt.Sprintf("agent-loop state of %s after iteration %d", st.LoopID, st.Iteration)); err != nil {
			fmt.Fprintf(a.stdout, "agent-loop: pushing the state ref failed: %v\n", err)
		}
	}
	ob.publish(ctx, st, ev.Kind == loop.EventFinished)
}

// publish updates the PR (its body: the change, Target PRBody), the sticky
// comment (the report, Target PR) and the step summary (Target Summary),
// with the links to the repository, the run and the report; at the loop's
// end (final) it posts the one notification.
func (ob *actionObserver) publish(ctx context.Context, st *state.State, final bool) {
	a := ob.run
	h := &st.Harness
	h.RepoURL = strings.TrimRight(ob.serverURL, "/") + "/" + ob.repoFull
	if a.rt != nil && a.rt.Context().RunID > 0 {
		h.RunURL = fmt.Sprintf("%s/actions/runs/%d", h.RepoURL, a.rt.Context().RunID)
	}
	opts := report.Options{TriggerPhrase: a.s.Action.TriggerPhrase}
	render := func(t report.Target) string {
		o := opts
		o.Target = t
		return report.Render(st, o)
	}
	if a.s.Spec.Publish.PR == "open" && h.Branch != "" && a.trig.HeadRef == "" && len(st.IterationHistory) > 0 {
		base := nonEmpty(a.s.Spec.Publish.Base, nonEmpty(a.trig.BaseRef, nonEmpty(h.OriginalBranch, a.trig.DefaultBranch)))
		// The description of the change; the loop's story is the comment.
		body := render(report.PRBody)
		if a.trig.Number > 0 && !a.trig.IsPR {
			body += fmt.Sprintf("\nStarted from #%d.\n", a.trig.Number)
		}
		draft := a.s.Spec.Publish.Draft || st.Status != state.Completed
		pr, _, err := a.gh.EnsurePR(ctx, ghforge.PRRequest{Head: h.Branch, Base: base, Title: prTitle(st.Task), Body: body, Draft: draft})
		if err != nil {
			fmt.Fprintf(a.stdout, "agent-loop: opening the pull request failed: %v\n", a.w.Redact(err.Error()))
		} else {
			ob.pr = pr
			h.PRNumber, h.PRURL = pr.Number, pr.URL
			_ = a.w.SaveState(stPRNumber, strconv.Itoa(pr.Number))
		}
	} else if a.trig.IsPR && a.trig.Number > 0 {
		h.PRNumber = a.trig.Number
		h.PRURL = fmt.Sprintf("%s/pull/%d", h.RepoURL, a.trig.Number)
	}
	number, onPR := a.trig.Number, a.trig.IsPR
	if number == 0 && ob.pr != nil {
		number, onPR = ob.pr.Number, true
	}
	if (number > 0 || a.reportOn.CommitSHA != "") && a.s.Spec.Publish.PR != "none" {
		if a.reportOn.PR == 0 && a.reportOn.CommitSHA == "" {
			a.reportOn.PR = number
		}
		url, err := a.upsertReport(ctx, st.LoopID, render(report.PR), h.RepoURL, onPR)
		if err != nil {
			fmt.Fprintf(a.stdout, "agent-loop: updating the comment failed: %v\n", a.w.Redact(err.Error()))
		} else if url != "" {
			h.ReportURL = url
		}
	}
	if err := a.w.Summary(render(report.Summary)); err != nil {
		// Opened as a regular file only (safefs): a symlink or a FIFO put
		// there is refused, and said.
		fmt.Fprintf(a.stdout, "agent-loop: writing the step summary failed: %v\n", a.w.Redact(err.Error()))
	}
	if final && (number > 0 || a.reportOn.CommitSHA != "") && a.s.Spec.Publish.PR != "none" {
		ob.notify(ctx, st, number, opts)
	}
	if final {
		d := app.LoopDir(a.repoRoot(), st.LoopID, a.o.Environ)
		_ = d.Save(st, time.Now())
	}
}

// notify posts the short comment that tells the person who started the
// loop how it ended: the sticky report is edited in place, which notifies
// nobody. It is posted once for each end of the loop (Harness.Notified,
// saved in the state: main and the post step, or a re-run of the post
// step, do not post it twice).
func (ob *actionObserver) notify(ctx context.Context, st *state.State, number int, opts report.Options) {
	a := ob.run
	end := fmt.Sprintf("%s/%s/%d", st.Status, st.Harness.StopKind, st.Iteration)
	if st.Harness.Notified == end {
		return
	}
	// Beside the report: on its pull request or issue, or on the failed
	// commit (a CI loop on a branch without a pull request).
	body := report.Notification(st, opts, ob.actor)
	var err error
	switch {
	case a.reportOn.PR > 0:
		_, err = a.gh.Comment(ctx, a.reportOn.PR, body)
	case a.reportOn.CommitSHA != "":
		_, err = a.gh.CommitComment(ctx, a.reportOn.CommitSHA, body)
	case number > 0:
		_, err = a.gh.Comment(ctx, number, body)
	default:
		return
	}
	if err != nil {
		fmt.Fprintf(a.stdout, "agent-loop: posting the notification failed: %v\n", a.w.Redact(err.Error()))
		return
	}
	st.Harness.Notified = end
}

func prTitle(task string) string {
	line := strings.TrimSpace(strings.SplitN(strings.TrimSpace(task), "\n", 2)[0])
	if len(line) > 72 {
		line = line[:71] + "…"
	}
	return "agent-loop: " + line
}

// Post is the post step: it runs even when main failed or was
// cancelled, publishes what main could not, and uploads the state.
func Post(ctx context.Context, o app.IO, getenv actions.Env, stdout io.Writer) int {
	w := actions.NewWriter(stdout, getenv)
	rt, err := actions.NewRuntime(getenv, stdout)
	if err != nil {
		fmt.Fprintf(stdout, "agent-loop post: %v\n", err)
		return 0
	}
	rt.MaskSecretInputs(w, spec.SecretInputs())
	loopID, baseID, workspace := rt.State(stLoopID), rt.State(stBaseID), rt.State(stWorkspace)
	if workspace == "" {
		workspace = nonEmpty(getenv("GITHUB_WORKSPACE"), ".")
	}
	defer chownToWorkspaceOwner(workspace)
	if loopID == "" || rt.State(stUploaded) == "1" {
		return 0
	}
	post := spec.FromInputs(getenv)
	repo, err := gitrepo.Open(workspace, gitrepo.Options{Remote: "origin", Token: post.Action.Token})
	if err != nil {
		fmt.Fprintf(stdout, "agent-loop post: %v\n", err)
		return 0
	}
	d := app.LoopDir(repo.Root(), loopID, o.Environ)
	st, err := d.Load()
	if err != nil {
		fmt.Fprintf(stdout, "agent-loop post: no state to publish: %v\n", err)
		return 0
	}
	if st.Status == state.Running || st.Status == state.Completing {
		// Main was killed before it could write its final state.
		st.Status = state.Paused
		st.PID = nil
		st.Harness.StopReason = "the workflow run was cancelled; re-run it to resume"
		st.Harness.StopKind = state.StopCancelled
		_ = d.Save(st, time.Now())
	}
	rep := report.Render(st, report.Options{Target: report.Summary, TriggerPhrase: post.Action.TriggerPhrase})
	_ = state.WriteFileAtomic(d.ReportPath(), []byte(rep), 0o644)
	if rt.State(stPublished) != "1" {
		gctx := rt.Context()
		owner, name, _ := strings.Cut(gctx.Repository, "/")
		if gh, err := ghforge.New(ctx, post.Action.Token, gctx.APIURL, owner, name); err == nil {
			number, _ := strconv.Atoi(rt.State(stNumber))
			if n, _ := strconv.Atoi(rt.State(stPRNumber)); number == 0 {
				number = n
			}
			post.Spec.Publish.PR, post.Spec.Publish.Draft = nonEmpty(rt.State(stPR), post.Spec.Publish.PR), rt.State(stDraft) == "true"
			run := &actionRun{w: w, rt: rt, o: o, stdout: stdout, workspace: workspace, gh: gh, repo: repo, baseID: baseID,
				s: post, trig: trigger{Number: number}, ciHead: rt.State(stCIHead),
				reportOn: ghforge.ReportTarget{CommitSHA: rt.State(stReportSHA)}}
			ob := &actionObserver{run: run, serverURL: gctx.ServerURL, repoFull: gctx.Repository, actor: rt.State(stActor)}
			if files, err := loopFiles(d, w); err == nil {
				_, _ = repo.PushRef(ctx, stateRef(baseID), files, "agent-loop state of "+loopID+" (post step)")
			}
			ob.publish(ctx, st, true)
		}
	}
	if err := uploadState(ctx, rt, w, o.Environ, d, baseID); err != nil {
		fmt.Fprintf(stdout, "agent-loop post: uploading the state artifact failed (the state ref keeps it): %v\n", err)
	} else {
		fmt.Fprintf(stdout, "agent-loop post: state of %s uploaded as %s\n", loopID, artifactName(baseID))
	}
	return 0
}

// chownToWorkspaceOwner gives the files the container (root) created in the
// workspace back to the workspace's owner, so later steps running as the
// runner's user can change them.
func chownToWorkspaceOwner(workspace string) {
	if os.Geteuid() != 0 {
		return
	}
	fi, err := os.Stat(workspace)
	if err != nil {
		return
	}
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || sys.Uid == 0 {
		return
	}
	uid, gid := int(sys.Uid), int(sys.Gid)
	_ = filepath.WalkDir(workspace, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := de.Info(); err == nil {
			if s, ok := info.Sys().(*syscall.Stat_t); ok && (int(s.Uid) != uid || int(s.Gid) != gid) {
				_ = os.Lchown(p, uid, gid)
			}
		}
		return nil
	})
}

func nonEmpty(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
