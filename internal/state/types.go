// Package state owns everything agent-loop keeps on disk under .aiwg/ralph/:
// the per-loop state.json (seed 000 with seed 004's persistence extension),
// the multi-loop registry with its lock (seed 003), checkpoints, analytics,
// logs and the legacy single-loop migration. Every file is written
// atomically (temporary file, fsync, rename), so a killed harness never
// leaves a half-written file behind.
package state

import (
	"time"

	"github.com/aiwg/agent-loop/internal/spec"
)

// Version is the state and registry schema version written.
const Version = "2.0.0"

// Status is a loop status (seed 000).
type Status string

const (
	Running    Status = "running"
	Paused     Status = "paused"
	Completing Status = "completing"
	Completed  Status = "completed"
	Failed     Status = "failed"
	Aborted    Status = "aborted"
	Crashed    Status = "crashed"
)

// transitions are the schema's allowed status changes (x-state-transitions).
var transitions = map[Status][]Status{
	Running:    {Paused, Completing, Aborted, Crashed, Failed},
	Paused:     {Running, Aborted},
	Completing: {Completed, Failed, Crashed},
}

// CanTransition reports whether the schema allows from -> to. One exception
// is made, on purpose: a crashed loop may be resumed (crashed -> running) by
// `agent-loop resume`, because the process that crashed is not the one that
// resumes; the state then records recovery_attempted in error_context.
func CanTransition(from, to Status) bool {
	if from == to {
		return true
	}
	if from == Crashed && to == Running {
		return true
	}
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Terminal reports whether a status ends a loop.
func (s Status) Terminal() bool {
	return s == Completed || s == Failed || s == Aborted
}

// Active reports whether a loop with this status occupies a registry slot.
func (s Status) Active() bool {
	return s == Running || s == Paused || s == Completing || s == Crashed
}

// State is .aiwg/ralph/loops/<loop_id>/state.json.
type State struct {
	Version            string        `json:"version"`
	LoopID             string        `json:"loop_id"`
	Status             Status        `json:"status"`
	Iteration          int           `json:"iteration"`
	Task               string        `json:"task"`
	CompletionCriteria string        `json:"completion_criteria"`
	StartedAt          time.Time     `json:"started_at"`
	LastUpdated        time.Time     `json:"last_updated"`
	CompletedAt        *time.Time    `json:"completed_at"`
	Owner              string        `json:"owner,omitempty"`
	PID                *int          `json:"pid"`
	WorkingDirectory   string        `json:"working_directory"`
	Configuration      Configuration `json:"configuration"`
	Progress           Progress      `json:"progress"`
	Metrics            Metrics       `json:"metrics"`
	LastCheckpoint     *string       `json:"last_checkpoint"`
	ErrorContext       *ErrorContext `json:"error_context"`

	// Seed 004, the persistence extension.
	BaselineMetrics      *BaselineMetrics      `json:"baseline_metrics,omitempty"`
	IterationHistory     []IterationEntry      `json:"iteration_history"`
	BestIteration        *BestIteration        `json:"best_iteration"`
	RegressionEvents     []RegressionEvent     `json:"regression_events"`
	ReinforcementLevel   string                `json:"reinforcement_level"`
	ReinforcementHistory []ReinforcementChange `json:"reinforcement_history"`
	RecoveryAttempts     int                   `json:"recovery_attempts"`
	RecoveryHistory      []Recovery            `json:"recovery_history"`
	DetectionEnabled     bool                  `json:"detection_enabled"`
	DetectedPatterns     []DetectedPattern     `json:"detected_patterns"`
	PersistenceMetrics   *PersistenceMetrics   `json:"persistence_metrics,omitempty"`

	// Harness is agent-loop's own extension: what the seeds do not name but a
	// resume needs (branch, base commit, provider, stop reason).
	Harness Harness `json:"agent_loop"`
}

// Configuration is seed 000's LoopConfiguration.
type Configuration struct {
	MaxIterations      int    `json:"max_iterations"`
	TimeoutMinutes     *int   `json:"timeout_minutes"`
	Interactive        bool   `json:"interactive"`
	AutoTest           bool   `json:"auto_test"`
	CheckpointInterval int    `json:"checkpoint_interval"`
	ExecutionMode      string `json:"execution_mode"`
}

// Check is one completion check (seed 000 ProgressTracking).
type Check struct {
	Iteration int       `json:"iteration"`
	Timestamp time.Time `json:"timestamp"`
	Passed    bool      `json:"passed"`
	Output    string    `json:"output"`
}

// Progress is seed 000's ProgressTracking.
type Progress struct {
	CompletionChecks    []Check `json:"completion_checks"`
	LastCompletionCheck *Check  `json:"last_completion_check"`
	EstimatedCompletion *string `json:"estimated_completion"`
}

// Metrics is seed 000's LoopMetrics.
type Metrics struct {
	TotalIterations             int     `json:"total_iterations"`
	SuccessfulIterations        int     `json:"successful_iterations"`
	FailedIterations            int     `json:"failed_iterations"`
	TotalTokens                 int64   `json:"total_tokens"`
	TotalCostUSD                float64 `json:"total_cost_usd"`
	TotalDurationSeconds        int     `json:"total_duration_seconds"`
	AverageIterationTimeSeconds float64 `json:"average_iteration_time_seconds"`
}

// ErrorContext describes why a loop failed or crashed.
type ErrorContext struct {
	ErrorMessage      string    `json:"error_message"`
	ErrorTimestamp    time.Time `json:"error_timestamp"`
	StackTrace        string    `json:"stack_trace,omitempty"`
	RecoveryAttempted bool      `json:"recovery_attempted"`
}

// BaselineMetrics is seed 004's baseline_metrics.
type BaselineMetrics struct {
	CapturedAt         time.Time      `json:"captured_at"`
	TestCount          int            `json:"test_count"`
	CoveragePercentage float64        `json:"coverage_percentage"`
	TypescriptErrors   *int           `json:"typescript_errors"`
	LintErrors         *int           `json:"lint_errors"`
	LintWarnings       *int           `json:"lint_warnings"`
	FileCount          int            `json:"file_count"`
	LinesOfCode        int            `json:"lines_of_code"`
	CustomMetrics      map[string]any `json:"custom_metrics,omitempty"`
}

// IterationEntry is one element of seed 004's iteration_history, with the
// harness's own measurements added (commit, check, agent, durations).
type IterationEntry struct {
	Iteration          int              `json:"iteration"`
	Timestamp          time.Time        `json:"timestamp"`
	QualityScore       float64          `json:"quality_score"`
	QualityDelta       float64          `json:"quality_delta"`
	QualityBreakdown   QualityBreakdown `json:"quality_breakdown"`
	Artifacts          []Artifact       `json:"artifacts"`
	SnapshotPath       string           `json:"snapshot_path,omitempty"`
	TestResults        *TestResults     `json:"test_results"`
	MetricsSnapshot    MetricsSnapshot  `json:"metrics_snapshot"`
	RegressionDetected bool             `json:"regression_detected"`
	RecoveryAttempted  bool             `json:"recovery_attempted"`

	// Harness additions.
	Commit          string   `json:"commit,omitempty"`
	CheckPassed     bool     `json:"check_passed"`
	CheckExitCode   int      `json:"check_exit_code"`
	TestsKnown      bool     `json:"tests_known"`
	Failing         []string `json:"failing_tests,omitempty"`
	Flaky           []string `json:"flaky_tests,omitempty"`
	Rejected        bool     `json:"rejected"`
	DurationSeconds float64  `json:"duration_seconds"`
	AgentSeconds    float64  `json:"agent_seconds"`
	CheckSeconds    float64  `json:"check_seconds"`
	AgentExitCode   int      `json:"agent_exit_code"`
	AgentClass      string   `json:"agent_error_class,omitempty"`
	AgentDetail     string   `json:"agent_detail,omitempty"`
	AgentMessage    string   `json:"agent_message,omitempty"`
	Tokens          int64    `json:"tokens"`
	CostUSD         float64  `json:"cost_usd"`
	CostEstimated   bool     `json:"cost_estimated,omitempty"`
	Turns           int      `json:"turns,omitempty"`
	FilesChanged    int      `json:"files_changed"`
	Additions       int      `json:"additions"`
	Deletions       int      `json:"deletions"`
	Excluded        []string `json:"excluded_paths,omitempty"`
	// Reverted are the agent's changes to protected paths that were undone
	// before the iteration was checked and committed.
	Reverted      []ProtectedRevert `json:"protected_reverts,omitempty"`
	Fingerprint   string            `json:"failure_fingerprint,omitempty"`
	Explain       []string          `json:"score_explanation,omitempty"`
	Reinforcement string            `json:"reinforcement_level,omitempty"`
	Rebuilt       bool              `json:"rebuilt_from_commit,omitempty"`

	// For the report (issue 14); optional, see report.go of this package.
	AgentSummary  string         `json:"agent_summary,omitempty"`
	FromStart     *Change        `json:"change_from_start,omitempty"`
	HeldOut       *HeldOut       `json:"held_out,omitempty"`
	CriterionRuns []CriterionRun `json:"criterion_runs,omitempty"`
}

// QualityBreakdown is the five parts of the quality score.
type QualityBreakdown struct {
	Validation   float64 `json:"validation"`
	Completeness float64 `json:"completeness"`
	Correctness  float64 `json:"correctness"`
	Readability  float64 `json:"readability"`
	Efficiency   float64 `json:"efficiency"`
}

// Artifact is a file created or modified by an iteration.
type Artifact struct {
	Path      string `json:"path"`
	Hash      string `json:"hash,omitempty"`
	SizeBytes int64  `json:"size_bytes,omitempty"`
}

// TestResults are the parsed counts of one check.
type TestResults struct {
	Total    int      `json:"total"`
	Passed   int      `json:"passed"`
	Failed   int      `json:"failed"`
	Skipped  int      `json:"skipped"`
	Coverage *float64 `json:"coverage,omitempty"`
}

// MetricsSnapshot is seed 004's metrics_snapshot.
type MetricsSnapshot struct {
	TestCount          int      `json:"test_count"`
	CoveragePercentage *float64 `json:"coverage_percentage,omitempty"`
	TypescriptErrors   *int     `json:"typescript_errors,omitempty"`
	LintErrors         *int     `json:"lint_errors,omitempty"`
}

// BestIteration is seed 004's best_iteration.
type BestIteration struct {
	Iteration       int       `json:"iteration"`
	QualityScore    float64   `json:"quality_score"`
	SnapshotPath    string    `json:"snapshot_path,omitempty"`
	UpdatedAt       time.Time `json:"updated_at"`
	SelectionReason string    `json:"selection_reason"`
	Commit          string    `json:"commit,omitempty"`
}

// RegressionEvent is one element of seed 004's regression_events.
type RegressionEvent struct {
	EventID                 string            `json:"event_id"`
	Timestamp               time.Time         `json:"timestamp"`
	Iteration               int               `json:"iteration"`
	RegressionType          string            `json:"regression_type"`
	Severity                string            `json:"severity"`
	Details                 RegressionDetails `json:"details"`
	RecoveryProtocolInvoked bool              `json:"recovery_protocol_invoked"`
	RecoveryOutcome         *string           `json:"recovery_outcome"`
	HumanGateInvoked        bool              `json:"human_gate_invoked"`
	HumanDecision           *string           `json:"human_decision"`
}

// RegressionDetails holds the values and evidence of a regression.
type RegressionDetails struct {
	BaselineValue any            `json:"baseline_value,omitempty"`
	CurrentValue  any            `json:"current_value,omitempty"`
	Diff          map[string]any `json:"diff,omitempty"`
	Summary       string         `json:"summary,omitempty"`
	// Tests and Paths name what the regression is about (test names, files
	// changed), for the report's plain sentences; optional.
	Tests []string `json:"tests,omitempty"`
	Paths []string `json:"paths,omitempty"`
}

// ReinforcementChange records a change of reinforcement level.
type ReinforcementChange struct {
	Timestamp time.Time `json:"timestamp"`
	Iteration int       `json:"iteration"`
	FromLevel string    `json:"from_level"`
	ToLevel   string    `json:"to_level"`
	Reason    string    `json:"reason"`
}

// Recovery is one run of seed 004's recovery protocol (pause, diagnose,
// adapt, retry, escalate).
type Recovery struct {
	RecoveryID    string        `json:"recovery_id"`
	Timestamp     time.Time     `json:"timestamp"`
	Iteration     int           `json:"iteration"`
	Trigger       string        `json:"trigger"`
	ProtocolSteps ProtocolSteps `json:"protocol_steps"`
	Outcome       string        `json:"outcome,omitempty"`
}

// ProtocolSteps are the five steps of a recovery.
type ProtocolSteps struct {
	Pause    *PauseStep    `json:"pause,omitempty"`
	Diagnose *DiagnoseStep `json:"diagnose,omitempty"`
	Adapt    *AdaptStep    `json:"adapt,omitempty"`
	Retry    *RetryStep    `json:"retry,omitempty"`
	Escalate *EscalateStep `json:"escalate"`
}

type PauseStep struct {
	ExecutedAt time.Time `json:"executed_at"`
	Actions    []string  `json:"actions"`
}
type DiagnoseStep struct {
	ExecutedAt time.Time `json:"executed_at"`
	RootCause  string    `json:"root_cause"`
	Confidence float64   `json:"confidence"`
}
type AdaptStep struct {
	ExecutedAt  time.Time `json:"executed_at"`
	Strategy    string    `json:"strategy"`
	ChangesMade []string  `json:"changes_made"`
}
type RetryStep struct {
	ExecutedAt     time.Time `json:"executed_at"`
	RetryIteration int       `json:"retry_iteration"`
	Outcome        string    `json:"outcome,omitempty"`
}
type EscalateStep struct {
	ExecutedAt    time.Time `json:"executed_at"`
	Reason        string    `json:"reason"`
	HumanDecision string    `json:"human_decision,omitempty"`
}

// DetectedPattern is a laziness pattern occurrence (seed 004).
type DetectedPattern struct {
	PatternID     string    `json:"pattern_id"`
	PatternName   string    `json:"pattern_name"`
	Iteration     int       `json:"iteration"`
	Timestamp     time.Time `json:"timestamp"`
	Severity      string    `json:"severity"`
	FalsePositive bool      `json:"false_positive"`
}

// PersistenceMetrics is seed 004's persistence_metrics, measured.
type PersistenceMetrics struct {
	DetectionLatencyP95Ms         int     `json:"detection_latency_p95_ms"`
	DetectionLatencyP99Ms         int     `json:"detection_latency_p99_ms"`
	IntegrationOverheadPercentage float64 `json:"integration_overhead_percentage"`
	FalsePositiveRate             float64 `json:"false_positive_rate"`
	TruePositiveCount             int     `json:"true_positive_count"`
	FalsePositiveCount            int     `json:"false_positive_count"`
}

// Harness is agent-loop's extension of the state: the loop's Spec, saved
// whole and read back whole by resume, and what the run found out (the
// branch it started, the commits, the stop reason, the agent's version).
type Harness struct {
	// Spec is the loop's specification. Set it with State.SetSpec, which
	// also writes the seed fields that repeat it.
	Spec spec.Spec `json:"spec"`

	// Provider is the agent that ran (the Spec's provider, or "scripted"
	// for the demo) and AgentVersion its CLI's version.
	Provider       string         `json:"provider"`
	AgentVersion   string         `json:"agent_version,omitempty"`
	Branch         string         `json:"branch,omitempty"` // the loop branch, once started
	OriginalBranch string         `json:"original_branch,omitempty"`
	BaseSHA        string         `json:"base_sha,omitempty"`
	HeadSHA        string         `json:"head_sha,omitempty"`
	BestSHA        string         `json:"best_sha,omitempty"`
	StopReason     string         `json:"stop_reason,omitempty"`
	Host           string         `json:"host,omitempty"`
	PIDStart       uint64         `json:"pid_start,omitempty"`
	PushErrors     []string       `json:"push_errors,omitempty"`
	PRNumber       int            `json:"pr_number,omitempty"`
	PRURL          string         `json:"pr_url,omitempty"`
	PendingGate    *Gate          `json:"pending_gate,omitempty"`
	MigratedFrom   string         `json:"migrated_from,omitempty"`
	Baseline       *BaselineCheck `json:"baseline_check,omitempty"`

	// For the report (issue 14); optional, see report.go of this package.
	StopKind  StopKind `json:"stop_kind,omitempty"`
	RepoURL   string   `json:"repo_url,omitempty"`
	RunURL    string   `json:"run_url,omitempty"`
	ReportURL string   `json:"report_url,omitempty"`
	Resumes   []Resume `json:"resumes,omitempty"`
	// Notified is the end of the loop (its status, stop kind and last
	// iteration, "completed/passed/2") the Action last posted a
	// notification for: a re-run of the post step, or main and post both
	// publishing, notify once.
	Notified string `json:"notified,omitempty"`

	// Merges are the merges of the branch the result is for (the Spec's
	// Publish.Base) into the loop branch, when it got new commits while
	// the loop ran: what came in, and how it ended.
	Merges []Merge `json:"merges,omitempty"`
}

// ProtectedRevert is one change of the agent's to a protected path, undone.
type ProtectedRevert struct {
	// Status is git's: A added, M modified, D deleted, R renamed, C
	// copied, T type changed.
	Status  string `json:"status"`
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"`
	// Pattern is the protected-paths pattern that matched.
	Pattern string `json:"pattern"`
}

// The outcomes of a Merge.
const (
	MergeMerged     = "merged"       // committed on the loop branch
	MergeConflict   = "conflict"     // conflicts left to the next iteration
	MergeBroke      = "check-failed" // merged cleanly, the check failed: left to the next iteration
	MergeNotMerged  = "not-merged"   // given up: the result is published without it
	MergeUnresolved = "unresolved"   // an iteration left conflict markers: the merge was undone
)

// Merge is one merge of the target branch into the loop branch.
type Merge struct {
	Target string `json:"target"`
	// Head is the target's commit that was merged.
	Head    string         `json:"head"`
	Commits []MergedCommit `json:"commits,omitempty"`
	// Conflicts are the paths git could not merge.
	Conflicts []string `json:"conflicts,omitempty"`
	// Iteration is the iteration after which the merge was made.
	Iteration int `json:"iteration"`
	// Commit is the merge commit, once made.
	Commit string `json:"commit,omitempty"`
	// ByIteration: the merge commit is that iteration's own commit (it
	// resolved the merge); otherwise a commit of its own, before publishing.
	ByIteration bool   `json:"by_iteration,omitempty"`
	Outcome     string `json:"outcome"`
	// Detail says why, for an outcome other than merged.
	Detail string `json:"detail,omitempty"`
}

// MergedCommit is a commit of the target that a merge brought in.
type MergedCommit struct {
	SHA     string `json:"sha"`
	Subject string `json:"subject"`
}

// Gate is a human decision the loop waits for (regression policy human-gate).
type Gate struct {
	Iteration int    `json:"iteration"`
	Reason    string `json:"reason"`
	Decision  string `json:"decision,omitempty"` // approve, reject, abort
}

// BaselineCheck is the completion check on the starting commit.
type BaselineCheck struct {
	Passed   bool     `json:"passed"`
	ExitCode int      `json:"exit_code"`
	Known    bool     `json:"tests_known"`
	Total    int      `json:"total"`
	Passing  int      `json:"passed_tests"`
	Failed   int      `json:"failed_tests"`
	Failing  []string `json:"failing_tests,omitempty"`
	Output   string   `json:"output,omitempty"`
	Seconds  float64  `json:"seconds"`
}
