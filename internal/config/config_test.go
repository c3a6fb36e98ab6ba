package config

import (
	"strings"
	"testing"
	"time"
)

func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	c := Defaults()
	c.MaxIterations = 0
	c.Provider = "gpt"
	c.RegressionPolicy = "ignore"
	c.NoInfer = true
	err := Validate(c)
	ps := Problems(err)
	if len(ps) != 5 {
		t.Fatalf("got %d problems: %v", len(ps), err)
	}
	msg := err.Error()
	for _, want := range []string{"task: missing", "--max-iterations: 0", `unknown provider "gpt"`, "valid: claude, codex, opencode, droid, gemini, command", "--no-infer-completion", "revert, warn, fail, human-gate"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestValidateCases(t *testing.T) {
	t.Parallel()
	ok := func(c Config) Config { c.Task = "fix"; return c }
	tests := []struct {
		name string
		mod  func(*Config)
		want string // "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"negative iterations", func(c *Config) { c.MaxIterations = -3 }, "-3 is not a positive"},
		{"command without agent command", func(c *Config) { c.Provider = "command" }, "--agent-command"},
		{"command provider ok", func(c *Config) { c.Provider = "command"; c.AgentCommand = "./a.sh" }, ""},
		{"alias factory", func(c *Config) { c.Provider = "factory" }, ""},
		{"agent command with claude", func(c *Config) { c.AgentCommand = "x" }, "only used with --provider command"},
		{"bad branch", func(c *Config) { c.Branch = "a..b" }, "not a valid branch"},
		{"bad loop id", func(c *Config) { c.LoopID = "loop1" }, "ralph-<slug>-<8 hex>"},
		{"good loop id", func(c *Config) { c.LoopID = "ralph-fix-tests-a1b2c3d4" }, ""},
		{"escaping workdir", func(c *Config) { c.Workdir = "../x" }, "stay inside"},
		{"zero timeout", func(c *Config) { c.Timeout = 0 }, "--timeout"},
		{"negative budget", func(c *Config) { c.BudgetUSD = -1 }, "--budget-usd"},
		{"iteration timeout", func(c *Config) { c.IterationTimeout = 5 * time.Minute }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := ok(Defaults())
			tt.mod(&c)
			err := Validate(c)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
