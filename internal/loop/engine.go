package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aiwg/agent-loop/internal/crashpoint"
	"github.com/aiwg/agent-loop/internal/protected"
	"github.com/aiwg/agent-loop/internal/safefs"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// Tuning holds the engine's own constants, which are not parameters of a
// loop (the loop's settings are its Spec, in the state); tests shorten them.
// The zero value means the defaults.
type Tuning struct {
	// PublishMargin is kept from the wall timeout to publish the result
	// (default: a tenth of the timeout, at most 2 minutes).
	PublishMargin    time.Duration
	RateLimitRetries int           // default 5
	RateLimitBackoff time.Duration // default 5 s, doubled per retry
	FeedbackBytes    int           // prompt budget of the last check's output (default 8 KiB)
	HeartbeatEvery   time.Duration // default state.HeartbeatInterval
	ControlPoll      time.Duration // how often pause/abort requests are read (default 500 ms)
}

func (t *Tuning) defaults(timeout time.Duration) {
	if t.PublishMargin == 0 {
		t.PublishMargin = min(2*time.Minute, timeout/10)
	}
	if t.RateLimitRetries == 0 {
		t.RateLimitRetries = 5
	}
	if t.RateLimitBackoff == 0 {
		t.RateLimitBackoff = 5 * time.Second
	}
	if t.FeedbackBytes == 0 {
		t.FeedbackBytes = 8 << 10
	}
	if t.HeartbeatEvery == 0 {
		t.HeartbeatEvery = state.HeartbeatInterval
	}
	if t.ControlPoll == 0 {
		t.ControlPoll = 500 * time.Millisecond
	}
}

// EventKind names what an Observer is told.
type EventKind string

const (
	EventBaseline  EventKind = "baseline"
	EventIteration EventKind = "iteration" // an iteration finished and was recorded
	EventFinished  EventKind = "finished"
)

// Event is one thing the loop reports to its Observer.
type Event struct {
	Kind    EventKind
	State   *state.State
	Record  *Record
	Outcome *Outcome
}

// Observer is told about the loop's progress (the Action updates its PR
// comment and step summary from it). It must not block for long.
type Observer interface {
	Observe(ctx context.Context, ev Event)
}

// Outcome is how a loop ended.
type Outcome struct {
	Status     state.Status
	StopReason string
	Iterations int
	Best       int
	BestSHA    string
	// ConfigError is set when the loop stopped on a configuration problem
	// (missing credentials): exit code 2.
	ConfigError error
	// Uncontained is set when the loop stopped because processes of the
	// agent's code outlived their run (Uncontained): nothing was published
	// after it, and nothing may be.
	Uncontained bool
}

// Engine runs one loop.
type Engine struct {
	Agent    Agent
	Verifier Verifier
	// Planner decides an iteration's criterion runs (focused, full,
	// held-out, confirmation); nil: the criterion runs once through
	// Verifier. The baseline is always one run through Verifier.
	Planner  Planner
	Repo     Repo
	Judge    Judge
	Dir      state.Dir
	Registry *state.Store
	Observer Observer
	// Env is the filtered environment of the agent and the check.
	Env []string
	// Out receives the loop's progress lines; AgentOut additionally receives
	// the agent's and the check's output (the terminal unless --quiet).
	Out      io.Writer
	AgentOut io.Writer
	// Redact, when set, wraps every log and transcript file writer so that
	// secrets never reach the disk.
	Redact func(io.Writer) io.WriteCloser
	Now    func() time.Time
	Tuning Tuning
	// CommitWords words an iteration's commit: its subject and the value
	// of its Agent-Loop-Verdict trailer, from the regression events the
	// iteration records and its held-out check (app passes the report's
	// report.CommitWords, so a rejected iteration's commit says why in
	// the report's words). Nil: plain "check pass/fail" wording.
	CommitWords func(n int, passed, rejected bool, events []state.RegressionEvent, held *state.HeldOut) (subject, verdict string)

	spec           spec.Spec // the loop's, from the state: read, never changed
	st             *state.State
	records        []Record
	baseline       BaselineMetrics
	mu             sync.Mutex // guards st against the heartbeat goroutine
	pause          bool
	abort          bool
	analytics      *state.Analytics
	judgeLatencies []time.Duration
	// protect is the Spec's protected paths, compiled (nil: none).
	protect *protected.Set
	// pending is a merge of the target branch left to the next iteration;
	// mergedAt the last iteration whose commit is a merge (0: none).
	pending  *pendingMerge
	mergedAt int
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) logf(format string, args ...any) {
	if e.Out != nil {
		fmt.Fprintf(e.Out, "agent-loop: "+format+"\n", args...)
	}
}

// errInterrupted marks a run stopped by a signal.
var errInterrupted = errors.New("interrupted")

