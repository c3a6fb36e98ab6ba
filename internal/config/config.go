// Package config holds the one typed configuration of a loop, filled either
// from CLI flags (internal/cli) or from action inputs (internal/app), and its
// validation: a pure function that reports every problem at once.
package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Providers are the valid --provider values.
var Providers = []string{"claude", "codex", "opencode", "droid", "gemini", "command"}

// ProviderAliases maps other accepted names to a provider.
var ProviderAliases = map[string]string{"factory": "droid", "claude-code": "claude", "gemini-cli": "gemini"}

// RegressionPolicies are the valid --regression-policy values.
var RegressionPolicies = []string{"revert", "warn", "fail", "human-gate"}

// Config is everything one loop needs to know.
type Config struct {
	Dir  string // repository (any directory inside it)
	Task string

	Completion   string // the completion command; "" = infer
	Workdir      string // directory, relative to the repo root, the command runs in
	Setup        string // command run once before the baseline
	NoInfer      bool
	AutoCriteria bool

	MaxIterations    int
	Timeout          time.Duration // whole loop
	IterationTimeout time.Duration // one agent run (0 = what is left of Timeout)
	IdleTimeout      time.Duration // agent without output (0 = none)
	CheckTimeout     time.Duration // one run of the completion command

	Provider     string
	AgentCommand string
	Model        string
	MaxTurns     int
	AgentArgs    []string

	Branch     string
	NoCommit   bool
	Push       bool
	AllowDirty bool
	Force      bool
	LoopID     string

	BudgetUSD        float64
	MaxTokens        int64
	ConfirmRuns      int
	RegressionPolicy string

	Quiet bool
}

// Defaults returns the defaults of seed 002 and DESIGN.md.
func Defaults() Config {
	return Config{
		Dir:              ".",
		MaxIterations:    10,
		Timeout:          60 * time.Minute,
		CheckTimeout:     20 * time.Minute,
		IdleTimeout:      15 * time.Minute,
		Provider:         "claude",
		ConfirmRuns:      1,
		RegressionPolicy: "revert",
		MaxTurns:         50,
	}
}

// Problem is one invalid setting: what is wrong, how to fix it, and the valid
// values where there is a list.
type Problem struct {
	Field string
	Cause string
	Fix   string
	Valid []string
}

func (p *Problem) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", p.Field, p.Cause)
	if p.Fix != "" {
		fmt.Fprintf(&b, "; %s", p.Fix)
	}
	if len(p.Valid) > 0 {
		fmt.Fprintf(&b, " (valid: %s)", strings.Join(p.Valid, ", "))
	}
	return b.String()
}

// NormalizeProvider maps aliases to provider names.
func NormalizeProvider(p string) string {
	p = strings.ToLower(strings.TrimSpace(p))
	if a, ok := ProviderAliases[p]; ok {
		return a
	}
	return p
}

// Validate reports every problem of c at once (errors.Join of *Problem).
// It is pure: it looks at nothing but c.
func Validate(c Config) error {
	var errs []error
	add := func(field, cause, fix string, valid ...string) {
		errs = append(errs, &Problem{Field: field, Cause: cause, Fix: fix, Valid: valid})
	}
	if strings.TrimSpace(c.Task) == "" {
		add("task", "missing", `give the task as the argument, e.g. agent-loop run --completion "go test ./..." "fix the failing tests"`)
	}
	if c.MaxIterations < 1 {
		add("--max-iterations", fmt.Sprintf("%d is not a positive number", c.MaxIterations), "use 1 or more (default 10)")
	}
	if c.Timeout <= 0 {
		add("--timeout", "must be a positive number of minutes", "use e.g. --timeout 60")
	}
	if c.IterationTimeout < 0 {
		add("--iteration-timeout", "must not be negative", "use minutes, or 0 for the rest of --timeout")
	}
	if c.CheckTimeout < 0 {
		add("--check-timeout", "must not be negative", "use minutes")
	}
	p := NormalizeProvider(c.Provider)
	valid := false
	for _, v := range Providers {
		if p == v {
			valid = true
		}
	}
	if !valid {
		add("--provider", fmt.Sprintf("unknown provider %q", c.Provider), "choose one of the supported agent CLIs", Providers...)
	}
	if p == "command" && strings.TrimSpace(c.AgentCommand) == "" {
		add("--agent-command", "the command provider needs the command to run", `give it, e.g. --agent-command "./scripts/agent.sh"`)
	}
	if c.AgentCommand != "" && p != "command" && valid {
		add("--agent-command", fmt.Sprintf("only used with --provider command (provider is %q)", p), "drop it, or add --provider command")
	}
	if c.NoInfer && strings.TrimSpace(c.Completion) == "" {
		add("--completion", "--no-infer-completion needs an explicit --completion", `give the command that exits 0 when the task is done, e.g. --completion "npm test"`)
	}
	if c.BudgetUSD < 0 {
		add("--budget-usd", "must not be negative", "use 0 for no budget")
	}
	if c.MaxTokens < 0 {
		add("--max-tokens", "must not be negative", "use 0 for no limit")
	}
	if c.ConfirmRuns < 0 || c.ConfirmRuns > 10 {
		add("--confirm-runs", fmt.Sprintf("%d is out of range", c.ConfirmRuns), "use 0 to 10 extra runs of the check after a pass")
	}
	pv := false
	for _, v := range RegressionPolicies {
		if c.RegressionPolicy == v {
			pv = true
		}
	}
	if !pv {
		add("--regression-policy", fmt.Sprintf("unknown policy %q", c.RegressionPolicy), "choose what happens after a cheating iteration", RegressionPolicies...)
	}
	if c.Branch != "" && !validBranch(c.Branch) {
		add("--branch", fmt.Sprintf("%q is not a valid branch name", c.Branch), "use letters, digits, '/', '-', '_' and '.'")
	}
	if c.LoopID != "" && !validLoopID(c.LoopID) {
		add("--loop-id", fmt.Sprintf("%q does not match ralph-<slug>-<8 hex>", c.LoopID), "e.g. ralph-fix-tests-a1b2c3d4, or leave it out to generate one")
	}
	if c.Workdir != "" && (strings.HasPrefix(c.Workdir, "/") || strings.Contains("/"+c.Workdir+"/", "/../")) {
		add("workdir", fmt.Sprintf("%q must be relative to the repository root and stay inside it", c.Workdir), "use e.g. packages/api")
	}
	return errors.Join(errs...)
}

// Problems unpacks the problems of a Validate error.
func Problems(err error) []*Problem {
	var out []*Problem
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if p, ok := e.(*Problem); ok {
			out = append(out, p)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	return out
}

func validBranch(b string) bool {
	if b == "" || strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") ||
		strings.HasSuffix(b, ".lock") || strings.Contains(b, "..") || strings.Contains(b, "//") || strings.Contains(b, "@{") {
		return false
	}
	for _, r := range b {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("~^:?*[\\", r) {
			return false
		}
	}
	return true
}

func validLoopID(id string) bool {
	if !strings.HasPrefix(id, "ralph-") || len(id) < len("ralph-x-00000000") {
		return false
	}
	hex := id[len(id)-8:]
	if id[len(id)-9] != '-' {
		return false
	}
	for _, r := range hex {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	for _, r := range id[len("ralph-") : len(id)-9] {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}
