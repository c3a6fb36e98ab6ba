package loop

import (
	"context"
	"io"
	"time"

	"github.com/aiwg/agent-loop/internal/protected"
	"github.com/aiwg/agent-loop/internal/state"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// The engine's ports: the small interfaces the loop needs. Adapters (agent
// CLIs, git, the judge, the Action runtime) satisfy them and say so at compile
// time; the engine never imports an adapter.

// Agent runs one iteration of an AI coding agent in the work tree.
type Agent interface {
	// Name is the provider name ("claude", "codex", "command", ...).
	Name() string
	// Run runs the agent once. A non-nil error means the harness could not run
	// the agent at all (binary missing, cannot start); everything the agent
	// itself did wrong is described by AgentResult.Class.
	Run(ctx context.Context, req AgentRequest) (AgentResult, error)
}

// Preflighter is implemented by agents that can check, before iteration 1,
// that they can run (binary installed, credentials present). The returned
// version string is recorded in the state and report.
type Preflighter interface {
	Preflight(ctx context.Context, env []string) (version string, err error)
}

// AgentRequest is everything one agent run needs.
type AgentRequest struct {
	LoopID    string
	Iteration int // 1-based
	Task      string
	Criterion string // the completion command
	// Prompt is the full prompt text; PromptFile holds the same text on disk.
	Prompt     string
	PromptFile string
	// LastOutputFile holds the (trimmed) output of the previous check; empty
	// file on iteration 1.
	LastOutputFile string
	// Dir is the repository work tree the agent edits.
	Dir string
	// Env is the filtered environment for the agent process (no GitHub or
	// runtime tokens); providers add only their own variables to it.
	Env []string
	// Output receives the agent's combined stdout/stderr as it is produced
	// (the iteration log, and the terminal unless --quiet).
	Output io.Writer
	// Transcript, when not nil, receives the provider's structured stream
	// (stream-json / JSONL), already redacted by the writer.
	Transcript io.Writer
	// Timeout bounds the whole run; IdleTimeout bounds the time without any
	// output. Zero means no bound.
	Timeout     time.Duration
	IdleTimeout time.Duration
	Model       string
	// MaxTurns and BudgetUSD are per-iteration caps for CLIs that take them;
	// zero means none.
	MaxTurns  int
	BudgetUSD float64
}

// ErrorClass says what kind of failure an agent run was; the engine applies a
// policy per class.
type ErrorClass string

const (
	ClassNone        ErrorClass = ""           // the agent ran to the end
	ClassAuth        ErrorClass = "auth"       // missing/invalid credentials or config: stop, exit 2
	ClassRateLimit   ErrorClass = "rate_limit" // 429/quota/overload: back off and retry, not an iteration
	ClassMaxTurns    ErrorClass = "max_turns"  // the CLI's own turn limit
	ClassBudget      ErrorClass = "budget"     // the CLI's own budget limit
	ClassToolFailure ErrorClass = "tool_failure"
	ClassCrash       ErrorClass = "crash" // non-zero exit with no structured reason
	ClassTimeout     ErrorClass = "timeout"
	ClassIdle        ErrorClass = "idle_timeout"
	ClassCancelled   ErrorClass = "cancelled"
)

// AgentResult is what one agent run measured.
type AgentResult struct {
	ExitCode int
	Duration time.Duration
	Class    ErrorClass
	// Detail explains Class in a sentence a user can act on.
	Detail string
	// Message is the agent's final message (carried into the next prompt).
	Message      string
	SessionID    string
	Turns        int
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
	// CostEstimated is true when CostUSD comes from a price table, not the CLI.
	CostEstimated     bool
	PermissionDenials int
	Version           string
}

// Tokens is input plus output tokens.
func (r AgentResult) Tokens() int64 { return r.InputTokens + r.OutputTokens }

// Uncontained is implemented by an error of Agent.Run or Verifier.Check
// that says the code it ran could not be contained: the sandbox's sweep
// left some of its processes alive (process.SweepError). The loop stops at
// once, and commits, publishes, pushes and tells the observer nothing
// more: what those processes may still do is unknown.
type Uncontained interface {
	error
	Uncontained() bool
}

// Verifier runs the completion command.
type Verifier interface {
	Check(ctx context.Context, req CheckRequest) (CheckResult, error)
}

// CheckRequest describes one run of the completion command.
type CheckRequest struct {
	Command string
	Dir     string
	Env     []string
	Timeout time.Duration
	Output  io.Writer
}

// CheckResult is the harness's own verdict on the completion command.
type CheckResult struct {
	Passed   bool
	ExitCode int
	Duration time.Duration
	// Output is the tail of the combined output (bounded).
	Output string
	Tests  testreport.Summary
	// TimedOut is true when the command was killed by its timeout.
	TimedOut bool
	// Flaky lists tests that flipped between confirmation runs.
	Flaky []string
}

// Repo is the loop branch in the work tree.
type Repo interface {
	Root() string
	// Head returns the checked-out branch ("" when detached) and commit.
	Head(ctx context.Context) (branch, sha string, err error)
	// Dirty lists changed or untracked paths, ignoring ignored files and .aiwg/.
	Dirty(ctx context.Context) ([]string, error)
	// StartBranch creates branch name at sha (or reuses it when it exists and
	// contains sha) and checks it out, keeping the work tree. Both it and
	// Checkout remove a ref lock a killed harness left on the branch.
	StartBranch(ctx context.Context, name, sha string) error
	// Checkout checks out an existing branch.
	Checkout(ctx context.Context, name string) error
	// Commit stages every change (except .aiwg/ and the excluded paths) and
	// commits it on the current branch. With nothing to commit it still makes
	// an empty commit, so every iteration has exactly one commit.
	Commit(ctx context.Context, req CommitRequest) (CommitResult, error)
	// Diff returns the unified diff (rename detection on, binary files
	// summarised) from commit `from` to the work tree, untracked files included.
	Diff(ctx context.Context, from string) (string, error)
	// Stage records the work tree in the index (every change but .aiwg/)
	// and returns the diff from each commit in froms to it, as Diff would.
	// A Commit with Staged set right after it commits that index as it is:
	// one walk of the work tree per iteration, and the commit holds exactly
	// what the judge saw.
	Stage(ctx context.Context, froms ...string) ([]string, error)
	// ResetTo makes the work tree and index equal to commit sha's tree without
	// moving the branch (used to discard a half-done iteration or to revert).
	ResetTo(ctx context.Context, sha string) error
	// CommitTreeOf adds a commit on the current branch whose tree equals the
	// tree of commit sha (publishing the best iteration when it is not the last).
	CommitTreeOf(ctx context.Context, sha string, req CommitRequest) (CommitResult, error)
	// History lists the commits reachable from branch and not from base,
	// oldest first, with their trailers parsed.
	History(ctx context.Context, branch, base string) ([]Commit, error)
}

// Pusher is implemented by repos that can push the loop branch.
type Pusher interface {
	Push(ctx context.Context, branch string) error
}

// Protector is implemented by repos that can undo an iteration's changes
// to the protected paths (the Spec's Publish.Protected).
type Protector interface {
	// StagedChanges lists the changes of the index Stage wrote from commit
	// or tree from, renames detected (git diff --cached --name-status -M).
	StagedChanges(ctx context.Context, from string) ([]protected.Change, error)
	// RestorePaths puts the paths in restore back as they are in from and
	// removes the paths in remove, in the work tree and the index, from
	// the harness's own objects.
	RestorePaths(ctx context.Context, from string, restore, remove []string) error
}

// Merger is implemented by repos that can bring the new commits of the
// branch the result is for (the Spec's Publish.Base, on the remote) into
// the loop branch before the result is published.
type Merger interface {
	// StartMerge fetches branch target and, when it has commits the
	// current branch lacks, merges them into the work tree and the index
	// without committing: a conflicted path holds git's conflict markers.
	// The merge is then pending until CommitMerge or AbortMerge.
	StartMerge(ctx context.Context, target string) (MergeResult, error)
	// CommitMerge is Commit, making the pending merge's commit: its
	// parents are the branch's tip and the target's head.
	CommitMerge(ctx context.Context, req CommitRequest) (CommitResult, error)
	// MergeMarkers lists the pending merge's conflicted paths that still
	// hold a conflict marker in the work tree.
	MergeMarkers(ctx context.Context) ([]string, error)
	// AbortMerge forgets the pending merge and makes the work tree and the
	// index the branch head's again.
	AbortMerge(ctx context.Context) error
}

// MergeResult is what StartMerge found and did.
type MergeResult struct {
	// Target is the branch, Head its commit on the remote.
	Target string
	Head   string
	// UpToDate: the loop branch has every commit of the target; nothing
	// is pending.
	UpToDate bool
	// Commits are the target's commits the loop branch lacked, oldest
	// first (at most 50 listed).
	Commits []Commit
	// Tree is the merged tree (conflicted paths with their markers): what
	// the protected paths are compared with while the merge is pending.
	Tree string
	// Conflicts are the paths git could not merge.
	Conflicts []string
}

// Unstager is implemented by repos whose Stage writes the user's index: a
// loop that does not commit (--no-commit) gives the changes back unstaged,
// as an agent editing files leaves them.
type Unstager interface {
	Unstage(ctx context.Context) error
}

// CommitRequest is a commit message with its trailers and what to keep out.
type CommitRequest struct {
	Subject  string
	Body     string
	Trailers []Trailer
	// Exclude lists path prefixes kept out of the commit (and reported).
	Exclude []string
	// Staged says the index already holds the work tree (Repo.Stage was the
	// last call): commit it without staging again.
	Staged bool
}

// Trailer is one "Key: value" line at the end of a commit message.
type Trailer struct{ Key, Value string }

// CommitResult describes a commit the repo made.
type CommitResult struct {
	SHA      string
	Stat     DiffStat
	Excluded []string // changed paths that were kept out of the commit
}

// DiffStat is the size of a change.
type DiffStat struct {
	Files     int      `json:"files"`
	Additions int      `json:"additions"`
	Deletions int      `json:"deletions"`
	Paths     []string `json:"paths,omitempty"`
}

// Commit is one commit of the loop branch.
type Commit struct {
	SHA      string
	Subject  string
	Trailers map[string]string
	Time     time.Time
}

// Judge scores iterations, catches cheating and picks the best iteration.
// The provisional judge of this package is replaced by internal/judge.
type Judge interface {
	// Baseline measures the starting point (check result, file count, lines).
	Baseline(ctx context.Context, dir string, check CheckResult) (BaselineMetrics, error)
	// Assess judges one iteration.
	Assess(ctx context.Context, in JudgeInput) (Verdict, error)
	// Best picks the best iteration of the history (0 when none qualifies).
	Best(history []Record) (iteration int, reason string)
	// Guide decides the reinforcement level and stall for the next iteration.
	Guide(history []Record, current Guidance) Guidance
}

// BaselineMetrics is seed 004's baseline_metrics, measured.
type BaselineMetrics struct {
	CapturedAt  time.Time
	Check       CheckResult
	FileCount   int
	LinesOfCode int
	LintErrors  *int
}

// JudgeInput is what the judge sees of one iteration.
type JudgeInput struct {
	Iteration int
	Criterion string
	Baseline  BaselineMetrics
	// BaseDiff is the unified diff from the baseline commit to this
	// iteration's work tree; StepDiff from the previous iteration's commit.
	BaseDiff string
	StepDiff string
	Check    CheckResult
	Agent    AgentResult
	History  []Record
	// HeldOut is the held-out check of a passing iteration (nil when it
	// did not run): the judge keeps the diff's signals that it confirms
	// and clears those it contradicts.
	HeldOut *HeldOut
}

// Verdict is the judge's measured opinion of one iteration.
type Verdict struct {
	Score     float64
	Breakdown Breakdown
	// Explain has one line per score part, saying what it was measured from.
	Explain     []string
	Regressions []Regression
}

// Critical reports whether any regression is critical (the iteration can then
// never be a success nor the best).
func (v Verdict) Critical() bool {
	for _, r := range v.Regressions {
		if r.Severity == "critical" {
			return true
		}
	}
	return false
}

// Breakdown is the five weighted parts of the quality score (0-100 each).
type Breakdown struct {
	Validation   float64 `json:"validation"`
	Completeness float64 `json:"completeness"`
	Correctness  float64 `json:"correctness"`
	Readability  float64 `json:"readability"`
	Efficiency   float64 `json:"efficiency"`
}

// Regression is one detected regression (seed 004 regression_events).
type Regression struct {
	Type     string // test_deletion, test_skipping, ...
	Severity string // critical, high, medium, low
	Summary  string
	Evidence []Evidence
	Baseline any
	Current  any
	// Tests names the tests the regression is about (deleted, skipped,
	// weakened), when the judge knows them.
	Tests []string
}

// Evidence points at the lines that show a regression.
type Evidence struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
	Text string `json:"text,omitempty"`
}

