package provider

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/fakemodel"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
)

var update = flag.Bool("update", false, "rewrite golden files")

// cliBinary finds a real agent CLI: in $AGENT_LOOP_CLI_BIN (the dir
// .ci/install-agents.sh prints), else in PATH. Without it the test skips,
// unless AGENT_LOOP_REQUIRE_CLIS=1 (CI), where it fails.
func cliBinary(t *testing.T, program string) string {
	t.Helper()
	if dir := os.Getenv("AGENT_LOOP_CLI_BIN"); dir != "" {
		p := filepath.Join(dir, program)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(program); err == nil {
		return p
	}
	msg := program + " CLI not installed: run `bash .ci/install-agents.sh` and set AGENT_LOOP_CLI_BIN to the directory it prints"
	if os.Getenv("AGENT_LOOP_REQUIRE_CLIS") == "1" {
		t.Fatal(msg + " (AGENT_LOOP_REQUIRE_CLIS=1)")
	}
	t.Skip(msg)
	return ""
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a run.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// failingRepo makes a git repository whose test (test.sh) fails until
// answer.txt says answer=42.
func failingRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"answer.txt": "answer=41\n",
		"test.sh":    "#!/bin/sh\nif grep -qx 'answer=42' answer.txt; then echo '1 passed, 0 failed'; else echo 'FAIL: answer.txt must say answer=42'; echo '0 passed, 1 failed'; exit 1; fi\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "failing test")
	if testPasses(t, dir) {
		t.Fatal("the fixture's test passes before the fix")
	}
	return dir
}

// testPasses runs the repository's own test.
func testPasses(t *testing.T, dir string) bool {
	t.Helper()
	cmd := exec.Command("sh", "test.sh")
	cmd.Dir = dir
	return cmd.Run() == nil
}

// harnessEnv is the environment a provider gets in the real tests: what the
// engine would hand it (process.SafeEnv of an environment full of secrets),
// with a private HOME, the CLI's directory in PATH, every proxy variable
// pointing at the fake (which refuses and records anything that tries to
// leave 127.0.0.1) and extra settings (base URLs).
func harnessEnv(t *testing.T, bin string, srv *fakemodel.Server, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	raw := []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "LANG=C.UTF-8", "TERM=dumb",
		"HTTPS_PROXY=" + srv.URL, "HTTP_PROXY=" + srv.URL, "ALL_PROXY=" + srv.URL,
		"https_proxy=" + srv.URL, "http_proxy=" + srv.URL,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		// Secrets of the harness that must never reach the agent.
		"GITHUB_TOKEN=ghs_harness_secret_token", "ACTIONS_RUNTIME_TOKEN=runtime_secret_token",
		"ACTIONS_RESULTS_URL=https://results.example.invalid/",
		"ANTHROPIC_API_KEY=sk-ant-from-harness-env", "OPENAI_API_KEY=sk-openai-from-harness-env",
	}
	return process.SafeEnv(append(raw, extra...))
}

// testCredentials are the keys the engine would hand every provider's
// constructor; each provider must pass on only its own.
var testCredentials = map[string]string{
	"ANTHROPIC_API_KEY": "sk-ant-test-key-0001",
	"OPENAI_API_KEY":    "sk-openai-test-key-0002",
	"FACTORY_API_KEY":   "fk-test-key-0003",
	"GEMINI_API_KEY":    "gemini-test-key-0004",
}

// runAgent runs one provider request with a transcript and output.
type runOut struct {
	res        loop.AgentResult
	output     string
	transcript string
}

func runAgent(t *testing.T, a loop.Agent, req loop.AgentRequest) runOut {
	t.Helper()
	var out, tr syncBuffer
	req.Output, req.Transcript = &out, &tr
	if req.Timeout == 0 {
		req.Timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := a.Run(ctx, req)
	if err != nil {
		t.Fatalf("%s Run: %v", a.Name(), err)
	}
	t.Logf("%s result: %+v", a.Name(), res)
	return runOut{res: res, output: out.String(), transcript: tr.String()}
}

// saveTranscript keeps a real CLI's transcript as a contract fixture when
// -update is given.
func saveTranscript(t *testing.T, name, transcript string) {
	t.Helper()
	if !*update {
		return
	}
	p := filepath.Join("testdata", "transcripts", name+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(transcript), 0o644); err != nil {
		t.Fatal(err)
	}
}

// envLines reads the env.txt a probing run made the CLI write.
func envNames(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the probing run did not write %s: %v", path, err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && k != "" && !strings.ContainsAny(k, " \t") {
			vars[k] = v
		}
	}
	return vars
}

// endpointEnv points every provider's model API at url.
func endpointEnv(url string) []string {
	return []string{"ANTHROPIC_BASE_URL=" + url, "OPENAI_BASE_URL=" + url + "/v1", "GOOGLE_GEMINI_BASE_URL=" + url,
		"FACTORY_API_BASE_URL=" + url}
}