// Run runs (or resumes) the loop whose state st the caller created and
// registered, as its Spec (st.Harness.Spec) says. It returns when the loop
// stops; the state on disk is final.
func (e *Engine) Run(ctx context.Context, st *state.State) (Outcome, error) {
	e.spec = st.Harness.Spec.Clone()
	e.Tuning.defaults(e.spec.Limits.Timeout)
	e.st = st
	e.Dir.RemoveTemp() // left by writes a crash cut short; this process owns the loop now
	start := e.now()
	deadline := start.Add(e.spec.Limits.Timeout)
	var err error
	if e.analytics, err = e.Dir.LoadAnalytics(); err != nil {
		return Outcome{}, err
	}

	stopBeat := e.heartbeat()
	defer stopBeat()

	e.records = recordsFromState(st)
	e.mergedAt = mergedAtFromState(st)
	if len(e.spec.Publish.Protected) > 0 {
		if e.protect, err = protected.Compile(e.spec.Publish.Protected); err != nil {
			return Outcome{}, fmt.Errorf("the loop's protected paths: %w", err)
		}
	}
	// A loop stopped before its baseline was recorded (interrupted during
	// the baseline check, killed while starting) starts over.
	fresh := st.Harness.BaseSHA == "" || (st.Harness.Baseline == nil && len(st.IterationHistory) == 0)
	if fresh {
		out, done, err := e.begin(ctx)
		if err != nil || done {
			return out, err
		}
	} else {
		if err := e.reconcile(ctx); err != nil {
			return Outcome{}, err
		}
		// A loop that passed but stopped before completing (a crash, an
		// approved human gate) needs no further iteration.
		if n := len(e.records); n > 0 && e.records[n-1].Check.Passed && !e.records[n-1].Rejected {
			return e.finish(stopReason{kind: state.StopPassed, status: state.Completed, reason: fmt.Sprintf("the completion check passed on iteration %d", e.records[n-1].Iteration)})
		}
	}

	// The iterations: a plain bounded for.
	var stop stopReason
	for n := e.lastIteration() + 1; n <= e.spec.Limits.MaxIterations; n++ {
		if stop = e.beforeIteration(ctx, deadline); stop.set() {
			break
		}
		stop = e.iterate(ctx, n, deadline)
		if stop.status == state.Completed {
			// Before the result is published: the target branch's new
			// commits, merged (or left to the next iteration).
			stop = e.syncBase(ctx, n, deadline, stop)
		}
		if stop.set() {
			break
		}
	}
	if !stop.set() {
		stop = stopReason{kind: state.StopMaxIterations, status: state.Failed, reason: fmt.Sprintf("reached the maximum of %d iterations without passing the check", e.spec.Limits.MaxIterations)}
		if e.lastIteration() < e.spec.Limits.MaxIterations {
			stop.reason = fmt.Sprintf("stopped after iteration %d", e.lastIteration())
		}
	}
	return e.finish(stop)
}

// stopReason says why the loop stops and with which status.
type stopReason struct {
	status    state.Status
	kind      state.StopKind // why, as the report words it
	reason    string
	configErr error
	// halt: the agent's code could not be contained; publish nothing.
	halt bool
}

func (s stopReason) set() bool { return s.status != "" }

// begin records the starting point, runs the baseline check and starts the
// loop branch. done is true when the loop ended already (the criterion
// passes on the starting commit).
func (e *Engine) begin(ctx context.Context) (Outcome, bool, error) {
	// Quick git steps are not cut short by a signal: the loop stops at the
	// next check of ctx, with a consistent state.
	local := context.WithoutCancel(ctx)
	branch, sha, err := e.Repo.Head(local)
	if err != nil {
		return Outcome{}, true, err
	}
	e.st.Harness.OriginalBranch = branch
	e.st.Harness.BaseSHA = sha
	e.st.Harness.HeadSHA = sha
	e.logf("baseline: running %q on %s", e.spec.Criterion.Command, short(sha))
	check, err := e.runCheck(ctx, 0, time.Time{})
	if err != nil {
		return Outcome{}, true, err
	}
	if ctx.Err() != nil {
		out, err := e.finish(stopReason{kind: state.StopCancelled, status: state.Paused, reason: "interrupted during the baseline check"})
		return out, true, err
	}
	e.baseline, err = e.Judge.Baseline(ctx, e.Repo.Root(), check)
	if err != nil && ctx.Err() != nil {
		out, err := e.finish(stopReason{kind: state.StopCancelled, status: state.Paused, reason: "interrupted while measuring the baseline"})
		return out, true, err
	}
	if err != nil {
		return Outcome{}, true, fmt.Errorf("measuring the baseline: %w", err)
	}
	e.baseline.CapturedAt = e.now()
	e.recordBaseline(check)
	e.logf("baseline: check %s%s", passFail(check.Passed), testsNote(check.Tests))
	if check.Passed {
		out, err := e.finish(stopReason{kind: state.StopAlreadyPassing, status: state.Completed, reason: "the completion check already passes on the starting commit: nothing to do (0 iterations)"})
		return out, true, err
	}
	if e.spec.Publish.Commit {
		// The baseline and the user's branch are on disk before the loop
		// branch exists: a crash in between resumes by starting the branch
		// (reconcile) instead of mistaking the loop branch for the user's.
		if err := e.save(); err != nil {
			return Outcome{}, true, err
		}
		if err := e.Repo.StartBranch(local, e.spec.Publish.Branch, sha); err != nil {
			return Outcome{}, true, err
		}
		e.st.Harness.Branch = e.spec.Publish.Branch
		crashpoint.Hit("branch-started")
		e.logf("working on branch %s (your branch %s does not move)", e.spec.Publish.Branch, orDetached(branch))
	}
	if err := e.save(); err != nil {
		return Outcome{}, true, err
	}
	e.observe(ctx, Event{Kind: EventBaseline, State: e.st})
	return Outcome{}, false, nil
}

