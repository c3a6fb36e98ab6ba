package app

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/actions"
	"github.com/aiwg/agent-loop/internal/config"
)

// actionInputs is what the Action reads from its inputs besides config.Config.
type actionInputs struct {
	Token            string
	PR               string // open, comment, none
	Draft            bool
	TriggerPhrase    string
	AllowForks       bool
	Base             string
	FailOnIncomplete bool
	// Credentials maps provider environment variables to input values.
	Credentials map[string]string
}

// credentialInputs maps the provider credential inputs to the variables
// the agent CLIs read.
var credentialInputs = map[string]string{
	"anthropic-api-key":       "ANTHROPIC_API_KEY",
	"claude-code-oauth-token": "CLAUDE_CODE_OAUTH_TOKEN",
	"openai-api-key":          "OPENAI_API_KEY",
	"gemini-api-key":          "GEMINI_API_KEY",
	"factory-api-key":         "FACTORY_API_KEY",
	"opencode-api-key":        "OPENCODE_API_KEY",
}

// configFromInputs fills config.Config from the action's inputs; every
// unreadable input is reported (errors.Join through config.Problem).
func configFromInputs(rt *actions.Runtime, workspace string) (config.Config, actionInputs, []error) {
	cfg := config.Defaults()
	var errs []error
	bad := func(input, cause, fix string, valid ...string) {
		errs = append(errs, &config.Problem{Field: "input " + input, Cause: cause, Fix: fix, Valid: valid})
	}
	num := func(name string, def int) int {
		v := rt.Input(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			bad(name, fmt.Sprintf("%q is not a whole number", v), "use e.g. "+strconv.Itoa(def))
			return def
		}
		return n
	}
	float := func(name string) float64 {
		v := rt.Input(name)
		if v == "" {
			return 0
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			bad(name, fmt.Sprintf("%q is not a number", v), "use e.g. 5 or 2.50, or 0 for none")
		}
		return f
	}
	boolean := func(name string, def bool) bool {
		switch strings.ToLower(rt.Input(name)) {
		case "":
			return def
		case "true", "yes", "1", "on":
			return true
		case "false", "no", "0", "off":
			return false
		}
		bad(name, fmt.Sprintf("%q is not a boolean", rt.Input(name)), "", "true", "false")
		return def
	}
	cfg.Dir = workspace
	cfg.Task = rt.Input("task")
	cfg.Completion = rt.Input("completion")
	cfg.MaxIterations = num("max-iterations", 10)
	cfg.Timeout = time.Duration(num("timeout-minutes", 60)) * time.Minute
	cfg.IterationTimeout = time.Duration(num("iteration-timeout-minutes", 0)) * time.Minute
	cfg.Provider = config.NormalizeProvider(strings.TrimSpace(rt.Input("provider")))
	if cfg.Provider == "" {
		cfg.Provider = "claude"
	}
	cfg.AgentCommand = rt.Input("agent-command")
	cfg.Model = rt.Input("model")
	cfg.Branch = rt.Input("branch")
	cfg.Setup = rt.Input("setup")
	cfg.NoInfer = !boolean("infer-completion", true)
	cfg.AutoCriteria = boolean("auto-criteria", true)
	cfg.BudgetUSD = float("budget-usd")
	cfg.MaxTokens = int64(num("max-tokens", 0))
	cfg.LoopID = rt.Input("loop-id")
	if p := rt.Input("regression-policy"); p != "" {
		cfg.RegressionPolicy = p
	}
	cfg.ConfirmRuns = num("confirm-runs", 1)
	cfg.Push = true
	cfg.Force = true

	ai := actionInputs{
		Token: rt.Input("github-token"), PR: strings.ToLower(rt.Input("pr")), Draft: boolean("draft", false),
		TriggerPhrase: rt.Input("trigger-phrase"), AllowForks: boolean("allow-forks", false), Base: rt.Input("base"),
		FailOnIncomplete: boolean("fail-on-incomplete", true), Credentials: map[string]string{},
	}
	if ai.PR == "" {
		ai.PR = "open"
	}
	if ai.PR != "open" && ai.PR != "comment" && ai.PR != "none" {
		bad("pr", fmt.Sprintf("unknown value %q", ai.PR), "say what to publish at the end", "open", "comment", "none")
	}
	if ai.TriggerPhrase == "" {
		ai.TriggerPhrase = "/agent-loop"
	}
	if strings.TrimSpace(ai.Token) == "" {
		bad("github-token", "empty", "leave it at its default ${{ github.token }} and grant `permissions: contents: write, pull-requests: write, issues: write`, or pass a GitHub App token")
	}
	for input, env := range credentialInputs {
		if v := rt.Input(input); v != "" {
			ai.Credentials[env] = v
		}
	}
	return cfg, ai, errs
}
