package loop

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aiwg/agent-loop/internal/crashpoint"
	"github.com/aiwg/agent-loop/internal/state"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// outputKeep is how much of a check's output the state keeps per check.
const outputKeep = 2000

// save writes state.json and the registry heartbeat. The two durable
// writes (each a file and a directory fsync) go to disk side by side: the
// registry only mirrors the state, and the state is what a resume trusts.
func (e *Engine) save() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var regErr error
	var wg sync.WaitGroup
	if e.Registry != nil {
		cp := *e.st // the registry reads a copy: Save stamps the state
		wg.Add(1)
		go func() {
			defer wg.Done()
			regErr = e.Registry.Sync(&cp)
		}()
	}
	err := e.Dir.Save(e.st, e.now())
	if err == nil {
		crashpoint.Hit("state-saved")
	}
	wg.Wait()
	return cmp.Or(err, regErr)
}

func (e *Engine) recordBaseline(check CheckResult) {
	t := check.Tests
	b := &state.BaselineCheck{
		Passed: check.Passed, ExitCode: check.ExitCode, Known: t.Known, Total: t.Total, Passing: t.Passed,
		Failed: t.Failed, Failing: t.Failing, Output: tailString(check.Output, outputKeep), Seconds: check.Duration.Seconds(),
	}
	e.st.Harness.Baseline = b
	bm := &state.BaselineMetrics{
		CapturedAt: e.baseline.CapturedAt.UTC().Truncate(time.Second), TestCount: t.Total,
		FileCount: e.baseline.FileCount, LinesOfCode: e.baseline.LinesOfCode, LintErrors: e.baseline.LintErrors,
		CustomMetrics: map[string]any{"tests_known": t.Known, "tests_passed": t.Passed, "tests_failed": t.Failed, "check_passed": check.Passed},
	}
	if t.Coverage != nil {
		bm.CoveragePercentage = *t.Coverage
		bm.CustomMetrics["coverage_known"] = true
	} else {
		bm.CustomMetrics["coverage_known"] = false
	}
	e.st.BaselineMetrics = bm
	e.st.DetectionEnabled = true
	c := state.Check{Iteration: 0, Timestamp: e.now().UTC().Truncate(time.Second), Passed: check.Passed, Output: tailString(check.Output, outputKeep)}
	e.st.Progress.CompletionChecks = append(e.st.Progress.CompletionChecks, c)
	e.st.Progress.LastCompletionCheck = &c
}

// regressionEvents are the regression events iteration r records: the
// judge's regressions, with the tests they are about and the files their
// evidence points at (the report's plain sentences name them).
func regressionEvents(r Record, now time.Time) []state.RegressionEvent {
	var out []state.RegressionEvent
	for i, g := range r.Verdict.Regressions {
		diff := map[string]any{}
		if len(g.Evidence) > 0 {
			diff["evidence"] = g.Evidence
		}
		var paths []string
		for _, ev := range g.Evidence {
			if ev.Path != "" && !slices.Contains(paths, ev.Path) && len(paths) < 20 {
				paths = append(paths, ev.Path)
			}
		}
		out = append(out, state.RegressionEvent{
			EventID:   fmt.Sprintf("reg-%03d-%02d", r.Iteration, i+1),
			Timestamp: now, Iteration: r.Iteration, RegressionType: g.Type, Severity: g.Severity,
			Details: state.RegressionDetails{BaselineValue: g.Baseline, CurrentValue: g.Current, Diff: diff, Summary: g.Summary,
				Tests: capList(g.Tests, 20), Paths: paths},
		})
	}
	return out
}