func orDetached(b string) string {
	if b == "" {
		return "(detached HEAD)"
	}
	return b
}

// beforeIteration applies the stop rules that are checked between iterations.
func (e *Engine) beforeIteration(ctx context.Context, deadline time.Time) stopReason {
	if ctx.Err() != nil {
		return stopReason{kind: state.StopCancelled, status: state.Paused, reason: "interrupted by a signal; resume with `agent-loop resume " + e.st.LoopID + "`"}
	}
	switch e.Dir.TakeControl() {
	case "abort":
		e.Dir.ClearControl()
		return stopReason{kind: state.StopAborted, status: state.Aborted, reason: "aborted by request"}
	case "pause":
		e.Dir.ClearControl()
		return stopReason{kind: state.StopPaused, status: state.Paused, reason: "paused by request; continue with `agent-loop resume " + e.st.LoopID + "`"}
	}
	if e.pause {
		return stopReason{kind: state.StopPaused, status: state.Paused, reason: "paused by request; continue with `agent-loop resume " + e.st.LoopID + "`"}
	}
	if left := deadline.Sub(e.now()) - e.Tuning.PublishMargin; left < 10*time.Second {
		return stopReason{kind: state.StopTimeout, status: state.Failed, reason: fmt.Sprintf("wall timeout of %s reached", e.spec.Limits.Timeout)}
	}
	if e.spec.Limits.BudgetUSD > 0 && e.st.Metrics.TotalCostUSD >= e.spec.Limits.BudgetUSD {
		return stopReason{kind: state.StopBudget, status: state.Failed, reason: fmt.Sprintf("budget of $%.2f spent ($%.2f)", e.spec.Limits.BudgetUSD, e.st.Metrics.TotalCostUSD)}
	}
	if e.spec.Limits.MaxTokens > 0 && e.st.Metrics.TotalTokens >= e.spec.Limits.MaxTokens {
		return stopReason{kind: state.StopBudget, status: state.Failed, reason: fmt.Sprintf("token budget of %d spent (%d)", e.spec.Limits.MaxTokens, e.st.Metrics.TotalTokens)}
	}
	if g := e.st.Harness.PendingGate; g != nil && g.Decision == "" {
		return stopReason{kind: state.StopHumanGate, status: state.Paused, reason: "waiting for a person to approve or reject iteration " + strconv.Itoa(g.Iteration)}
	}
	return stopReason{}
}

func (e *Engine) lastIteration() int {
	if len(e.records) == 0 {
		return 0
	}
	return e.records[len(e.records)-1].Iteration
}

