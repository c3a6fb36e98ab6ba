package action

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/aiwg/agent-loop/internal/actions"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// The Action's untrusted inputs: the event payload (anyone who can comment
// on an issue writes part of it) and the action's inputs (a workflow file,
// possibly with expressions expanded from an event). Neither may panic the
// harness. The seed corpora in testdata/fuzz/ are real payloads from
// GitHub's webhook examples (@octokit/webhooks-examples 7.6.1) and the
// inputs of action.yml and examples/workflows/.

// runtimeFor builds the Actions runtime the way the runner's environment
// does: GITHUB_* context variables, the payload in GITHUB_EVENT_PATH and
// INPUT_* variables.
func runtimeFor(t testing.TB, eventName, eventPath string, inputs map[string]string) *actions.Runtime {
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": eventName, "GITHUB_EVENT_PATH": eventPath,
		"GITHUB_REPOSITORY": "Codertocat/Hello-World", "GITHUB_RUN_ID": "1", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": "https://api.github.com",
	}
	for k, v := range inputs {
		env[actions.InputEnvName(k)] = v
	}
	rt, err := actions.NewRuntime(func(k string) string { return env[k] }, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("NewRuntime: %v", err)
	}
	return rt
}

var fuzzSeq atomic.Int64

func FuzzResolveTrigger(f *testing.F) {
	// Seeds beyond testdata/fuzz: the trigger shapes the README documents.
	f.Add("issue_comment", []byte(`{"action":"created","comment":{"id":7,"body":"/agent-loop fix the parser\nthanks","user":{"login":"octo","type":"User"}},"issue":{"number":3,"pull_request":{"url":"x"}}}`), "", "/agent-loop")
	f.Add("issue_comment", []byte(`{"action":"created","comment":{"body":"ralph this: make go vet clean","user":{"login":"octo"}},"issue":{"number":"12"}}`), "", "/agent-loop")
	f.Add("issues", []byte(`{"action":"labeled","label":{"name":"agent-loop"},"issue":{"number":4,"title":"Tests fail","body":null},"sender":{"login":"octo"}}`), "", "/agent-loop")
	f.Add("workflow_dispatch", []byte(`{"inputs":{"task":"fix the flaky test"},"repository":{"default_branch":"main"}}`), "", "/agent-loop")
	f.Add("issue_comment", []byte(`{"action":"created","comment":{"body":"/k"}}`), "", "/\u212a")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, event string, payload []byte, inputTask, phrase string) {
		p := filepath.Join(dir, fmt.Sprintf("event-%d.json", fuzzSeq.Add(1)))
		if err := os.WriteFile(p, payload, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		rt := runtimeFor(t, event, p, nil)
		ev, err := rt.Event()
		if err != nil {
			if ev != nil {
				t.Fatalf("Event returned a payload with the error %v", err)
			}
			return // the Action stops with this error (exit 2)
		}
		repo := "Codertocat/Hello-World"
		trig, err := resolveTrigger(context.Background(), event, ev, repo, inputTask, phrase, nil)
		if err != nil {
			// Without a GitHub client nothing can fail: the payload alone
			// decides.
			t.Fatalf("resolveTrigger: %v", err)
		}
		if trig.Event != event {
			t.Fatalf("Event = %q, want %q", trig.Event, event)
		}
		if trig.Skip != "" {
			return
		}
		if !strings.HasPrefix(trig.Key, repo+"#") {
			t.Fatalf("Key %q does not start with %q#", trig.Key, repo)
		}
		// The Action derives the loop id from the trigger: it must be valid
		// whatever the payload says.
		if id := state.DerivedLoopID(trig.Slug, trig.Key); !state.ValidLoopID(id) {
			t.Fatalf("loop id %q derived from slug %q is invalid", id, trig.Slug)
		}
		if (event == "issue_comment" || event == "issues") && !trig.CheckActor {
			t.Fatalf("a %s trigger must check the actor's permission", event)
		}
	})
}

// fuzzInputs decodes "name=value" lines; a value may hold "\n" escaped as
// "\\n".
func fuzzInputs(s string) map[string]string {
	in := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		in[k] = strings.ReplaceAll(v, `\n`, "\n")
	}
	return in
}

func encodeInputs(in map[string]string) string {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, strings.ReplaceAll(in[k], "\n", `\n`))
	}
	return b.String()
}

