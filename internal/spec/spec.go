package spec

import (
	"encoding/json"
	"fmt"
	"time"
)

// Spec is everything that defines one loop. It is plain data: JSON in the
// state, comparable field by field, with no behaviour of its own.
type Spec struct {
	// Task is what the agent is asked to do, passed to it as text only.
	Task      string    `json:"task"`
	Criterion Criterion `json:"criterion"`
	Limits    Limits    `json:"limits"`
	Agent     Agent     `json:"agent"`
	Publish   Publish   `json:"publish"`
	Policy    Policy    `json:"policy"`
	// Context is material the first prompt carries after the task (a
	// failed CI run's trimmed log and the commit that broke it): untrusted
	// text, only ever written to the agent's prompt.
	Context string `json:"context,omitempty"`
}

// Criterion is the completion criterion: the command the harness runs to
// decide "done", where it came from and what it depends on.
type Criterion struct {
	// Command is run with `sh -c` in Workdir; it exits 0 exactly when the
	// task is done.
	Command string `json:"command"`
	// Workdir is relative to the repository root ("." for the root).
	Workdir string `json:"workdir"`
	// Setup is run once, in Workdir, before the baseline check ("" = none).
	Setup string `json:"setup,omitempty"`
	// Source says where Command came from.
	Source Source `json:"source"`
	// Confidence is the inference's confidence (high, medium, low), or
	// "given" when the user gave the command.
	Confidence string `json:"confidence"`
	// Evidence lists what the inference found, one "layer: source: finding"
	// line each; Origin is where it found the command, when it knows.
	Evidence []string `json:"evidence,omitempty"`
	Origin   *Origin  `json:"origin,omitempty"`
	// Hint is the completion condition in the user's words, from a trigger
	// comment ("tests pass", "coverage is above 80%"); it refined inference.
	Hint string `json:"hint,omitempty"`
	// Depends is what the command depends on: the judge treats changes to
	// it as changes to the criterion, and the prompt tells the agent.
	Depends Depends `json:"depends"`
}

// Source is where a completion command came from.
type Source string

// The sources of a completion command.
const (
	SourceFlag     Source = "flag"         // --completion
	SourceTyped    Source = "typed"        // typed at the terminal when asked
	SourceInput    Source = "action-input" // the Action's completion input
	SourceInferred Source = "inferred"     // inferred from the task and the repository
	SourceHint     Source = "comment-hint" // inferred with the completion hint of a trigger comment
	SourceTask     Source = "task"         // named in the task's own words ("fix it until `make check` passes")
	SourceTrigger  Source = "trigger"      // named in the trigger comment ("/agent-loop fix it until `make check` passes")
	SourceCI       Source = "ci-step"      // the failed steps of a CI run (the workflow_run trigger)
)

// Phrase says where the command came from, for a report ("given with
// --completion").
func (s Source) Phrase() string {
	switch s {
	case SourceFlag:
		return "given with --completion"
	case SourceTyped:
		return "typed in when asked"
	case SourceInput:
		return "given as the completion input"
	case SourceInferred:
		return "inferred"
	case SourceHint:
		return "inferred from the trigger comment's hint"
	case SourceTask:
		return "named in the task"
	case SourceTrigger:
		return "named in the trigger comment"
	case SourceCI:
		return "taken from the failed CI step"
	}
	return "given"
}

// Inferred reports whether the command was inferred (its confidence then
// matters).
func (s Source) Inferred() bool { return s == SourceInferred || s == SourceHint }

// Depends is what a completion command depends on, as plain data: files it
// reads or runs, build-tool targets it runs, and the test runner at its end.
// It is filled from the shell-command model (shellcmd.Depends, the same
// fields) when the criterion is resolved, and saved with the rest of the
// Spec.
type Depends struct {
	// Files are repository-relative slash paths (scripts, task files,
	// manifests, the runners' configuration) whose change can change the
	// check's verdict, sorted.
	Files []string `json:"files,omitempty"`
	// Targets are the make/just/task targets and package scripts the
	// command runs, as "file:name" ("Makefile:test",
	// "web/package.json:test:unit"), in the order followed.
	Targets []string `json:"targets,omitempty"`
	// Runner is the test runner of the command's first test step ("go
	// test", "pytest", "jest", ...), "" when unknown.
	Runner string `json:"runner,omitempty"`
}

// Empty reports whether nothing is known of what the command depends on.
func (d Depends) Empty() bool { return len(d.Files) == 0 && len(d.Targets) == 0 && d.Runner == "" }

// Origin is where an inferred command was found: a CI workflow's file,
// job and step ("`go test ./...`, inferred from .github/workflows/ci.yml,
// job test").
type Origin struct {
	File string `json:"file,omitempty"`
	Job  string `json:"job,omitempty"`
	Step string `json:"step,omitempty"`
	// Run is the failed workflow run the step comes from (SourceCI).
	Run string `json:"run,omitempty"`
}

// Limits are the loop's stop rules that the user sets.
type Limits struct {
	MaxIterations int
	// Timeout bounds the whole loop (a margin is kept to publish).
	Timeout time.Duration
	// IterationTimeout bounds one agent run; 0 is what is left of Timeout.
	IterationTimeout time.Duration
	// IdleTimeout stops an agent that prints nothing this long; 0 is none.
	IdleTimeout time.Duration
	// CheckTimeout bounds one run of the completion command.
	CheckTimeout time.Duration
	// BudgetUSD and MaxTokens stop the loop when spent; 0 is none.
	BudgetUSD float64
	MaxTokens int64
}