// iterate runs iteration n.
func (e *Engine) iterate(ctx context.Context, n int, deadline time.Time) stopReason {
	crashpoint.Hit("iteration-start")
	itStart := e.now()
	guide := e.guide(n)
	if guide.Stall != "" {
		return stopReason{kind: state.StopStalled, status: state.Failed, reason: "stalled: " + guide.Stall}
	}
	prompt := BuildPrompt(PromptInput{
		Task: e.spec.Task, Criterion: e.spec.Criterion,
		Iteration: n, MaxIterations: e.spec.Limits.MaxIterations, Records: e.records,
		Baseline: e.baseline.Check, Guidance: guide, FeedbackBytes: e.Tuning.FeedbackBytes,
		Context: e.spec.Context, Merge: e.pending.note(),
	})
	promptFile := e.Dir.File("prompt.md")
	lastOut := e.Dir.File("last-output.txt")
	if err := state.WriteFileReplace(promptFile, []byte(prompt), 0o644); err != nil {
		return e.fail(err)
	}
	last := ""
	if len(e.records) > 0 {
		last = e.records[len(e.records)-1].Check.Output
	}
	if err := state.WriteFileReplace(lastOut, []byte(last), 0o644); err != nil {
		return e.fail(err)
	}

	logf, err := e.openLog(n)
	if err != nil {
		return e.fail(err)
	}
	defer logf.Close()
	agentOut, endAgentOut := e.teeAgent(logf)
	defer endAgentOut()
	if err := os.MkdirAll(filepath.Dir(e.Dir.TranscriptPath(n)), 0o755); err != nil {
		return e.fail(err)
	}
	tf, err := safefs.OpenRewrite(e.Dir.TranscriptPath(n))
	if err != nil {
		return e.fail(err)
	}
	defer tf.Close()
	transcript := e.redacted(tf)
	defer transcript.Close()

	e.logf("iteration %d/%d: running %s", n, e.spec.Limits.MaxIterations, e.Agent.Name())
	itCtx, cancelIt := context.WithCancel(ctx)
	defer cancelIt()
	stopWatch := e.watchControl(itCtx, cancelIt)
	agentTimeout := deadline.Sub(e.now()) - e.Tuning.PublishMargin
	if e.spec.Limits.IterationTimeout > 0 && e.spec.Limits.IterationTimeout < agentTimeout {
		agentTimeout = e.spec.Limits.IterationTimeout
	}
	req := AgentRequest{
		LoopID: e.st.LoopID, Iteration: n, Task: e.spec.Task, Criterion: e.spec.Criterion.Command,
		Prompt: prompt, PromptFile: promptFile, LastOutputFile: lastOut, Dir: e.Repo.Root(),
		Env: e.Env, Output: agentOut, Transcript: transcript,
		Timeout: agentTimeout, IdleTimeout: e.spec.Limits.IdleTimeout, Model: e.spec.Agent.Model, MaxTurns: e.spec.Agent.MaxTurns,
	}
	if e.spec.Limits.BudgetUSD > 0 {
		req.BudgetUSD = max(e.spec.Limits.BudgetUSD-e.st.Metrics.TotalCostUSD, 0.01)
	}
	ar, retries, err := e.runAgent(itCtx, req)
	// The agent's output ends here: its kept tail goes to the log before
	// the check writes to the same file.
	endAgentOut()
	_ = logf.Close()
	aborted := stopWatch()
	crashpoint.Hit("agent-done")
	if err != nil {
		return e.fail(fmt.Errorf("running the agent: %w", err))
	}
	if aborted {
		return e.interrupted(n, stopReason{kind: state.StopAborted, status: state.Aborted, reason: "aborted by request during iteration " + strconv.Itoa(n)})
	}
	if ctx.Err() != nil {
		return e.interrupted(n, stopReason{kind: state.StopCancelled, status: state.Paused, reason: fmt.Sprintf("interrupted by a signal during iteration %d; resume with `agent-loop resume %s`", n, e.st.LoopID)})
	}
	switch ar.Class {
	case ClassAuth:
		err := fmt.Errorf("the %s agent cannot authenticate: %s", e.Agent.Name(), ar.Detail)
		return stopReason{kind: state.StopAgentError, status: state.Failed, reason: err.Error(), configErr: err}
	case ClassRateLimit:
		return stopReason{kind: state.StopAgentError, status: state.Failed, reason: fmt.Sprintf("the provider kept rate-limiting after %d retries: %s", retries, ar.Detail)}
	}
	e.logf("iteration %d: agent finished in %s%s", n, ar.Duration.Round(time.Second), agentNote(ar))
	checkStart := e.now()
	po, err := e.checkIteration(ctx, n, deadline)
	crashpoint.Hit("check-done")
	if err != nil {
		return e.fail(err)
	}
	if ctx.Err() != nil {
		return e.interrupted(n, stopReason{kind: state.StopCancelled, status: state.Paused, reason: fmt.Sprintf("interrupted by a signal during the check of iteration %d", n)})
	}
	checkDur := e.now().Sub(checkStart)

	// The diffs, the judge and the commit are quick and local: a signal
	// arriving meanwhile must not fail the iteration; the push stays
	// cancellable, and the loop pauses before the next iteration. The work
	// tree is staged once, after the check, so the judge sees everything
	// the commit will hold (files the check wrote included).
	local := context.WithoutCancel(ctx)
	prevSHA := e.st.Harness.BaseSHA
	if len(e.records) > 0 && e.records[len(e.records)-1].Commit != "" {
		prevSHA = e.records[len(e.records)-1].Commit
	}
	diffs, err := e.Repo.Stage(local, e.st.Harness.BaseSHA, prevSHA)
	if err != nil {
		return e.fail(err)
	}
	// The agent's changes to protected paths are undone; the check then
	// runs again on what will be judged and committed.
	reverted, err := e.revertProtected(local)
	if err != nil {
		return e.fail(err)
	}
	if len(reverted) > 0 {
		e.logf("iteration %d: %s", n, protected.Summary(reverted))
		checkStart = e.now()
		if po, err = e.checkIteration(ctx, n, deadline); err != nil {
			return e.fail(err)
		}
		if ctx.Err() != nil {
			return e.interrupted(n, stopReason{kind: state.StopCancelled, status: state.Paused, reason: fmt.Sprintf("interrupted by a signal during the check of iteration %d", n)})
		}
		checkDur = e.now().Sub(checkStart)
		if diffs, err = e.Repo.Stage(local, e.st.Harness.BaseSHA, prevSHA); err != nil {
			return e.fail(err)
		}
	}
	// A merge left to this iteration: its commit is the merge commit,
	// unless a conflict marker remains (then the merge is undone).
	undone, err := e.finishMerge(local, n)
	if err != nil {
		return e.fail(err)
	}
	if undone != "" {
		e.logf("iteration %d: %s", n, undone)
		po.Check.Passed = false
		po.Check.Output = strings.TrimRight(po.Check.Output, "\n") + "\n\nagent-loop: " + undone + "\n"
		if diffs, err = e.Repo.Stage(local, e.st.Harness.BaseSHA, prevSHA); err != nil {
			return e.fail(err)
		}
	}
	merging := e.pending != nil
	baseDiff, stepDiff := diffs[0], diffs[1]
	// A pass is settled on the staged change: the held-out check of the
	// original tests, the confirmation.
	settleStart := e.now()
	ran, err := e.settleIteration(ctx, n, deadline, &po)
	if ran && ctx.Err() != nil {
		return e.interrupted(n, stopReason{kind: state.StopCancelled, status: state.Paused, reason: fmt.Sprintf("interrupted by a signal during the check of iteration %d", n)})
	}
	if err != nil {
		return e.fail(err)
	}
	checkDur += e.now().Sub(settleStart)
	check := po.Check

	judgeStart := time.Now()
	verdict, err := e.Judge.Assess(local, JudgeInput{
		Iteration: n, Criterion: e.spec.Criterion.Command, Baseline: e.baseline,
		BaseDiff: baseDiff, StepDiff: stepDiff, Check: check, Agent: ar, History: e.records, HeldOut: po.HeldOut,
	})
	if err != nil {
		return e.fail(fmt.Errorf("judging iteration %d: %w", n, err))
	}
	e.judgeLatencies = append(e.judgeLatencies, time.Since(judgeStart))

	fromStart := changeOf(baseDiff)
	rec := Record{
		Iteration: n, Started: itStart, Agent: ar, Check: check, Verdict: verdict,
		Fingerprint: testreport.Fingerprint(check.Tests, check.Output),
		Rejected:    verdict.Critical() || e.gated(po.HeldOut), Level: guide.Level, FromStart: &fromStart,
		CriterionRuns: po.Runs, HeldOut: heldOutEntry(po.HeldOut, verdict), Reverted: reverted,
	}
	waitPush := func() bool { return false }
	if e.spec.Publish.Commit {
		crashpoint.Hit("before-commit")
		subject, verdictWords := e.commitWords(rec)
		commit := e.Repo.Commit
		if m, _ := e.mergeTarget(); merging && m != nil {
			commit = m.CommitMerge // the pending merge's commit
		}
		cr, err := commit(local, CommitRequest{
			Subject: subject,
			Body:    commitBody(e.spec.Task, rec),
			Trailers: []Trailer{
				{Key: "Agent-Loop-Id", Value: e.st.LoopID},
				{Key: "Agent-Loop-Iteration", Value: strconv.Itoa(n)},
				{Key: "Agent-Loop-Check", Value: passFail(check.Passed)},
				{Key: "Agent-Loop-Score", Value: strconv.FormatFloat(verdict.Score, 'f', 0, 64)},
				{Key: "Agent-Loop-Verdict", Value: verdictWords},
			},
			Staged: true,
		})
		if err != nil {
			return e.fail(fmt.Errorf("committing iteration %d: %w", n, err))
		}
		rec.Commit, rec.Stat = cr.SHA, cr.Stat
		e.st.Harness.HeadSHA = cr.SHA
		if merging {
			e.mergeCommitted(n, cr.SHA)
		}
		crashpoint.Hit("after-commit")
		if len(cr.Excluded) > 0 {
			e.logf("iteration %d: kept out of the commit (the token cannot push them): %s", n, strings.Join(cr.Excluded, ", "))
		}
		// The push (a network round trip) runs while the checkpoint,
		// the analytics and the state are written; it is waited for
		// before anyone is told of the iteration.
		waitPush = e.startPush(ctx)
		rec.Excluded = cr.Excluded
		if len(cr.Excluded) > 0 {
			c := changeWithout(fromStart, cr.Excluded)
			rec.FromStart = &c
		}
	} else {
		rec.Stat = statOfDiff(baseDiff)
	}
	rec.Duration = e.now().Sub(itStart)
	e.records = append(e.records, rec)
	e.recordIteration(rec, checkDur, retries)
	crashpoint.Hit("before-state-save")
	if err := e.save(); err != nil {
		waitPush()
		return e.fail(err)
	}
	crashpoint.Hit("after-state-save")
	if waitPush() {
		// The failure belongs in the state too.
		if err := e.save(); err != nil {
			return e.fail(err)
		}
	}
	e.logf("iteration %d: check %s%s, score %.0f%s%s%s", n, passFail(check.Passed), testsNote(check.Tests), verdict.Score, regressionNote(verdict),
		heldOutNote(po.HeldOut), runsNote(po.Runs))
	e.observe(ctx, Event{Kind: EventIteration, State: e.st, Record: &e.records[len(e.records)-1]})

	if check.Passed && !rec.Rejected {
		return stopReason{kind: state.StopPassed, status: state.Completed, reason: fmt.Sprintf("the completion check passed on iteration %d", n)}
	}
	if rec.Rejected {
		if s := e.applyPolicy(ctx, rec); s.set() {
			return s
		}
	}
	return stopReason{}
}

