package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aiwg/agent-loop/internal/state"
)

// guardFixture is a loop directory as the harness leaves it between runs of
// the agent's code, and a workflow command file.
type guardFixture struct {
	root, outside, output string
	dir                   state.Dir
	g                     *stateGuard
	log                   *bytes.Buffer
}

func newGuardFixture(t *testing.T) *guardFixture {
	t.Helper()
	f := &guardFixture{root: t.TempDir(), outside: t.TempDir(), log: &bytes.Buffer{}}
	f.dir = state.NewDir(f.root, "ralph-guard-00000001")
	f.output = filepath.Join(f.outside, "set_output_1")
	write := func(p, s string) {
		if err := state.WriteFileAtomic(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(f.dir.StatePath(), `{"loop_id":"ralph-guard-00000001","status":"running"}`)
	write(f.dir.AnalyticsPath(), `{"iterations":[]}`)
	write(f.dir.File("checkpoints", "iteration-001.json.gz"), "checkpoint 1")
	write(filepath.Join(f.root, state.RegistryFile), `{"version":"2.0.0","active_loops":[]}`)
	for _, d := range []string{"logs", "transcripts"} {
		os.MkdirAll(f.dir.File(d), 0o755)
	}
	write(f.output, "status<<ghadelimiter_1\nrunning\nghadelimiter_1\n")
	f.g = newStateGuard(f.root, f.dir, f.log, map[string]string{f.output: "GITHUB_OUTPUT"})
	f.g.snapshot()
	return f
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("reading %s: %v", p, err)
	}
	return string(b)
}

func TestStateGuard(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		attack func(t *testing.T, f *guardFixture)
		check  func(t *testing.T, f *guardFixture)
		quiet  bool // nothing to repair
	}{
		{
			name:   "nothing changed",
			attack: func(*testing.T, *guardFixture) {},
			quiet:  true,
		},
		{
			name: "state forged, checkpoint corrupted, another planted",
			attack: func(t *testing.T, f *guardFixture) {
				os.WriteFile(f.dir.StatePath(), []byte(`{"status":"completed"}`), 0o644)
				os.WriteFile(f.dir.File("checkpoints", "iteration-001.json.gz"), []byte("garbage"), 0o644)
				os.WriteFile(f.dir.File("checkpoints", "iteration-009.json.gz"), []byte("planted"), 0o644)
				os.Remove(f.dir.AnalyticsPath())
			},
			check: func(t *testing.T, f *guardFixture) {
				if got := read(t, f.dir.StatePath()); !strings.Contains(got, `"running"`) {
					t.Errorf("state.json = %s", got)
				}
				if got := read(t, f.dir.File("checkpoints", "iteration-001.json.gz")); got != "checkpoint 1" {
					t.Errorf("checkpoint = %q", got)
				}
				if _, err := os.Stat(f.dir.File("checkpoints", "iteration-009.json.gz")); err == nil {
					t.Error("the planted checkpoint is still there")
				}
				if got := read(t, f.dir.AnalyticsPath()); got != `{"iterations":[]}` {
					t.Errorf("analytics = %q", got)
				}
			},
		},
		{
			name: "registry not JSON",
			attack: func(t *testing.T, f *guardFixture) {
				os.WriteFile(filepath.Join(f.root, state.RegistryFile), []byte("not json"), 0o644)
			},
			check: func(t *testing.T, f *guardFixture) {
				if got := read(t, filepath.Join(f.root, state.RegistryFile)); !strings.Contains(got, "active_loops") {
					t.Errorf("registry = %q", got)
				}
			},
		},
		{
			name: "registry updated by another loop is kept",
			attack: func(t *testing.T, f *guardFixture) {
				os.WriteFile(filepath.Join(f.root, state.RegistryFile), []byte(`{"version":"2.0.0","active_loops":[{"loop_id":"ralph-other-00000002"}]}`), 0o644)
			},
			check: func(t *testing.T, f *guardFixture) {
				if got := read(t, filepath.Join(f.root, state.RegistryFile)); !strings.Contains(got, "ralph-other") {
					t.Errorf("a valid registry was put back: %q", got)
				}
			},
			quiet: true,
		},
		{
			name: "loop directory replaced by a symlink to elsewhere",
			attack: func(t *testing.T, f *guardFixture) {
				os.Rename(f.dir.Path(), filepath.Join(f.outside, "moved"))
				os.Symlink(f.outside, f.dir.Path())
			},
			check: func(t *testing.T, f *guardFixture) {
				if fi, err := os.Lstat(f.dir.Path()); err != nil || !fi.IsDir() {
					t.Fatalf("the loop directory is not a directory again: %v", err)
				}
				if got := read(t, f.dir.StatePath()); !strings.Contains(got, `"running"`) {
					t.Errorf("state.json = %s", got)
				}
				if _, err := os.Stat(filepath.Join(f.outside, "state.json")); err == nil {
					t.Error("state.json was written through the symlink")
				}
			},
		},
		{
			name: "workflow command file appended to",
			attack: func(t *testing.T, f *guardFixture) {
				fh, _ := os.OpenFile(f.output, os.O_APPEND|os.O_WRONLY, 0)
				fh.WriteString("status=hacked\nx<<EOF\n")
				fh.Close()
			},
			check: func(t *testing.T, f *guardFixture) {
				if got := read(t, f.output); got != "status<<ghadelimiter_1\nrunning\nghadelimiter_1\n" {
					t.Errorf("GITHUB_OUTPUT = %q", got)
				}
			},
		},
		{
			name: "workflow command file replaced by a FIFO",
			attack: func(t *testing.T, f *guardFixture) {
				os.Remove(f.output)
				if err := syscall.Mkfifo(f.output, 0o644); err != nil {
					t.Skip("mkfifo:", err)
				}
			},
			check: func(t *testing.T, f *guardFixture) {
				if fi, err := os.Lstat(f.output); err != nil || !fi.Mode().IsRegular() {
					t.Fatalf("GITHUB_OUTPUT is not a regular file again: %v", err)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newGuardFixture(t)
			tc.attack(t, f)
			f.g.restore("the agent")
			if tc.check != nil {
				tc.check(t, f)
			}
			if quiet := f.log.Len() == 0; quiet != tc.quiet {
				t.Errorf("report %q (quiet %v, want %v)", f.log.String(), quiet, tc.quiet)
			}
		})
	}
}

// A user's own symlinked .aiwg (state kept on another disk) is not taken
// for an attack.
func TestStateGuardKeepsUsersSymlink(t *testing.T) {
	t.Parallel()
	root, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(root, ".aiwg")); err != nil {
		t.Fatal(err)
	}
	d := state.NewDir(root, "ralph-guard-00000003")
	if err := state.WriteFileAtomic(d.StatePath(), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	g := newStateGuard(root, d, &log, nil)
	g.snapshot()
	g.restore("the agent")
	if fi, err := os.Lstat(filepath.Join(root, ".aiwg")); err != nil || fi.Mode()&os.ModeSymlink == 0 || log.Len() > 0 {
		t.Errorf(".aiwg: %v, %v; report %q", fi, err, log.String())
	}
}
