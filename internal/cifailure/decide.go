package cifailure

import (
	"fmt"
	"strings"

	"github.com/aiwg/agent-loop/internal/forge/github"
)

// Fix modes: where the fix of a pull request's failed run goes.
const (
	// FixPR opens a pull request into the pull request's branch (default).
	FixPR = "pr"
	// FixPush commits on the pull request's branch.
	FixPush = "push"
)

// Settings are the user's choices for the workflow_run trigger.
type Settings struct {
	// Workflows, when not empty, are the workflow names (or file paths)
	// to act on; GitHub's on.workflow_run.workflows already filters, this
	// is a second list the Action can be given.
	Workflows []string
	// MaxAttempts is how many loops one head commit may have (0: 1).
	MaxAttempts int
	// AllowForks runs for pull requests from forks too.
	AllowForks bool
	// AllowOwnRuns starts loops for runs that agent-loop itself caused (its
	// own commits or its bot login): off, loops do not start loops.
	AllowOwnRuns bool
	// FixCI is FixPR (default) or FixPush.
	FixCI string
	// OwnLogins are the logins agent-loop acts as: the token's login
	// (github.Client.OwnLogins), github-actions[bot] for GITHUB_TOKEN.
	OwnLogins []string
}

// Facts are what the GitHub API says about the run, read by the caller.
type Facts struct {
	// PRs are the open pull requests whose head is the run's head
	// (github.Client.PullRequestsForRun).
	PRs []github.PR
	// Attempts are the loops already started for the run's head commit
	// (github.Client.CIAttempts at ReportTarget).
	Attempts int
}

// Decision says what a workflow_run event does.
type Decision struct {
	// Start: a loop starts.
	Start bool
	// Skip, when set, says why nothing starts (logged, no comment).
	Skip string
	// Refuse, when set, is the comment posted at ReportOn instead of a loop.
	Refuse string
	// Delivery is where the fix goes.
	Delivery Delivery
	// ReportOn is where the report (or the refusal) is posted.
	ReportOn github.ReportTarget
	// Key is stable for the run's head commit, so a re-run finds the loop's
	// state: "owner/repo#ci-<sha>".
	Key string
	// Notes say what was decided against the user's setting.
	Notes []string
}

// Delivery is where the fix of a failed run goes.
type Delivery struct {
	// Mode is FixPR (a pull request from the loop branch into Base) or
	// FixPush (commits on Base itself).
	Mode string
	// Base is the branch the fix is for: the pull request's head branch,
	// or the branch the run was on.
	Base string
	// StartSHA is the commit the loop starts from: the run's head.
	StartSHA string
	// PR is the pull request the failure belongs to (0: none).
	PR int
}

// ReportTarget is where the report of a loop for run goes: its pull
// request when it has one, else its head commit.
func ReportTarget(run github.WorkflowRun, prs []github.PR) github.ReportTarget {
	if len(prs) > 0 {
		return github.ReportTarget{PR: prs[0].Number}
	}
	return github.ReportTarget{CommitSHA: run.HeadSHA}
}

