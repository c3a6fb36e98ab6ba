package actions

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mapEnv(m map[string]string) Env { return func(k string) string { return m[k] } }

func TestInput(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"INPUT_MAX-ITERATIONS":            " 7 \n",
		"INPUT_GITHUB-TOKEN":              "ghs_x",
		"INPUT_TASK":                      "fix the tests\nin pkg/parser",
		"INPUT_WITH_SPACE":                "spaced",
		"INPUT_MAX_ITERATIONS":            "wrong variable",
		"INPUT_ITERATION-TIMEOUT-MINUTES": "15",
	}
	rt, err := NewRuntime(mapEnv(env), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, want string }{
		{"max-iterations", "7"},
		{"MAX-ITERATIONS", "7"},
		{"github-token", "ghs_x"},
		{"task", "fix the tests\nin pkg/parser"},
		{"with space", "spaced"},
		{"iteration-timeout-minutes", "15"},
		{"model", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rt.Input(tt.name); got != tt.want {
				t.Errorf("Input(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
	if got := InputEnvName("max-iterations"); got != "INPUT_MAX-ITERATIONS" {
		t.Errorf("InputEnvName = %q", got)
	}
}

// TestInputsReachExecFormEntrypoint runs this test binary the way docker
// runs an exec-form ENTRYPOINT (no shell) with the hyphenated variable the
// runner sets, and shows why a /bin/sh wrapper is not an option.
func TestInputsReachExecFormEntrypoint(t *testing.T) {
	if os.Getenv("AGENT_LOOP_HELPER") == "print-input" {
		return // the helper branch runs in TestHelperPrintInput
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHelperPrintInput$")
	cmd.Env = []string{"AGENT_LOOP_HELPER=print-input", "INPUT_MAX-ITERATIONS=7"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "max-iterations=7\n") {
		t.Errorf("exec without a shell: the binary read %q, want max-iterations=7", out)
	}

	// dash (Debian's /bin/sh, the base of the image) drops variables whose
	// names are not shell identifiers.
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil || filepath.Base(sh) != "dash" {
		t.Skipf("/bin/sh is %q, not dash", sh)
	}
	cmd = exec.Command("/bin/sh", "-c", `exec "$0" -test.run='^TestHelperPrintInput$'`, exe)
	cmd.Env = []string{"AGENT_LOOP_HELPER=print-input", "INPUT_MAX-ITERATIONS=7"}
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper through sh: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "max-iterations=\n") {
		t.Errorf("through /bin/sh the input survived (%q): the reason for exec form is gone?", out)
	}
}

func TestHelperPrintInput(t *testing.T) {
	if os.Getenv("AGENT_LOOP_HELPER") != "print-input" {
		t.Skip("helper process for TestInputsReachExecFormEntrypoint")
	}
	rt, err := NewRuntime(os.Getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("max-iterations=" + rt.Input("max-iterations") + "\n")
}

func TestContext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want func(t *testing.T, rt *Runtime)
	}{
		{
			name: "github.com defaults",
			env: map[string]string{
				"GITHUB_EVENT_NAME": "issue_comment", "GITHUB_REPOSITORY": "octo/repo", "GITHUB_RUN_ID": "123456789",
				"GITHUB_RUN_ATTEMPT": "2", "GITHUB_ACTOR": "alice", "GITHUB_ACTIONS": "true",
			},
			want: func(t *testing.T, rt *Runtime) {
				c := rt.Context()
				got := []any{c.EventName, c.Repository, c.RunID, c.RunAttempt, c.Actor, c.APIURL, c.ServerURL, c.GraphqlURL, c.Actions}
				want := []any{"issue_comment", "octo/repo", int64(123456789), int64(2), "alice", "https://api.github.com", "https://github.com", "https://api.github.com/graphql", true}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("context (-want +got):\n%s", diff)
				}
				owner, repo := c.Repo()
				if owner != "octo" || repo != "repo" {
					t.Errorf("Repo() = %q, %q", owner, repo)
				}
			},
		},
		{
			name: "GHES URLs are honoured",
			env: map[string]string{
				"GITHUB_API_URL": "https://ghe.example.com/api/v3", "GITHUB_SERVER_URL": "https://ghe.example.com",
				"GITHUB_GRAPHQL_URL": "https://ghe.example.com/api/graphql",
			},
			want: func(t *testing.T, rt *Runtime) {
				c := rt.Context()
				got := []string{c.APIURL, c.ServerURL, c.GraphqlURL}
				want := []string{"https://ghe.example.com/api/v3", "https://ghe.example.com", "https://ghe.example.com/api/graphql"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("URLs (-want +got):\n%s", diff)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt, err := NewRuntime(mapEnv(tt.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			tt.want(t, rt)
		})
	}
}

func TestContextErrors(t *testing.T) {
	t.Parallel()
	_, err := NewRuntime(mapEnv(map[string]string{"GITHUB_RUN_ID": "not-a-number"}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not-a-number") {
		t.Errorf("NewRuntime with GITHUB_RUN_ID=not-a-number: err = %v, want one quoting the value", err)
	}
}

func TestEvent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("event.json", `{"action":"created","comment":{"body":"/agent-loop fix it","id":42},"issue":{"number":7}}`)
	tests := []struct {
		name      string
		path      string
		wantErr   []string // substrings
		wantEvent map[string]any
	}{
		{name: "decoded", path: good, wantEvent: map[string]any{
			"action":  "created",
			"comment": map[string]any{"body": "/agent-loop fix it", "id": float64(42)},
			"issue":   map[string]any{"number": float64(7)},
		}},
		{name: "not set", path: "", wantErr: []string{"GITHUB_EVENT_PATH is not set"}},
		{name: "missing file", path: filepath.Join(dir, "nope.json"), wantErr: []string{filepath.Join(dir, "nope.json"), "reading"}},
		{name: "malformed", path: write("bad.json", `{"action":`), wantErr: []string{filepath.Join(dir, "bad.json"), "decoding"}},
		{name: "null", path: write("null.json", `null`), wantErr: []string{"null"}},
		{name: "array", path: write("array.json", `[1]`), wantErr: []string{"array.json", "decoding"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt, err := NewRuntime(mapEnv(map[string]string{"GITHUB_EVENT_PATH": tt.path}), io.Discard)
			if err != nil {
				t.Fatalf("NewRuntime failed on a bad event (it should leave that to Event): %v", err)
			}
			ev, err := rt.Event()
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Event() succeeded, want an error with %q", tt.wantErr)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("Event() error %q lacks %q", err, s)
					}
				}
				if rt.Context().Event != nil {
					t.Error("Context().Event set although the payload is bad")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantEvent, ev); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEvent, rt.Context().Event); diff != "" {
				t.Errorf("Context().Event (-want +got):\n%s", diff)
			}
			if rt.Context().EventPath != tt.path {
				t.Errorf("EventPath = %q", rt.Context().EventPath)
			}
		})
	}
}

func TestIsPost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want bool
	}{
		{"main", []string{"/agent-loop", "action"}, nil, false},
		{"post by entrypoint", []string{PostEntrypoint, "action"}, nil, true},
		{"post by relative name", []string{"./agent-loop-post"}, nil, true},
		{"post by saved state", []string{"/agent-loop", "action"}, map[string]string{"STATE_" + StateMainStarted: "true"}, true},
		{"no args", nil, nil, false},
		{"an argument called post is not enough", []string{"/agent-loop", "post"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt, err := NewRuntime(mapEnv(tt.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := rt.WithArgs(tt.args).IsPost(); got != tt.want {
				t.Errorf("IsPost() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMaskSecretInputs(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"INPUT_GITHUB-TOKEN":      "ghs_0123456789abcdef",
		"INPUT_ANTHROPIC-API-KEY": "sk-ant-0123456789",
		"INPUT_TASK":              "not a secret at all",
		"ACTIONS_RUNTIME_TOKEN":   "eyJhbGciOi.runtime.token",
	}
	rt, err := NewRuntime(mapEnv(env), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := NewWriter(&out, nil)
	rt.MaskSecretInputs(w, []string{"github-token", "anthropic-api-key", "openai-api-key"})
	want := []string{"ghs_0123456789abcdef", "sk-ant-0123456789", "eyJhbGciOi.runtime.token"}
	if diff := cmp.Diff(want, runRunner(out.String()).masks); diff != "" {
		t.Errorf("masks (-want +got):\n%s", diff)
	}
}
