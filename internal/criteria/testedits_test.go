package criteria

import "testing"

func TestTaskEditsTests(t *testing.T) {
	t.Parallel()
	cases := []struct {
		task, hint string
		want       bool
	}{
		{task: "fix the failing tests", want: false},
		{task: "make the tests pass", want: false},
		{task: "fix the crash in the parser", want: false},
		{task: "make CI green", want: false},
		{task: "fix the flaky parser test", want: false},
		{task: "add a --json flag to the list command", want: false},
		{task: "implement OAuth login", want: false},
		{task: "fix lint", want: false},
		{task: "update the snapshots", want: true},
		{task: "update the tests to match the new API", want: true},
		{task: "rewrite the tests with pytest", want: true},
		{task: "add tests for the parser", want: true},
		{task: "raise coverage to 85%", want: true},
		{task: "split the test file in two", want: true},
		{task: "regenerate the golden files", want: true},
		{task: "fix the bug and adjust the expected values", want: true},
		{task: "rename Add to Sum", want: true},
		{task: "migrate lib/ to ESM", want: true},
		{task: "refactor the config loader", want: true},
		{task: "fix things", hint: "update the fixtures so they match", want: true},
		{task: "update the CI workflow to use Go 1.26", want: true},
	}
	for _, tc := range cases {
		got, why := TaskEditsTests(tc.task, tc.hint)
		if got != tc.want {
			t.Errorf("TaskEditsTests(%q, %q) = %v (%q), want %v", tc.task, tc.hint, got, why, tc.want)
		}
		if got && why == "" {
			t.Errorf("TaskEditsTests(%q): no words", tc.task)
		}
	}
}