// Screen decides from the event alone whether it may start a loop: "" when
// it may, else why not. Decide applies it too; it lets the caller stop
// before any API call.
func Screen(ev github.WorkflowRunEvent, s Settings) string {
	run := ev.Run
	switch {
	case ev.Action != "completed":
		return fmt.Sprintf("the workflow_run event is %q, not completed", ev.Action)
	case run.Conclusion != "failure" && run.Conclusion != "timed_out":
		return fmt.Sprintf("the run of %q ended %s: nothing to fix", run.Name, orNone(run.Conclusion))
	case len(s.Workflows) > 0 && !listed(s.Workflows, run):
		return fmt.Sprintf("the workflow %q is not in the workflows to fix (%s)", run.Name, strings.Join(s.Workflows, ", "))
	case run.Event == "merge_group" || strings.HasPrefix(run.HeadBranch, "gh-readonly-queue/"):
		return "a merge queue run: the pull request's own run decides"
	case run.HeadSHA == "":
		return "the run has no head commit"
	}
	if !s.AllowOwnRuns {
		if why := ownRun(run, s.OwnLogins); why != "" {
			return why + "; loops do not start loops (allow it with allow-own-runs: true)"
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "without a conclusion"
	}
	return s
}

func listed(names []string, run github.WorkflowRun) bool {
	for _, n := range names {
		n = strings.TrimSpace(n)
		if strings.EqualFold(n, run.Name) || n == run.Path || strings.TrimPrefix(n, "./") == run.Path {
			return true
		}
	}
	return false
}

// ownRun says why a run was caused by agent-loop itself: its head commit
// carries the Agent-Loop-Id trailer, or its actor or triggering actor is
// one of agent-loop's logins.
func ownRun(run github.WorkflowRun, logins []string) string {
	if id := trailer(run.HeadCommitMessage, "Agent-Loop-Id"); id != "" {
		return fmt.Sprintf("the run's head commit %s was made by agent-loop (Agent-Loop-Id: %s)", short7(run.HeadSHA), id)
	}
	for _, l := range logins {
		if l == "" {
			continue
		}
		if strings.EqualFold(run.Actor, l) {
			return fmt.Sprintf("the run was caused by %s, agent-loop's own login", run.Actor)
		}
		if strings.EqualFold(run.TriggeringActor, l) {
			return fmt.Sprintf("the run was re-run by %s, agent-loop's own login", run.TriggeringActor)
		}
	}
	return ""
}

// trailer returns the value of a git trailer of a commit message: a
// "Key: value" line of its last paragraph.
func trailer(msg, key string) string {
	msg = strings.TrimRight(strings.ReplaceAll(msg, "\r\n", "\n"), "\n ")
	paras := strings.Split(msg, "\n\n")
	if len(paras) < 2 {
		return ""
	}
	for _, l := range strings.Split(paras[len(paras)-1], "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), key) && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Decide says what a workflow_run event does: start a loop (and where its
// fix and its report go), refuse with a comment, or do nothing.
//
//   - Only a completed run that ended failure or timed_out, of a listed
//     workflow, that agent-loop did not cause (unless AllowOwnRuns).
//   - A run whose head is in a fork is refused with a comment unless
//     AllowForks: the loop would run the fork's code with this
//     repository's secrets.
//   - A head commit that already had MaxAttempts loops starts nothing
//     (Facts.Attempts counts them from the CIAttemptMarker of the reports).
//   - A pull request whose head moved on since the run starts nothing: its
//     newer run decides.
//   - The fix: for a pull request, a pull request into its branch (FixPR)
//     or commits on it (FixPush); for any other branch, the default branch
//     included, always a pull request into it. The report goes on the pull
//     request, or on the head commit.
func Decide(ev github.WorkflowRunEvent, s Settings, f Facts) Decision {
	run := ev.Run
	d := Decision{Key: fmt.Sprintf("%s#ci-%s", firstOf(ev.Repository, run.Repo), strings.ToLower(run.HeadSHA))}
	if d.Skip = Screen(ev, s); d.Skip != "" {
		return d
	}
	d.ReportOn = ReportTarget(run, f.PRs)
	var pr *github.PR
	if len(f.PRs) > 0 {
		pr = &f.PRs[0]
	}
	if run.Fork() || pr != nil && !pr.SameRepo {
		if !s.AllowForks {
			d.Refuse = forkRefusal(run)
			return d
		}
	}
	max := s.MaxAttempts
	if max <= 0 {
		max = 1
	}
	if f.Attempts >= max {
		d.Skip = fmt.Sprintf("commit %s already had %d loop(s) for its failed CI (max-attempts: %d)", short7(run.HeadSHA), f.Attempts, max)
		return d
	}
	if pr != nil && pr.HeadSHA != "" && !strings.EqualFold(pr.HeadSHA, run.HeadSHA) {
		d.Skip = fmt.Sprintf("pull request #%d has moved on to %s since the run's %s: its newer run decides", pr.Number, short7(pr.HeadSHA), short7(run.HeadSHA))
		return d
	}
	d.Delivery = Delivery{Mode: FixPR, Base: run.HeadBranch, StartSHA: run.HeadSHA}
	mode := strings.ToLower(strings.TrimSpace(s.FixCI))
	switch {
	case pr != nil:
		d.Delivery.Base, d.Delivery.PR = pr.HeadRef, pr.Number
		if mode == FixPush {
			if run.Fork() || !pr.SameRepo {
				d.Notes = append(d.Notes, "fix-ci: push does not apply to a fork's branch: the fix is a pull request")
			} else {
				d.Delivery.Mode = FixPush
			}
		}
	case mode == FixPush:
		if run.HeadBranch == ev.DefaultBranch {
			d.Notes = append(d.Notes, "fix-ci: push does not apply to the default branch: the fix is a pull request into it")
		} else {
			d.Notes = append(d.Notes, fmt.Sprintf("fix-ci: push applies to pull requests; %s has none: the fix is a pull request into it", run.HeadBranch))
		}
	}
	if d.Delivery.Base == "" {
		d.Skip = "the run has no branch to fix (a tag or a detached commit)"
		return d
	}
	d.Start = true
	return d
}

// forkRefusal is the comment that refuses a fork's failed run.
func forkRefusal(run github.WorkflowRun) string {
	return fmt.Sprintf("agent-loop did not try to fix the failed run of %q (%s) because its commit comes from the fork %s: "+
		"fixing it would run that fork's code in this repository with this repository's secrets and token. "+
		"A maintainer can fix it on a branch of this repository, or allow forks with `allow-forks: true` "+
		"in the workflow that runs agent-loop (only for repositories whose forks are trusted).",
		run.Name, run.HTMLURL, run.HeadRepo)
}
