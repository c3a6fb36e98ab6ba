package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// zeroFields lists the fields of v (a struct) left at their zero value,
// recursively: a slice must hold something, a bool must be true.
func zeroFields(v reflect.Value, path string) []string {
	var out []string
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			out = append(out, zeroFields(v.Field(i), path+"."+v.Type().Field(i).Name)...)
		}
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		for i := 0; i < v.Len(); i++ {
			out = append(out, zeroFields(v.Index(i), path)...)
		}
	default:
		if v.IsZero() {
			return []string{path}
		}
	}
	return out
}

// stopAtBaseline cancels the run once the baseline is recorded: the loop
// pauses before its first iteration, resumable.
type stopAtBaseline struct{ cancel context.CancelFunc }

func (o stopAtBaseline) Observe(_ context.Context, ev loop.Event) {
	if ev.Kind == loop.EventBaseline {
		o.cancel()
	}
}

// newDoneRepo is a repository whose check (sh test.sh) passes once the
// agent (sh agent.sh) has made the file src/done (product source: the
// held-out check keeps it whatever runner the Spec names).
func newDoneRepo(t *testing.T) string {
	dir := workDir(t)
	git(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "test.sh"), []byte("test -e src/done\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.sh"), []byte("mkdir -p src && touch src/done\n"), 0o644)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "start")
	return dir
}

// pausedAtBaseline starts loop id in dir (adjusted by configure) and stops
// it once its baseline is recorded: paused, to be resumed.
func pausedAtBaseline(t *testing.T, dir, id string, configure func(*spec.Settings)) (app.IO, *bytes.Buffer) {
	t.Helper()
	s := spec.Defaults(spec.DoorCLI)
	s.Start.Dir, s.Start.LoopID = dir, id
	s.Spec.Task, s.Spec.Criterion.Command, s.Spec.Agent.Command = "make done exist", "sh test.sh", "sh agent.sh"
	s.Set(spec.DoorCLI, "quiet", "true")
	if configure != nil {
		configure(&s)
	}
	v, err := spec.Validate(s, spec.DoorCLI)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &bytes.Buffer{}
	o := app.IO{Stdin: strings.NewReader(""), Stdout: out, Stderr: out, Environ: harnessEnv("PATH="+os.Getenv("PATH"), "HOME="+dir)}
	res, err := app.Run(ctx, v, o, app.Hooks{Observer: stopAtBaseline{cancel}})
	if err != nil || res.State.Status != state.Paused {
		t.Fatalf("first run: %v\n%s", err, out.String())
	}
	return o, out
}