// recordIteration writes the iteration into the state, the checkpoint and
// the analytics.
func (e *Engine) recordIteration(r Record, checkDur time.Duration, retries int) {
	now := e.now().UTC().Truncate(time.Second)
	prevScore := 0.0
	if len(e.st.IterationHistory) > 0 {
		prevScore = e.st.IterationHistory[len(e.st.IterationHistory)-1].QualityScore
	}
	t := r.Check.Tests
	entry := state.IterationEntry{
		Iteration: r.Iteration, Timestamp: now, QualityScore: round1(r.Verdict.Score),
		QualityDelta: round1(r.Verdict.Score - prevScore),
		QualityBreakdown: state.QualityBreakdown{
			Validation: round1(r.Verdict.Breakdown.Validation), Completeness: round1(r.Verdict.Breakdown.Completeness),
			Correctness: round1(r.Verdict.Breakdown.Correctness), Readability: round1(r.Verdict.Breakdown.Readability),
			Efficiency: round1(r.Verdict.Breakdown.Efficiency),
		},
		Artifacts:          []state.Artifact{},
		SnapshotPath:       e.Dir.CheckpointRel(r.Iteration),
		MetricsSnapshot:    state.MetricsSnapshot{TestCount: t.Total, CoveragePercentage: t.Coverage},
		RegressionDetected: len(r.Verdict.Regressions) > 0,
		Commit:             r.Commit, CheckPassed: r.Check.Passed, CheckExitCode: r.Check.ExitCode, TestsKnown: t.Known,
		Failing: capList(t.Failing, 50), Flaky: r.Check.Flaky, Rejected: r.Rejected,
		DurationSeconds: round1(r.Duration.Seconds()), AgentSeconds: round1(r.Agent.Duration.Seconds()), CheckSeconds: round1(checkDur.Seconds()),
		AgentExitCode: r.Agent.ExitCode, AgentClass: string(r.Agent.Class), AgentDetail: r.Agent.Detail,
		AgentMessage: tailString(r.Agent.Message, 1000), Tokens: r.Agent.Tokens(), CostUSD: r.Agent.CostUSD,
		CostEstimated: r.Agent.CostEstimated, Turns: r.Agent.Turns,
		FilesChanged: r.Stat.Files, Additions: r.Stat.Additions, Deletions: r.Stat.Deletions, Excluded: r.Excluded,
		Reverted:    protectedReverts(r.Reverted),
		Fingerprint: r.Fingerprint, Explain: r.Verdict.Explain, Reinforcement: r.Level,
		CriterionRuns: r.CriterionRuns, HeldOut: r.HeldOut,
		FromStart: r.FromStart, AgentSummary: agentSummary(r.Agent.Message),
	}
	for _, p := range r.Stat.Paths {
		entry.Artifacts = append(entry.Artifacts, state.Artifact{Path: p})
	}
	if t.Known {
		entry.TestResults = &state.TestResults{Total: t.Total, Passed: t.Passed, Failed: t.Failed, Skipped: t.Skipped, Coverage: t.Coverage}
	}
	e.st.RegressionEvents = append(e.st.RegressionEvents, regressionEvents(r, now)...)
	for _, g := range r.Verdict.Regressions {
		e.st.DetectedPatterns = append(e.st.DetectedPatterns, state.DetectedPattern{
			PatternID: patternID(g.Type), PatternName: g.Type, Iteration: r.Iteration, Timestamp: now, Severity: g.Severity,
		})
	}
	e.mu.Lock()
	e.st.Iteration = r.Iteration
	e.st.IterationHistory = append(e.st.IterationHistory, entry)
	c := state.Check{Iteration: r.Iteration, Timestamp: now, Passed: r.Check.Passed, Output: tailString(r.Check.Output, outputKeep)}
	e.st.Progress.CompletionChecks = append(e.st.Progress.CompletionChecks, c)
	e.st.Progress.LastCompletionCheck = &c
	e.updateMetrics()
	e.updateBest(now)
	e.mu.Unlock()

	cp := &state.Checkpoint{
		LoopID: e.st.LoopID, Iteration: r.Iteration, CreatedAt: now, Prompt: readFile(e.Dir.File("prompt.md")),
		Agent: mustJSON(r.Agent), Check: mustJSON(checkForCheckpoint(r.Check)), Verdict: mustJSON(r.Verdict),
		DiffStat: mustJSON(r.Stat), Commit: r.Commit, Entry: entry,
	}
	// The checkpoint and analytics.json are written side by side (two
	// durable writes, each waiting for the disk); both before the state.
	var (
		wg    sync.WaitGroup
		cpRel string
		cpErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		cpRel, cpErr = e.Dir.WriteCheckpoint(cp)
		crashpoint.Hit("after-checkpoint")
	}()
	agentS, checkS := r.Agent.Duration.Seconds(), checkDur.Seconds()
	ia := state.IterationAnalytics{
		Iteration: r.Iteration, StartedAt: r.Started.UTC().Truncate(time.Second), TotalSeconds: round3(r.Duration.Seconds()),
		AgentSeconds: round3(agentS), CheckSeconds: round3(checkS), HarnessSeconds: round3(max(r.Duration.Seconds()-agentS-checkS, 0)),
		JudgeMillis: float64(e.judgeLatencies[len(e.judgeLatencies)-1].Microseconds()) / 1000,
		Tokens:      r.Agent.Tokens(), InputTokens: r.Agent.InputTokens, OutputTokens: r.Agent.OutputTokens,
		CostUSD: r.Agent.CostUSD, CostEstimated: r.Agent.CostEstimated, Score: round1(r.Verdict.Score), Passed: r.Check.Passed, Retries: retries,
	}
	// An iteration rebuilt on resume may have been measured already (the
	// analytics are written before the state): keep that measurement.
	if !slices.ContainsFunc(e.analytics.Iterations, func(a state.IterationAnalytics) bool { return a.Iteration == r.Iteration }) {
		e.analytics.Iterations = append(e.analytics.Iterations, ia)
	}
	if err := e.Dir.SaveAnalytics(e.analytics, e.now()); err != nil {
		e.logf("writing analytics failed: %v", err)
	}
	e.updatePersistenceMetrics()
	wg.Wait()
	if cpErr != nil {
		e.logf("writing checkpoint %d failed: %v", r.Iteration, cpErr)
		return
	}
	e.mu.Lock()
	e.st.LastCheckpoint = &cpRel
	e.mu.Unlock()
}