// runAgent runs the agent, retrying rate limits with backoff and jitter; they
// do not count as iterations.
func (e *Engine) runAgent(ctx context.Context, req AgentRequest) (AgentResult, int, error) {
	retries := 0
	for {
		ar, err := e.Agent.Run(ctx, req)
		if err != nil || ar.Class != ClassRateLimit || retries >= e.Tuning.RateLimitRetries || ctx.Err() != nil {
			return ar, retries, err
		}
		retries++
		wait := e.Tuning.RateLimitBackoff << (retries - 1)
		wait = min(wait, 2*time.Minute)
		wait += time.Duration(rand.Int64N(int64(wait)/2 + 1))
		e.logf("iteration %d: rate limited (%s); retrying in %s (%d/%d)", req.Iteration, ar.Detail, wait.Round(time.Second), retries, e.Tuning.RateLimitRetries)
		select {
		case <-ctx.Done():
			return ar, retries, nil
		case <-time.After(wait):
		}
	}
}

// applyPolicy handles an iteration vetoed by a critical regression.
func (e *Engine) applyPolicy(ctx context.Context, rec Record) stopReason {
	types := regressionTypes(rec.Verdict)
	rc := state.Recovery{
		RecoveryID: fmt.Sprintf("rec-%03d", rec.Iteration), Timestamp: e.now().UTC().Truncate(time.Second),
		Iteration: rec.Iteration, Trigger: "regression_detected: " + strings.Join(types, ", "),
	}
	now := rc.Timestamp
	rc.ProtocolSteps.Pause = &state.PauseStep{ExecutedAt: now, Actions: []string{"iteration " + strconv.Itoa(rec.Iteration) + " rejected: it cannot complete the loop nor be published"}}
	rc.ProtocolSteps.Diagnose = &state.DiagnoseStep{ExecutedAt: now, RootCause: diagnose(rec.Verdict), Confidence: 0.9}
	outcome := "escalated"
	var stop stopReason
	switch e.spec.Policy.Regression {
	case "revert":
		target, label := e.revertTarget()
		changes := []string{"work tree reset to " + label, "next prompt names the rejected change and forbids it"}
		if !e.spec.Publish.Commit && target == e.st.Harness.BaseSHA && e.st.Harness.Baseline != nil {
			// Without commits, resetting would discard the user's own
			// uncommitted changes: warn instead.
			changes = []string{"not reset (--no-commit): the next prompt names the rejected change"}
		} else if err := e.Repo.ResetTo(ctx, target); err != nil {
			return e.fail(fmt.Errorf("reverting iteration %d: %w", rec.Iteration, err))
		}
		rc.ProtocolSteps.Adapt = &state.AdaptStep{ExecutedAt: now, Strategy: "revert to " + label + " and retry", ChangesMade: changes}
		rc.ProtocolSteps.Retry = &state.RetryStep{ExecutedAt: now, RetryIteration: rec.Iteration + 1}
		outcome = "success"
		e.logf("iteration %d rejected (%s): reverted the work tree to %s", rec.Iteration, strings.Join(types, ", "), label)
	case "warn":
		rc.ProtocolSteps.Adapt = &state.AdaptStep{ExecutedAt: now, Strategy: "warn and continue", ChangesMade: []string{"next prompt names the rejected change"}}
		rc.ProtocolSteps.Retry = &state.RetryStep{ExecutedAt: now, RetryIteration: rec.Iteration + 1}
		outcome = "success"
	case "fail":
		rc.ProtocolSteps.Escalate = &state.EscalateStep{ExecutedAt: now, Reason: "regression policy fail: the loop stops at the first critical regression"}
		outcome = "failed"
		stop = stopReason{kind: state.StopCheatPolicy, status: state.Failed, reason: fmt.Sprintf("iteration %d cheated (%s) and the regression policy is fail", rec.Iteration, strings.Join(types, ", "))}
	case "human-gate":
		rc.ProtocolSteps.Escalate = &state.EscalateStep{ExecutedAt: now, Reason: "critical regression: a person must approve or reject iteration " + strconv.Itoa(rec.Iteration)}
		e.st.Harness.PendingGate = &state.Gate{Iteration: rec.Iteration, Reason: strings.Join(types, ", ")}
		stop = stopReason{kind: state.StopHumanGate, status: state.Paused, reason: fmt.Sprintf("iteration %d needs a human decision (%s): approve or reject, then resume", rec.Iteration, strings.Join(types, ", "))}
		for i := range e.st.RegressionEvents {
			if e.st.RegressionEvents[i].Iteration == rec.Iteration {
				e.st.RegressionEvents[i].HumanGateInvoked = true
			}
		}
	}
	rc.Outcome = outcome
	e.st.RecoveryAttempts++
	e.st.RecoveryHistory = append(e.st.RecoveryHistory, rc)
	for i := range e.st.RegressionEvents {
		if e.st.RegressionEvents[i].Iteration == rec.Iteration {
			e.st.RegressionEvents[i].RecoveryProtocolInvoked = true
			o := map[string]string{"success": "success", "failed": "failed", "escalated": "escalated"}[outcome]
			e.st.RegressionEvents[i].RecoveryOutcome = &o
		}
	}
	if n := len(e.st.IterationHistory); n > 0 {
		e.st.IterationHistory[n-1].RecoveryAttempted = true
	}
	if err := e.save(); err != nil {
		return e.fail(err)
	}
	return stop
}

