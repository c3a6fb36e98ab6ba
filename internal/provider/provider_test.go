package provider

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/loop"
)

func TestNewNames(t *testing.T) {
	t.Parallel()
	if d := cmp.Diff([]string{"claude", "codex", "droid", "gemini", "opencode"}, Names()); d != "" {
		t.Errorf("Names (-want +got):\n%s", d)
	}
	for name, want := range map[string]string{"claude": "claude", "Claude": "claude", "factory": "droid", "droid": "droid",
		"codex": "codex", "gemini": "gemini", "opencode": "opencode", "claude-code": "claude"} {
		a, err := New(name, Config{})
		if err != nil || a.Name() != want {
			t.Errorf("New(%q) = %v, %v; want %s", name, a, err, want)
		}
	}
	_, err := New("cursor", Config{})
	if err == nil || !strings.Contains(err.Error(), `"cursor"`) || !strings.Contains(err.Error(), "claude, codex, droid, gemini, opencode") {
		t.Errorf("New(cursor) error %v does not list the valid providers", err)
	}
}

func TestCredentialVars(t *testing.T) {
	t.Parallel()
	if got := CredentialVars("claude"); !contains(got, "ANTHROPIC_API_KEY") || !contains(got, "CLAUDE_CODE_OAUTH_TOKEN") {
		t.Errorf("claude credentials %v", got)
	}
	if got := CredentialVars("factory"); len(got) != 1 || got[0] != "FACTORY_API_KEY" {
		t.Errorf("droid credentials %v", got)
	}
	if CredentialVars("nope") != nil {
		t.Error("unknown provider has credentials")
	}
	if got := CredentialInput("CLAUDE_CODE_OAUTH_TOKEN"); got != "claude-code-oauth-token" {
		t.Errorf("input %q", got)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestPreflightErrors(t *testing.T) {
	t.Parallel()
	api := httptest.NewServer(http.NotFoundHandler()) // any answer is a model API that answers
	t.Cleanup(api.Close)
	okCLI := fakeCLI(t, `echo 'WARNING: a warning on stderr' >&2; echo '1.2.3 (Fake CLI)'`)
	badCLI := fakeCLI(t, `echo 'segfault in --version' >&2; exit 2`)
	cases := []struct {
		name, provider, bin string
		creds               map[string]string
		version             string
		errs                []string
	}{
		{name: "ok", provider: "claude", bin: okCLI, creds: testCredentials, version: "1.2.3 (Fake CLI)"},
		{name: "no_binary_no_key", provider: "claude", bin: "/nonexistent/claude", creds: map[string]string{"OPENAI_API_KEY": "k"},
			errs: []string{"npm install -g @anthropic-ai/claude-code", "ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN", "anthropic-api-key"}},
		{name: "no_key", provider: "droid", bin: okCLI, creds: nil, version: "1.2.3 (Fake CLI)", errs: []string{"FACTORY_API_KEY", "factory-api-key"}},
		{name: "version_fails", provider: "codex", bin: badCLI, creds: testCredentials, errs: []string{"--version failed (exit 2)", "segfault", "npm install -g @openai/codex"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, _ := New(tc.provider, Config{Binary: tc.bin, Credentials: tc.creds, StateDir: t.TempDir()})
			v, err := a.(loop.Preflighter).Preflight(context.Background(), append(shellEnv(), endpointEnv(api.URL)...))
			if v != tc.version {
				t.Errorf("version %q, want %q", v, tc.version)
			}
			if len(tc.errs) == 0 && err != nil {
				t.Fatalf("err = %v", err)
			}
			for _, want := range tc.errs {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to mention %q", err, want)
				}
			}
		})
	}
	// A missing binary is a typed error.
	a, _ := New("gemini", Config{Credentials: testCredentials})
	_, err := a.(loop.Preflighter).Preflight(context.Background(), []string{"PATH=" + t.TempDir()})
	var missing *MissingCLIError
	if !errors.As(err, &missing) || missing.Install != "npm install -g @google/gemini-cli" {
		t.Errorf("err = %v, want MissingCLIError", err)
	}
}

// Each provider passes on its own credentials only, next to the engine's
// filtered environment.
func TestProviderEnvironment(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ model, want, notWant []string }{
		"claude":   {want: []string{"ANTHROPIC_API_KEY=sk-ant-test-key-0001", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CONFIG_DIR="}, notWant: []string{"OPENAI_API_KEY", "FACTORY_API_KEY", "GEMINI_API_KEY"}},
		"codex":    {want: []string{"OPENAI_API_KEY=sk-openai-test-key-0002", "CODEX_HOME="}, notWant: []string{"ANTHROPIC_API_KEY", "FACTORY_API_KEY", "GEMINI_API_KEY"}},
		"droid":    {want: []string{"FACTORY_API_KEY=fk-test-key-0003"}, notWant: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"}},
		"gemini":   {want: []string{"GEMINI_API_KEY=gemini-test-key-0004", "GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_CLI_HOME="}, notWant: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "FACTORY_API_KEY"}},
		"opencode": {model: []string{"anthropic/claude-sonnet-4-5"}, want: []string{"ANTHROPIC_API_KEY=sk-ant-test-key-0001", "OPENCODE_CONFIG_CONTENT=", "XDG_DATA_HOME="}, notWant: []string{"OPENAI_API_KEY", "FACTORY_API_KEY", "GEMINI_API_KEY"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg := Config{Binary: fakeCLI(t, `env > "$FAKE_DIR/env"`), Credentials: testCredentials, StateDir: dir}
			if len(tc.model) > 0 {
				cfg.Model = tc.model[0]
			}
			a, _ := New(name, cfg)
			env := append(shellEnv(), "FAKE_DIR="+dir, "KEEP_ME=1")
			if _, err := a.Run(context.Background(), loop.AgentRequest{Prompt: "p", Dir: dir, Env: env}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "env"))
			if err != nil {
				t.Fatal(err)
			}
			got := string(b)
			for _, w := range append(tc.want, "KEEP_ME=1") {
				if !strings.Contains(got, w) {
					t.Errorf("the CLI's environment lacks %s", w)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(got, nw+"=") {
					t.Errorf("the CLI's environment has %s", nw)
				}
			}
			for _, line := range strings.Split(got, "\n") {
				if strings.HasSuffix(strings.SplitN(line, "=", 2)[0], "_HOME") || strings.HasPrefix(line, "CLAUDE_CONFIG_DIR=") {
					if v := strings.SplitN(line, "=", 2)[1]; !strings.HasPrefix(v, dir) && !strings.HasPrefix(line, "HOME=") {
						t.Errorf("%s is not under the state dir %s", line, dir)
					}
				}
			}
		})
	}
}

func TestOpencodeConfigMerge(t *testing.T) {
	t.Parallel()
	env := []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:1234/", "OPENAI_BASE_URL=http://127.0.0.1:5678/v1",
		`OPENCODE_CONFIG_CONTENT={"share":"manual","provider":{"anthropic":{"options":{"timeout":5}}}}`}
	got, err := opencodeConfig(env)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(got), &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"autoupdate": false, "share": "manual",
		"permission": map[string]any{"edit": "allow", "bash": "allow", "webfetch": "allow"},
		"provider": map[string]any{
			"anthropic": map[string]any{"options": map[string]any{"timeout": 5.0, "baseURL": "http://127.0.0.1:1234/v1"}},
			"openai":    map[string]any{"options": map[string]any{"baseURL": "http://127.0.0.1:5678/v1"}},
		},
	}
	if d := cmp.Diff(want, cfg); d != "" {
		t.Errorf("config (-want +got):\n%s", d)
	}
	if _, err := opencodeConfig([]string{"OPENCODE_CONFIG_CONTENT=not json"}); err == nil || !strings.Contains(err.Error(), "OPENCODE_CONFIG_CONTENT") {
		t.Errorf("bad user config: err = %v", err)
	}
}

