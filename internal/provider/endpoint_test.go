package provider

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/fakemodel"
	"github.com/aiwg/agent-loop/internal/loop"
)

// closedURL is an address nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// Every provider's preflight fails fast, naming the address and the
// variable to set, when its model API does not answer; the same preflight
// passes when it does (an HTTP error is an answer).
func TestPreflightRefusesUnreachableModelAPI(t *testing.T) {
	t.Parallel()
	okCLI := fakeCLI(t, `echo '1.2.3 (Fake CLI)'`)
	closed := closedURL(t)
	srv := fakemodel.Start(fakemodel.Script{})
	t.Cleanup(srv.Close) // the parallel subtests run after this function returns
	for _, tc := range []struct{ provider, variable string }{
		{"claude", "ANTHROPIC_BASE_URL"}, {"codex", "OPENAI_BASE_URL"}, {"gemini", "GOOGLE_GEMINI_BASE_URL"},
		{"droid", "FACTORY_API_BASE_URL"}, {"opencode", "ANTHROPIC_BASE_URL"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			t.Parallel()
			a, _ := New(tc.provider, Config{Binary: okCLI, Credentials: map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k",
				"GEMINI_API_KEY": "k", "FACTORY_API_KEY": "k"}, StateDir: t.TempDir()})
			start := time.Now()
			_, err := a.(loop.Preflighter).Preflight(context.Background(), append(shellEnv(), tc.variable+"="+closed))
			var ue *UnreachableError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), closed) || !strings.Contains(err.Error(), tc.variable) {
				t.Fatalf("err = %v, want an UnreachableError naming %s and %s", err, closed, tc.variable)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("the check took %s", el)
			}
			if _, err := a.(loop.Preflighter).Preflight(context.Background(), append(shellEnv(), tc.variable+"="+srv.URL)); err != nil {
				t.Errorf("with the API answering: %v", err)
			}
		})
	}
}

// The check goes through the outbound proxy the environment names, as the
// CLI would: a host the harness cannot resolve is reachable through it.
func TestReachabilityUsesTheProxy(t *testing.T) {
	t.Parallel()
	proxy := fakemodel.Start(fakemodel.Script{}) // answers (and refuses) proxied requests
	defer proxy.Close()
	const api = "http://model-api.invalid/v1"
	if err := reach(context.Background(), api, nil); err == nil {
		t.Fatal("an unresolvable host is reachable without a proxy; the test is moot")
	}
	if err := reach(context.Background(), api, []string{"HTTP_PROXY=" + proxy.URL}); err != nil {
		t.Fatalf("through HTTP_PROXY: %v", err)
	}
	if len(proxy.Escaped()) == 0 {
		t.Error("the request did not go through the proxy")
	}
	if err := reach(context.Background(), api, []string{"http_proxy=" + proxy.URL, "NO_PROXY=.invalid"}); err == nil {
		t.Error("NO_PROXY was not honoured")
	}
}

// The real Codex CLI, its model API gone: it says "Reconnecting...
// waiting for network" and would wait until the idle timeout; the run ends
// at once as a configuration error naming the address and the variable.
func TestRealCodexUnreachableEndsFast(t *testing.T) {
	t.Parallel()
	bin := cliBinary(t, "codex")
	dir := failingRepo(t)
	closed := closedURL(t)
	srv := fakemodel.Start(fakemodel.Script{}) // only the proxy of harnessEnv
	defer srv.Close()
	a, err := New("codex", Config{Binary: bin, Credentials: testCredentials, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := runAgent(t, a, loop.AgentRequest{Prompt: "fix it", Dir: dir, Env: harnessEnv(t, bin, srv, "OPENAI_BASE_URL="+closed+"/v1"),
		Timeout: 5 * time.Minute, IdleTimeout: 4 * time.Minute})
	el := time.Since(start)
	r := got.res
	if r.Class != loop.ClassAuth || !strings.Contains(r.Detail, closed) || !strings.Contains(r.Detail, "OPENAI_BASE_URL") {
		t.Fatalf("class %q detail %q after %s, want auth naming %s and OPENAI_BASE_URL\n%s", r.Class, r.Detail, el, closed, got.output)
	}
	if el > 90*time.Second {
		t.Errorf("the run ended after %s: it waited for the network", el)
	}
	if !strings.Contains(got.output, "waiting for network") {
		t.Errorf("the CLI's own message is not in the output:\n%s", got.output)
	}
}

// The user's own CODEX_HOME with a custom model provider (its base_url and
// its env_key) is honoured: no OPENAI_API_KEY is needed, the requests carry
// the provider's key. With a private configuration the same environment
// lacks a credential.
func TestRealCodexUsesTheUsersConfig(t *testing.T) {
	t.Parallel()
	bin := cliBinary(t, "codex")
	dir := failingRepo(t)
	srv := fakemodel.Start(fakemodel.Script{Steps: []fakemodel.Step{
		{ToolCalls: []fakemodel.ToolCall{{Name: "apply_patch", Custom: "*** Begin Patch\n*** Update File: answer.txt\n@@\n-answer=41\n+answer=42\n*** End Patch\n"}}},
		{Text: "Fixed"},
	}})
	defer srv.Close()
	home := filepath.Join(t.TempDir(), "codex-home")
	os.MkdirAll(home, 0o700)
	cfg := "model_provider = \"gateway\"\nmodel = \"gpt-5.5\"\n\n[model_providers.gateway]\nname = \"My gateway\"\nbase_url = \"" +
		srv.OpenAIBaseURL() + "\"\nenv_key = \"MY_GATEWAY_KEY\"\nwire_api = \"responses\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := []string{"CODEX_HOME=" + home, "MY_GATEWAY_KEY=gw-key-0123456789"}
	vars := CredentialVarsFor("codex", "auto", environ)
	if !strings.Contains(strings.Join(vars, " "), "MY_GATEWAY_KEY") {
		t.Fatalf("CredentialVarsFor = %v, want the gateway's env_key", vars)
	}
	creds := map[string]string{"MY_GATEWAY_KEY": "gw-key-0123456789"}
	env := harnessEnv(t, bin, srv, "CODEX_HOME="+home)
	private, _ := New("codex", Config{Binary: bin, Credentials: creds, StateDir: t.TempDir(), AgentConfig: "private"})
	if _, err := private.(loop.Preflighter).Preflight(context.Background(), append(env, "OPENAI_BASE_URL="+srv.OpenAIBaseURL())); err == nil ||
		!strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("private configuration: preflight %v, want a missing OPENAI_API_KEY", err)
	}
	a, _ := New("codex", Config{Binary: bin, Credentials: creds, StateDir: t.TempDir(), AgentConfig: "auto"})
	if _, err := a.(loop.Preflighter).Preflight(context.Background(), env); err != nil {
		t.Fatalf("the user's configuration: preflight %v", err)
	}
	got := runAgent(t, a, loop.AgentRequest{Prompt: "fix answer.txt", Dir: dir, Env: env, Timeout: 2 * time.Minute, IdleTimeout: time.Minute})
	if got.res.Class != loop.ClassNone || !testPasses(t, dir) {
		t.Fatalf("class %q (%s); the test passes: %v\n%s", got.res.Class, got.res.Detail, testPasses(t, dir), got.output)
	}
	for _, r := range srv.Conversation() {
		if r.APIKey() != "gw-key-0123456789" {
			t.Errorf("a request carried %q, want the gateway's key", r.APIKey())
		}
	}
	if len(srv.Conversation()) == 0 {
		t.Error("no request reached the gateway")
	}
}
