// Package testreport reads what a completion command printed (and the report
// files it wrote) and turns it into test counts, failing test names and
// coverage. Every parser is pure: text in, Summary out, never an error for
// input it does not understand (it reports Known=false instead).
package testreport

// Summary is what the harness knows about one run of the completion command.
type Summary struct {
	// Known is false when no parser recognised the output: pass/fail then
	// comes from the exit code alone and the report says counts are unknown.
	Known bool `json:"known"`
	// Runner names the parser that produced the counts ("go", "pytest",
	// "jest", "junit-xml", ...). Several runners may be joined with "+".
	Runner  string `json:"runner,omitempty"`
	Total   int    `json:"total"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
	// Failing holds the names of failing tests, as the runner prints them,
	// sorted and de-duplicated.
	Failing []string `json:"failing,omitempty"`
	// Passing holds the names of passing tests when the runner lists them
	// (go test -v/-json, JUnit XML, ...); used to notice a test that used to
	// pass and now is gone or failing.
	Passing []string `json:"passing,omitempty"`
	// Coverage is the statement/line coverage percentage (0-100), nil when no
	// coverage was reported.
	Coverage *float64 `json:"coverage,omitempty"`
}
