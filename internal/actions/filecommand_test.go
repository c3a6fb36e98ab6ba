package actions

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A symlink or a FIFO planted where the runner keeps a workflow command
// file must not redirect, or hang, the harness's write (on a runner
// without root the agent's user owns that directory). Each case shows
// the plain open (the weakened writer) fooled first.
func TestFileCommandsRefuseWhatTheAgentPlants(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	githubPath := filepath.Join(dir, "set_path")
	if err := os.WriteFile(githubPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	output, summary, state := filepath.Join(dir, "set_output"), filepath.Join(dir, "step_summary"), filepath.Join(dir, "save_state")
	for _, p := range []string{output, summary} {
		if err := os.Symlink(githubPath, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(state, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITHUB_OUTPUT": output, "GITHUB_STEP_SUMMARY": summary, "GITHUB_STATE": state}

	// Weakened: the plain append follows the symlink into GITHUB_PATH.
	f, err := os.OpenFile(output, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("/agent/bin\n")
	f.Close()
	if b, _ := os.ReadFile(githubPath); string(b) != "/agent/bin\n" {
		t.Fatal("weakened: the plain open did not follow the symlink; the probe cannot fail")
	}
	os.WriteFile(githubPath, nil, 0o644)
	// Weakened: the plain open of a FIFO without a reader blocks.
	opened := make(chan struct{})
	go func() {
		if f, err := os.OpenFile(state, os.O_APPEND|os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		close(opened)
	}()
	select {
	case <-opened:
		t.Fatal("weakened: the plain open of a FIFO returned; the probe cannot fail")
	case <-time.After(200 * time.Millisecond):
	}
	r, _ := os.OpenFile(state, os.O_RDONLY|syscall.O_NONBLOCK, 0) // releases it
	<-opened
	r.Close()

	w := NewWriter(io.Discard, func(k string) string { return env[k] })
	start := time.Now()
	if err := w.SetOutput("status", "completed"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("SetOutput through a symlink: err = %v", err)
	}
	if err := w.Summary("## ✅ completed"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Summary through a symlink: err = %v", err)
	}
	if err := w.SaveState("loop_id", "x"); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("SaveState into a FIFO: err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the writes took %s", d)
	}
	if b, _ := os.ReadFile(githubPath); len(b) != 0 {
		t.Errorf("GITHUB_PATH was written: %q", b)
	}
}
