package provider

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/fakemodel"
	"github.com/aiwg/agent-loop/internal/loop"
)

// The real CLIs, run against the fake model servers: the script makes the
// "model" call the CLI's own tools, the CLI edits the repository itself.

type realCLI struct {
	provider, program, model string
	// keyVar is the credential the fake must see.
	keyVar string
	// env returns the settings that point the CLI at the fake.
	env func(srv *fakemodel.Server) []string
	// fix calls the CLI's edit tools to make answer.txt say answer=42, one
	// model turn each (Claude Code's Write refuses a file it has not Read).
	fix func(dir string) []fakemodel.ToolCall
	// probe calls the CLI's shell tool to run `env > env.txt`.
	probe fakemodel.ToolCall
	// costReported: the CLI reports dollars (else the cost is estimated).
	costReported bool
	// mayEscape lists hosts a CLI tries in the background (refused by the
	// fake proxy, so nothing leaves; listed so new ones fail the test).
	mayEscape []string
	// hiddenKeys are credential variables the agent's shell must not see.
	hiddenKeys []string
}

var realCLIs = []realCLI{
	{
		provider: "claude", program: "claude", model: "claude-sonnet-4-5", keyVar: "ANTHROPIC_API_KEY",
		env: func(srv *fakemodel.Server) []string {
			// One retry keeps the rate-limit case short (the engine retries).
			return []string{"ANTHROPIC_BASE_URL=" + srv.URL, "CLAUDE_CODE_MAX_RETRIES=1"}
		},
		fix: func(dir string) []fakemodel.ToolCall {
			p := filepath.Join(dir, "answer.txt")
			return []fakemodel.ToolCall{
				{Name: "Read", Input: map[string]any{"file_path": p}},
				{Name: "Write", Input: map[string]any{"file_path": p, "content": "answer=42\n"}},
			}
		},
		probe:        fakemodel.ToolCall{Name: "Bash", Input: map[string]any{"command": "env > env.txt", "description": "Write the environment to a file"}},
		costReported: true,
		hiddenKeys:   []string{"OPENAI_API_KEY", "FACTORY_API_KEY", "GEMINI_API_KEY"},
	},
	{
		provider: "codex", program: "codex", model: "gpt-5.5", keyVar: "OPENAI_API_KEY",
		env: func(srv *fakemodel.Server) []string {
			return []string{"OPENAI_BASE_URL=" + srv.OpenAIBaseURL()}
		},
		fix: func(string) []fakemodel.ToolCall {
			return []fakemodel.ToolCall{{Name: "apply_patch", Custom: "*** Begin Patch\n*** Update File: answer.txt\n@@\n-answer=41\n+answer=42\n*** End Patch\n"}}
		},
		probe:      fakemodel.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "env > env.txt"}},
		hiddenKeys: []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FACTORY_API_KEY", "GEMINI_API_KEY"},
	},
	{
		provider: "opencode", program: "opencode", model: "anthropic/claude-sonnet-4-5", keyVar: "ANTHROPIC_API_KEY",
		env: func(srv *fakemodel.Server) []string {
			return []string{"ANTHROPIC_BASE_URL=" + srv.URL, "OPENCODE_DISABLE_MODELS_FETCH=1"}
		},
		fix: func(dir string) []fakemodel.ToolCall {
			p := filepath.Join(dir, "answer.txt")
			return []fakemodel.ToolCall{
				{Name: "read", Input: map[string]any{"filePath": p}},
				{Name: "write", Input: map[string]any{"filePath": p, "content": "answer=42\n"}},
			}
		},
		probe:        fakemodel.ToolCall{Name: "bash", Input: map[string]any{"command": "env > env.txt", "description": "Write the environment to a file"}},
		costReported: true,
		// opencode installs its plugin package in the background (non-fatal).
		mayEscape:  []string{"registry.npmjs.org:443"},
		hiddenKeys: []string{"OPENAI_API_KEY", "FACTORY_API_KEY", "GEMINI_API_KEY"},
	},
	{
		provider: "gemini", program: "gemini", model: "gemini-2.5-flash", keyVar: "GEMINI_API_KEY",
		env: func(srv *fakemodel.Server) []string {
			return []string{"GOOGLE_GEMINI_BASE_URL=" + srv.URL}
		},
		fix: func(dir string) []fakemodel.ToolCall {
			p := filepath.Join(dir, "answer.txt")
			return []fakemodel.ToolCall{
				{Name: "read_file", Input: map[string]any{"file_path": p}},
				{Name: "write_file", Input: map[string]any{"file_path": p, "content": "answer=42\n"}},
			}
		},
		probe:      fakemodel.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "env > env.txt", "description": "Write the environment to a file"}},
		hiddenKeys: []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FACTORY_API_KEY"},
	},
}

