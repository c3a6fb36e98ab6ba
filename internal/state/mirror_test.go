package state

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// seedFixture is a trusted (private) root and a work tree with the seed
// layout of loop id.
func seedFixture(t *testing.T) (trusted, seed Dir, outside string) {
	t.Helper()
	base := t.TempDir()
	id := "ralph-mirror-0000abcd"
	trusted, seed = NewDir(filepath.Join(base, "private"), id), NewDir(filepath.Join(base, "repo"), id)
	outside = filepath.Join(base, "outside")
	for _, f := range []string{"state.json", "report.md", "prompt.md", "logs/loop.log", "logs/iteration-001.log",
		"transcripts/iteration-001.jsonl", "checkpoints/iteration-001.json.gz"} {
		p := trusted.File(filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("trusted "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{outside, seed.Root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"loop.log", "report.md", "GITHUB_PATH"} {
		if err := os.WriteFile(filepath.Join(outside, n), []byte("outside "+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return trusted, seed, outside
}

// plant puts what a hostile agent leaves in the seed directory: the logs
// directory a symlink outside, report.md a symlink to the runner's
// GITHUB_PATH, the transcript a hard link to a file outside, a forged
// checkpoint, a FIFO at state.json, and the user's control file.
func plant(t *testing.T, seed Dir, outside string) {
	t.Helper()
	if err := os.MkdirAll(seed.File("transcripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(seed.File("checkpoints"), 0o755); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, seed.File("logs")))
	must(os.Symlink(filepath.Join(outside, "GITHUB_PATH"), seed.File("report.md")))
	must(os.Link(filepath.Join(outside, "loop.log"), seed.File("transcripts", "iteration-001.jsonl")))
	must(os.WriteFile(seed.File("checkpoints", "iteration-999.json.gz"), []byte("forged"), 0o644))
	must(syscall.Mkfifo(seed.File("state.json"), 0o644))
	must(os.WriteFile(seed.File("control"), []byte("pause\n"), 0o644))
}

func readTree(t *testing.T, d Dir) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(d.Path(), func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(d.Path(), p)
		if !de.Type().IsRegular() {
			out[filepath.ToSlash(rel)] = "<" + de.Type().String() + ">"
			return nil
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func outsideFiles(t *testing.T, outside string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range []string{"loop.log", "report.md", "GITHUB_PATH"} {
		b, err := os.ReadFile(filepath.Join(outside, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

func TestMirrorWritesTheSeedFromTheTrustedCopy(t *testing.T) {
	t.Parallel()
	trusted, seed, outside := seedFixture(t)
	before := outsideFiles(t, outside)
	plant(t, seed, outside)

	m := NewMirror(trusted, seed)
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	want := readTree(t, trusted)
	want["control"] = "pause\n"
	if diff := cmp.Diff(want, readTree(t, seed)); diff != "" {
		t.Errorf("seed after Sync (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, outsideFiles(t, outside)); diff != "" {
		t.Errorf("files outside the repository changed (-before +after):\n%s", diff)
	}

	// The probe can fail: a mirror that writes by path (the weakened
	// harness) follows what the agent planted.
	_, seed2, outside2 := seedFixture(t)
	plantNoFIFO(t, seed2, outside2)
	for rel, content := range readTree(t, trusted) {
		p := seed2.File(filepath.FromSlash(rel))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(content), 0o644)
	}
	after := outsideFiles(t, outside2)
	if after["GITHUB_PATH"] == before["GITHUB_PATH"] || after["loop.log"] == before["loop.log"] {
		t.Fatalf("weakened mirror did not write through the planted links: %q; the probe cannot fail", after)
	}
}

// plantNoFIFO is plant without the FIFO, which the weakened mirror's
// plain write would block on.
func plantNoFIFO(t *testing.T, seed Dir, outside string) {
	t.Helper()
	plant(t, seed, outside)
	os.Remove(seed.File("state.json"))
}

func TestMirrorCopiesWhatChanged(t *testing.T) {
	t.Parallel()
	trusted, seed, _ := seedFixture(t)
	m := NewMirror(trusted, seed)
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	ino := func(p string) uint64 {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	stateIno, logIno := ino(seed.StatePath()), ino(seed.LiveLogPath())
	// The harness appends to its log; the agent edits the seed report in
	// place and puts its mtime back.
	f, _ := os.OpenFile(trusted.LiveLogPath(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("more\n")
	f.Close()
	fi, _ := os.Stat(seed.ReportPath())
	if err := os.WriteFile(seed.ReportPath(), []byte("## ✅ completed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(seed.ReportPath(), fi.ModTime(), fi.ModTime())
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	if ino(seed.StatePath()) != stateIno {
		t.Error("an unchanged file was copied again")
	}
	if ino(seed.LiveLogPath()) == logIno {
		t.Error("the changed log was not copied")
	}
	if diff := cmp.Diff(readTree(t, trusted), readTree(t, seed)); diff != "" {
		t.Errorf("seed after the second Sync (-want +got):\n%s", diff)
	}
}

func TestTakeControlRefusesAFIFO(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	d := NewDir(root, "ralph-fifo-0000abcd")
	if err := os.MkdirAll(d.Path(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(d.ControlPath(), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- d.TakeControl() }()
	select {
	case got := <-done:
		if got != "" {
			t.Fatalf("TakeControl = %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("TakeControl hangs on a FIFO")
	}
	// The weakened read (os.ReadFile, as before) blocks: the probe can fail.
	blocked := make(chan struct{})
	go func() {
		os.ReadFile(d.ControlPath())
		close(blocked)
	}()
	select {
	case <-blocked:
		t.Fatal("os.ReadFile of the FIFO returned; the probe cannot fail")
	case <-time.After(200 * time.Millisecond):
	}
	w, _ := os.OpenFile(d.ControlPath(), os.O_WRONLY, 0)
	w.Close()
	<-blocked

	// A symlink to a file that says "abort" is no request either; a
	// regular file is.
	os.Remove(d.ControlPath())
	abort := filepath.Join(root, "abort")
	os.WriteFile(abort, []byte("abort\n"), 0o644)
	os.Symlink(abort, d.ControlPath())
	if got := d.TakeControl(); got != "" {
		t.Fatalf("through a symlink: %q", got)
	}
	os.Remove(d.ControlPath())
	if err := d.RequestControl("pause"); err != nil {
		t.Fatal(err)
	}
	if got := d.TakeControl(); got != "pause" {
		t.Fatalf("TakeControl = %q", got)
	}
}

// Forged "running" entries in the seed registry (the agent's to write)
// do not block a loop: the harness's registry is the trusted one.
func TestForgedRegistryEntriesAreIgnored(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	private, repo := filepath.Join(base, "private"), filepath.Join(base, "repo")
	var forged strings.Builder
	forged.WriteString(`{"version":"2.0.0","max_concurrent_loops":4,"active_loops":[`)
	for i := 0; i < 4; i++ {
		if i > 0 {
			forged.WriteString(",")
		}
		fmt.Fprintf(&forged, `{"loop_id":"ralph-forged-%08d","status":"running","iteration":1,"task":"x","pid":1,"started_at":"2030-01-01T00:00:00Z","last_active":"2030-01-01T00:00:00Z"}`, i)
	}
	forged.WriteString(`]}`)
	if err := os.MkdirAll(filepath.Join(repo, RootDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, RegistryFile), []byte(forged.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	st := &State{LoopID: "ralph-real-0000abcd", Status: Running, Task: "real task", StartedAt: time.Now()}

	// Weakened: the registry in the work tree decides, and is full.
	var full *FullError
	if err := NewStore(repo).Register(st); !errors.As(err, &full) {
		t.Fatalf("weakened: Register on the seed registry = %v, want FullError; the probe cannot fail", err)
	}
	if err := NewStore(private).Register(st); err != nil {
		t.Fatalf("Register on the trusted registry: %v", err)
	}
	// The seed registry the user sees is written from the trusted one.
	m := NewMirror(NewDir(private, st.LoopID), NewDir(repo, st.LoopID))
	if err := os.MkdirAll(NewDir(private, st.LoopID).Path(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	reg, err := NewStore(repo).Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.ActiveLoops) != 1 || reg.ActiveLoops[0].LoopID != st.LoopID {
		t.Fatalf("seed registry after Sync = %+v", reg.ActiveLoops)
	}
}

// The loop directory's files reach the state ref and the artifact as
// streams: a 1.5 GiB file in it is listed, not read, and a large one under
// the limit is streamed. The memory is measured in a child process.
func TestFilesBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes sparse files and measures a child's memory")
	}
	t.Parallel()
	hwm := func(mode string) int64 {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestFilesRSSHelper$")
		cmd.Env = append(os.Environ(), "STATE_RSS_HELPER="+mode+":"+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper %s: %v\n%s", mode, err, out)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(l, "hwm-kb "); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				return n << 10
			}
		}
		t.Fatalf("helper %s printed no hwm:\n%s", mode, out)
		return 0
	}
	streamed := hwm("files")
	if streamed > 96<<20 {
		t.Errorf("Files over a loop directory with a 1.5 GiB and a 64 MiB file: peak RSS %d MiB, want under 96 MiB", streamed>>20)
	}
	// The weakened harness (every file read into memory, as the state ref
	// and artifact did) is measured against the same directory without the
	// 1.5 GiB file: the probe can fail.
	whole := hwm("readall")
	if whole < 64<<20 {
		t.Fatalf("weakened: reading the files whole peaked at %d MiB; the probe cannot fail", whole>>20)
	}
	t.Logf("peak RSS: streamed %d MiB, read whole %d MiB", streamed>>20, whole>>20)
}

func TestFilesRSSHelper(t *testing.T) {
	spec := os.Getenv("STATE_RSS_HELPER")
	if spec == "" {
		t.Skip("helper process of TestFilesBoundedMemory")
	}
	mode, dir, _ := strings.Cut(spec, ":")
	d := NewDir(dir, "ralph-huge-0000abcd")
	if err := os.MkdirAll(d.File("logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	sparse := func(rel string, size int64) {
		f, err := os.Create(d.File(filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(size)
		f.Close()
	}
	os.WriteFile(d.StatePath(), []byte(`{}`), 0o644)
	sparse("logs/iteration-001.log", 64<<20)
	h := sha256.New()
	switch mode {
	case "files":
		sparse("huge.bin", 3<<29)
		n := int64(0)
		skipped, err := d.Files(100<<20, func(f LoopFile, r io.Reader) error {
			c, err := io.Copy(io.Discard, r)
			n += c
			return err
		})
		if n != 64<<20+2 {
			t.Fatalf("streamed %d bytes", n)
		}
		if err != nil || len(skipped) != 1 || !strings.HasPrefix(skipped[0], "huge.bin (") {
			t.Fatalf("Files: skipped %v, %v", skipped, err)
		}
	case "readall":
		filepath.WalkDir(d.Path(), func(p string, de os.DirEntry, err error) error {
			if err == nil && de.Type().IsRegular() {
				b, _ := os.ReadFile(p)
				h.Write(b[:min(len(b), 1024)])
				keep = append(keep, b)
			}
			return err
		})
	}
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("VmHWM:")); ok {
			fmt.Printf("hwm-kb %s\n", bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB")))
		}
	}
}

// keep holds what the weakened helper read, as the old code's map did.
var keep [][]byte
