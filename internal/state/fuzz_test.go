package state

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The files under .aiwg/ralph/ are read back by resume, status, attach and
// the Action's post step; an agent can write them (it runs in the work tree)
// and a crash can cut them short. Whatever they hold, reading them returns a
// value or a *CorruptError, never a panic. Seed corpora (testdata/fuzz/) are
// real files: state.json of the demo loop and of CLI loops, the registry
// example of seed 001, the legacy loop files of seeds 000 and 002.

// fuzzBase is where the fuzz targets make their repositories: in memory
// when /dev/shm exists (every state write fsyncs; on a disk that caps a
// target at a few executions a second), else in the test's directory.
func fuzzBase(f *testing.F) string {
	if dir, err := os.MkdirTemp("/dev/shm", "agent-loop-fuzz-"); err == nil {
		f.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return f.TempDir()
}

// fuzzRoot returns a fresh repository root under base.
func fuzzRoot(t *testing.T, base string) string {
	root, err := os.MkdirTemp(base, "root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	return root
}

func mustWrite(t *testing.T, p string, b []byte) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func FuzzLoadState(f *testing.F) {
	f.Add([]byte(`{"version":"2.0.0","loop_id":"ralph-fuzz-state-0123abcd","status":"running","iteration":0}`))
	f.Add([]byte(`{"loop_id":"ralph-fuzz-state-0123abcd","status":"paused","pid":-1,"iteration_history":[{"iteration":1,"artifacts":null}],"best_iteration":{"iteration":9}}`))
	f.Add([]byte(`{"loop_id":"ralph-fuzz-state-0123abcd","status":"completed","regression_events":[{"details":{"baseline_value":[1,{"a":null}],"diff":{"x":1e308}}}]}`))
	f.Add([]byte(`{"loop_id":"ralph-fuzz-state-0123abcd","status":"running","started_at":"0000-01-01T00:00:00+23:59"}`))
	base := fuzzBase(f)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		root := fuzzRoot(t, base)
		// The directory is named after the loop id the file claims, when it
		// is a valid one, so real states get past the id check.
		id := "ralph-fuzz-state-0123abcd"
		var probe struct {
			LoopID string `json:"loop_id"`
		}
		if json.Unmarshal(data, &probe) == nil && ValidLoopID(probe.LoopID) {
			id = probe.LoopID
		}
		d := NewDir(root, id)
		mustWrite(t, d.StatePath(), data)
		st, err := d.Load()
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != d.StatePath() || st != nil {
				t.Fatalf("Load = %v, %v; want nil and a *CorruptError naming %s", st, err, d.StatePath())
			}
			return
		}
		if st.LoopID != id || st.Status == "" {
			t.Fatalf("Load accepted loop_id %q status %q in %s", st.LoopID, st.Status, id)
		}
		// What the harness does with a loaded state must not panic.
		CheckLiveness(st, st.LastUpdated, now)
		_ = CanTransition(st.Status, Running)
		_ = EntryFor(st, now)
		s := NewStore(root)
		s.Now = func() time.Time { return now }
		if err := s.Sync(st); err != nil {
			t.Fatalf("Sync of a loaded state: %v", err)
		}
		// A state that loads saves, and loads back the same.
		if err := d.Save(st, now); err != nil {
			t.Fatalf("a loaded state does not save: %v", err)
		}
		again, err := d.Load()
		if err != nil {
			t.Fatalf("a saved state does not load: %v", err)
		}
		// An empty map and no map are the same state (omitempty).
		if diff := cmp.Diff(st, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("save/load round trip changed the state (-saved +loaded):\n%s", diff)
		}
		MarkCrashed(again, "fuzz", now)
	})
}

