package spec_test

import (
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/spec"
)

// cliSettings parses args as `agent-loop run` does.
func cliSettings(t *testing.T, args ...string) spec.Settings {
	t.Helper()
	s := spec.Defaults(spec.DoorCLI)
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	spec.Flags(fs, &s, spec.Params())
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	if fs.NArg() > 0 {
		s.Set(spec.DoorCLI, "task", fs.Arg(0))
	}
	return s
}

// inputSettings reads inputs as the Action does.
func inputSettings(inputs map[string]string) spec.Settings {
	env := map[string]string{}
	for k, v := range inputs {
		env[spec.InputEnv(k)] = v
	}
	return spec.FromInputs(func(k string) string { return env[k] })
}

// The same mistakes, made at each door, are reported all at once, each
// named as that door's user knows it.
func TestValidateWordsProblemsForTheDoor(t *testing.T) {
	t.Parallel()
	cli := cliSettings(t, "--max-iterations", "0", "--provider", "gpt", "--regression-policy", "ignore", "--no-infer-completion", "--branch", "fix.")
	_, err := spec.Validate(cli, spec.DoorCLI)
	if n := len(spec.Problems(err)); n != 6 {
		t.Fatalf("%d problems, want 6: %v", n, err)
	}
	for _, want := range []string{"TASK: missing", "--max-iterations: 0 is not a positive number", `--provider: unknown provider "gpt"`,
		"valid: claude, codex, opencode, droid, gemini, command", "--no-infer-completion needs an explicit --completion",
		"revert, warn, fail, human-gate", `--branch: "fix." is not a valid branch name (it ends with .)`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CLI message lacks %q:\n%v", want, err)
		}
	}
	act := inputSettings(map[string]string{"max-iterations": "0", "provider": "gpt", "regression-policy": "ignore",
		"infer-completion": "false", "branch": "fix.", "timeout-minutes": "ten", "pr": "maybe"})
	_, err = spec.Validate(act, spec.DoorAction)
	for _, want := range []string{"input task: missing", "input max-iterations: 0 is not a positive number", `input provider: unknown provider "gpt"`,
		"input completion: infer-completion is false", `input branch: "fix." is not a valid branch name`, `input timeout-minutes: "ten" is not a number of minutes`,
		`input pr: unknown value "maybe"`, "input github-token: empty"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Action message lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("the Action's user is told about a flag:\n%v", err)
	}
}

func TestValidateCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string // "" = valid
	}{
		{"defaults", nil, ""},
		{"negative iterations", []string{"--max-iterations", "-3"}, "-3 is not a positive"},
		{"command without agent command", []string{"--provider", "command"}, "--agent-command"},
		{"agent command alone means the command provider", []string{"--agent-command", "./a.sh"}, ""},
		{"alias factory", []string{"--provider", "factory"}, ""},
		{"agent command with claude", []string{"--provider", "claude", "--agent-command", "x"}, "only used with provider command"},
		{"bad branch", []string{"--branch", "a..b"}, "not a valid branch"},
		{"branch ending in a dot", []string{"--branch", "fix."}, "not a valid branch"},
		{"good branch", []string{"--branch", "fix/the-parser"}, ""},
		{"bad loop id", []string{"--loop-id", "loop1"}, "ralph-<slug>-<8 hex>"},
		{"good loop id", []string{"--loop-id", "ralph-fix-tests-a1b2c3d4"}, ""},
		{"escaping workdir", []string{"--workdir", "../x"}, "stay inside"},
		{"absolute workdir", []string{"--workdir", "/etc"}, "stay inside"},
		{"workdir escaping through a subdirectory", []string{"--workdir", "a/../../x"}, "stay inside"},
		{"workdir named like dots", []string{"--workdir", "..tools/api"}, ""},
		{"zero timeout", []string{"--timeout", "0"}, "--timeout"},
		{"negative budget", []string{"--budget-usd", "-1"}, "--budget-usd"},
		{"iteration timeout as a duration", []string{"--iteration-timeout", "90s"}, ""},
		{"negative idle timeout", []string{"--idle-timeout", "-1"}, "--idle-timeout: must not be negative"},
		{"confirm runs out of range", []string{"--confirm-runs", "11"}, "out of range"},
		{"unknown agent config", []string{"--agent-config", "mine"}, "valid: auto, user, private"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := cliSettings(t, append(append([]string{"--completion", "true"}, tt.args...), "fix it")...)
			v, err := spec.Validate(s, spec.DoorCLI)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected: %v", err)
				}
				if tt.name == "agent command alone means the command provider" && v.Settings().Spec.Agent.Provider != "command" {
					t.Errorf("provider %q", v.Settings().Spec.Agent.Provider)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// Flags and inputs fill the same fields; inputs keep hyphens in INPUT_.
func TestFlagsAndInputsFillTheSameSpec(t *testing.T) {
	t.Parallel()
	cli := cliSettings(t, "--completion", "go test ./...", "--max-iterations", "7", "--timeout", "30", "--idle-timeout", "0.5",
		"--check-timeout", "5", "--max-turns", "9", "--agent-arg", "--effort", "--agent-arg", "high", "--model", "m",
		"--budget-usd", "2.5", "--max-tokens", "1000", "--regression-policy", "warn", "--confirm-runs", "2", "fix it")
	act := inputSettings(map[string]string{"task": "fix it", "completion": "go test ./...", "max-iterations": "7", "timeout-minutes": "30",
		"idle-timeout-minutes": "0.5", "check-timeout-minutes": "5", "max-turns": "9", "agent-args": "--effort\nhigh\n", "model": "m",
		"budget-usd": "2.5", "max-tokens": "1000", "regression-policy": "warn", "confirm-runs": "2"})
	if d := cmp.Diff(cli.Spec.Limits, act.Spec.Limits); d != "" {
		t.Errorf("limits (-cli +action):\n%s", d)
	}
	act.Spec.Agent.Config = cli.Spec.Agent.Config // a CLI-only parameter
	if d := cmp.Diff(cli.Spec.Agent, act.Spec.Agent); d != "" {
		t.Errorf("agent (-cli +action):\n%s", d)
	}
	if cli.Spec.Limits.IdleTimeout != 30*time.Second || cli.Spec.Agent.Args[1] != "high" {
		t.Errorf("limits %+v agent %+v", cli.Spec.Limits, cli.Spec.Agent)
	}
}

// The Spec survives JSON whole.
func TestSpecJSONRoundTrip(t *testing.T) {
	t.Parallel()
	sp := spec.Spec{Task: "t", Criterion: spec.Criterion{Command: "c", Workdir: "w", Setup: "s", Source: spec.SourceHint, Confidence: "high",
		Evidence: []string{"e"}, Hint: "h", Depends: spec.Depends{Files: []string{"f"}, Targets: []string{"Makefile:test"}, Runner: "go test"},
		Origin: &spec.Origin{File: ".github/workflows/ci.yml", Job: "test", Step: "Test"}},
		Limits: spec.Limits{MaxIterations: 3, Timeout: 90 * time.Minute, IterationTimeout: 90 * time.Second, IdleTimeout: time.Minute, CheckTimeout: 1500 * time.Millisecond,
			BudgetUSD: 1.25, MaxTokens: 9},
		Agent:   spec.Agent{Provider: "codex", Command: "x", Model: "m", MaxTurns: 4, Args: []string{"-a"}, Config: "user"},
		Publish: spec.Publish{Branch: "b", Commit: true, Push: true, Protected: []string{".github/**", "!.github/ISSUE_TEMPLATE/"}, PR: "open", Draft: true, Base: "main"},
		Policy:  spec.Policy{Regression: "warn", ConfirmRuns: 2}}
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	var back spec.Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(sp, back); d != "" {
		t.Errorf("round trip (-want +got):\n%s\n%s", d, b)
	}
	if !strings.Contains(string(b), `"timeout":"1h30m0s"`) {
		t.Errorf("durations are not readable: %s", b)
	}
}

// resume changes only the parameters it was given, checked again.
func TestAmend(t *testing.T) {
	t.Parallel()
	s := cliSettings(t, "--completion", "true", "--idle-timeout", "3", "--max-turns", "9", "fix it")
	v, err := spec.Validate(s, spec.DoorCLI)
	if err != nil {
		t.Fatal(err)
	}
	saved := v.Settings().Spec
	var changes spec.Settings
	fs := flag.NewFlagSet("resume", flag.ContinueOnError)
	spec.Flags(fs, &changes, spec.ResumeParams())
	if err := fs.Parse([]string{"--max-iterations", "20", "--quiet"}); err != nil {
		t.Fatal(err)
	}
	got, err := spec.Amend(saved, changes, spec.DoorCLI)
	if err != nil {
		t.Fatal(err)
	}
	want := saved.Clone()
	want.Limits.MaxIterations = 20
	if d := cmp.Diff(want, got.Spec); d != "" {
		t.Errorf("amended (-want +got):\n%s", d)
	}
	if !got.Start.Quiet {
		t.Error("--quiet was lost")
	}
	if err := fs.Parse([]string{"--max-iterations", "0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.Amend(saved, changes, spec.DoorCLI); err == nil || !strings.Contains(err.Error(), "--max-iterations: 0") {
		t.Errorf("an invalid change is accepted: %v", err)
	}
	for _, p := range spec.ResumeParams() {
		if p.Flag == "" {
			t.Errorf("resume parameter %s has no flag", p.Name)
		}
	}
}