// Record is the engine's record of one finished iteration.
type Record struct {
	Iteration int
	Started   time.Time
	Duration  time.Duration
	Agent     AgentResult
	Check     CheckResult
	Verdict   Verdict
	Stat      DiffStat
	Commit    string
	// Fingerprint identifies the set of failing tests (or the failing output)
	// for stall detection.
	Fingerprint string
	// Rejected is true when a critical regression vetoed the iteration.
	Rejected bool
	Level    string // reinforcement level used for this iteration's prompt
	// Excluded lists changed paths kept out of the commit.
	Excluded []string
	// CriterionRuns are the iteration's runs of the criterion, with why
	// each ran; HeldOut the held-out check in the report's words (nil
	// when it did not run).
	CriterionRuns []state.CriterionRun
	HeldOut       *state.HeldOut
	// FromStart is the size of the iteration's tree against the starting
	// commit (what it would publish), from the staged base diff.
	FromStart *state.Change
	// Reverted are the agent's changes to protected paths that were
	// undone before the check ran again and the iteration was committed.
	Reverted []protected.Revert
}

// Guidance is the judge's advice for the next iteration.
type Guidance struct {
	Level  string // OFF, MINIMAL, STANDARD, AGGRESSIVE, ADAPTIVE
	Reason string // why the level changed ("" when it did not)
	// Prompt holds extra prompt paragraphs for this level.
	Prompt []string
	// Stall is non-empty when the loop should stop as stalled.
	Stall string
}
