package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// The stories the goldens tell. Each is a state an engine could have
// written (TestStoriesAreConsistent checks it), built from a few facts per
// iteration so the totals, the best iteration and the timestamps follow.

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func sha(c byte) string { return strings.Repeat(string(c), 40) }

// it describes one iteration of a story.
type it struct {
	pass             bool
	passed, total    int
	failing          []string
	score            float64
	b                state.QualityBreakdown // the score's parts; derived from score when zero
	rejected         bool
	events           []state.RegressionEvent
	heldOut          *state.HeldOut
	change           *state.Change
	commitFiles      int // files changed by this iteration's own commit
	summary, message string
	secs             float64
	tokens           int64
	cost             float64
	estimated        bool
	runs             []state.CriterionRun
	fingerprint      string
	agentClass       string
	agentDetail      string
	excluded, flaky  []string
}

// story builds a state from the loop's settings and its iterations.
type story struct {
	id, task, command string
	source            spec.Source
	origin            *spec.Origin
	status            state.Status
	stop              state.StopKind
	stopReason        string
	maxIter           int
	timeout           *int
	policy            string
	baseline          state.BaselineCheck
	its               []it
	publishSHA        string // a commit whose tree equals the best one (best is not the last)
	gate              *state.Gate
	resumes           []state.Resume
	budget            float64
}

