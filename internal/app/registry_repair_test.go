package app_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/state"
)

// `status --check-stale` repairs the registry entries a killed agent-loop
// left behind, which would otherwise hold a slot (and block a new loop with
// the same task) for good. Found by the crash torture of cmd/agent-loop.
func TestCheckStaleRepairsRegistry(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	// A pid that is certainly gone: a process that ran and was reaped.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID, livePID := gone.Process.Pid, os.Getpid()
	now := time.Now().UTC().Truncate(time.Second)
	mk := func(id string, status state.Status, pid *int) *state.State {
		return &state.State{Version: state.Version, LoopID: id, Status: status, Task: "task " + id, StartedAt: now,
			PID: pid, WorkingDirectory: root, Configuration: state.Configuration{MaxIterations: 5},
			Harness: state.Harness{Host: state.Hostname()}}
	}
	type loop struct {
		st        *state.State
		saved     bool         // a state.json exists
		regStatus state.Status // what the registry says
	}
	loops := []loop{
		// Killed between registering and its first state write.
		{mk("ralph-never-started-00000001", state.Running, &deadPID), false, state.Running},
		// Registering right now: its state is about to be written.
		{mk("ralph-starting-00000002", state.Running, &livePID), false, state.Running},
		// Killed between its final state write and the registry update.
		{mk("ralph-completed-00000003", state.Completed, nil), true, state.Completing},
		// A resume killed between registering and saving the state.
		{mk("ralph-crashed-00000004", state.Crashed, nil), true, state.Running},
		// Healthy: running (this process) and paused.
		{mk("ralph-running-00000005", state.Running, &livePID), true, state.Running},
		{mk("ralph-paused-00000006", state.Paused, nil), true, state.Paused},
	}
	store := state.NewStore(root)
	for _, l := range loops {
		if l.saved {
			if err := state.NewDir(root, l.st.LoopID).Save(l.st, now); err != nil {
				t.Fatal(err)
			}
		}
		entry := *l.st
		entry.Status = l.regStatus
		if err := store.Update(func(r *state.Registry) error {
			r.ActiveLoops = append(r.ActiveLoops, state.EntryFor(&entry, now))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := app.Status(root, app.StatusOptions{CheckStale: true, Format: "text"}, app.IO{Stdout: &out, Stderr: &out}); err != nil {
		t.Fatalf("status --check-stale: %v\n%s", err, out.String())
	}
	reg, err := store.Read()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range reg.ActiveLoops {
		got = append(got, e.LoopID+" "+string(e.Status))
	}
	sort.Strings(got)
	want := []string{
		"ralph-crashed-00000004 crashed",
		"ralph-paused-00000006 paused",
		"ralph-running-00000005 running",
		"ralph-starting-00000002 running",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("registry after status --check-stale (-want +got):\n%s\noutput:\n%s", diff, out.String())
	}
	for _, note := range []string{"removed ralph-never-started-00000001: it never started", "removed ralph-completed-00000003: it is completed",
		"ralph-crashed-00000004 is crashed (the registry said running)"} {
		if !strings.Contains(out.String(), note) {
			t.Errorf("status output lacks %q:\n%s", note, out.String())
		}
	}
	// Nothing left to repair: a second pass leaves the registry untouched.
	before, _ := os.ReadFile(filepath.Join(root, state.RegistryFile))
	out.Reset()
	if err := app.Status(root, app.StatusOptions{CheckStale: true, Format: "text"}, app.IO{Stdout: &out, Stderr: &out}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(root, state.RegistryFile))
	if !bytes.Equal(before, after) || strings.Contains(out.String(), "registry:") {
		t.Errorf("a second status --check-stale changed the registry or reported a repair:\n%s", out.String())
	}
}
