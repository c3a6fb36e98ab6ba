package action

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aiwg/agent-loop/internal/actions"
	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/state"
)

// action.yml and the code agree: every input action.yml declares is read by
// the main step, every input the code reads is declared, and every output is
// set. The check records what the code really looks up, so a renamed input
// fails here.
func TestActionYAMLAgreesWithCode(t *testing.T) {
	spec, err := actions.LoadActionYAML(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	read := map[string]bool{}
	getenv := func(k string) string {
		mu.Lock()
		defer mu.Unlock()
		if strings.HasPrefix(k, "INPUT_") {
			read[k] = true
		}
		return ""
	}
	settingsFromInputs(getenv, t.TempDir())
	declared := map[string]bool{}
	for _, name := range spec.InputNames() {
		declared[actions.InputEnvName(name)] = true
	}
	for env := range declared {
		if !read[env] {
			t.Errorf("action.yml declares %s but the main step never reads it", env)
		}
	}
	for env := range read {
		if !declared[env] {
			t.Errorf("the main step reads %s but action.yml does not declare it", env)
		}
	}

	// Outputs: run setOutputs on a finished state and read GITHUB_OUTPUT back.
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	writeEmpty(t, out)
	w := actions.NewWriter(&bytes.Buffer{}, func(k string) string {
		if k == "GITHUB_OUTPUT" {
			return out
		}
		return ""
	})
	st := &state.State{LoopID: "ralph-x-0123abcd", Status: state.Completed, Iteration: 2, BestIteration: &state.BestIteration{Iteration: 2, QualityScore: 90, Commit: "abc"}}
	a := &actionRun{w: w, stdout: &bytes.Buffer{}}
	a.setOutputs(&app.RunResult{State: st, Dir: state.NewDir(dir, st.LoopID)})
	set := readOutputNames(t, out)
	var missing []string
	for _, name := range spec.OutputNames() {
		if !set[name] {
			missing = append(missing, name)
		}
		delete(set, name)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("action.yml declares outputs the code never sets: %v", missing)
	}
	for name := range set {
		t.Errorf("the code sets output %q that action.yml does not declare", name)
	}
}