func (s story) build() *state.State {
	st := &state.State{
		Version: state.Version, LoopID: s.id, Status: s.status, Task: s.task, CompletionCriteria: s.command,
		StartedAt: t0, LastUpdated: t0, WorkingDirectory: "/home/dev/calc",
		Configuration:    state.Configuration{MaxIterations: s.maxIter, TimeoutMinutes: s.timeout, CheckpointInterval: 1, ExecutionMode: "default"},
		IterationHistory: []state.IterationEntry{}, RegressionEvents: []state.RegressionEvent{}, ReinforcementLevel: "STANDARD",
		ReinforcementHistory: []state.ReinforcementChange{}, RecoveryHistory: []state.Recovery{}, DetectedPatterns: []state.DetectedPattern{},
		Progress: state.Progress{CompletionChecks: []state.Check{}},
		Harness: state.Harness{
			Provider: "claude", AgentVersion: "2.1.330", Branch: "agent-loop/" + s.id, OriginalBranch: "main", BaseSHA: sha('0'),
			Spec: spec.Spec{Task: s.task,
				Criterion: spec.Criterion{Command: s.command, Workdir: ".", Source: s.source, Confidence: "high", Origin: s.origin},
				Limits:    spec.Limits{MaxIterations: s.maxIter, BudgetUSD: s.budget},
				Publish:   spec.Publish{Branch: "agent-loop/" + s.id, Commit: true, Push: true},
				Policy:    spec.Policy{Regression: s.policy, ConfirmRuns: 1}},
			StopKind: s.stop, StopReason: s.stopReason,
			RepoURL: "https://github.com/acme/calc", RunURL: "https://github.com/acme/calc/actions/runs/4242",
			ReportURL: "https://github.com/acme/calc/pull/7#issuecomment-99", PRNumber: 7, PRURL: "https://github.com/acme/calc/pull/7",
			Resumes: s.resumes,
		},
	}
	if s.source == spec.SourceFlag {
		st.Harness.Spec.Criterion.Confidence = "given"
	}
	b := s.baseline
	st.Harness.Baseline = &b
	clock := t0.Add(time.Duration(b.Seconds * float64(time.Second)))
	var totalSecs float64
	for i, x := range s.its {
		n := i + 1
		clock = clock.Add(time.Duration(x.secs * float64(time.Second)))
		e := state.IterationEntry{
			Iteration: n, Timestamp: clock, QualityScore: x.score, QualityBreakdown: x.b, Artifacts: []state.Artifact{},
			Commit: sha("123456789abcdef"[i]), CheckPassed: x.pass, CheckExitCode: map[bool]int{true: 0, false: 1}[x.pass],
			TestsKnown: true, Failing: x.failing, Rejected: x.rejected, RegressionDetected: len(x.events) > 0,
			DurationSeconds: x.secs, AgentSeconds: x.secs * 0.8, CheckSeconds: x.secs * 0.2,
			AgentMessage: x.message, AgentSummary: x.summary, Tokens: x.tokens, CostUSD: x.cost, CostEstimated: x.estimated,
			FilesChanged: x.commitFiles, FromStart: x.change, HeldOut: x.heldOut, CriterionRuns: x.runs,
			Fingerprint: x.fingerprint, AgentClass: x.agentClass, AgentDetail: x.agentDetail, Excluded: x.excluded, Flaky: x.flaky,
			TestResults:     &state.TestResults{Total: x.total, Passed: x.passed, Failed: x.total - x.passed},
			MetricsSnapshot: state.MetricsSnapshot{TestCount: x.total},
		}
		if e.QualityBreakdown == (state.QualityBreakdown{}) {
			e.QualityBreakdown = breakdownFor(x.score)
		}
		if x.change != nil {
			for _, p := range x.change.Paths {
				e.Artifacts = append(e.Artifacts, state.Artifact{Path: p.Path})
			}
		}
		for k, ev := range x.events {
			ev.EventID = fmt.Sprintf("reg-%03d-%02d", n, k+1)
			ev.Timestamp = clock
			ev.Iteration = n
			st.RegressionEvents = append(st.RegressionEvents, ev)
		}
		if i > 0 {
			e.QualityDelta = x.score - s.its[i-1].score
		} else {
			e.QualityDelta = x.score
		}
		st.IterationHistory = append(st.IterationHistory, e)
		c := state.Check{Iteration: n, Timestamp: clock, Passed: x.pass, Output: fmt.Sprintf("%d passed, %d failed", x.passed, x.total-x.passed)}
		st.Progress.CompletionChecks = append(st.Progress.CompletionChecks, c)
		st.Progress.LastCompletionCheck = &c
		st.Metrics.TotalIterations++
		if x.pass && !x.rejected {
			st.Metrics.SuccessfulIterations++
		} else {
			st.Metrics.FailedIterations++
		}
		st.Metrics.TotalTokens += x.tokens
		st.Metrics.TotalCostUSD += x.cost
		totalSecs += x.secs
	}
	st.Iteration = len(s.its)
	st.Metrics.TotalCostUSD = float64(int64(st.Metrics.TotalCostUSD*1e6+0.5)) / 1e6
	st.Metrics.TotalDurationSeconds = int(totalSecs + 0.5)
	if n := st.Metrics.TotalIterations; n > 0 {
		st.Metrics.AverageIterationTimeSeconds = float64(int(totalSecs/float64(n)*10+0.5)) / 10
	}
	st.LastUpdated = clock
	if s.status.Terminal() {
		st.CompletedAt = &clock
	}
	if best := bestOf(st.IterationHistory); best != nil {
		reason := fmt.Sprintf("Iteration %d: the highest score (%.0f) of the iterations that were not rejected.", best.Iteration, best.QualityScore)
		if best.CheckPassed {
			reason = fmt.Sprintf("Iteration %d: passed the check with no regression and the highest score (%.0f).", best.Iteration, best.QualityScore)
		}
		st.BestIteration = &state.BestIteration{Iteration: best.Iteration, QualityScore: best.QualityScore, UpdatedAt: clock, SelectionReason: reason, Commit: best.Commit}
		st.Harness.BestSHA = best.Commit
	}
	st.Harness.HeadSHA = ""
	if n := len(st.IterationHistory); n > 0 {
		st.Harness.HeadSHA = st.IterationHistory[n-1].Commit
		if s.publishSHA != "" {
			st.Harness.HeadSHA = s.publishSHA
		}
	}
	st.Harness.PendingGate = s.gate
	if s.status == state.Running || s.status == state.Completing {
		pid := 4242
		st.PID = &pid
	}
	st.DetectionEnabled = !s.status.Terminal()
	return st
}

// bestOf is the judge's choice: not rejected; a pass before a failure;
// then the higher score; then the earlier iteration.
func bestOf(hist []state.IterationEntry) *state.IterationEntry {
	var best *state.IterationEntry
	for i := range hist {
		h := &hist[i]
		if h.Rejected {
			continue
		}
		if best == nil || h.CheckPassed && !best.CheckPassed || h.CheckPassed == best.CheckPassed && h.QualityScore > best.QualityScore {
			best = h
		}
	}
	return best
}