func TestPrices(t *testing.T) {
	t.Parallel()
	p := DefaultPrices()
	cases := []struct {
		model, fallback, want string
	}{
		{"gpt-5", "", "gpt-5"},
		{"gpt-5-mini-2025", "", "gpt-5-mini"},
		{"gpt-5.5", "", "gpt-5"},
		{"gemini-2.5-flash-lite-001", "", "gemini-2.5-flash-lite"},
		{"some-new-model", "gemini-2.5-pro", "gemini-2.5-pro"},
		{"", "gpt-5", "gpt-5"},
	}
	for _, tc := range cases {
		got, ok := p.Lookup(tc.model, tc.fallback)
		if !ok || got != p[tc.want] {
			t.Errorf("Lookup(%q, %q) = %+v %v, want %s", tc.model, tc.fallback, got, ok, tc.want)
		}
	}
	if _, ok := p.Lookup("unknown", ""); ok {
		t.Error("unknown model priced without a fallback")
	}
	// 1M input of which 400k cached, 100k output at gpt-5 prices.
	if c := p["gpt-5"].Cost(1_000_000, 400_000, 100_000); math.Abs(c-(0.6*1.25+0.4*0.125+0.1*10)) > 1e-9 {
		t.Errorf("cost %v", c)
	}
	if c := (Price{Input: 2, Output: 4}).Cost(10, 20, 0); math.Abs(c-2e-5) > 1e-12 {
		t.Errorf("cached over input: cost %v", c)
	}
}

func TestClassifyText(t *testing.T) {
	t.Parallel()
	cases := map[string]loop.ErrorClass{
		"Invalid API key · Please run /login":                          loop.ClassAuth,
		"unexpected status 401 Unauthorized: Incorrect API key":        loop.ClassAuth,
		"OAuth token has expired":                                      loop.ClassAuth,
		"Your credit balance is too low to access the Anthropic API":   loop.ClassAuth,
		"API Error: 529 {\"type\":\"overloaded_error\"}":               loop.ClassRateLimit,
		"exceeded retry limit, last status: 429 Too Many Requests":     loop.ClassRateLimit,
		"You exceeded your current quota (Status: RESOURCE_EXHAUSTED)": loop.ClassRateLimit,
		"rate_limit_error": loop.ClassRateLimit,
		"TypeError: cannot read properties of undefined": loop.ClassNone,
		"": loop.ClassNone,
	}
	keys := make([]string, 0, len(cases))
	for k := range cases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, msg := range keys {
		if got := classifyText(msg); got != cases[msg] {
			t.Errorf("classifyText(%q) = %q, want %q", msg, got, cases[msg])
		}
	}
}