func checkForCheckpoint(c CheckResult) any {
	return struct {
		Passed     bool               `json:"passed"`
		ExitCode   int                `json:"exit_code"`
		Seconds    float64            `json:"seconds"`
		TimedOut   bool               `json:"timed_out"`
		OutputTail string             `json:"output_tail"`
		Tests      testreport.Summary `json:"tests"`
		Flaky      []string           `json:"flaky,omitempty"`
	}{c.Passed, c.ExitCode, c.Duration.Seconds(), c.TimedOut, tailString(c.Output, 16<<10), c.Tests, c.Flaky}
}

func patternID(t string) string {
	ids := map[string]string{"test_deletion": "LP-001", "test_skipping": "LP-002", "assertion_weakening": "LP-003",
		"error_suppression": "LP-004", "validation_bypass": "LP-005", "coverage_regression": "LP-006", "feature_removal": "LP-007"}
	if id, ok := ids[t]; ok {
		return id
	}
	return "LP-000"
}

func (e *Engine) updateMetrics() {
	m := state.Metrics{}
	var secs float64
	for _, h := range e.st.IterationHistory {
		m.TotalIterations++
		if h.CheckPassed && !h.Rejected {
			m.SuccessfulIterations++
		} else {
			m.FailedIterations++
		}
		m.TotalTokens += h.Tokens
		m.TotalCostUSD += h.CostUSD
		secs += h.DurationSeconds
	}
	m.TotalCostUSD = float64(int64(m.TotalCostUSD*1e6+0.5)) / 1e6
	m.TotalDurationSeconds = int(secs + 0.5)
	if m.TotalIterations > 0 {
		m.AverageIterationTimeSeconds = round1(secs / float64(m.TotalIterations))
	}
	e.st.Metrics = m
}

func (e *Engine) updateBest(now time.Time) {
	best, reason := e.best()
	if best == 0 {
		e.st.BestIteration = nil
		e.st.Harness.BestSHA = ""
		return
	}
	for _, h := range e.st.IterationHistory {
		if h.Iteration == best {
			if e.st.BestIteration == nil || e.st.BestIteration.Iteration != best {
				e.st.BestIteration = &state.BestIteration{Iteration: best, UpdatedAt: now}
			}
			e.st.BestIteration.QualityScore = h.QualityScore
			e.st.BestIteration.SelectionReason = reason
			e.st.BestIteration.SnapshotPath = h.SnapshotPath
			e.st.BestIteration.Commit = h.Commit
			e.st.Harness.BestSHA = h.Commit
		}
	}
}