// breakdownFor spreads a score over the five parts in whole numbers that
// add up to it: a passing iteration full on the first three parts, a
// failing one at 50 for validation and the rest shared.
func breakdownFor(score float64) state.QualityBreakdown {
	if score >= 85 {
		r := (score - 80) * 5
		return state.QualityBreakdown{Validation: 100, Completeness: 100, Correctness: 100, Readability: r, Efficiency: r}
	}
	c := 2 * (score - 35)
	return state.QualityBreakdown{Validation: 50, Completeness: c, Correctness: c, Readability: 100, Efficiency: 100}
}

func change(files ...state.ChangedFile) *state.Change {
	c := &state.Change{Files: len(files), Paths: files}
	for _, f := range files {
		c.Additions += f.Additions
		c.Deletions += f.Deletions
	}
	return c
}

func file(path string, add, del int) state.ChangedFile {
	return state.ChangedFile{Path: path, Status: "modified", Additions: add, Deletions: del}
}

func critical(kind string, tests, paths []string, summary string) state.RegressionEvent {
	return state.RegressionEvent{RegressionType: kind, Severity: "critical", Details: state.RegressionDetails{Tests: tests, Paths: paths, Summary: summary}}
}

func runs(r ...state.CriterionRun) []state.CriterionRun { return r }

func run(purpose string, passed bool, secs float64) state.CriterionRun {
	return state.CriterionRun{Purpose: purpose, Passed: passed, Seconds: secs}
}

func minutes(n int) *int { return &n }

func outcome(s string) *string { return &s }

