package cifailure

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/forge/github"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	const sha = "4444444444444444444444444444444444444444"
	base := func() github.WorkflowRunEvent {
		return github.WorkflowRunEvent{Action: "completed", Repository: "o/r", DefaultBranch: "main", Run: github.WorkflowRun{
			Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request", Conclusion: "failure",
			HeadBranch: "feature", HeadSHA: sha, Repo: "o/r", HeadRepo: "o/r", Actor: "alice", TriggeringActor: "alice",
			HTMLURL: "https://github.com/o/r/actions/runs/9", HeadCommitMessage: "parser: tabs"}}
	}
	samePR := []github.PR{{Number: 7, HeadRef: "feature", HeadSHA: sha, BaseRef: "main", SameRepo: true, HeadRepoFullName: "o/r"}}
	own := []string{"github-actions[bot]"}
	tests := []struct {
		name   string
		ev     func(*github.WorkflowRunEvent)
		s      Settings
		f      Facts
		want   Decision
		reason string // part of Skip or Refuse
	}{
		{name: "a failed PR run opens a PR into the PR's branch", s: Settings{OwnLogins: own}, f: Facts{PRs: samePR},
			want: Decision{Start: true, ReportOn: github.ReportTarget{PR: 7}, Delivery: Delivery{Mode: FixPR, Base: "feature", StartSHA: sha, PR: 7}}},
		{name: "fix-ci: push commits on the PR's branch", s: Settings{FixCI: "push", OwnLogins: own}, f: Facts{PRs: samePR},
			want: Decision{Start: true, ReportOn: github.ReportTarget{PR: 7}, Delivery: Delivery{Mode: FixPush, Base: "feature", StartSHA: sha, PR: 7}}},
		{name: "timed_out counts as failed", ev: func(e *github.WorkflowRunEvent) { e.Run.Conclusion = "timed_out" }, f: Facts{PRs: samePR},
			want: Decision{Start: true, ReportOn: github.ReportTarget{PR: 7}, Delivery: Delivery{Mode: FixPR, Base: "feature", StartSHA: sha, PR: 7}}},
		{name: "the default branch always gets a PR, reported on the commit",
			ev: func(e *github.WorkflowRunEvent) { e.Run.Event, e.Run.HeadBranch = "push", "main" }, s: Settings{FixCI: "push"},
			want: Decision{Start: true, ReportOn: github.ReportTarget{CommitSHA: sha}, Delivery: Delivery{Mode: FixPR, Base: "main", StartSHA: sha},
				Notes: []string{"fix-ci: push does not apply to the default branch: the fix is a pull request into it"}}},
		{name: "success: nothing to fix", ev: func(e *github.WorkflowRunEvent) { e.Run.Conclusion = "success" }, reason: "ended success"},
		{name: "cancelled: nothing to fix", ev: func(e *github.WorkflowRunEvent) { e.Run.Conclusion = "cancelled" }, reason: "ended cancelled"},
		{name: "requested, not completed", ev: func(e *github.WorkflowRunEvent) { e.Action = "requested" }, reason: `"requested", not completed`},
		{name: "a workflow not in the list", s: Settings{Workflows: []string{"Lint", ".github/workflows/e2e.yml"}}, reason: "not in the workflows"},
		{name: "a workflow listed by its file", s: Settings{Workflows: []string{".github/workflows/ci.yml"}}, f: Facts{PRs: samePR},
			want: Decision{Start: true, ReportOn: github.ReportTarget{PR: 7}, Delivery: Delivery{Mode: FixPR, Base: "feature", StartSHA: sha, PR: 7}}},
		{name: "our own commit", ev: func(e *github.WorkflowRunEvent) {
			e.Run.HeadCommitMessage = "agent-loop: iteration 2\n\nAgent-Loop-Id: ralph-ci-1a2b3c4d\nAgent-Loop-Iteration: 2"
		}, reason: "Agent-Loop-Id: ralph-ci-1a2b3c4d"},
		{name: "our own bot as the actor", ev: func(e *github.WorkflowRunEvent) { e.Run.Actor = "agent-loop-app[bot]" },
			s: Settings{OwnLogins: []string{"agent-loop-app[bot]"}}, reason: "caused by agent-loop-app[bot]"},
		{name: "our own bot re-ran it", ev: func(e *github.WorkflowRunEvent) { e.Run.TriggeringActor = "github-actions[bot]" },
			s: Settings{OwnLogins: own}, reason: "re-run by github-actions[bot]"},
		{name: "own runs allowed", ev: func(e *github.WorkflowRunEvent) { e.Run.Actor = "github-actions[bot]" },
			s: Settings{OwnLogins: own, AllowOwnRuns: true}, f: Facts{PRs: samePR},
			want: Decision{Start: true, ReportOn: github.ReportTarget{PR: 7}, Delivery: Delivery{Mode: FixPR, Base: "feature", StartSHA: sha, PR: 7}}},
		{name: "the trailer only counts in the last paragraph", ev: func(e *github.WorkflowRunEvent) {
			e.Run.HeadCommitMessage = "docs: explain\n\nAgent-Loop-Id: is a trailer we add\n\nSigned-off-by: A <a@x>"
		}, f: Facts{PRs: samePR},
			want: Decision{Start: true, ReportOn: github.ReportTarget{PR: 7}, Delivery: Delivery{Mode: FixPR, Base: "feature", StartSHA: sha, PR: 7}}},
		{name: "a fork is refused", ev: func(e *github.WorkflowRunEvent) { e.Run.HeadRepo = "mallory/r" },
			f:      Facts{PRs: []github.PR{{Number: 8, HeadRef: "patch-1", HeadSHA: sha, HeadRepoFullName: "mallory/r"}}},
			reason: "comes from the fork mallory/r"},
		{name: "a fork allowed gets a PR even with fix-ci: push", ev: func(e *github.WorkflowRunEvent) { e.Run.HeadRepo = "mallory/r" },
			s: Settings{AllowForks: true, FixCI: "push"}, f: Facts{PRs: []github.PR{{Number: 8, HeadRef: "patch-1", HeadSHA: sha, HeadRepoFullName: "mallory/r"}}},
			want: Decision{Start: true, ReportOn: github.ReportTarget{PR: 8}, Delivery: Delivery{Mode: FixPR, Base: "patch-1", StartSHA: sha, PR: 8},
				Notes: []string{"fix-ci: push does not apply to a fork's branch: the fix is a pull request"}}},
		{name: "the attempt was made", f: Facts{PRs: samePR, Attempts: 1}, reason: "already had 1 loop(s)"},
		{name: "a second attempt allowed", s: Settings{MaxAttempts: 2}, f: Facts{PRs: samePR, Attempts: 1},
			want: Decision{Start: true, ReportOn: github.ReportTarget{PR: 7}, Delivery: Delivery{Mode: FixPR, Base: "feature", StartSHA: sha, PR: 7}}},
		{name: "the PR moved on", f: Facts{PRs: []github.PR{{Number: 7, HeadRef: "feature", HeadSHA: "5555555555", SameRepo: true}}},
			reason: "moved on to 5555555"},
		{name: "a merge queue run", ev: func(e *github.WorkflowRunEvent) { e.Run.Event = "merge_group" }, reason: "merge queue"},
		{name: "a branch without a PR gets a PR into it, fix-ci: push noted",
			ev: func(e *github.WorkflowRunEvent) { e.Run.Event, e.Run.HeadBranch = "push", "release-1.x" }, s: Settings{FixCI: "push"},
			want: Decision{Start: true, ReportOn: github.ReportTarget{CommitSHA: sha}, Delivery: Delivery{Mode: FixPR, Base: "release-1.x", StartSHA: sha},
				Notes: []string{"fix-ci: push applies to pull requests; release-1.x has none: the fix is a pull request into it"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev := base()
			if tt.ev != nil {
				tt.ev(&ev)
			}
			got := Decide(ev, tt.s, tt.f)
			if tt.reason != "" {
				why := got.Skip + got.Refuse
				if got.Start || !strings.Contains(why, tt.reason) {
					t.Errorf("decision %+v, want no start because %q", got, tt.reason)
				}
				return
			}
			tt.want.Key = "o/r#ci-" + sha
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestForkRefusalSaysWhatToDo(t *testing.T) {
	t.Parallel()
	ev := github.WorkflowRunEvent{Action: "completed", Repository: "o/r", Run: github.WorkflowRun{Name: "CI", Conclusion: "failure",
		HeadSHA: "4444444444444444444444444444444444444444", HeadBranch: "patch", Repo: "o/r", HeadRepo: "mallory/r", HTMLURL: "https://github.com/o/r/actions/runs/3"}}
	d := Decide(ev, Settings{}, Facts{PRs: []github.PR{{Number: 9, HeadRepoFullName: "mallory/r"}}})
	if d.Start || d.ReportOn.PR != 9 {
		t.Fatalf("decision %+v", d)
	}
	for _, want := range []string{"mallory/r", "secrets", "allow-forks: true", ev.Run.HTMLURL} {
		if !strings.Contains(d.Refuse, want) {
			t.Errorf("refusal %q lacks %q", d.Refuse, want)
		}
	}
}