func (c realCLI) agent(t *testing.T, bin string) loop.Agent {
	t.Helper()
	a, err := New(c.provider, Config{Binary: bin, Credentials: testCredentials, StateDir: t.TempDir(), MaxTurns: 6})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (c realCLI) request(t *testing.T, bin string, srv *fakemodel.Server, dir string) loop.AgentRequest {
	return loop.AgentRequest{
		LoopID: "ralph-test-0000", Iteration: 1, Task: "fix the failing test", Criterion: "sh test.sh",
		Prompt: "The test `sh test.sh` fails. Make it pass by fixing answer.txt.",
		Dir:    dir, Env: harnessEnv(t, bin, srv, c.env(srv)...), Model: c.model,
		Timeout: 2 * time.Minute, IdleTimeout: time.Minute,
	}
}

// checkRequests asserts every model request carried our key and nothing
// tried to leave 127.0.0.1.
func (c realCLI) checkRequests(t *testing.T, srv *fakemodel.Server) {
	t.Helper()
	reqs := srv.Requests()
	if len(srv.Conversation()) == 0 {
		t.Fatalf("the CLI never asked the fake model; requests: %d", len(reqs))
	}
	for _, r := range reqs {
		if r.API == "anthropic" || r.API == "openai" || r.API == "gemini" {
			if got := r.APIKey(); got != testCredentials[c.keyVar] {
				t.Errorf("request %s %s carried key %q, want the %s given to the provider", r.Method, r.Path, got, c.keyVar)
			}
		}
	}
	for _, r := range srv.Escaped() {
		allowed := false
		for _, h := range c.mayEscape {
			allowed = allowed || r.Path == h
		}
		if !allowed {
			t.Errorf("a request tried to leave 127.0.0.1: %s %s (%s)", r.Method, r.Path, r.API)
		}
	}
}

func TestRealCLIFixesFailingTest(t *testing.T) {
	for _, c := range realCLIs {
		t.Run(c.provider, func(t *testing.T) {
			t.Parallel()
			bin := cliBinary(t, c.program)
			dir := failingRepo(t)
			var steps []fakemodel.Step
			for i, call := range c.fix(dir) {
				st := fakemodel.Step{ToolCalls: []fakemodel.ToolCall{call}}
				if i == 0 {
					st.Text = "I will fix answer.txt."
				}
				steps = append(steps, st)
			}
			srv := fakemodel.Start(fakemodel.Script{Steps: append(steps, fakemodel.Step{Text: "Fixed"})})
			defer srv.Close()
			req := c.request(t, bin, srv, dir)
			req.BudgetUSD = 5
			got := runAgent(t, c.agent(t, bin), req)
			saveTranscript(t, "real-"+c.provider+"-fix", got.transcript)
			r := got.res

			if b, _ := os.ReadFile(filepath.Join(dir, "answer.txt")); string(b) != "answer=42\n" {
				t.Errorf("answer.txt = %q after the run, want the scripted fix", b)
			}
			if !testPasses(t, dir) {
				t.Error("the repository's test still fails after the run")
			}
			if r.Class != loop.ClassNone || r.ExitCode != 0 {
				t.Errorf("class %q exit %d (%s), want a clean run\noutput:\n%s", r.Class, r.ExitCode, r.Detail, got.output)
			}
			conv := srv.Conversation()
			if want := int64(len(conv)) * fakemodel.DefaultInputTokens; r.InputTokens != want {
				t.Errorf("input tokens %d, want %d (%d model requests of %d)", r.InputTokens, want, len(conv), fakemodel.DefaultInputTokens)
			}
			if want := int64(len(conv)) * fakemodel.DefaultOutputTokens; r.OutputTokens != want {
				t.Errorf("output tokens %d, want %d", r.OutputTokens, want)
			}
			if r.CostUSD <= 0 || r.CostEstimated == c.costReported {
				t.Errorf("cost %v estimated=%v, want a positive cost, estimated=%v", r.CostUSD, r.CostEstimated, !c.costReported)
			}
			if r.SessionID == "" || r.Message != "Fixed" || r.Turns < 1 {
				t.Errorf("session %q message %q turns %d", r.SessionID, r.Message, r.Turns)
			}
			for _, q := range conv {
				if want := strings.TrimPrefix(c.model, "anthropic/"); q.Model != want {
					t.Errorf("the CLI asked for model %q, want %q", q.Model, want)
				}
			}
			if !strings.Contains(got.output, "→ ") || !strings.Contains(got.output, "Fixed") {
				t.Errorf("output does not render the tool call and the answer:\n%s", got.output)
			}
			if !strings.Contains(got.transcript, r.SessionID) {
				t.Errorf("transcript lacks the session:\n%s", got.transcript)
			}
			c.checkRequests(t, srv)
		})
	}
}

func TestRealCLIEnvironmentHasNoHarnessSecrets(t *testing.T) {
	for _, c := range realCLIs {
		t.Run(c.provider, func(t *testing.T) {
			t.Parallel()
			bin := cliBinary(t, c.program)
			dir := failingRepo(t)
			srv := fakemodel.Start(fakemodel.Script{Steps: []fakemodel.Step{
				{ToolCalls: []fakemodel.ToolCall{c.probe}},
				{Text: "Done"},
			}})
			defer srv.Close()
			got := runAgent(t, c.agent(t, bin), c.request(t, bin, srv, dir))
			if got.res.Class != loop.ClassNone {
				t.Fatalf("class %q: %s\n%s", got.res.Class, got.res.Detail, got.output)
			}
			vars := envNames(t, filepath.Join(dir, "env.txt"))
			for _, k := range append([]string{"GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_RESULTS_URL"}, c.hiddenKeys...) {
				if v, ok := vars[k]; ok {
					t.Errorf("the agent's shell sees %s=%q", k, v)
				}
			}
			for k, v := range vars {
				if strings.Contains(v, "harness_secret") || strings.Contains(v, "from-harness-env") {
					t.Errorf("the agent's shell sees a harness secret in %s", k)
				}
			}
			c.checkRequests(t, srv)
		})
	}
}

func TestRealCLIClassifiesAPIErrors(t *testing.T) {
	cases := []struct {
		name string
		err  *fakemodel.Error
		want loop.ErrorClass
	}{
		{"unauthorized", fakemodel.Unauthorized(), loop.ClassAuth},
		{"rate_limited", fakemodel.RateLimited(0), loop.ClassRateLimit},
	}
	for _, c := range realCLIs {
		for _, tc := range cases {
			t.Run(c.provider+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				bin := cliBinary(t, c.program)
				dir := failingRepo(t)
				srv := fakemodel.Start(fakemodel.Script{Steps: []fakemodel.Step{{Error: tc.err}}})
				defer srv.Close()
				got := runAgent(t, c.agent(t, bin), c.request(t, bin, srv, dir))
				saveTranscript(t, "real-"+c.provider+"-"+tc.name, got.transcript)
				if got.res.Class != tc.want {
					t.Errorf("class %q (%s), want %q\noutput:\n%s", got.res.Class, got.res.Detail, tc.want, got.output)
				}
				if got.res.Detail == "" {
					t.Error("no detail for the user")
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "answer.txt")); string(b) != "answer=41\n" {
					t.Errorf("answer.txt changed to %q without a model answer", b)
				}
				c.checkRequests(t, srv)
			})
		}
	}
}

