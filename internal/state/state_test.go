package state

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/schemas"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newState(id, task string) *State {
	pid := os.Getpid()
	tm := 60
	return &State{
		Version: Version, LoopID: id, Status: Running, Task: task, CompletionCriteria: "go test ./...",
		StartedAt: t0, PID: &pid, WorkingDirectory: "/repo",
		Configuration:    Configuration{MaxIterations: 10, TimeoutMinutes: &tm, AutoTest: true, CheckpointInterval: 1, ExecutionMode: "default"},
		Progress:         Progress{CompletionChecks: []Check{}},
		IterationHistory: []IterationEntry{}, RegressionEvents: []RegressionEvent{}, ReinforcementLevel: "MINIMAL",
		ReinforcementHistory: []ReinforcementChange{}, RecoveryHistory: []Recovery{}, DetectedPatterns: []DetectedPattern{},
		Harness: Harness{Host: Hostname(), PIDStart: ProcessStart(os.Getpid())},
	}
}

func validate(t *testing.T, schema, path string) {
	t.Helper()
	if !schemas.Available() {
		t.Skipf("../shared/schemas not found at %s", schemas.Dir())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := schemas.Validate(schema, b); err != nil {
		t.Fatalf("%s does not validate against %s: %v\n%s", path, schema, err, b)
	}
}

func TestSaveLoadValidates(t *testing.T) {
	root := t.TempDir()
	st := newState("ralph-fix-tests-0123abcd", "fix tests")
	cov := 81.5
	st.IterationHistory = append(st.IterationHistory, IterationEntry{Iteration: 1, Timestamp: t0, QualityScore: 55, Artifacts: []Artifact{{Path: "a.go"}}, TestResults: &TestResults{Total: 3, Passed: 2, Failed: 1, Coverage: &cov}})
	outcome := "success"
	st.RegressionEvents = append(st.RegressionEvents, RegressionEvent{EventID: "e1", Timestamp: t0, Iteration: 1, RegressionType: "test_deletion", Severity: "critical", RecoveryOutcome: &outcome, Details: RegressionDetails{BaselineValue: 3, CurrentValue: 2}})
	st.BestIteration = &BestIteration{Iteration: 1, QualityScore: 55, UpdatedAt: t0, SelectionReason: "only one"}
	d := NewDir(root, st.LoopID)
	if err := d.Save(st, t0); err != nil {
		t.Fatal(err)
	}
	validate(t, schemas.LoopState, d.StatePath())
	got, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got.LoopID != st.LoopID || len(got.IterationHistory) != 1 || got.RegressionEvents[0].RegressionType != "test_deletion" {
		t.Fatalf("round trip lost data: %+v", got)
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(d.Path())
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

func TestLoadCorruptNamesFileAndFix(t *testing.T) {
	root := t.TempDir()
	d := NewDir(root, "ralph-x-0123abcd")
	os.MkdirAll(d.Path(), 0o755)
	os.WriteFile(d.StatePath(), []byte(`{"version": "2.0.0", "loop_id": `), 0o644)
	_, err := d.Load()
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), d.StatePath()) || !strings.Contains(err.Error(), "checkpoint") {
		t.Fatalf("err = %v", err)
	}
	_, err = NewDir(root, "ralph-nope-0123abcd").Load()
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("err = %v", err)
	}
}

func TestRegistryFullListsActive(t *testing.T) {
	root := t.TempDir()
	s := NewStore(root)
	s.Now = func() time.Time { return t0 }
	for i, task := range []string{"fix a", "fix b", "fix c", "fix d"} {
		st := newState(NewLoopID(task), task)
		st.Iteration = i
		if err := s.Register(st); err != nil {
			t.Fatal(err)
		}
	}
	validate(t, schemas.LoopRegistry, filepath.Join(root, RegistryFile))
	err := s.Register(newState(NewLoopID("fix e"), "fix e"))
	var full *FullError
	if !errors.As(err, &full) || len(full.Active) != 4 {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"Maximum concurrent loops (4) reached", "fix a", "fix d", "agent-loop abort"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q:\n%s", want, err)
		}
	}
	reg, _ := s.Read()
	if got := reg.SameTask("  FIX   b "); len(got) != 1 {
		t.Fatalf("SameTask = %v", got)
	}
}

func TestSyncRemovesTerminal(t *testing.T) {
	root := t.TempDir()
	s := NewStore(root)
	st := newState("ralph-a-0123abcd", "a")
	if err := s.Register(st); err != nil {
		t.Fatal(err)
	}
	st.Status = Completed
	if err := s.Sync(st); err != nil {
		t.Fatal(err)
	}
	reg, _ := s.Read()
	if len(reg.ActiveLoops) != 0 {
		t.Fatalf("active = %+v", reg.ActiveLoops)
	}
	validate(t, schemas.LoopRegistry, filepath.Join(root, RegistryFile))
}