func (e *Engine) updatePersistenceMetrics() {
	if len(e.judgeLatencies) == 0 {
		return
	}
	ls := append([]time.Duration(nil), e.judgeLatencies...)
	sort.Slice(ls, func(i, j int) bool { return ls[i] < ls[j] })
	pct := func(p float64) int {
		i := int(p*float64(len(ls))+0.999999) - 1
		i = min(max(i, 0), len(ls)-1)
		return int(ls[i].Milliseconds())
	}
	tot := e.analytics.Totals
	overhead := 0.0
	if busy := tot.AgentSeconds + tot.CheckSeconds; busy > 0 {
		overhead = round1(100 * tot.HarnessSeconds / busy)
	}
	pm := &state.PersistenceMetrics{DetectionLatencyP95Ms: pct(0.95), DetectionLatencyP99Ms: pct(0.99), IntegrationOverheadPercentage: overhead}
	for _, ev := range e.st.RegressionEvents {
		if ev.HumanDecision != nil && *ev.HumanDecision == "approve" {
			pm.FalsePositiveCount++
		} else {
			pm.TruePositiveCount++
		}
	}
	if n := pm.TruePositiveCount + pm.FalsePositiveCount; n > 0 {
		pm.FalsePositiveRate = float64(pm.FalsePositiveCount) / float64(n)
	}
	e.st.PersistenceMetrics = pm
}

// recordsFromState rebuilds the engine's records from a saved state (resume).
func recordsFromState(st *state.State) []Record {
	var out []Record
	for _, h := range st.IterationHistory {
		r := recordFromEntry(h)
		for _, c := range st.Progress.CompletionChecks {
			if c.Iteration == h.Iteration {
				r.Check.Output = c.Output
			}
		}
		for _, ev := range st.RegressionEvents {
			if ev.Iteration == h.Iteration {
				r.Verdict.Regressions = append(r.Verdict.Regressions, Regression{Type: ev.RegressionType, Severity: ev.Severity, Summary: ev.Details.Summary, Baseline: ev.Details.BaselineValue, Current: ev.Details.CurrentValue})
			}
		}
		out = append(out, r)
	}
	return out
}

// recordFromEntry rebuilds a record from its iteration_history entry.
func recordFromEntry(h state.IterationEntry) Record {
	r := Record{
		Iteration: h.Iteration, Started: h.Timestamp, Duration: time.Duration(h.DurationSeconds * float64(time.Second)),
		Commit: h.Commit, Fingerprint: h.Fingerprint, Rejected: h.Rejected, Level: h.Reinforcement, Excluded: h.Excluded,
		CriterionRuns: h.CriterionRuns, HeldOut: h.HeldOut, FromStart: h.FromStart, Reverted: revertsFromState(h.Reverted),
		Stat: DiffStat{Files: h.FilesChanged, Additions: h.Additions, Deletions: h.Deletions},
		Agent: AgentResult{ExitCode: h.AgentExitCode, Class: ErrorClass(h.AgentClass), Detail: h.AgentDetail, Message: h.AgentMessage,
			CostUSD: h.CostUSD, CostEstimated: h.CostEstimated, Turns: h.Turns, Duration: time.Duration(h.AgentSeconds * float64(time.Second))},
		Check:   CheckResult{Passed: h.CheckPassed, ExitCode: h.CheckExitCode, Flaky: h.Flaky},
		Verdict: Verdict{Score: h.QualityScore, Explain: h.Explain, Breakdown: Breakdown(h.QualityBreakdown)},
	}
	r.Agent.OutputTokens = h.Tokens
	for _, a := range h.Artifacts {
		r.Stat.Paths = append(r.Stat.Paths, a.Path)
	}
	r.Check.Tests = testreport.Summary{Known: h.TestsKnown, Failing: h.Failing}
	if h.TestResults != nil {
		r.Check.Tests.Total, r.Check.Tests.Passed = h.TestResults.Total, h.TestResults.Passed
		r.Check.Tests.Failed, r.Check.Tests.Skipped = h.TestResults.Failed, h.TestResults.Skipped
		r.Check.Tests.Coverage = h.TestResults.Coverage
	}
	return r
}

// recordFromCheckpoint rebuilds iteration n from its checkpoint, written
// after its commit and before the state: everything the iteration measured.
func recordFromCheckpoint(cp *state.Checkpoint) Record {
	r := recordFromEntry(cp.Entry)
	_ = json.Unmarshal(cp.Agent, &r.Agent)
	_ = json.Unmarshal(cp.Verdict, &r.Verdict)
	_ = json.Unmarshal(cp.DiffStat, &r.Stat)
	var c struct {
		Seconds    float64            `json:"seconds"`
		TimedOut   bool               `json:"timed_out"`
		OutputTail string             `json:"output_tail"`
		Tests      testreport.Summary `json:"tests"`
	}
	if json.Unmarshal(cp.Check, &c) == nil {
		r.Check.Output, r.Check.Tests, r.Check.TimedOut = c.OutputTail, c.Tests, c.TimedOut
		r.Check.Duration = time.Duration(c.Seconds * float64(time.Second))
	}
	r.Commit = cp.Commit
	return r
}

