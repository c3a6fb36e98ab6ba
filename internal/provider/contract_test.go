package provider

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/loop"
)

// Contract tests: a fake CLI (a shell script) replays a transcript, real
// (testdata/transcripts/real-*, recorded from the CLIs against the fake
// model servers by `go test -update`) or documented (doc-*, see
// testdata/SOURCES.md), and the provider's result and rendering are
// compared with golden files.

// replayScript prints the transcript, then stderr, and exits with a code,
// after recording its arguments and stdin.
const replayScript = `printf '%s\n' "$@" > "$FAKE_DIR/args"
cat > "$FAKE_DIR/stdin"
cat "$FAKE_TRANSCRIPT"
if [ -n "$FAKE_STDERR" ]; then printf '%s\n' "$FAKE_STDERR" >&2; fi
exit "$FAKE_EXIT"`

func TestContractTranscripts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, provider, transcript string
		exit                       int
		stderr                     string
		want                       loop.ErrorClass
	}{
		{name: "claude_fix", provider: "claude", transcript: "real-claude-fix"},
		{name: "claude_unauthorized", provider: "claude", transcript: "real-claude-unauthorized", exit: 1, want: loop.ClassAuth},
		{name: "claude_rate_limited", provider: "claude", transcript: "real-claude-rate_limited", exit: 1, want: loop.ClassRateLimit},
		{name: "claude_max_turns", provider: "claude", transcript: "doc-claude-max-turns", exit: 1, want: loop.ClassMaxTurns},
		{name: "claude_budget", provider: "claude", transcript: "doc-claude-budget", exit: 1, want: loop.ClassBudget},
		{name: "claude_permission_denied", provider: "claude", transcript: "doc-claude-permission-denied", want: loop.ClassToolFailure},
		{name: "claude_during_execution", provider: "claude", transcript: "doc-claude-during-execution", exit: 1, want: loop.ClassCrash},
		{name: "codex_fix", provider: "codex", transcript: "real-codex-fix"},
		{name: "codex_unauthorized", provider: "codex", transcript: "real-codex-unauthorized", exit: 1, want: loop.ClassAuth},
		{name: "codex_rate_limited", provider: "codex", transcript: "real-codex-rate_limited", exit: 1, want: loop.ClassRateLimit},
		{name: "opencode_fix", provider: "opencode", transcript: "real-opencode-fix"},
		{name: "opencode_unauthorized", provider: "opencode", transcript: "real-opencode-unauthorized", exit: 1, want: loop.ClassAuth},
		{name: "opencode_rate_limited", provider: "opencode", transcript: "real-opencode-rate_limited", exit: 1, want: loop.ClassRateLimit},
		// opencode exits 0 after an error event: the event decides.
		{name: "opencode_error_exit_zero", provider: "opencode", transcript: "real-opencode-unauthorized", want: loop.ClassAuth},
		{name: "opencode_tool_error", provider: "opencode", transcript: "doc-opencode-tool-error"},
		{name: "droid_fix", provider: "droid", transcript: "doc-droid-fix"},
		{name: "droid_json_result", provider: "droid", transcript: "doc-droid-json-result"},
		{name: "droid_unauthorized", provider: "droid", transcript: "real-droid-unauthorized", exit: 1, want: loop.ClassAuth},
		{name: "gemini_fix", provider: "gemini", transcript: "doc-gemini-fix"},
		{name: "gemini_real_fix", provider: "gemini", transcript: "real-gemini-fix"},
		{name: "gemini_real_unauthorized", provider: "gemini", transcript: "real-gemini-unauthorized", exit: 1, want: loop.ClassAuth},
		{name: "gemini_real_rate_limited", provider: "gemini", transcript: "real-gemini-rate_limited", exit: 1, want: loop.ClassRateLimit},
		{name: "gemini_quota", provider: "gemini", transcript: "doc-gemini-quota", exit: 1, want: loop.ClassRateLimit},
		{name: "gemini_turn_limit", provider: "gemini", transcript: "doc-gemini-turn-limit", exit: 53, want: loop.ClassMaxTurns},
		{name: "gemini_auth_exit", provider: "gemini", transcript: "", exit: 41,
			stderr: "Please set an Auth method in your settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA", want: loop.ClassAuth},
		{name: "gemini_untrusted", provider: "gemini", transcript: "", exit: 55, stderr: "Gemini CLI is not running in a trusted directory.", want: loop.ClassAuth},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			transcript := filepath.Join(dir, "empty.jsonl")
			if tc.transcript != "" {
				abs, err := filepath.Abs(filepath.Join("testdata", "transcripts", tc.transcript+".jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				transcript = abs
			} else if err := os.WriteFile(transcript, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := New(tc.provider, Config{Binary: fakeCLI(t, replayScript), Credentials: testCredentials, StateDir: dir, Model: "test-model"})
			if err != nil {
				t.Fatal(err)
			}
			env := append(shellEnv(), "FAKE_DIR="+dir, "FAKE_TRANSCRIPT="+transcript, "FAKE_EXIT="+strconv.Itoa(tc.exit), "FAKE_STDERR="+tc.stderr)
			var out, tr syncBuffer
			res, err := a.Run(context.Background(), loop.AgentRequest{
				Prompt: "The test fails.\nFix it.", Dir: dir, Env: env, Output: &out, Transcript: &tr, Timeout: time.Minute,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Class != tc.want {
				t.Errorf("class %q (%s), want %q", res.Class, res.Detail, tc.want)
			}
			if tc.want == loop.ClassNone && (res.Message == "" || res.SessionID == "" || res.Tokens() == 0 || res.CostUSD <= 0) {
				t.Errorf("a clean run must report message, session, tokens and cost: %+v", res)
			}
			if tc.want != loop.ClassNone && !strings.Contains(res.Detail, tc.provider) {
				t.Errorf("detail %q does not name the provider", res.Detail)
			}
			// The transcript is the CLI's stream, line for line.
			if tc.transcript != "" {
				raw, _ := os.ReadFile(transcript)
				if strings.TrimSpace(tr.String()) != strings.TrimSpace(string(raw)) {
					t.Error("the transcript differs from the CLI's stream")
				}
			}
			res.Duration = 0
			b, _ := json.MarshalIndent(res, "", "  ")
			got := string(b) + "\n--- output ---\n" + out.String()
			golden(t, got)
		})
	}
}

// The arguments and stdin each provider hands its CLI.
func TestContractInvocation(t *testing.T) {
	t.Parallel()
	prompt := "Fix the test.\nIt fails: \"quoted\" $HOME `date`"
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			empty := filepath.Join(dir, "empty.jsonl")
			if err := os.WriteFile(empty, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := New(name, Config{Binary: fakeCLI(t, replayScript), Credentials: testCredentials, StateDir: dir,
				Model: "m1", MaxTurns: 7, Extra: []string{"--extra-flag"}})
			if err != nil {
				t.Fatal(err)
			}
			env := append(shellEnv(), "FAKE_DIR="+dir, "FAKE_TRANSCRIPT="+empty, "FAKE_EXIT=0", "OPENAI_BASE_URL=http://127.0.0.1:9/v1")
			if _, err := a.Run(context.Background(), loop.AgentRequest{Prompt: prompt, Dir: dir, Env: env}); err != nil {
				t.Fatal(err)
			}
			args, _ := os.ReadFile(filepath.Join(dir, "args"))
			stdin, _ := os.ReadFile(filepath.Join(dir, "stdin"))
			got := strings.ReplaceAll("args:\n"+string(args)+"stdin:\n"+string(stdin)+"\n", dir, "$DIR")
			golden(t, got)
		})
	}
}

func golden(t *testing.T, got string) {
	t.Helper()
	p := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", p, d)
	}
}