func TestLockTimeout(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, RootDir), 0o755)
	// Another process holds the lock (flock(1) from util-linux).
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	cmd := exec.Command("flock", filepath.Join(root, LockFile), "sleep", "7")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	err := NewStore(root).Register(newState("ralph-a-0123abcd", "a"))
	var le *LockError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el < 4*time.Second || el > 7*time.Second {
		t.Fatalf("gave up after %v, want about %v", el, LockTimeout)
	}
}

func TestLiveness(t *testing.T) {
	st := newState("ralph-a-0123abcd", "a")
	now := time.Now()
	if got := CheckLiveness(st, now, now); got != Alive {
		t.Fatalf("own pid: %v", got)
	}
	// A child that exited: its pid is dead.
	cmd := exec.Command("true")
	cmd.Run()
	dead := cmd.Process.Pid
	st.PID = &dead
	st.Harness.PIDStart = 0
	if got := CheckLiveness(st, now, now); got != Dead {
		t.Fatalf("dead pid: %v", got)
	}
	// On another host only the heartbeat counts.
	st.Harness.Host = "elsewhere"
	if got := CheckLiveness(st, now.Add(-time.Minute), now); got != Alive {
		t.Fatalf("other host, fresh: %v", got)
	}
	if got := CheckLiveness(st, now.Add(-6*time.Minute), now); got != Dead {
		t.Fatalf("other host, stale: %v", got)
	}
	// A reused pid (different start time) is not our loop.
	pid := os.Getpid()
	st.PID, st.Harness.Host, st.Harness.PIDStart = &pid, Hostname(), 1
	if got := CheckLiveness(st, now, now); got != Dead {
		t.Fatalf("reused pid: %v", got)
	}
}

func TestMigrateLegacy(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, RootDir), 0o755)
	legacy := `{"loopId":"abc123","objective":"Fix all auth tests","completionCriteria":"npm test","maxIterations":10,"timeout":60,"provider":"claude","status":"paused","iteration":3,"startedAt":"2026-04-01T10:30:00Z","branch":null}`
	os.WriteFile(filepath.Join(root, LegacyFile), []byte(legacy), 0o644)
	s := NewStore(root)
	id, err := s.MigrateLegacy()
	if err != nil {
		t.Fatal(err)
	}
	if !ValidLoopID(id) || !strings.HasPrefix(id, "ralph-fix-all-auth-tests-") {
		t.Fatalf("id = %q", id)
	}
	d := NewDir(root, id)
	validate(t, schemas.LoopState, d.StatePath())
	validate(t, schemas.LoopRegistry, filepath.Join(root, RegistryFile))
	st, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != Paused || st.Iteration != 3 || st.Task != "Fix all auth tests" || st.Configuration.MaxIterations != 10 {
		t.Fatalf("migrated = %+v", st)
	}
	if _, err := os.Stat(filepath.Join(root, LegacyFile)); err != nil {
		t.Fatal("legacy file was not kept")
	}
	again, err := s.MigrateLegacy()
	if err != nil || again != id {
		t.Fatalf("second migration: %q %v", again, err)
	}
	reg, _ := s.Read()
	if len(reg.ActiveLoops) != 1 {
		t.Fatalf("registry = %+v", reg.ActiveLoops)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	root := t.TempDir()
	d := NewDir(root, "ralph-a-0123abcd")
	rel, err := d.WriteCheckpoint(&Checkpoint{LoopID: d.LoopID, Iteration: 2, Prompt: "p", Agent: json.RawMessage(`{"exit":0}`), Commit: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	if rel != ".aiwg/ralph/loops/ralph-a-0123abcd/checkpoints/iteration-002.json.gz" {
		t.Fatalf("rel = %s", rel)
	}
	cp, err := d.ReadCheckpoint(2)
	if err != nil || cp.Prompt != "p" || cp.Commit != "abc" {
		t.Fatalf("cp = %+v, %v", cp, err)
	}
}

func TestSlugAndIDs(t *testing.T) {
	for in, want := range map[string]string{
		"Fix the failing tests!":        "fix-the-failing-tests",
		"":                              "loop",
		"日本語":                           "loop",
		"make `go vet` clean; rm -rf /": "make-go-vet-clean-rm",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
	id := NewLoopID("fix tests")
	if !ValidLoopID(id) {
		t.Fatalf("NewLoopID = %q", id)
	}
	if a, b := DerivedLoopID("issue 12", "o/r#12"), DerivedLoopID("issue 12", "o/r#12"); a != b || !ValidLoopID(a) {
		t.Fatalf("derived %q %q", a, b)
	}
}

func TestTransitions(t *testing.T) {
	ok := [][2]Status{{Running, Paused}, {Running, Completing}, {Completing, Completed}, {Paused, Running}, {Paused, Aborted}, {Crashed, Running}}
	bad := [][2]Status{{Completed, Running}, {Failed, Running}, {Paused, Completed}, {Aborted, Running}, {Running, Completed}}
	for _, p := range ok {
		if !CanTransition(p[0], p[1]) {
			t.Errorf("%s -> %s refused", p[0], p[1])
		}
	}
	for _, p := range bad {
		if CanTransition(p[0], p[1]) {
			t.Errorf("%s -> %s allowed", p[0], p[1])
		}
	}
}