// reconcile prepares a resumed loop: the loop branch is checked out, commits
// the state does not know (a crash between commit and state write) are
// rebuilt from their trailers, and a half-done iteration's changes are
// saved as a patch and discarded.
func (e *Engine) reconcile(ctx context.Context) error {
	b := e.st.Harness.Baseline
	if b != nil {
		e.baseline = BaselineMetrics{CapturedAt: e.st.StartedAt, Check: CheckResult{Passed: b.Passed, ExitCode: b.ExitCode, Output: b.Output,
			Tests: testreport.Summary{Known: b.Known, Total: b.Total, Passed: b.Passing, Failed: b.Failed, Failing: b.Failing}}}
		if bm := e.st.BaselineMetrics; bm != nil {
			e.baseline.FileCount, e.baseline.LinesOfCode, e.baseline.LintErrors = bm.FileCount, bm.LinesOfCode, bm.LintErrors
		}
	}
	if !e.spec.Publish.Commit {
		return nil
	}
	if e.st.Harness.Branch == "" {
		// Stopped after its baseline and before it recorded its branch:
		// start the branch now (or take over the one it had made).
		if err := e.Repo.StartBranch(ctx, e.spec.Publish.Branch, e.st.Harness.BaseSHA); err != nil {
			return fmt.Errorf("resuming: starting the loop branch %s: %w", e.spec.Publish.Branch, err)
		}
		e.st.Harness.Branch = e.spec.Publish.Branch
	}
	if err := e.Repo.Checkout(ctx, e.st.Harness.Branch); err != nil {
		return fmt.Errorf("resuming on branch %s: %w", e.st.Harness.Branch, err)
	}
	_, head, err := e.Repo.Head(ctx)
	if err != nil {
		return err
	}
	commits, err := e.Repo.History(ctx, e.st.Harness.Branch, e.st.Harness.BaseSHA)
	if err != nil {
		return fmt.Errorf("reading the history of %s: %w", e.st.Harness.Branch, err)
	}
	dirty, err := e.Repo.Dirty(ctx)
	if err != nil {
		return err
	}
	known := map[int]bool{}
	for _, r := range e.records {
		known[r.Iteration] = true
	}
	rebuilt := 0
	for i, c := range commits {
		if c.Trailers["Agent-Loop-Id"] != e.st.LoopID {
			continue
		}
		n, err := strconv.Atoi(c.Trailers["Agent-Loop-Iteration"])
		if err != nil || n < 1 || known[n] {
			continue
		}
		score, _ := strconv.ParseFloat(c.Trailers["Agent-Loop-Score"], 64)
		passed := c.Trailers["Agent-Loop-Check"] == "pass"
		rec := Record{Iteration: n, Started: c.Time, Commit: c.SHA, Check: CheckResult{Passed: passed}, Verdict: Verdict{Score: score,
			Explain: []string{"rebuilt from the commit's trailers after a crash: only the check result, the score and the diff size are known"}},
			Rejected: strings.HasPrefix(c.Trailers["Agent-Loop-Verdict"], "rejected")}
		fromCheckpoint := false
		if cp, err := e.Dir.ReadCheckpoint(n); err == nil && cp.Commit == c.SHA && cp.Iteration == n {
			// Killed after the checkpoint, before the state: the
			// checkpoint holds the whole iteration.
			rec, fromCheckpoint = recordFromCheckpoint(cp), true
		} else if c.SHA == head && len(dirty) == 0 {
			// The work tree is this commit: its diff from its parent
			// is its size (an iteration that changed nothing would look
			// like a stall to the judge).
			parent := e.st.Harness.BaseSHA
			if i > 0 {
				parent = commits[i-1].SHA
			}
			if d, err := e.Repo.Diff(ctx, parent); err == nil {
				rec.Stat = statOfDiff(d)
			}
			if d, err := e.Repo.Diff(ctx, e.st.Harness.BaseSHA); err == nil {
				c := changeOf(d)
				rec.FromStart = &c
			}
		}
		e.records = append(e.records, rec)
		e.judgeLatencies = append(e.judgeLatencies, 0)
		e.recordIteration(rec, rec.Check.Duration, 0)
		e.st.IterationHistory[len(e.st.IterationHistory)-1].Rebuilt = !fromCheckpoint
		known[n] = true
		rebuilt++
	}
	sort.SliceStable(e.records, func(i, j int) bool { return e.records[i].Iteration < e.records[j].Iteration })
	crashpoint.Hit("reconcile-rebuilt")
	e.st.Harness.HeadSHA = head
	if rebuilt > 0 {
		e.logf("resume: rebuilt %d iteration(s) the state had not recorded (from checkpoints or commit trailers)", rebuilt)
	}
	// Where the next iteration starts: the head, or, after a rejected
	// iteration under a reverting policy, the best iteration so far.
	target := head
	if n := len(e.records); n > 0 && e.records[n-1].Rejected && (e.spec.Policy.Regression == "revert" || e.spec.Policy.Regression == "human-gate") {
		target, _ = e.revertTarget()
	}
	if len(dirty) > 0 || target != head {
		n := e.lastIteration() + 1
		if len(dirty) > 0 {
			if d, err := e.Repo.Diff(ctx, head); err == nil && d != "" {
				_ = state.WriteFileAtomic(e.Dir.File(fmt.Sprintf("interrupted-iteration-%03d.patch", n)), []byte(d), 0o644)
			}
		}
		if err := e.Repo.ResetTo(ctx, target); err != nil {
			return fmt.Errorf("preparing the work tree for iteration %d: %w", n, err)
		}
		crashpoint.Hit("reconcile-reset")
		if len(dirty) > 0 {
			e.logf("resume: set aside the unfinished changes of iteration %d (saved as a patch); it runs again", n)
			if rs := e.st.Harness.Resumes; len(rs) > 0 {
				rs[len(rs)-1].SetAside = true
			}
		}
	}
	// A loop that passed but crashed before completing needs no new iteration.
	return e.save()
}

