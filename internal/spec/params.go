package spec

import (
	"strings"
	"sync"
)

// Param is one parameter a user can set: the one place it is declared.
type Param struct {
	// Name identifies the parameter (kebab-case).
	Name string
	// Flag is the CLI flag without dashes ("" = not a flag); Positional
	// marks the CLI's TASK argument instead.
	Flag       string
	Positional bool
	// Arg names the flag's value in help ("N", "MIN", "CMD"); empty for a
	// switch.
	Arg string
	// Input is the Action input ("" = not an input). The runner passes it
	// as INPUT_<NAME>, upper-cased, hyphens kept.
	Input string
	// Default applies when the parameter is not given, as text ("10").
	Default string
	// InputDefault is the Action's default when it differs from Default.
	// A runner expression (${{ github.token }}) is written to action.yml
	// only: the runner evaluates it, the code sees its value.
	InputDefault string
	// DefaultText replaces Default in the CLI's help and table where a bare
	// value would not say what happens ("inferred", "rest of --timeout").
	DefaultText string
	// Help is one line for `run -h` and the README's flag table.
	Help string
	// Doc is the Action input's description (action.yml and the README's
	// input table); Help when empty.
	Doc string
	// Secret parameters are masked in the Action's log and never reach the
	// agent (except a credential, to the CLI it is for).
	Secret bool
	// Env is the environment variable a credential input sets for the agent
	// CLI (ANTHROPIC_API_KEY).
	Env string
	// Valid lists the values of an enumeration; Aliases maps other accepted
	// spellings to them.
	Valid   []string
	Aliases map[string]string
	// Resume: `agent-loop resume` takes the flag too, and changes the
	// saved Spec with it.
	Resume bool
	// NegatedFlag: the flag switches the value off (--no-commit sets
	// Publish.Commit to false).
	NegatedFlag bool

	field func(*Settings) any
}

// Params returns the parameter table, in the order of action.yml and the
// help. The returned parameters are shared: do not change them.
func Params() []*Param {
	tableOnce.Do(func() {
		table = buildTable()
		byName = map[string]*Param{}
		for _, p := range table {
			byName[p.Name] = p
		}
	})
	return table
}

// Lookup returns the parameter called name, nil when there is none.
func Lookup(name string) *Param {
	Params()
	return byName[name]
}

var (
	tableOnce sync.Once
	table     []*Param
	byName    map[string]*Param
)

// Credentials lists the credential parameters (Env set), in table order.
func Credentials() []*Param {
	var out []*Param
	for _, p := range Params() {
		if p.Env != "" {
			out = append(out, p)
		}
	}
	return out
}

// CredentialInput returns the Action input that carries credential
// variable env (ANTHROPIC_API_KEY -> anthropic-api-key), "" when none does.
func CredentialInput(env string) string {
	for _, p := range Credentials() {
		if p.Env == env {
			return p.Input
		}
	}
	return ""
}

// SecretInputs lists the Action inputs that hold secrets.
func SecretInputs() []string {
	var out []string
	for _, p := range Params() {
		if p.Secret && p.Input != "" {
			out = append(out, p.Input)
		}
	}
	return out
}

// ResumeParams lists the parameters `resume` takes.
func ResumeParams() []*Param {
	var out []*Param
	for _, p := range Params() {
		if p.Resume {
			out = append(out, p)
		}
	}
	return out
}

