package report

import (
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/state"
)

// TestNotification: one short comment per finished loop, mentioning the
// person who started it (the one mention the report makes), linking to
// the report; every story has one, as a golden.
func TestNotification(t *testing.T) {
	for _, s := range append(stories(), hostileStory()) {
		t.Run(s.name, func(t *testing.T) {
			golden(t, Notification(s.st, Options{Target: PR}, "alice"))
		})
	}
}

func TestNotificationMentionsOnlyALogin(t *testing.T) {
	t.Parallel()
	var st *state.State
	for _, s := range stories() {
		if s.name == "first_try" {
			st = s.st
		}
	}
	for _, login := range []string{"", "github-actions[bot]", "-bad", "a b", "x\n@everyone", strings.Repeat("a", 40)} {
		got := Notification(st, Options{Target: PR}, login)
		if mention.MatchString(got) {
			t.Errorf("Notification for login %q mentions someone: %q", login, got)
		}
	}
	if got := Notification(st, Options{Target: PR}, "alice-b"); !strings.HasPrefix(got, "@alice-b ✅ agent-loop completed") {
		t.Errorf("Notification does not start by mentioning alice-b: %q", got)
	}
}

func TestCommitSubjectAndTrailer(t *testing.T) {
	t.Parallel()
	events := []state.RegressionEvent{
		{RegressionType: "validation_bypass", Severity: "high", Details: state.RegressionDetails{Paths: []string{"test.sh"}}},
		critical("test_deletion", []string{"TestSubZero", "TestSub"}, nil, ""),
	}
	f := &facts{st: &state.State{RegressionEvents: events}}
	for i := range f.st.RegressionEvents {
		f.st.RegressionEvents[i].Iteration = 1
	}
	rej := Rejection(f.events(1), nil)
	cases := []struct{ got, want string }{
		{CommitSubject(1, true, rej), "agent-loop: iteration 1 (rejected: deleted 2 tests)"},
		{CommitTrailer(true, rej), "rejected (deleted 2 tests)"},
		{CommitSubject(2, true, ""), "agent-loop: iteration 2 (check pass)"},
		{CommitSubject(3, false, ""), "agent-loop: iteration 3 (check fail)"},
		{CommitTrailer(false, ""), "fail"},
		{Rejection(nil, &state.HeldOut{Verdict: state.HeldOutFail}), "passed only with edited tests"},
		{Rejection(nil, nil), "rejected"},
		{CommitSubject(4, true, "deleted \x1b[2J\ntests"), "agent-loop: iteration 4 (rejected: deleted ^[[2J tests)"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	byName := map[string]*state.State{}
	for _, s := range stories() {
		byName[s.name] = s.st
	}
	cases := map[string]string{
		"cheat_then_fixed":   "✅ completed: the check passes on iteration 2",
		"human_gate_waiting": "⛔ stopped: waiting for a person to approve or reject iteration 1, which deleted 2 tests",
		"stalled":            "❌ not completed: stalled: the agent changed nothing in iterations 2 and 3; iteration 1 came closest (3 of 6 tests pass)",
		"best_not_last":      "❌ not completed: 3 iterations (the limit) without passing the check; iteration 2 came closest (5 of 6 tests pass)",
	}
	for name, want := range cases {
		if got := OneLine(byName[name]); got != want {
			t.Errorf("OneLine(%s) = %q, want %q", name, got, want)
		}
	}
}