// finish publishes the best iteration, writes the final state and tells the
// observer. It never uses the (possibly cancelled) run context.
func (e *Engine) finish(stop stopReason) (Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := Outcome{Status: stop.status, StopReason: stop.reason, Iterations: e.lastIteration(), ConfigError: stop.configErr, Uncontained: stop.halt}
	best, reason := e.best()
	out.Best = best
	if stop.status == state.Completed && e.st.Status == state.Running {
		e.st.Status = state.Completing
		_ = e.save()
		crashpoint.Hit("completing-saved")
	}
	if stop.halt {
		e.logf("stopping without publishing anything: %s", stop.reason)
	}
	if !stop.halt && e.spec.Publish.Commit && e.st.Harness.Branch != "" && len(e.records) > 0 && stop.status != state.Paused {
		if err := e.publish(ctx, best, reason); err != nil {
			e.logf("publishing the best iteration failed: %v", err)
			if stop.status == state.Completed {
				stop.status, stop.kind = state.Failed, state.StopPublishFailed
				stop.reason += "; publishing failed: " + err.Error()
				out.Status, out.StopReason = stop.status, stop.reason
			}
		}
	}
	if u, ok := e.Repo.(Unstager); ok && !e.spec.Publish.Commit {
		if err := u.Unstage(ctx); err != nil {
			e.logf("the changes stay staged in the index: %v", err)
		}
	}
	for _, r := range e.records {
		if r.Iteration == best {
			out.BestSHA = r.Commit
		}
	}
	now := e.now().UTC().Truncate(time.Second)
	e.mu.Lock()
	if state.CanTransition(e.st.Status, stop.status) {
		e.st.Status = stop.status
	} else {
		e.st.Status = state.Failed
	}
	e.st.Harness.StopReason = stop.reason
	e.st.Harness.StopKind = stop.kind
	if stop.status.Terminal() {
		e.st.CompletedAt = &now
		e.st.DetectionEnabled = false
	}
	if stop.status == state.Paused || stop.status.Terminal() {
		e.st.PID = nil
	}
	if stop.configErr != nil || (stop.status == state.Failed && e.st.ErrorContext == nil && strings.Contains(stop.reason, "failed")) {
		e.st.ErrorContext = &state.ErrorContext{ErrorMessage: stop.reason, ErrorTimestamp: now}
	}
	e.mu.Unlock()
	e.updateBest(now)
	crashpoint.Hit("before-final-save")
	err := e.save()
	e.logf("%s: %s", e.st.Status, stop.reason)
	if !stop.halt {
		e.observe(ctx, Event{Kind: EventFinished, State: e.st, Outcome: &out})
	}
	return out, err
}