// limitsJSON is Limits on disk: durations as Go duration strings ("1h0m0s").
type limitsJSON struct {
	MaxIterations    int     `json:"max_iterations"`
	Timeout          string  `json:"timeout"`
	IterationTimeout string  `json:"iteration_timeout"`
	IdleTimeout      string  `json:"idle_timeout"`
	CheckTimeout     string  `json:"check_timeout"`
	BudgetUSD        float64 `json:"budget_usd"`
	MaxTokens        int64   `json:"max_tokens"`
}

// MarshalJSON writes durations as Go duration strings.
func (l Limits) MarshalJSON() ([]byte, error) {
	return json.Marshal(limitsJSON{
		MaxIterations: l.MaxIterations, Timeout: l.Timeout.String(), IterationTimeout: l.IterationTimeout.String(),
		IdleTimeout: l.IdleTimeout.String(), CheckTimeout: l.CheckTimeout.String(), BudgetUSD: l.BudgetUSD, MaxTokens: l.MaxTokens,
	})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (l *Limits) UnmarshalJSON(b []byte) error {
	var w limitsJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	durations := []struct {
		name string
		text string
		d    *time.Duration
	}{{"timeout", w.Timeout, &l.Timeout}, {"iteration_timeout", w.IterationTimeout, &l.IterationTimeout},
		{"idle_timeout", w.IdleTimeout, &l.IdleTimeout}, {"check_timeout", w.CheckTimeout, &l.CheckTimeout}}
	for _, x := range durations {
		if x.text == "" {
			*x.d = 0
			continue
		}
		d, err := time.ParseDuration(x.text)
		if err != nil {
			return fmt.Errorf("limits.%s: %w", x.name, err)
		}
		*x.d = d
	}
	l.MaxIterations, l.BudgetUSD, l.MaxTokens = w.MaxIterations, w.BudgetUSD, w.MaxTokens
	return nil
}

// Agent is the agent CLI that runs each iteration and how it is run.
type Agent struct {
	// Provider is claude, codex, opencode, droid, gemini or command.
	Provider string `json:"provider"`
	// Command is the command of the command provider (sh -c).
	Command string `json:"command,omitempty"`
	// Model is passed to the CLI ("" leaves the CLI's default).
	Model string `json:"model,omitempty"`
	// MaxTurns caps the turns of one run for CLIs that take it.
	MaxTurns int `json:"max_turns"`
	// Args are extra arguments for the CLI, placed before the prompt.
	Args []string `json:"args,omitempty"`
	// Config says whose configuration the CLI reads: AgentConfigUser,
	// AgentConfigPrivate, or AgentConfigAuto.
	Config string `json:"config"`
}

// Publish is where the result goes: the branch, the commits, the push and
// the pull request.
type Publish struct {
	// Branch is the loop branch (resolved: agent-loop/<loop_id> when the
	// user gave none).
	Branch string `json:"branch"`
	// Commit: one commit per iteration on Branch (off: the changes stay in
	// the work tree).
	Commit bool `json:"commit"`
	// Push: push Branch after every iteration.
	Push bool `json:"push"`
	// Protected are the .gitignore-style patterns of the paths the agent
	// may not change (internal/protected): its changes to them are
	// reverted before each commit and reported. Empty: none.
	Protected []string `json:"protected,omitempty"`
	// PR is what the Action publishes at the end: open, comment or none
	// ("" outside the Action).
	PR string `json:"pr,omitempty"`
	// Draft opens the pull request as a draft.
	Draft bool `json:"draft,omitempty"`
	// Base is the branch the result is for: the pull request's target, or
	// the branch the loop commits on when it is the pull request's own
	// ("" = the default). When it gets new commits while the loop runs,
	// they are merged into the loop branch before publishing (with Push).
	Base string `json:"base,omitempty"`
}

// Policy is how the loop judges and reacts.
type Policy struct {
	// Regression is what follows an iteration with a critical regression:
	// revert, warn, fail or human-gate.
	Regression string `json:"regression"`
	// ConfirmRuns is how many extra runs of a passing check must pass too.
	ConfirmRuns int `json:"confirm_runs"`
}

// Values of Agent.Config.
const (
	AgentConfigAuto    = "auto"    // the user's own when it exists, else private
	AgentConfigUser    = "user"    // the user's own (Codex: $CODEX_HOME or ~/.codex)
	AgentConfigPrivate = "private" // a fresh directory under .aiwg with only the environment's credentials
)

// Providers are the valid values of Agent.Provider.
var Providers = []string{"claude", "codex", "opencode", "droid", "gemini", "command"}

// providerAliases are other names accepted for a provider.
var providerAliases = map[string]string{"factory": "droid", "claude-code": "claude", "gemini-cli": "gemini"}

// RegressionPolicies are the valid values of Policy.Regression.
var RegressionPolicies = []string{"revert", "warn", "fail", "human-gate"}

// The values of ActionSettings.FixCI: where the fix of a pull request's
// failed CI run goes.
const (
	FixCIPR   = "pr"   // a pull request into the pull request's branch
	FixCIPush = "push" // commits on the pull request's branch
)

// FixCIModes are the valid values of ActionSettings.FixCI.
var FixCIModes = []string{FixCIPR, FixCIPush}

// PRModes are the valid values of Publish.PR in the Action.
var PRModes = []string{"open", "comment", "none"}

// AgentConfigs are the valid values of Agent.Config.
var AgentConfigs = []string{AgentConfigAuto, AgentConfigUser, AgentConfigPrivate}

// DefaultBranch is the loop branch when the user names none.
func DefaultBranch(loopID string) string { return "agent-loop/" + loopID }