// revertTarget is the commit the work tree goes back to after a rejected
// iteration: the best iteration so far, or the starting commit.
func (e *Engine) revertTarget() (string, string) {
	if best, _ := e.best(); best > 0 {
		for _, r := range e.records {
			if r.Iteration == best && r.Commit != "" {
				return r.Commit, fmt.Sprintf("iteration %d (the best so far)", best)
			}
		}
	}
	return e.st.Harness.BaseSHA, "the starting commit"
}

func diagnose(v Verdict) string {
	var parts []string
	for _, r := range v.Regressions {
		if r.Severity == "critical" {
			parts = append(parts, r.Type+": "+r.Summary)
		}
	}
	if len(parts) == 0 {
		// Held for a person: the original tests fail without the agent's
		// test edits, and the task asks for test edits.
		for _, r := range v.Regressions {
			if r.Severity == "high" {
				parts = append(parts, r.Type+": "+r.Summary)
			}
		}
		return "The check passes only with the agent's test edits, which the task asks for: " + strings.Join(parts, "; ")
	}
	return "The agent made the check easier instead of fixing the code: " + strings.Join(parts, "; ")
}

// interrupted handles an iteration stopped before it was recorded: the
// agent's partial work is saved as a patch (nothing is lost) and stays in the
// work tree; a resume discards it from the tree and redoes the iteration.
func (e *Engine) interrupted(n int, s stopReason) stopReason {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if d, err := e.Repo.Diff(ctx, e.headSHA()); err == nil && d != "" {
		p := e.Dir.File(fmt.Sprintf("interrupted-iteration-%03d.patch", n))
		if state.WriteFileAtomic(p, []byte(d), 0o644) == nil {
			s.reason += fmt.Sprintf(" (its partial changes are saved in %s)", e.Dir.Rel(filepath.Base(p)))
		}
	}
	return s
}