// publish makes the branch head's tree equal to the best iteration's tree:
// when the best is not the last iteration, a new commit says so (history
// stays honest). With no acceptable iteration, the starting tree is restored.
func (e *Engine) publish(ctx context.Context, best int, reason string) error {
	last := e.records[len(e.records)-1]
	target, label := e.st.Harness.BaseSHA, "no iteration qualified (every one failed its veto); restoring the starting tree"
	if e.mergedAt > 0 {
		// The branch has the target's commits since that merge: keep them.
		for _, r := range e.records {
			if r.Iteration == e.mergedAt {
				target, label = r.Commit, fmt.Sprintf("no iteration qualified since the merge in iteration %d; keeping its tree", e.mergedAt)
			}
		}
	}
	for _, r := range e.records {
		if r.Iteration == best {
			target, label = r.Commit, reason
		}
	}
	if best == last.Iteration || target == "" || target == last.Commit {
		e.push(ctx)
		return nil
	}
	// Published already (a resumed loop that crashed after publishing)?
	_, head, err := e.Repo.Head(ctx)
	if err != nil {
		return err
	}
	if head != last.Commit {
		if cs, err := e.Repo.History(ctx, e.st.Harness.Branch, last.Commit); err == nil && len(cs) > 0 && cs[len(cs)-1].Trailers["Agent-Loop-Best"] == strconv.Itoa(best) {
			return nil
		}
	}
	subject := fmt.Sprintf("agent-loop: publish iteration %d as the result", best)
	if best == 0 {
		subject = "agent-loop: restore the starting tree (no iteration qualified)"
	}
	cr, err := e.Repo.CommitTreeOf(ctx, target, CommitRequest{
		Subject:  subject,
		Body:     label + "\n\nThe tree of this commit equals the tree of " + short(target) + "; later iterations stay in the history above.\n",
		Trailers: []Trailer{{Key: "Agent-Loop-Id", Value: e.st.LoopID}, {Key: "Agent-Loop-Best", Value: strconv.Itoa(best)}},
	})
	if err != nil {
		return err
	}
	e.st.Harness.HeadSHA = cr.SHA
	e.logf("published iteration %d on %s (%s)", best, e.st.Harness.Branch, short(cr.SHA))
	e.push(ctx)
	return nil
}

// Tokens and cost of a loop so far.
func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for i := 0; i < len(s) && i < 4; i++ {
		if s[i]&0xC0 != 0x80 {
			return s[i:]
		}
	}
	return s
}

func capList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func round1(f float64) float64 { return float64(int64(f*10+sign(f)*0.5)) / 10 }
func round3(f float64) float64 { return float64(int64(f*1000+sign(f)*0.5)) / 1000 }
func sign(f float64) float64 {
	if f < 0 {
		return -1
	}
	return 1
}

func readFile(p string) string {
	b, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return ""
	}
	return string(b)
}

func symmetricDiff(a, b []string) []string {
	in := func(s []string, x string) bool {
		for _, y := range s {
			if y == x {
				return true
			}
		}
		return false
	}
	var out []string
	for _, x := range a {
		if !in(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !in(a, x) {
			out = append(out, x)
		}
	}
	return out
}

func intersect(a, b []string) []string {
	set := map[string]bool{}
	for _, x := range b {
		set[x] = true
	}
	var out []string
	for _, x := range a {
		if set[x] {
			out = append(out, x)
		}
	}
	return out
}

func sortStrings(s []string) { sort.Strings(s) }

// statOfDiff is the size of a unified diff as a DiffStat (used without
// commits, and for an iteration rebuilt from its commit): changeOf's.
func statOfDiff(d string) DiffStat {
	c := changeOf(d)
	st := DiffStat{Files: c.Files, Additions: c.Additions, Deletions: c.Deletions}
	for _, p := range c.Paths {
		st.Paths = append(st.Paths, p.Path)
	}
	return st
}