// Every field of the Spec survives a real resume: a loop paused after its
// baseline is given a Spec with no field left zero, resumed (with one
// change given explicitly, as `resume --max-iterations` does), and ends
// with exactly that Spec. A field added to the Spec fails this test until
// it has a value here, so it cannot be forgotten on the way.
func TestResumeRoundTripsEverySpecField(t *testing.T) {
	dir := newDoneRepo(t)
	remote := filepath.Join(t.TempDir(), "origin.git")
	git(t, filepath.Dir(remote), "init", "-q", "--bare", remote)
	git(t, dir, "remote", "add", "origin", remote)
	o, out := pausedAtBaseline(t, dir, "ralph-roundtrip-0123abcd", func(s *spec.Settings) {
		s.Spec.Publish.Branch = "agent-loop/roundtrip" // started before the pause
	})

	full := spec.Spec{
		Task: "make done exist",
		Criterion: spec.Criterion{Command: "sh test.sh", Workdir: ".", Setup: "true", Source: spec.SourceHint, Confidence: "high",
			Evidence: []string{"ci-config: ci.yml runs sh test.sh"}, Hint: "done exists",
			Depends: spec.Depends{Files: []string{"test.sh"}, Targets: []string{"Makefile:test"}, Runner: "sh"},
			Origin:  &spec.Origin{File: ".github/workflows/ci.yml", Job: "test", Step: "Test", Run: "https://github.com/o/r/actions/runs/1"}},
		Limits: spec.Limits{MaxIterations: 3, Timeout: 10 * time.Minute, IterationTimeout: 5 * time.Minute, IdleTimeout: 4 * time.Minute,
			CheckTimeout: 3 * time.Minute, BudgetUSD: 5, MaxTokens: 1_000_000},
		Agent: spec.Agent{Provider: "command", Command: "sh agent.sh", Model: "model-1", MaxTurns: 7, Args: []string{"--effort", "high"},
			Config: spec.AgentConfigPrivate},
		Publish: spec.Publish{Branch: "agent-loop/roundtrip", Commit: true, Push: true, Protected: []string{"vendor/**"}, PR: "none", Draft: true, Base: "main"},
		Policy:  spec.Policy{Regression: "warn", ConfirmRuns: 2},
		Context: "CI failed: the workflow \"CI\" failed.",
	}
	if zero := zeroFields(reflect.ValueOf(full), "Spec"); len(zero) > 0 {
		t.Fatalf("give these fields of the Spec a value in this test (and make sure resume carries them): %v", zero)
	}
	// The live copy of the state (the harness's private directory).
	d := app.LoopDir(dir, "ralph-roundtrip-0123abcd", o.Environ)
	if d.Root == dir {
		t.Fatalf("the live state is in the work tree: %s", d.Path())
	}
	st, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	st.SetSpec(full)
	if err := d.Save(st, time.Now()); err != nil {
		t.Fatal(err)
	}

	var changes spec.Settings
	changes.Set(spec.DoorCLI, "max-iterations", "4")
	out.Reset()
	res, err := app.Resume(context.Background(), dir, "ralph-roundtrip-0123abcd", app.ResumeOptions{Changes: changes}, o, app.Hooks{})
	if err != nil || !res.Completed() {
		t.Fatalf("resume: %v\n%s", err, out.String())
	}
	want := full.Clone()
	want.Limits.MaxIterations = 4
	got, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.Harness.Spec); diff != "" {
		t.Errorf("the Spec after the resume (-want +got):\n%s", diff)
	}
	if got.Configuration.MaxIterations != 4 || got.Harness.Branch != "agent-loop/roundtrip" {
		t.Errorf("max_iterations %d, branch %q", got.Configuration.MaxIterations, got.Harness.Branch)
	}
	// The resumed run used it: the branch it names, pushed; three runs of
	// the check (two confirmations).
	if head := git(t, remote, "rev-parse", "refs/heads/agent-loop/roundtrip"); head != got.Harness.HeadSHA {
		t.Errorf("the remote branch is at %s, the loop's head is %s", head, got.Harness.HeadSHA)
	}
	confirms := 0
	for _, r := range got.IterationHistory[0].CriterionRuns {
		if r.Purpose == state.RunConfirm {
			confirms++
		}
	}
	if n := strings.Count(readLog(t, d, 1), "--- confirm run"); n != 2 || confirms != 2 {
		t.Errorf("%d confirmation runs in the log, %d in the state, want 2 (confirm_runs)", n, confirms)
	}
}

func readLog(t *testing.T, d state.Dir, n int) string {
	t.Helper()
	b, err := os.ReadFile(d.LogPath(n))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A state written before the Spec was saved (the settings scattered over
// agent_loop and configuration) still resumes: the Spec is rebuilt from
// what it has, the rest from the parameters' defaults, and saved whole.
func TestResumeOldStateWithoutSpec(t *testing.T) {
	dir := newDoneRepo(t)
	o, out := pausedAtBaseline(t, dir, "ralph-old-0123abcd", nil)
	// Rewrite the state as the version before the Spec wrote it, which
	// kept it in the work tree only: the resume imports it.
	live := app.LoopDir(dir, "ralph-old-0123abcd", o.Environ)
	if err := os.RemoveAll(live.Path()); err != nil {
		t.Fatal(err)
	}
	d := state.NewDir(dir, "ralph-old-0123abcd")
	var raw map[string]any
	b, _ := os.ReadFile(d.StatePath())
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	h := raw["agent_loop"].(map[string]any)
	delete(h, "spec")
	h["agent_command"], h["commit"], h["criterion_source"], h["confirm_runs"] = "sh agent.sh", true, "flag", 0
	b, _ = json.Marshal(raw)
	if err := os.WriteFile(d.StatePath(), b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := app.Resume(context.Background(), dir, "ralph-old-0123abcd", app.ResumeOptions{}, o, app.Hooks{})
	if err != nil || !res.Completed() {
		t.Fatalf("resume of an old state: %v\n%s", err, out.String())
	}
	if got := app.LoopDir(dir, "ralph-old-0123abcd", o.Environ); got != live {
		t.Errorf("the resumed loop's state is in %s, not in its live copy %s", got.Path(), live.Path())
	}
	got, _ := d.Load()
	sp := got.Harness.Spec
	if sp.Agent.Command != "sh agent.sh" || sp.Criterion.Command != "sh test.sh" || sp.Limits.IdleTimeout != spec.Defaults(spec.DoorCLI).Spec.Limits.IdleTimeout {
		t.Errorf("rebuilt spec %+v", sp)
	}
	b, _ = os.ReadFile(d.StatePath())
	if !strings.Contains(string(b), `"spec":`) {
		t.Error("the resumed state does not carry its Spec")
	}
}