func TestRealCLIPreflight(t *testing.T) {
	for _, c := range append(realCLIs, realCLI{provider: "droid", program: "droid"}) {
		t.Run(c.provider, func(t *testing.T) {
			t.Parallel()
			bin := cliBinary(t, c.program)
			a, err := New(c.provider, Config{Binary: bin, Credentials: testCredentials, StateDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			srv := fakemodel.Start(fakemodel.Script{})
			defer srv.Close()
			env := append([]string{"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir()},
				endpointEnv(srv.URL)...)
			v, err := a.(loop.Preflighter).Preflight(context.Background(), env)
			if err != nil || v == "" || !strings.ContainsAny(v, "0123456789") || strings.Contains(v, "WARN") {
				t.Fatalf("Preflight = %q, %v; want a version", v, err)
			}
			t.Logf("%s version %q", c.provider, v)
		})
	}
}

// droid needs Factory's servers for any model call, so it cannot run a task
// offline; its authentication check can: a key Factory does not know is
// refused, and the real CLI's answer must classify as auth.
func TestRealDroidRejectsInvalidKey(t *testing.T) {
	t.Parallel()
	bin := cliBinary(t, "droid")
	dir := failingRepo(t)
	srv := fakemodel.Start(fakemodel.Script{})
	defer srv.Close()
	a, err := New("droid", Config{Binary: bin, Credentials: map[string]string{"FACTORY_API_KEY": "fk-invalid-key"}})
	if err != nil {
		t.Fatal(err)
	}
	got := runAgent(t, a, loop.AgentRequest{Prompt: "fix it", Dir: dir, Env: harnessEnv(t, bin, srv), Timeout: time.Minute})
	saveTranscript(t, "real-droid-unauthorized", got.transcript)
	if got.res.Class != loop.ClassAuth || got.res.SessionID == "" {
		t.Fatalf("class %q session %q (%s), want auth\n%s", got.res.Class, got.res.SessionID, got.res.Detail, got.output)
	}
}
