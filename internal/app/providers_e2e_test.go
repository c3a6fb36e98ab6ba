package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/fakemodel"
	"github.com/aiwg/agent-loop/internal/schemas"
	"github.com/aiwg/agent-loop/internal/spec"
)

// The whole loop with the real Claude Code and Codex CLIs, driven by the fake
// model servers: the CLI itself edits the file that makes the failing check
// pass; tokens and cost end up in the state; the GitHub token never reaches
// the CLI or its shell; nothing leaves 127.0.0.1.

func cliDir(t *testing.T, program string) string {
	t.Helper()
	if dir := os.Getenv("AGENT_LOOP_CLI_BIN"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, program)); err == nil {
			return dir
		}
	}
	if p, err := exec.LookPath(program); err == nil {
		return filepath.Dir(p)
	}
	msg := program + " is not installed: run `bash .ci/install-agents.sh` and set AGENT_LOOP_CLI_BIN to the directory it prints"
	if os.Getenv("AGENT_LOOP_REQUIRE_CLIS") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func TestLoopWithRealCLIs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real agent CLIs")
	}
	cases := []struct {
		provider, program, model, keyVar string
		env                              func(*fakemodel.Server) []string
		fix                              func(dir string) []fakemodel.ToolCall
		probe                            fakemodel.ToolCall
		costEstimated                    bool
	}{
		{
			provider: "claude", program: "claude", model: "claude-sonnet-4-5", keyVar: "ANTHROPIC_API_KEY",
			env: func(s *fakemodel.Server) []string {
				return []string{"ANTHROPIC_BASE_URL=" + s.URL, "CLAUDE_CODE_MAX_RETRIES=1"}
			},
			fix: func(dir string) []fakemodel.ToolCall {
				p := filepath.Join(dir, "answer.txt")
				return []fakemodel.ToolCall{{Name: "Read", Input: map[string]any{"file_path": p}}, {Name: "Write", Input: map[string]any{"file_path": p, "content": "answer=42\n"}}}
			},
			probe: fakemodel.ToolCall{Name: "Bash", Input: map[string]any{"command": "env > agent-env.txt", "description": "Write the environment to a file"}},
		},
		{
			provider: "codex", program: "codex", model: "gpt-5.5", keyVar: "OPENAI_API_KEY",
			env: func(s *fakemodel.Server) []string { return []string{"OPENAI_BASE_URL=" + s.OpenAIBaseURL()} },
			fix: func(string) []fakemodel.ToolCall {
				return []fakemodel.ToolCall{{Name: "apply_patch", Custom: "*** Begin Patch\n*** Update File: answer.txt\n@@\n-answer=41\n+answer=42\n*** End Patch\n"}}
			},
			probe:         fakemodel.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "env > agent-env.txt"}},
			costEstimated: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			bin := cliDir(t, tc.program)
			top := workDir(t)
			dir := filepath.Join(top, "repo")
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "answer.txt"), []byte("answer=41\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "test.sh"), []byte("grep -qx 'answer=42' answer.txt && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\n"), 0o644)
			git(t, dir, "init", "-q", "-b", "main")
			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-qm", "the answer is wrong")

			steps := []fakemodel.Step{{ToolCalls: []fakemodel.ToolCall{tc.probe}}}
			for _, call := range tc.fix(dir) {
				steps = append(steps, fakemodel.Step{ToolCalls: []fakemodel.ToolCall{call}})
			}
			steps = append(steps, fakemodel.Step{Text: "Fixed: answer.txt now says 42."})
			srv := fakemodel.Start(fakemodel.Script{Steps: steps})
			defer srv.Close()

			environ := harnessEnv("PATH="+bin+":"+os.Getenv("PATH"), "HOME="+filepath.Join(top, "home"), "LANG=C.UTF-8",
				tc.keyVar+"=sk-test-"+tc.provider+"-key-0123456789", "GITHUB_TOKEN=ghs_harnessSecret0123456789")
			os.MkdirAll(filepath.Join(top, "home"), 0o755)
			environ = append(environ, tc.env(srv)...)
			s := spec.Defaults(spec.DoorCLI)
			s.Start.Dir, s.Spec.Task, s.Spec.Criterion.Command = dir, "make test.sh pass", "sh test.sh"
			s.Spec.Agent.Provider, s.Spec.Agent.Model, s.Spec.Limits.MaxIterations = tc.provider, tc.model, 2
			s.Spec.Limits.Timeout = 5 * time.Minute
			v, err := spec.Validate(s, spec.DoorCLI)
			if err != nil {
				t.Fatal(err)
			}
			var errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			res, err := app.Run(ctx, v, app.IO{Stdin: strings.NewReader(""), Stdout: &errOut, Stderr: &errOut, Environ: environ}, app.Hooks{})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, errOut.String())
			}
			if !res.Completed() || res.State.Iteration != 1 {
				t.Fatalf("outcome %+v\n%s", res.Outcome, errOut.String())
			}
			b, _ := os.ReadFile(filepath.Join(dir, "answer.txt"))
			if strings.TrimSpace(string(b)) != "answer=42" {
				t.Fatalf("the CLI did not fix answer.txt: %q", b)
			}
			st := res.State
			if st.Metrics.TotalTokens <= 0 || st.Metrics.TotalCostUSD <= 0 {
				t.Errorf("tokens %d, cost %v: not recorded", st.Metrics.TotalTokens, st.Metrics.TotalCostUSD)
			}
			if h := st.IterationHistory[0]; h.CostEstimated != tc.costEstimated || h.Tokens != st.Metrics.TotalTokens {
				t.Errorf("iteration 1: cost estimated %v (want %v), tokens %d", h.CostEstimated, tc.costEstimated, h.Tokens)
			}
			if st.Harness.AgentVersion == "" {
				t.Errorf("the CLI's version was not recorded")
			}
			raw, _ := os.ReadFile(res.Dir.StatePath())
			if err := schemas.Validate(schemas.LoopState, raw); err != nil {
				t.Errorf("state: %v", err)
			}
			var parsed map[string]any
			json.Unmarshal(raw, &parsed)
			env, err := os.ReadFile(filepath.Join(dir, "agent-env.txt"))
			if err != nil {
				t.Fatalf("the probe did not run: %v", err)
			}
			if strings.Contains(string(env), "ghs_harnessSecret") {
				t.Errorf("the agent's shell saw GITHUB_TOKEN")
			}
			// As root, the CLI and its shell ran as the sandbox user.
			if os.Geteuid() == 0 && !strings.Contains(string(env), "\nUSER=agentloop") {
				t.Errorf("as root, the agent's shell did not run as the sandbox user:\n%s", env)
			}
			probes := 0
			for _, r := range srv.Requests() {
				if r.API == "probe" {
					// The preflight's reachability check: it carries no key.
					probes++
					if r.APIKey() != "" {
						t.Errorf("the reachability check sent a key: %q", r.APIKey())
					}
					continue
				}
				if !strings.Contains(r.APIKey(), "sk-test-"+tc.provider) {
					t.Errorf("a request to the fake carried key %q", r.APIKey())
				}
			}
			if probes == 0 {
				t.Error("the preflight did not check that the model API answers")
			}
			if esc := srv.Escaped(); len(esc) > 0 {
				t.Logf("requests refused by the fake's proxy (nothing left 127.0.0.1): %v", esc)
			}
			// Transcripts are kept, redacted.
			tr, _ := os.ReadFile(res.Dir.TranscriptPath(1))
			if len(tr) == 0 || strings.Contains(string(tr), "sk-test-"+tc.provider+"-key") {
				t.Errorf("transcript: %d bytes, key present: %v", len(tr), strings.Contains(string(tr), "sk-test-"))
			}
		})
	}
}
