package state

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/schemas"
	"github.com/aiwg/agent-loop/internal/spec"
)

// The Spec is saved whole in agent_loop.spec, the seed fields repeat it,
// and the file validates against the shared schema.
func TestSpecSavedWhole(t *testing.T) {
	root := t.TempDir()
	st := newState("ralph-spec-0123abcd", "")
	sp := spec.Defaults(spec.DoorCLI).Spec
	sp.Task = "fix the parser"
	sp.Criterion = spec.Criterion{Command: "go test ./...", Workdir: "pkg", Source: spec.SourceFlag, Confidence: "given",
		Depends: spec.Depends{Files: []string{"go.mod"}, Runner: "go test"}}
	sp.Limits.IdleTimeout, sp.Limits.Timeout = 90*time.Second, 45*time.Minute
	sp.Agent.Args = []string{"--effort", "high"}
	sp.Publish.Branch = "agent-loop/x"
	st.SetSpec(sp)
	if st.Task != sp.Task || st.CompletionCriteria != "go test ./..." || st.Configuration.MaxIterations != 10 || *st.Configuration.TimeoutMinutes != 45 {
		t.Fatalf("seed fields: task %q criteria %q config %+v", st.Task, st.CompletionCriteria, st.Configuration)
	}
	d := NewDir(root, st.LoopID)
	if err := d.Save(st, t0); err != nil {
		t.Fatal(err)
	}
	validate(t, schemas.LoopState, d.StatePath())
	got, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sp, got.Harness.Spec); diff != "" {
		t.Errorf("spec after a save and a load (-want +got):\n%s", diff)
	}
}

// A state written before the Spec was saved (its settings scattered over
// agent_loop and configuration) is read with a Spec rebuilt from them; what
// it never saved takes the table's defaults.
func TestLegacyStateGetsASpec(t *testing.T) {
	root := t.TempDir()
	const id = "ralph-old-state-0123abcd"
	old := `{"version":"2.0.0","loop_id":"` + id + `","status":"paused","iteration":1,"task":"fix the calculator",
"completion_criteria":"sh test.sh","started_at":"2026-11-22T10:00:00Z","last_updated":"2026-11-22T10:05:00Z","completed_at":null,
"pid":null,"working_directory":"/repo","configuration":{"max_iterations":4,"timeout_minutes":30,"interactive":false,"auto_test":true,
"checkpoint_interval":1,"execution_mode":"default"},"progress":{"completion_checks":[],"last_completion_check":null,"estimated_completion":null},
"metrics":{"total_iterations":1,"successful_iterations":0,"failed_iterations":1,"total_tokens":0,"total_cost_usd":0,"total_duration_seconds":3,
"average_iteration_time_seconds":3},"last_checkpoint":null,"error_context":null,"iteration_history":[],"best_iteration":null,
"regression_events":[],"reinforcement_level":"MINIMAL","reinforcement_history":[],"recovery_attempts":0,"recovery_history":[],
"detection_enabled":true,"detected_patterns":[],
"agent_loop":{"provider":"command","agent_command":"sh agent.sh","model":"m1","branch":"agent-loop/` + id + `","base_sha":"abc",
"commit":true,"push":true,"workdir":"sub","criterion_source":"inferred","criterion_confidence":"high","criterion_evidence":["ci-config: x"],
"budget_usd":2,"max_tokens":500,"iteration_timeout_minutes":7,"regression_policy":"warn","confirm_runs":0}}`
	p := filepath.Join(root, LoopsDir, id, "state.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := NewDir(root, id).Load()
	if err != nil {
		t.Fatal(err)
	}
	want := spec.Defaults(spec.DoorCLI).Spec
	want.Task = "fix the calculator"
	want.Criterion = spec.Criterion{Command: "sh test.sh", Workdir: "sub", Source: spec.SourceInferred, Confidence: "high", Evidence: []string{"ci-config: x"}}
	want.Limits.MaxIterations, want.Limits.Timeout, want.Limits.IterationTimeout = 4, 30*time.Minute, 7*time.Minute
	want.Limits.BudgetUSD, want.Limits.MaxTokens = 2, 500
	want.Agent.Provider, want.Agent.Command, want.Agent.Model = "command", "sh agent.sh", "m1"
	want.Publish.Branch, want.Publish.Commit, want.Publish.Push = "agent-loop/"+id, true, true
	want.Policy.Regression, want.Policy.ConfirmRuns = "warn", 0
	if d := cmp.Diff(want, st.Harness.Spec); d != "" {
		t.Errorf("rebuilt spec (-want +got):\n%s", d)
	}
	// Saved again, it carries the Spec from then on.
	if err := NewDir(root, id).Save(st, t0); err != nil {
		t.Fatal(err)
	}
	validate(t, schemas.LoopState, p)
	again, err := NewDir(root, id).Load()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, again.Harness.Spec); d != "" {
		t.Errorf("after a save (-want +got):\n%s", d)
	}
}
