package state

import "time"

// What the report (internal/report) reads beyond the seed fields. Every
// field is optional and additive: a state without them still loads and
// validates, and the report then leaves the matching line out rather than
// guess. Who fills what is listed on each type.

// StopKind says, as a closed vocabulary, why a loop stopped; the report
// words it. Harness.StopReason keeps the engine's free text for logs.
// Filled by the engine when it stops (loop.finish), by `abort`/`pause` and
// by the Action's post step (a cancelled run).
type StopKind string

const (
	StopPassed         StopKind = "passed"          // the check passed on an accepted iteration
	StopAlreadyPassing StopKind = "already-passing" // the check passed on the starting commit: 0 iterations
	StopMaxIterations  StopKind = "max-iterations"
	StopTimeout        StopKind = "timeout" // the wall time limit
	StopBudget         StopKind = "budget"  // the USD or token budget
	StopStalled        StopKind = "stalled" // the same failures, or no change, several times in a row
	StopCheatPolicy    StopKind = "cheat"   // a critical regression under --regression-policy fail
	StopHumanGate      StopKind = "human-gate"
	StopCancelled      StopKind = "cancelled" // SIGINT/SIGTERM or a cancelled workflow run: resumable
	StopPaused         StopKind = "paused"    // pause requested
	StopAborted        StopKind = "aborted"   // abort requested
	StopAgentError     StopKind = "agent-error"
	StopCrashed        StopKind = "crashed"
	StopPublishFailed  StopKind = "publish-failed"
)

// Change is the size of a change between two trees: for an iteration, its
// tree against the starting commit (IterationEntry.FromStart). It is the
// one source of every size the report shows. Filled by the engine from the
// staged diff against the starting commit (Repo.Stage's base diff).
type Change struct {
	Files     int           `json:"files"`
	Additions int           `json:"additions"`
	Deletions int           `json:"deletions"`
	Paths     []ChangedFile `json:"paths,omitempty"` // at most 50, largest first
}

// ChangedFile is one file of a Change.
type ChangedFile struct {
	Path      string `json:"path"`
	Status    string `json:"status,omitempty"` // added, modified, deleted, renamed
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
}

// HeldOut is the held-out check of one iteration (issue 12): the criterion
// re-run with the baseline's non-source files and the iteration's product
// source. Filled by the engine when it runs it.
type HeldOut struct {
	// Verdict is "pass" (the original tests pass with the agent's code
	// alone), "fail" (they do not: the pass depended on editing tests) or
	// "warning" (they do not, but the task asks to change tests).
	Verdict string `json:"verdict"`
	// Failed names the tests that fail with the original tests restored
	// (FailedCount when the names are not known).
	Failed      []string `json:"failed_tests,omitempty"`
	FailedCount int      `json:"failed_count,omitempty"`
	// Edits are the agent's changes to non-source files, in plain words.
	Edits []TestEdit `json:"test_edits,omitempty"`
}

// Held-out verdicts.
const (
	HeldOutPass    = "pass"
	HeldOutFail    = "fail"
	HeldOutWarning = "warning"
)

// TestEdit is one change of the agent to a test or to the check's own
// files: Path, the Test when one is named, and Change in plain words
// ("removed", "changed the expected value", "added a skip").
type TestEdit struct {
	Path   string `json:"path"`
	Test   string `json:"test,omitempty"`
	Change string `json:"change"`
}

// CriterionRun is one run of the completion command within an iteration,
// and why it ran. Filled by the engine's verifier calls.
type CriterionRun struct {
	// Purpose is "failing-first" (the tests that failed last time, alone),
	// "full" (the whole check), "confirm" (a pass run again) or
	// "held-out" (the original tests restored).
	Purpose string  `json:"purpose"`
	Passed  bool    `json:"passed"`
	Seconds float64 `json:"seconds"`
	Tests   int     `json:"tests,omitempty"` // how many tests it ran, when known
}

// Criterion run purposes.
const (
	RunFailingFirst = "failing-first"
	RunFull         = "full"
	RunConfirm      = "confirm"
	RunHeldOut      = "held-out"
)

// Resume records one time the loop went on from its saved state: after
// which iteration, why the earlier run had stopped (a StopKind:
// cancelled, crashed, paused, human-gate) and whether an unfinished
// iteration's changes were set aside. Filled by `resume` (app) and the
// Action when it resumes.
type Resume struct {
	At             time.Time `json:"at"`
	AfterIteration int       `json:"after_iteration"`
	Why            StopKind  `json:"why"`
	SetAside       bool      `json:"set_aside,omitempty"`
}

// ScoreWeights are seed 004's weights of the quality score parts (they add
// up to 100): the score is the sum of part*weight/100.
var ScoreWeights = QualityBreakdown{Validation: 30, Completeness: 25, Correctness: 25, Readability: 10, Efficiency: 10}