func buildTable() []*Param {
	ps := []*Param{
		{Name: "task", Positional: true, Arg: "TASK", Input: "task",
			Help: "what the agent should do, in plain words (passed to it as text, never through a shell)",
			Doc: `What the agent should do, in plain words ("fix the failing tests in pkg/parser"). Empty: taken from the triggering ` +
				`comment or issue (the text after trigger-phrase, or the issue title and body). The task is only ever passed to the ` +
				`agent as text, never put into a shell command.`,
			field: func(s *Settings) any { return &s.Spec.Task }},
		{Name: "completion", Flag: "completion", Arg: "CMD", Input: "completion", DefaultText: "inferred",
			Help: "shell command that exits 0 exactly when the task is done",
			Doc: `The shell command that decides "done": the loop stops when it exits 0, as run by the harness itself (the agent's ` +
				`own claims are ignored). Example: "go test ./...". Empty: inferred from the task, CLAUDE.md/AGENTS.md, manifests ` +
				`and CI workflows (see infer-completion and auto-criteria).`,
			field: func(s *Settings) any { return &s.Spec.Criterion.Command }},
		{Name: "workdir", Flag: "workdir", Arg: "DIR", Input: "workdir", DefaultText: ".",
			Help: "directory, relative to the repository root, the completion command runs in",
			Doc: `The directory, relative to the repository root, the completion command (and setup) runs in, for example ` +
				`"packages/api". Empty: the repository root, or the directory inference found.`,
			field: func(s *Settings) any { return &s.Spec.Criterion.Workdir }},
		{Name: "max-iterations", Flag: "max-iterations", Arg: "N", Input: "max-iterations", Default: "10", Resume: true,
			Help: "at most N iterations",
			Doc: `The most agent iterations to run (each one: agent run, judgement, completion check, commit, push). A whole ` +
				`number, 1 or more.`,
			field: func(s *Settings) any { return &s.Spec.Limits.MaxIterations }},
		{Name: "timeout", Flag: "timeout", Arg: "MIN", Input: "timeout-minutes", Default: "60", Resume: true,
			Help: "wall-clock limit for the whole loop, in minutes (a margin is kept to publish)",
			Doc: `Wall-clock limit for the whole loop, in minutes. A margin is kept to publish the best iteration before it runs ` +
				`out. Keep it below the job's own timeout-minutes.`,
			field: func(s *Settings) any { return &s.Spec.Limits.Timeout }},
		{Name: "iteration-timeout", Flag: "iteration-timeout", Arg: "MIN", Input: "iteration-timeout-minutes", Default: "0",
			DefaultText: "rest of --timeout", Resume: true,
			Help: "limit for one agent run, in minutes",
			Doc: `Limit for one agent run, in minutes; the agent is stopped (its whole process group) when it is exceeded. 0: ` +
				`what is left of timeout-minutes.`,
			field: func(s *Settings) any { return &s.Spec.Limits.IterationTimeout }},
		{Name: "idle-timeout", Flag: "idle-timeout", Arg: "MIN", Input: "idle-timeout-minutes", Default: "15", Resume: true,
			Help:  "stop an agent that prints nothing this many minutes (0: never)",
			Doc:   `Stop an agent run that prints nothing for this many minutes (a CLI waiting for something that will not come). 0: never.`,
			field: func(s *Settings) any { return &s.Spec.Limits.IdleTimeout }},
		{Name: "check-timeout", Flag: "check-timeout", Arg: "MIN", Input: "check-timeout-minutes", Default: "20", Resume: true,
			Help:  "limit for one run of the completion command, in minutes",
			Doc:   `Limit for one run of the completion command, in minutes; a run that exceeds it counts as failing.`,
			field: func(s *Settings) any { return &s.Spec.Limits.CheckTimeout }},
		{Name: "provider", Flag: "provider", Arg: "P", Input: "provider", Default: "claude", Valid: Providers, Aliases: providerAliases,
			Help: "agent CLI: claude, codex, opencode, droid (alias factory), gemini, command",
			Doc: `Which agent CLI runs each iteration: claude (Claude Code), codex (OpenAI Codex), opencode, droid (Factory), ` +
				`gemini (Gemini CLI), or command (your own command, see agent-command). The CLIs are preinstalled in the action's image.`,
			field: func(s *Settings) any { return &s.Spec.Agent.Provider }},
		{Name: "agent-command", Flag: "agent-command", Arg: "CMD", Input: "agent-command",
			Help: "with --provider command (implied when given alone): run as sh -c with the prompt on stdin and AGENT_LOOP_* variables",
			Doc: `With provider "command": the command run as ` + "`sh -c`" + ` in the repository for each iteration, with the prompt ` +
				`on standard input and AGENT_LOOP_* variables in its environment (AGENT_LOOP_PROMPT_FILE, AGENT_LOOP_ITERATION, ` +
				`AGENT_LOOP_TASK, ...). Given without provider, it implies provider command.`,
			field: func(s *Settings) any { return &s.Spec.Agent.Command }},
		{Name: "model", Flag: "model", Arg: "M", Input: "model", DefaultText: "CLI default",
			Help:  "model passed to the agent CLI",
			Doc:   `The model the agent CLI should use (passed to its --model option). Empty: the CLI's own default.`,
			field: func(s *Settings) any { return &s.Spec.Agent.Model }},
		{Name: "max-turns", Flag: "max-turns", Arg: "N", Input: "max-turns", Default: "50",
			Help:  "per-iteration turn limit for CLIs that take one (claude, droid, gemini)",
			Doc:   `The most turns one agent run may take, for the CLIs that have such a limit (claude, droid, gemini). A whole number.`,
			field: func(s *Settings) any { return &s.Spec.Agent.MaxTurns }},
		{Name: "agent-arg", Flag: "agent-arg", Arg: "ARG", Input: "agent-args",
			Help: "an extra argument for the agent CLI, placed before the prompt (repeat the flag for more)",
			Doc: `Extra arguments for the agent CLI, one per line, placed before the prompt (for example "--effort" and "high" ` +
				`on two lines). Empty: none.`,
			field: func(s *Settings) any { return &s.Spec.Agent.Args }},
		{Name: "agent-config", Flag: "agent-config", Arg: "WHOSE", Default: AgentConfigAuto, Valid: AgentConfigs,
			Help: "whose configuration the codex CLI reads: user (yours: $CODEX_HOME or ~/.codex, with its model providers), " +
				"private (a fresh one, credentials from the environment only), auto (user when it exists)",
			field: func(s *Settings) any { return &s.Spec.Agent.Config }},
		{Name: "branch", Flag: "branch", Arg: "NAME", Input: "branch", DefaultText: "agent-loop/<loop_id>",
			Help:  "the loop branch; your own branch never moves",
			Doc:   `The branch the loop commits to, one commit per iteration, pushed after each. Empty: agent-loop/<loop-id>.`,
			field: func(s *Settings) any { return &s.Spec.Publish.Branch }},
		{Name: "commit", Flag: "no-commit", NegatedFlag: true, Default: "true",
			Help:  "leave the changes uncommitted (staged) in the work tree; no branch, no commits",
			field: func(s *Settings) any { return &s.Spec.Publish.Commit }},
		{Name: "push", Flag: "push", Default: "false",
			Help:  "push the loop branch to origin after every iteration (the Action always pushes)",
			field: func(s *Settings) any { return &s.Spec.Publish.Push }},
		{Name: "base", Input: "base",
			Doc: `The branch the pull request targets and the loop starts from. Empty: the pull request's base for ` +
				`pull_request events, otherwise the repository's default branch.`,
			field: func(s *Settings) any { return &s.Spec.Publish.Base }},
		{Name: "setup", Flag: "setup", Arg: "CMD", Input: "setup", DefaultText: "none",
			Help: "command run once before the baseline check (install dependencies)",
			Doc: `A shell command run once before the baseline check, to install what the completion command needs inside the ` +
				`action's container (for example "npm ci", or a toolchain). Empty: nothing is run.`,
			field: func(s *Settings) any { return &s.Spec.Criterion.Setup }},
		{Name: "infer-completion", Flag: "no-infer-completion", NegatedFlag: true, Input: "infer-completion", Default: "true",
			Help: "require --completion; never infer it",
			Doc: `"true": when completion is empty, infer the command and show the evidence (file, job, step). "false": ` +
				`completion must be given; its absence is a configuration error.`,
			field: func(s *Settings) any { return &s.Start.Infer }},
		{Name: "auto-criteria", Flag: "auto-criteria", Input: "auto-criteria", Default: "false", InputDefault: "true",
			Help: "adopt an inferred completion command without asking (high confidence only)",
			Doc: `"true": adopt an inferred completion command automatically, but only when its confidence is high and running ` +
				`it once shows it runs the project's tests (a command that runs no test is refused). Otherwise the proposal, its ` +
				`evidence and the exact completion input to set are commented on the issue or pull request. "false": never ` +
				`adopt one; fail with the proposal printed so you can copy it into completion.`,
			field: func(s *Settings) any { return &s.Start.AutoCriteria }},
		{Name: "budget-usd", Flag: "budget-usd", Arg: "X", Input: "budget-usd", Default: "0", DefaultText: "none", Resume: true,
			Help: "stop when the agent has spent this many dollars; the best iteration so far is kept",
			Doc: `Stop the loop when the agents' reported (or estimated) cost reaches this many US dollars, for example "5". ` +
				`0: no cost limit.`,
			field: func(s *Settings) any { return &s.Spec.Limits.BudgetUSD }},
		{Name: "max-tokens", Flag: "max-tokens", Arg: "N", Input: "max-tokens", Default: "0", DefaultText: "none", Resume: true,
			Help:  "stop when the agent has used this many tokens",
			Doc:   `Stop the loop when the agents' input plus output tokens reach this number. 0: no token limit.`,
			field: func(s *Settings) any { return &s.Spec.Limits.MaxTokens }},
		{Name: "github-token", Input: "github-token", InputDefault: "${{ github.token }}", Secret: true,
			Doc: `The token that pushes the loop branch and opens the pull request (needs contents: write and pull-requests: ` +
				`write). Pushes and pull requests made with the default GITHUB_TOKEN do not start other workflows: pass a GitHub ` +
				`App installation token (or a fine-grained PAT) here if CI must run on the loop's pull request. Never shown to the agent.`,
			field: func(s *Settings) any { return &s.Action.Token }},
		{Name: "pr", Input: "pr", Default: "open", Valid: PRModes,
			Doc: `What to publish when the loop ends: "open" opens or updates a pull request with the best iteration and the ` +
				`report; "comment" only posts the report as a comment on the triggering issue or pull request; "none" only ` +
				`pushes the branch.`,
			field: func(s *Settings) any { return &s.Spec.Publish.PR }},
		{Name: "draft", Input: "draft", Default: "false",
			Doc:   `"true": open the pull request as a draft. "false": open it ready for review.`,
			field: func(s *Settings) any { return &s.Spec.Publish.Draft }},
		{Name: "trigger-phrase", Input: "trigger-phrase", Default: "/agent-loop",
			Doc: `For issue_comment and issues events: the phrase that starts a loop, followed by the task (for example ` +
				`"/agent-loop fix the flaky parser test"). Comments without it are ignored. Only users with write, maintain or ` +
				`admin permission can start a loop.`,
			field: func(s *Settings) any { return &s.Action.TriggerPhrase }},
		{Name: "allow-forks", Input: "allow-forks", Default: "false",
			Doc: `"true": also run for pull requests from forks, and fix the failed CI runs of their commits (workflow_run). ` +
				`"false": refuse them with a comment explaining why (a fork's code would run with this repository's secrets).`,
			field: func(s *Settings) any { return &s.Action.AllowForks }},
		{Name: "fix-ci", Input: "fix-ci", Default: FixCIPR, Valid: FixCIModes,
			Doc: `For a failed CI run (the workflow_run event) of a pull request from this repository: "pr" opens a pull ` +
				`request into the pull request's branch with the fix; "push" commits the fix on its branch. A run on any ` +
				`other branch, the default branch included, always gets a pull request into that branch.`,
			field: func(s *Settings) any { return &s.Action.FixCI }},
		{Name: "max-attempts", Input: "max-attempts", Default: "1",
			Doc: `For a failed CI run (workflow_run): the most loops one failed commit gets, counted across re-runs of the ` +
				`workflow and other failed workflows on the same commit. A whole number, 1 or more.`,
			field: func(s *Settings) any { return &s.Action.MaxAttempts }},
		{Name: "allow-own-runs", Input: "allow-own-runs", Default: "false",
			Doc: `For a failed CI run (workflow_run): "true" also starts a loop for a run that agent-loop caused (a commit ` +
				`with its Agent-Loop-Id trailer, or a run by its own login). "false": loops do not start loops.`,
			field: func(s *Settings) any { return &s.Action.AllowOwnRuns }},
		{Name: "protected-paths", Flag: "protected-path", Arg: "GLOB", Input: "protected-paths",
			DefaultText: strings.Join(protectedDefault, " "),
			Help: "a path the agent may not change, as a .gitignore pattern (repeat the flag for more; none: protect nothing): " +
				"its changes are reverted before each commit and reported",
			Doc: `Paths the agent may not change, one .gitignore-style pattern a line ("!" takes a path back out; matched ` +
				`without regard to case): the agent's changes to them are reverted before each commit, for every trigger, ` +
				`and listed in the report. Empty: ` + "`" + strings.Join(protectedDefault, "`, `") + "`" + `. "none": ` +
				`protect nothing (then changes to workflow files go into the commits, which the default GITHUB_TOKEN cannot push).`,
			field: func(s *Settings) any { return &s.Spec.Publish.Protected }},
		{Name: "loop-id", Flag: "loop-id", Arg: "ID", Input: "loop-id", DefaultText: "generated",
			Help: "the loop's id, ralph-<slug>-<8 hex>",
			Doc: `The loop's identifier (ralph-<slug>-<8 hex>), used to resume its state. Empty: derived from the trigger ` +
				`(repository plus issue or pull request number, or the dispatch task), so a re-run of the same trigger resumes the ` +
				`same loop.`,
			field: func(s *Settings) any { return &s.Start.LoopID }},
		{Name: "regression-policy", Flag: "regression-policy", Arg: "P", Input: "regression-policy", Default: "revert",
			Valid: RegressionPolicies,
			Help: "after a cheating iteration: revert (to the best so far), warn, fail, human-gate (pause for " +
				"resume --approve/--reject)",
			Doc: `What happens after an iteration with a critical regression (deleted or skipped tests, weakened assertions, ` +
				`narrowed CI). Whatever the policy, such an iteration never counts as completed and is never published as best. ` +
				`"revert": discard its changes and continue from the best iteration; "warn": keep its changes, warn the agent in ` +
				`the next prompt and continue; "fail": stop the loop as failed; "human-gate": stop and pause the loop until a ` +
				`maintainer resumes or aborts it.`,
			field: func(s *Settings) any { return &s.Spec.Policy.Regression }},
		{Name: "confirm-runs", Flag: "confirm-runs", Arg: "N", Input: "confirm-runs", Default: "1",
			Help: "extra runs of the completion command that must pass too (flaky tests are reported, not blamed)",
			Doc: `How many extra times the completion command is run after it passes, to catch flaky tests: the loop completes ` +
				`only if every run passes, and tests that flip are reported as flaky. A whole number from 0 to 10.`,
			field: func(s *Settings) any { return &s.Spec.Policy.ConfirmRuns }},
		{Name: "fail-on-incomplete", Input: "fail-on-incomplete", Default: "true",
			Doc: `"true": the step fails (exit code 1) when the loop ends without a verified completion (max iterations, ` +
				`timeout, budget, failure). "false": the step succeeds and the outcome is in the status output.`,
			field: func(s *Settings) any { return &s.Action.FailOnIncomplete }},
		{Name: "allow-dirty", Flag: "allow-dirty", Default: "false",
			Help:  "start even if the work tree has uncommitted changes",
			field: func(s *Settings) any { return &s.Start.AllowDirty }},
		{Name: "force", Flag: "force", Default: "false",
			Help:  "start even if an active loop has the same task",
			field: func(s *Settings) any { return &s.Start.Force }},
		{Name: "quiet", Flag: "quiet", Default: "false", Resume: true,
			Help:  "print only the final report",
			field: func(s *Settings) any { return &s.Start.Quiet }},
	}
	creds := []struct{ input, env, doc string }{
		{"anthropic-api-key", "ANTHROPIC_API_KEY", "Anthropic API key for provider claude (or opencode with an Anthropic model). Pass it from a secret: secrets.ANTHROPIC_API_KEY."},
		{"claude-code-oauth-token", "CLAUDE_CODE_OAUTH_TOKEN", "Claude Code OAuth token (from `claude setup-token`), an alternative to anthropic-api-key for provider claude. Pass it from a secret."},
		{"openai-api-key", "OPENAI_API_KEY", "OpenAI API key for provider codex (or opencode with an OpenAI model). Pass it from a secret."},
		{"gemini-api-key", "GEMINI_API_KEY", "Gemini API key for provider gemini. Pass it from a secret."},
		{"factory-api-key", "FACTORY_API_KEY", "Factory API key for provider droid. Pass it from a secret."},
		{"opencode-api-key", "OPENCODE_API_KEY", "opencode API key (OPENCODE_API_KEY) for provider opencode with opencode's own models. Pass it from a secret."},
	}
	for _, c := range creds {
		env := c.env
		ps = append(ps, &Param{Name: c.input, Input: c.input, Secret: true, Env: env, Doc: c.doc + " Masked in the log.",
			field: func(s *Settings) any { return credential{s, env} }})
	}
	return ps
}

// credential is the field of a credential parameter: an entry of
// ActionSettings.Credentials.
type credential struct {
	s   *Settings
	env string
}

// expression reports an InputDefault the runner evaluates.
func (p *Param) expression() bool { return strings.HasPrefix(p.InputDefault, "${{") }

// DocText is the Action input's description.
func (p *Param) DocText() string {
	if p.Doc != "" {
		return p.Doc
	}
	return p.Help
}