// realInputs returns the inputs of action.yml with their defaults, and the
// `with:` blocks of the example workflows that use the action.
func realInputs(tb testing.TB) []map[string]string {
	var out []map[string]string
	var spec struct {
		Inputs map[string]struct {
			Default any `yaml:"default"`
		} `yaml:"inputs"`
	}
	if b, err := os.ReadFile(filepath.Join("..", "..", "action.yml")); err == nil && yaml.Unmarshal(b, &spec) == nil {
		defaults := map[string]string{}
		for name, in := range spec.Inputs {
			if in.Default != nil {
				defaults[name] = fmt.Sprint(in.Default)
			}
		}
		out = append(out, defaults)
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "workflows", "*.yml"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		var wf struct {
			Jobs map[string]struct {
				Steps []struct {
					Uses string            `yaml:"uses"`
					With map[string]string `yaml:"with"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if yaml.Unmarshal(b, &wf) != nil {
			continue
		}
		for _, job := range wf.Jobs {
			for _, st := range job.Steps {
				if strings.HasPrefix(st.Uses, "aiwg/agent-loop") && st.With != nil {
					out = append(out, st.With)
				}
			}
		}
	}
	return out
}

func FuzzSettingsFromInputs(f *testing.F) {
	for _, in := range realInputs(f) {
		f.Add(encodeInputs(in))
	}
	f.Add("max-iterations=ten\ntimeout-minutes=-5\nbudget-usd=$5\npr=maybe\ndraft=sometimes\ngithub-token=\nprovider=Claude Code\n")
	f.Fuzz(func(t *testing.T, encoded string) {
		inputs := fuzzInputs(encoded)
		s := settingsFromInputs(func(k string) string {
			for name, v := range inputs {
				if actions.InputEnvName(name) == k {
					return v
				}
			}
			return ""
		}, "/github/workspace")
		if s.Start.Dir != "/github/workspace" || !s.Spec.Publish.Push {
			t.Fatalf("Dir = %q, push %v", s.Start.Dir, s.Spec.Publish.Push)
		}
		if s.Action.TriggerPhrase == "" {
			t.Fatal("empty trigger phrase")
		}
		// Every problem, of parsing or of validation, names its input and
		// its cause.
		_, err := spec.Validate(s, spec.DoorAction)
		for _, p := range spec.Problems(err) {
			if p.Cause == "" || !strings.HasPrefix(p.Error(), "input ") {
				t.Fatalf("problem %q does not name the input and the cause", p.Error())
			}
		}
		if err != nil && len(spec.Problems(err)) == 0 {
			t.Fatalf("Validate error %v holds no *spec.Problem", err)
		}
		if err == nil && !slices.Contains(spec.PRModes, s.Spec.Publish.PR) {
			t.Fatalf("pr %q accepted without a problem", s.Spec.Publish.PR)
		}
	})
}

// The trigger phrase is matched without regard to case on the comment's own
// character boundaries: case mapping may change a character's length, and a
// comment shorter in bytes than the phrase once panicked the Action.
func TestCommentTaskCaseFolding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, phrase string
		task               string
		ok                 bool
	}{
		{"exact", "/agent-loop fix the parser", "/agent-loop", "fix the parser", true},
		{"upper case", "  /Agent-Loop   fix the parser  ", "/agent-loop", "fix the parser", true},
		{"second line", "thanks!\n/agent-loop make vet clean", "/agent-loop", "make vet clean", true},
		{"phrase alone", "/agent-loop", "/agent-loop", "", false},
		{"no phrase", "looks good to me", "/agent-loop", "", false},
		{"kelvin sign in the comment", "/\u212aeep going", "/keep", "going", true},
		{"kelvin sign in the phrase, short comment", "/k", "/\u212a", "", false},
		{"sharp s phrase, shorter comment", "/\u00df", "/\u1e9e", "", false},
		{"seed phrase", "ralph this: fix the flaky test", "/agent-loop", "fix the flaky test", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			task, _, ok := commentTask(tt.body, tt.phrase)
			if ok != tt.ok || (ok && task != tt.task) {
				t.Fatalf("commentTask(%q, %q) = %q, %v; want %q, %v", tt.body, tt.phrase, task, ok, tt.task, tt.ok)
			}
		})
	}
}
