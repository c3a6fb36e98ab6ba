package spec_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/protected"
	"github.com/aiwg/agent-loop/internal/spec"
)

// protected-paths: the default at both doors when not given, the patterns
// as given (a flag per pattern, an input a line), "none" for none, a bad
// pattern a problem naming the flag or the input; saved with the Spec as
// resolved, so a resume does not bring the default back.
func TestProtectedPaths(t *testing.T) {
	t.Parallel()
	valid := func(t *testing.T, s spec.Settings, door spec.Door) []string {
		t.Helper()
		v, err := spec.Validate(s, door)
		if err != nil {
			t.Fatal(err)
		}
		return v.Settings().Spec.Publish.Protected
	}
	if got := valid(t, cliSettings(t, "--completion", "true", "fix it"), spec.DoorCLI); !slices.Equal(got, protected.Default) {
		t.Errorf("CLI default %q, want %q", got, protected.Default)
	}
	if got := valid(t, inputSettings(map[string]string{"task": "t", "github-token": "x"}), spec.DoorAction); !slices.Equal(got, protected.Default) {
		t.Errorf("Action default %q, want %q", got, protected.Default)
	}
	if got := valid(t, cliSettings(t, "--completion", "true", "--protected-path", "docs/**", "--protected-path", "!docs/notes.md", "fix it"), spec.DoorCLI); !slices.Equal(got, []string{"docs/**", "!docs/notes.md"}) {
		t.Errorf("flags %q", got)
	}
	in := "# ours\n- .github/**\n- Makefile\n"
	if got := valid(t, inputSettings(map[string]string{"task": "t", "github-token": "x", "protected-paths": in}), spec.DoorAction); !slices.Equal(got, []string{".github/**", "Makefile"}) {
		t.Errorf("input %q", got)
	}
	for _, door := range []spec.Door{spec.DoorCLI, spec.DoorAction} {
		var s spec.Settings
		if door == spec.DoorCLI {
			s = cliSettings(t, "--completion", "true", "--protected-path", "none", "fix it")
		} else {
			s = inputSettings(map[string]string{"task": "t", "github-token": "x", "protected-paths": "None"})
		}
		if got := valid(t, s, door); len(got) != 0 {
			t.Errorf("%s: none gave %q", door, got)
		}
	}
	// A resume keeps what the loop saved, "none" included.
	saved := spec.Spec{Task: "t", Criterion: spec.Criterion{Command: "true", Workdir: "."}, Limits: spec.Limits{MaxIterations: 2, Timeout: 1e9},
		Agent: spec.Agent{Provider: "claude", Config: "auto"}, Policy: spec.Policy{Regression: "revert"}}
	am, err := spec.Amend(saved, cliSettings(t, "--max-iterations", "4"), spec.DoorCLI)
	if err != nil {
		t.Fatal(err)
	}
	if got := am.Spec.Publish.Protected; len(got) != 0 {
		t.Errorf("resume brought back %q", got)
	}

	_, err = spec.Validate(cliSettings(t, "--completion", "true", "--protected-path", "a/[b", "--protected-path", "../x", "fix it"), spec.DoorCLI)
	if n := len(spec.Problems(err)); n != 1 || !strings.Contains(err.Error(), "--protected-path: ") ||
		!strings.Contains(err.Error(), `"a/[b"`) || !strings.Contains(err.Error(), `"../x"`) {
		t.Errorf("bad patterns: %d problems: %v", n, err)
	}
	_, err = spec.Validate(inputSettings(map[string]string{"task": "t", "github-token": "x", "protected-paths": "src/[x"}), spec.DoorAction)
	if err == nil || !strings.HasPrefix(err.Error(), "input protected-paths: ") {
		t.Errorf("bad input pattern: %v", err)
	}
}

// The workflow_run trigger's inputs: fix-ci is pr or push (default pr),
// max-attempts a positive number (default 1), allow-own-runs a switch.
func TestFixCIInputs(t *testing.T) {
	t.Parallel()
	v, err := spec.Validate(inputSettings(map[string]string{"task": "t", "github-token": "x"}), spec.DoorAction)
	if err != nil {
		t.Fatal(err)
	}
	if a := v.Settings().Action; a.FixCI != "pr" || a.MaxAttempts != 1 || a.AllowOwnRuns {
		t.Errorf("defaults %+v", a)
	}
	v, err = spec.Validate(inputSettings(map[string]string{"task": "t", "github-token": "x", "fix-ci": "PUSH", "max-attempts": "3", "allow-own-runs": "true"}), spec.DoorAction)
	if err != nil {
		t.Fatal(err)
	}
	if a := v.Settings().Action; a.FixCI != "push" || a.MaxAttempts != 3 || !a.AllowOwnRuns {
		t.Errorf("given %+v", a)
	}
	_, err = spec.Validate(inputSettings(map[string]string{"task": "t", "github-token": "x", "fix-ci": "force-push", "max-attempts": "0"}), spec.DoorAction)
	for _, want := range []string{`input fix-ci: unknown value "force-push"`, "(valid: pr, push)", "input max-attempts: 0 is not a positive number"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("lacks %q: %v", want, err)
		}
	}
}