// stories are the goldens' stories, by name.
func stories() []struct {
	name string
	st   *state.State
} {
	list := []struct {
		name string
		s    story
	}{
		{"first_try", story{
			id: "ralph-fix-subtraction-1a2b3c4d", task: "fix the failing subtraction tests", command: "go test ./...",
			source: spec.SourceInput, status: state.Completed, stop: state.StopPassed, maxIter: 10, policy: "revert",
			baseline: state.BaselineCheck{Passed: false, ExitCode: 1, Known: true, Total: 4, Passing: 3, Failed: 1, Failing: []string{"TestSub"}, Seconds: 2.2},
			its: []it{{
				pass: true, passed: 4, total: 4, score: 94, change: change(file("calc.go", 1, 1)), commitFiles: 1,
				summary: "Fixed Sub: it returned a+b instead of a-b.", secs: 48, tokens: 12840, cost: 0.0412,
				runs: runs(run(state.RunFailingFirst, true, 0.6), run(state.RunFull, true, 2.1), run(state.RunConfirm, true, 2.0)),
			}},
		}},
		{"cheat_then_fixed", story{
			id: "ralph-fix-the-failing-0c0ffee1", task: "fix the failing tests", command: "sh test.sh",
			source: spec.SourceInferred, origin: &spec.Origin{File: ".github/workflows/ci.yml", Job: "test"},
			status: state.Completed, stop: state.StopPassed, maxIter: 5, policy: "revert",
			baseline: state.BaselineCheck{Passed: false, ExitCode: 1, Known: true, Total: 4, Passing: 2, Failed: 2, Failing: []string{"TestSubZero", "TestSub"}, Seconds: 0.4},
			its: []it{{
				pass: true, passed: 2, total: 2, score: 35, b: state.QualityBreakdown{Validation: 0, Completeness: 60, Correctness: 0, Readability: 100, Efficiency: 100},
				rejected: true,
				events: []state.RegressionEvent{
					critical("test_deletion", []string{"TestSubZero", "TestSub"}, []string{"calc_test.sh"}, "2 tests of the baseline no longer ran"),
					critical("validation_bypass", nil, []string{"test.sh"}, "the test script was edited"),
				},
				heldOut:     &state.HeldOut{Verdict: state.HeldOutFail, Failed: []string{"TestSubZero", "TestSub"}},
				change:      change(file("calc_test.sh", 0, 12), file("test.sh", 1, 1)),
				commitFiles: 2, summary: "All tests pass now.", secs: 21, tokens: 8200, cost: 0.0251, estimated: true,
				runs: runs(run(state.RunFull, true, 0.3), run(state.RunConfirm, true, 0.3), run(state.RunHeldOut, false, 0.4)),
			}, {
				pass: true, passed: 4, total: 4, score: 91, b: state.QualityBreakdown{Validation: 100, Completeness: 100, Correctness: 100, Readability: 70, Efficiency: 40},
				change:      change(file("calc.sh", 1, 1)),
				commitFiles: 3, summary: "Sub subtracted in the wrong order; swapped the operands in calc.sh.\nThe deleted tests are back (the harness restored them).",
				secs: 34, tokens: 11020, cost: 0.0337, estimated: true,
				runs: runs(run(state.RunFailingFirst, true, 0.2), run(state.RunFull, true, 0.4), run(state.RunConfirm, true, 0.4)),
			}},
		}},
		{"best_not_last", story{
			id: "ralph-parse-dates-5e6f7a8b", task: "make the date parser accept ISO weeks", command: "pytest -q tests/test_dates.py",
			source: spec.SourceFlag, status: state.Failed, stop: state.StopTimeout, stopReason: "wall timeout of 30m0s reached",
			maxIter: 10, timeout: minutes(30), policy: "revert",
			baseline:   state.BaselineCheck{Passed: false, ExitCode: 1, Known: true, Total: 6, Passing: 3, Failed: 3, Failing: []string{"test_week_1", "test_week_53", "test_week_leap"}, Seconds: 3.1},
			publishSHA: sha('e'),
			its: []it{
				{passed: 4, total: 6, failing: []string{"test_week_53", "test_week_leap"}, score: 58, change: change(file("dates/parse.py", 14, 2)), commitFiles: 1,
					summary: "Added a %G-W%V branch to parse().", secs: 512, tokens: 30110, cost: 0.21, fingerprint: "f1",
					runs: runs(run(state.RunFailingFirst, false, 1.2), run(state.RunFull, false, 3.3))},
				{passed: 5, total: 6, failing: []string{"test_week_leap"}, score: 71, change: change(file("dates/parse.py", 25, 2), file("dates/weeks.py", 31, 0)), commitFiles: 2,
					summary: "Moved ISO week handling into weeks.py; week 53 now rolls over correctly.", secs: 604, tokens: 41800, cost: 0.29, fingerprint: "f2",
					runs: runs(run(state.RunFailingFirst, false, 1.1), run(state.RunFull, false, 3.4))},
				{passed: 3, total: 6, failing: []string{"test_week_1", "test_week_53", "test_week_leap"}, score: 49, change: change(file("dates/parse.py", 40, 9), file("dates/weeks.py", 12, 0)), commitFiles: 2,
					summary: "Rewrote the week arithmetic with calendar.", secs: 655, tokens: 45950, cost: 0.33, fingerprint: "f3",
					runs: runs(run(state.RunFailingFirst, false, 1.0), run(state.RunFull, false, 3.2))},
			},
		}},
		{"max_iterations_closest", story{
			id: "ralph-fix-rounding-9a8b7c6d", task: "fix the rounding of negative amounts", command: "npm test",
			source: spec.SourceHint, status: state.Failed, stop: state.StopMaxIterations, stopReason: "reached the maximum of 5 iterations without passing the check",
			maxIter: 5, policy: "revert", publishSHA: sha('f'),
			baseline: state.BaselineCheck{Passed: false, ExitCode: 1, Known: true, Total: 10, Passing: 6, Failed: 4, Failing: []string{"rounds -0.5", "rounds -1.5", "rounds -2.5", "keeps cents"}, Seconds: 5.5},
			its: []it{
				{passed: 7, total: 10, failing: []string{"rounds -1.5", "rounds -2.5", "keeps cents"}, score: 52, change: change(file("src/money.js", 6, 2)), commitFiles: 1, secs: 140, tokens: 15000, cost: 0.08, fingerprint: "a",
					summary: "Use Math.round on the absolute value."},
				{pass: true, passed: 6, total: 6, score: 30, b: state.QualityBreakdown{Validation: 0, Completeness: 40, Correctness: 0, Readability: 100, Efficiency: 100},
					rejected: true, events: []state.RegressionEvent{critical("test_skipping", []string{"rounds -1.5", "rounds -2.5", "keeps cents", "rounds 0.5"}, []string{"test/money.test.js"}, "4 tests skipped")},
					heldOut: &state.HeldOut{Verdict: state.HeldOutFail, Failed: []string{"rounds -1.5", "rounds -2.5", "keeps cents"}},
					change:  change(file("src/money.js", 6, 2), file("test/money.test.js", 4, 4)), commitFiles: 1, secs: 95, tokens: 9000, cost: 0.05, fingerprint: "b",
					summary: "Skipped the flaky rounding tests."},
				{passed: 8, total: 10, failing: []string{"rounds -2.5", "keeps cents"}, score: 61, change: change(file("src/money.js", 11, 3)), commitFiles: 2, secs: 180, tokens: 21000, cost: 0.11, fingerprint: "c",
					summary: "Round half away from zero for negatives."},
				{passed: 9, total: 10, failing: []string{"keeps cents"}, score: 80, change: change(file("src/money.js", 15, 3)), commitFiles: 1, secs: 150, tokens: 18000, cost: 0.09, fingerprint: "d",
					summary: "Round half away from zero; -2.5 now gives -3.\nThe cents case still loses precision in toFixed."},
				{passed: 8, total: 10, failing: []string{"rounds -2.5", "keeps cents"}, score: 74, change: change(file("src/money.js", 22, 5)), commitFiles: 1, secs: 170, tokens: 20000, cost: 0.10, fingerprint: "c",
					summary: "Tried integer cents; broke -2.5 again."},
			},
		}},
		{"stalled", story{
			id: "ralph-fix-the-parser-77aa88bb", task: "fix the failing parser test", command: "cargo test",
			source: spec.SourceInferred, origin: &spec.Origin{File: "Cargo.toml"},
			status: state.Failed, stop: state.StopStalled, stopReason: "stalled: the same failing tests 3 times in a row",
			maxIter: 10, policy: "revert", publishSHA: sha('d'),
			baseline: state.BaselineCheck{Passed: false, ExitCode: 101, Known: true, Total: 8, Passing: 6, Failed: 2, Failing: []string{"parse::dates", "parse::times"}, Seconds: 14},
			its: []it{
				{passed: 6, total: 8, failing: []string{"parse::dates", "parse::times"}, score: 55, change: change(file("src/parse.rs", 3, 3)), commitFiles: 1, secs: 200, tokens: 22000, cost: 0.12, fingerprint: "x1",
					summary: "Tightened the date regex."},
				{passed: 7, total: 8, failing: []string{"parse::dates"}, score: 66, change: change(file("src/parse.rs", 9, 4)), commitFiles: 1, secs: 210, tokens: 24000, cost: 0.13, fingerprint: "x2",
					summary: "Times parse now; dates still off by one day."},
				{passed: 7, total: 8, failing: []string{"parse::dates"}, score: 64, change: change(file("src/parse.rs", 12, 6)), commitFiles: 1, secs: 220, tokens: 25000, cost: 0.14, fingerprint: "x2",
					summary: "Adjusted the epoch offset."},
				{passed: 7, total: 8, failing: []string{"parse::dates"}, score: 64, change: change(file("src/parse.rs", 12, 6)), commitFiles: 0, secs: 190, tokens: 21000, cost: 0.12, fingerprint: "x2",
					summary: "I could not find the cause."},
			},
		}},
		{"cancelled_and_resumed", story{
			id: "ralph-add-csv-export-3c4d5e6f", task: "add CSV export to the report command", command: "make test",
			source: spec.SourceFlag, status: state.Completed, stop: state.StopPassed, maxIter: 10, policy: "revert",
			baseline: state.BaselineCheck{Passed: false, ExitCode: 2, Known: true, Total: 5, Passing: 3, Failed: 2, Failing: []string{"TestExportCSV", "TestExportHeader"}, Seconds: 6},
			resumes:  []state.Resume{{At: t0.Add(20 * time.Minute), AfterIteration: 1, Why: state.StopCancelled, SetAside: true}},
			its: []it{
				{passed: 3, total: 5, failing: []string{"TestExportCSV", "TestExportHeader"}, score: 60, change: change(file("export.go", 40, 0)), commitFiles: 1, secs: 300, tokens: 25000, cost: 0.15,
					summary: "Added an Export function (not wired yet)."},
				{passed: 4, total: 5, failing: []string{"TestExportHeader"}, score: 72, change: change(file("export.go", 58, 0), file("cmd/report.go", 6, 1)), commitFiles: 2, secs: 280, tokens: 23000, cost: 0.14,
					summary: "Wired --format csv into the report command."},
				{pass: true, passed: 5, total: 5, score: 93, change: change(file("export.go", 61, 0), file("cmd/report.go", 6, 1)), commitFiles: 1, secs: 120, tokens: 9000, cost: 0.06,
					summary: "Wrote the header row first.", runs: runs(run(state.RunFailingFirst, true, 1.1), run(state.RunFull, true, 6.2), run(state.RunConfirm, true, 6.0))},
			},
		}},
		{"human_gate_waiting", story{
			id: "ralph-fix-the-slugger-4d4d4d4d", task: "fix slugify for unicode input", command: "python -m unittest",
			source: spec.SourceInferred, origin: &spec.Origin{File: ".github/workflows/test.yml", Job: "unit", Step: "Run unit tests"},
			status: state.Paused, stop: state.StopHumanGate, stopReason: "iteration 2 needs a human decision (assertion_weakening): approve or reject, then resume",
			maxIter: 10, policy: "human-gate",
			gate:     &state.Gate{Iteration: 2, Reason: "assertion_weakening"},
			baseline: state.BaselineCheck{Passed: false, ExitCode: 1, Known: true, Total: 3, Passing: 1, Failed: 2, Failing: []string{"test_accents", "test_cjk"}, Seconds: 0.9},
			its: []it{
				{passed: 2, total: 3, failing: []string{"test_cjk"}, score: 62, change: change(file("slug.py", 5, 1)), commitFiles: 1, secs: 90, tokens: 7000, cost: 0.04,
					summary: "Normalise to NFKD and drop combining marks."},
				{pass: true, passed: 3, total: 3, score: 50, b: state.QualityBreakdown{Validation: 0, Completeness: 100, Correctness: 40, Readability: 100, Efficiency: 50},
					rejected: true, events: []state.RegressionEvent{func() state.RegressionEvent {
						ev := critical("assertion_weakening", []string{"test_cjk"}, []string{"tests/test_slug.py"}, "an assertion was weakened")
						ev.HumanGateInvoked = true
						ev.RecoveryProtocolInvoked = true
						ev.RecoveryOutcome = outcome("escalated")
						return ev
					}()},
					change: change(file("slug.py", 5, 1), file("tests/test_slug.py", 1, 1)), commitFiles: 1, secs: 75, tokens: 6000, cost: 0.03,
					summary: "CJK has no ASCII form, so the test now accepts an empty slug."},
			},
		}},
		{"held_out_warning", story{
			id: "ralph-make-testroundba-2b2b2b2b", task: "make TestRoundBankers pass and update the older tests that expect half-up rounding", command: "go test ./money/...",
			source: spec.SourceFlag, status: state.Completed, stop: state.StopPassed, maxIter: 10, policy: "revert",
			baseline: state.BaselineCheck{Passed: false, ExitCode: 1, Known: true, Total: 12, Passing: 11, Failed: 1, Failing: []string{"TestRoundBankers"}, Seconds: 1.2},
			its: []it{{
				pass: true, passed: 12, total: 12, score: 88,
				heldOut: &state.HeldOut{Verdict: state.HeldOutWarning, Failed: []string{"TestRoundHalf", "TestRoundNegative"}, Edits: []state.TestEdit{
					{Path: "money/round_test.go", Test: "TestRoundHalf", Change: "changed the expected value of"},
					{Path: "money/round_test.go", Test: "TestRoundNegative", Change: "changed the expected value of"},
				}},
				change: change(file("money/round.go", 9, 4), file("money/round_test.go", 2, 2)), commitFiles: 2,
				summary: "Round half to even in Round; updated the two tests that expected half-up.",
				secs:    66, tokens: 9900, cost: 0.05,
				runs: runs(run(state.RunFull, true, 1.3), run(state.RunConfirm, true, 1.2), run(state.RunHeldOut, false, 1.3)),
			}},
		}},
	}
	var out []struct {
		name string
		st   *state.State
	}
	for _, l := range list {
		out = append(out, struct {
			name string
			st   *state.State
		}{l.name, l.s.build()})
	}
	return out
}
