package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
)

// fakeCLI writes an executable shell script standing in for an agent CLI.
func fakeCLI(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake-cli")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func shellEnv() []string { return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()} }

// countingWriter counts what it is given and keeps nothing.
type countingWriter struct{ n atomic.Int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

func newClaude(t *testing.T, bin string) loop.Agent {
	t.Helper()
	a, err := New("claude", Config{Binary: bin, Credentials: map[string]string{"ANTHROPIC_API_KEY": "k"}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRunStopsAndClassifies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		script  string
		timeout time.Duration
		idle    time.Duration
		cancel  time.Duration
		want    loop.ErrorClass
		detail  string
	}{
		{name: "hang", script: "sleep 60", timeout: 500 * time.Millisecond, want: loop.ClassTimeout, detail: "iteration timeout"},
		{name: "hang_ignoring_signals", script: "trap '' INT TERM; sleep 60", timeout: 300 * time.Millisecond, want: loop.ClassTimeout},
		{name: "silent", script: `echo '{"type":"system","subtype":"init","session_id":"s1"}'; sleep 60`, idle: 400 * time.Millisecond, want: loop.ClassIdle, detail: "no output"},
		{name: "cancelled", script: "sleep 60", cancel: 300 * time.Millisecond, want: loop.ClassCancelled, detail: "cancelled"},
		{name: "exit_at_once", script: "exit 0", want: loop.ClassCrash, detail: "without a result"},
		{name: "exit_code", script: "echo 'Error: something broke' >&2; exit 3", want: loop.ClassCrash, detail: "something broke"},
		{name: "auth_on_stderr", script: "echo 'Invalid API key · Please run /login' >&2; exit 1", want: loop.ClassAuth},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel > 0 {
				time.AfterFunc(tc.cancel, cancel)
			}
			start := time.Now()
			var out syncBuffer
			res, err := newClaude(t, fakeCLI(t, tc.script)).Run(ctx, loop.AgentRequest{
				Prompt: "p", Dir: t.TempDir(), Env: shellEnv(), Output: &out, Timeout: tc.timeout, IdleTimeout: tc.idle,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Class != tc.want || !strings.Contains(res.Detail, tc.detail) {
				t.Errorf("class %q detail %q, want %q containing %q", res.Class, res.Detail, tc.want, tc.detail)
			}
			if el := time.Since(start); el > 15*time.Second {
				t.Errorf("took %v", el)
			}
		})
	}
}

// A CLI that forks children and exits leaves no process behind.
func TestRunLeavesNoProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	script := fmt.Sprintf(`sleep 60 & echo $! >> %[1]s
(trap '' INT TERM HUP; sleep 60) & echo $! >> %[1]s
sh -c 'sleep 60' & echo $! >> %[1]s
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}'
exit 0`, pids)
	res, err := newClaude(t, fakeCLI(t, script)).Run(context.Background(), loop.AgentRequest{Prompt: "p", Dir: dir, Env: shellEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Class != loop.ClassNone || res.Message != "done" {
		t.Fatalf("res = %+v", res)
	}
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		deadline := time.Now().Add(3 * time.Second)
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("child %d of the CLI is still alive after Run returned", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// A CLI that prints a gigabyte costs the harness bounded memory: short
// lines are passed on up to MaxOutput, a gigabyte-long JSON line is skipped
// without being buffered.
func TestRunFloodBoundsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 2 GB through a pipe")
	}
	cases := []struct {
		name, script string
	}{
		{"short_lines", "yes | head -c 1073741824"},
		{"one_huge_json_line", "printf '{\"type\":\"assistant\",\"x\":\"'; head -c 1073741824 /dev/zero | tr '\\0' 'x'; echo '\"}'; echo '{\"type\":\"result\",\"subtype\":\"success\",\"result\":\"after the flood\",\"session_id\":\"s\"}'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC()
			var peak atomic.Uint64
			stop := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				var ms runtime.MemStats
				for {
					runtime.ReadMemStats(&ms)
					if ms.HeapInuse > peak.Load() {
						peak.Store(ms.HeapInuse)
					}
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
			var out, tr countingWriter
			res, err := newClaude(t, fakeCLI(t, tc.script)).Run(context.Background(), loop.AgentRequest{
				Prompt: "p", Dir: t.TempDir(), Env: shellEnv(), Output: &out, Transcript: &tr, Timeout: 5 * time.Minute,
			})
			close(stop)
			<-sampled
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("peak heap in use %d MB, output %d MB, transcript %d bytes, result %+v", peak.Load()>>20, out.n.Load()>>20, tr.n.Load(), res)
			if peak.Load() > 100<<20 {
				t.Errorf("heap in use peaked at %d MB, want < 100 MB", peak.Load()>>20)
			}
			if out.n.Load() > MaxOutput+1024 {
				t.Errorf("output got %d bytes, want at most MaxOutput", out.n.Load())
			}
			if tc.name == "one_huge_json_line" && (res.Message != "after the flood" || tr.n.Load() > 1024) {
				t.Errorf("the event after the skipped line was lost or the huge line reached the transcript: %+v, %d bytes", res, tr.n.Load())
			}
		})
	}
}

func TestRunMissingBinary(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a, err := New(name, Config{Credentials: testCredentials})
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Run(context.Background(), loop.AgentRequest{Prompt: "p", Dir: t.TempDir(), Env: []string{"PATH=" + t.TempDir()}})
			var missing *MissingCLIError
			if !errors.As(err, &missing) || !strings.Contains(err.Error(), "npm install -g") {
				t.Fatalf("err = %v, want a MissingCLIError saying how to install", err)
			}
		})
	}
}