func (e *Engine) headSHA() string {
	if e.st.Harness.HeadSHA != "" {
		return e.st.Harness.HeadSHA
	}
	return e.st.Harness.BaseSHA
}

func (e *Engine) fail(err error) stopReason {
	e.mu.Lock()
	e.st.ErrorContext = &state.ErrorContext{ErrorMessage: err.Error(), ErrorTimestamp: e.now().UTC().Truncate(time.Second)}
	e.mu.Unlock()
	var u Uncontained
	halt := errors.As(err, &u) && u.Uncontained()
	return stopReason{kind: state.StopError, status: state.Failed, reason: err.Error(), halt: halt}
}

// guide asks the judge for the next iteration's reinforcement and records a
// level change.
func (e *Engine) guide(n int) Guidance {
	cur := Guidance{Level: e.st.ReinforcementLevel}
	g := e.Judge.Guide(e.records, cur)
	if g.Level == "" {
		g.Level = cur.Level
	}
	if g.Level != cur.Level {
		e.st.ReinforcementHistory = append(e.st.ReinforcementHistory, state.ReinforcementChange{
			Timestamp: e.now().UTC().Truncate(time.Second), Iteration: n, FromLevel: cur.Level, ToLevel: g.Level, Reason: g.Reason,
		})
		e.st.ReinforcementLevel = g.Level
		e.logf("iteration %d: reinforcement %s -> %s (%s)", n, cur.Level, g.Level, g.Reason)
	}
	return g
}

// watchControl polls the control file while an iteration runs: an abort
// request cancels the iteration at once, a pause request lets it finish.
// The returned function stops the watcher and reports whether it aborted.
func (e *Engine) watchControl(ctx context.Context, cancel context.CancelFunc) func() bool {
	done := make(chan struct{})
	var aborted bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(e.Tuning.ControlPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				switch e.Dir.TakeControl() {
				case "abort":
					e.Dir.ClearControl()
					aborted = true
					cancel()
					return
				case "pause":
					e.Dir.ClearControl()
					e.mu.Lock()
					e.pause = true
					e.mu.Unlock()
				}
			}
		}
	}()
	return func() bool {
		close(done)
		wg.Wait()
		return aborted
	}
}