func FuzzRegistry(f *testing.F) {
	f.Add([]byte(`{"version":"2.0.0","max_concurrent_loops":4,"active_loops":null}`), "fix tests", "running")
	f.Add([]byte(`{"active_loops":[{"loop_id":"a"},{"loop_id":"b"},{"loop_id":"c"},{"loop_id":"d"},{"loop_id":"e"}]}`), "", "paused")
	f.Add([]byte(`{"active_loops":[{"loop_id":"ralph-fix-tests-0123abcd","status":"running","pid":1,"timeout_minutes":-3}]}`), "FIX  tests", "completed")
	base := fuzzBase(f)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte, task, status string) {
		root := fuzzRoot(t, base)
		path := filepath.Join(root, RegistryFile)
		mustWrite(t, path, data)
		s := NewStore(root)
		s.Now = func() time.Time { return now }
		reg, err := s.Read()
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != path || reg != nil {
				t.Fatalf("Read = %v, %v; want nil and a *CorruptError naming %s", reg, err, path)
			}
			// Every writer reads first, and refuses to overwrite what it
			// cannot read.
			if err := s.Sync(&State{LoopID: "ralph-fuzz-reg-0123abcd", Status: Running}); !errors.As(err, &ce) {
				t.Fatalf("Sync over a corrupt registry = %v, want a *CorruptError", err)
			}
			return
		}
		if reg.ActiveLoops == nil || reg.Version != Version || reg.MaxConcurrentLoops != MaxConcurrentLoops {
			t.Fatalf("Read returned %+v", reg)
		}
		_ = reg.SameTask(task)
		if got := reg.Sorted(); len(got) != len(reg.ActiveLoops) {
			t.Fatalf("Sorted lost entries: %d of %d", len(got), len(reg.ActiveLoops))
		}
		count := func(id string) int {
			r, err := s.Read()
			if err != nil {
				t.Fatalf("the registry written by the store does not read: %v", err)
			}
			n := 0
			for _, e := range r.ActiveLoops {
				if e.LoopID == id {
					n++
				}
			}
			return n
		}
		id := DerivedLoopID(task, "fuzz:"+task)
		st := &State{LoopID: id, Status: Running, Task: task, StartedAt: now}
		was := count(id)
		switch err := s.Register(st); {
		case err == nil:
			if n := count(id); n < 1 || (was == 0 && n != 1) {
				t.Fatalf("after Register the loop is listed %d times", n)
			}
		default:
			var full *FullError
			if !errors.As(err, &full) || was > 0 {
				t.Fatalf("Register = %v, want nil or a *FullError", err)
			}
		}
		st.Status = Status(status)
		if err := s.Sync(st); err != nil {
			t.Fatalf("Sync: %v", err)
		}
		if !st.Status.Active() && count(id) != 0 {
			t.Fatalf("a %q loop stays in the registry", status)
		}
		if err := s.Deregister(id); err != nil {
			t.Fatalf("Deregister: %v", err)
		}
		if n := count(id); n != 0 {
			t.Fatalf("after Deregister the loop is listed %d times", n)
		}
	})
}

func FuzzMigrateLegacy(f *testing.F) {
	f.Add([]byte(`{"loop_id":"ralph-x-0123abcd","task":"t","status":"weird","max_iterations":-1,"timeout":5,"started_at":"yesterday"}`))
	f.Add([]byte(`{"loopId":"","objective":"","status":"","startedAt":"2026-04-01T10:30:00+14:00","pid":0,"branch":"agent-loop/x"}`))
	base := fuzzBase(f)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		root := fuzzRoot(t, base)
		path := filepath.Join(root, LegacyFile)
		mustWrite(t, path, data)
		s := NewStore(root)
		s.Now = func() time.Time { return now }
		id, err := s.MigrateLegacy()
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) || id != "" {
				t.Fatalf("MigrateLegacy = %q, %v; want a *CorruptError", id, err)
			}
			return
		}
		if !ValidLoopID(id) {
			t.Fatalf("migrated to the invalid loop id %q", id)
		}
		st, err := NewDir(root, id).Load()
		if err != nil {
			t.Fatalf("the migrated state does not load: %v", err)
		}
		if st.Configuration.MaxIterations < 1 || st.Iteration < 0 {
			t.Fatalf("migrated state: max_iterations %d, iteration %d", st.Configuration.MaxIterations, st.Iteration)
		}
		if again, err := s.MigrateLegacy(); err != nil || again != id {
			t.Fatalf("a second migration = %q, %v; want %q (idempotent)", again, err, id)
		}
	})
}