// heartbeat keeps the registry's last_active fresh while the loop runs.
func (e *Engine) heartbeat() func() {
	if e.Registry == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(e.Tuning.HeartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				e.mu.Lock()
				cp := *e.st
				e.mu.Unlock()
				_ = e.Registry.Sync(&cp)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (e *Engine) observe(ctx context.Context, ev Event) {
	if e.Observer != nil {
		e.Observer.Observe(ctx, ev)
	}
}

// openLog opens logs/iteration-NNN.log for appending, redacted and bounded
// (headTail: the first and last logHead/logTail bytes of what is written
// through this writer).
func (e *Engine) openLog(n int) (io.WriteCloser, error) {
	p := e.Dir.LogPath(n)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	// Never through a symlink, never a FIFO: the loop directory is the
	// harness's, but a log is never worth following a link for.
	f, err := safefs.OpenLog(p)
	if err != nil {
		return nil, err
	}
	bound := newHeadTail(f, logHead, logTail)
	red := e.redacted(bound)
	return &closeChain{Writer: red, closers: []io.Closer{red, bound, f}}, nil
}

func (e *Engine) redacted(w io.Writer) io.WriteCloser {
	if e.Redact != nil {
		return e.Redact(w)
	}
	return nopCloser{w}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// closeChain writes to Writer and closes each closer in order: the
// redacting writer (flushing it), the bound (writing its tail), the file.
type closeChain struct {
	io.Writer
	closers []io.Closer
}

func (c *closeChain) Close() error {
	var first error
	for _, cl := range c.closers {
		if err := cl.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// teeAgent sends agent/check output to the iteration log and, unless quiet,
// to the live log and the terminal (AgentOut), each bounded: AgentOut gets
// the first and last liveHead/liveTail bytes, after redaction. The
// returned function writes the kept tail; call it when the output ends.
func (e *Engine) teeAgent(log io.Writer) (io.Writer, func()) {
	if e.AgentOut == nil {
		return log, func() {}
	}
	bound := newHeadTail(e.AgentOut, liveHead, liveTail)
	red := e.redacted(bound)
	return io.MultiWriter(log, red), func() {
		_ = red.Close()
		_ = bound.Close()
	}
}

func (e *Engine) push(ctx context.Context) { e.startPush(ctx)() }

// startPush pushes the loop branch (when pushing is on) in the background.
// The returned function waits for the push and records a failure in the
// state; it reports whether there was one. Nothing else may use the
// repository or the state's push errors until it has been called.
func (e *Engine) startPush(ctx context.Context) func() bool {
	p, ok := e.Repo.(Pusher)
	if !e.spec.Publish.Push || !ok {
		return func() bool { return false }
	}
	done := make(chan error, 1)
	go func() {
		crashpoint.Hit("push")
		err := p.Push(ctx, e.spec.Publish.Branch)
		crashpoint.Hit("after-push")
		done <- err
	}()
	return sync.OnceValue(func() bool {
		err := <-done
		if err == nil {
			return false
		}
		msg := fmt.Sprintf("%s: push failed: %v", e.now().UTC().Format(time.RFC3339), err)
		e.mu.Lock()
		e.st.Harness.PushErrors = append(e.st.Harness.PushErrors, msg)
		e.mu.Unlock()
		e.logf("push of %s failed (the commit is kept locally and pushed again later): %v", e.spec.Publish.Branch, err)
		return true
	})
}

func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "fail"
}

func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}

func testsNote(t testreport.Summary) string {
	if !t.Known {
		return ""
	}
	return fmt.Sprintf(" (%d passed, %d failed, %d skipped)", t.Passed, t.Failed, t.Skipped)
}

func agentNote(ar AgentResult) string {
	var parts []string
	if ar.Class != ClassNone {
		parts = append(parts, string(ar.Class))
	}
	if ar.Tokens() > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens", ar.Tokens()))
	}
	if ar.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", ar.CostUSD))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func regressionNote(v Verdict) string {
	if len(v.Regressions) == 0 {
		return ""
	}
	return "; regressions: " + strings.Join(regressionTypes(v), ", ")
}

func regressionTypes(v Verdict) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range v.Regressions {
		k := r.Type + " (" + r.Severity + ")"
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// commitWords is the subject and verdict trailer of r's commit. The
// held-out check is not passed yet: the engine does not run it here (when
// it does, its verdict words a rejection it caused: "passed only with
// edited tests").
func (e *Engine) commitWords(r Record) (string, string) {
	if e.CommitWords != nil {
		return e.CommitWords(r.Iteration, r.Check.Passed, r.Rejected, regressionEvents(r, e.now()), nil)
	}
	verdict := passFail(r.Check.Passed)
	if r.Rejected {
		verdict = "rejected"
	}
	return fmt.Sprintf("agent-loop: iteration %d (%s)", r.Iteration, map[string]string{"pass": "check pass", "fail": "check fail", "rejected": "rejected"}[verdict]), verdict
}

func commitBody(task string, r Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task: %s\n", oneLine(task, 200))
	if r.Check.Tests.Known {
		fmt.Fprintf(&b, "Tests: %d passed, %d failed, %d skipped\n", r.Check.Tests.Passed, r.Check.Tests.Failed, r.Check.Tests.Skipped)
	}
	for _, g := range r.Verdict.Regressions {
		fmt.Fprintf(&b, "Regression: %s (%s): %s\n", g.Type, g.Severity, oneLine(g.Summary, 160))
	}
	if r.Rejected {
		b.WriteString("Rejected: a critical regression vetoes this iteration.\n")
	}
	return b.String()
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}
