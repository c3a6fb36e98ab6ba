package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Test uids (no passwd entry needed): the work tree's owner (the runner's
// user of the Action), the owner of the workflow command files, and the
// harness's own uid in the mode without root.
const (
	ownerUID   = 47160
	runnerUID  = 47150
	harnessUID = 47170
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the probes need root: CI runs them as root (privilege separation for real, and a dropped uid for the mode without root)")
	}
}

// fixture is a base directory every test uid can traverse, with a work
// tree, workflow command files and a private base.
type fixture struct {
	base, wt, fc string
	protect      []string
	sc           scenario
	env          []string
}

func mkdir(t *testing.T, p string, mode os.FileMode, uid int) {
	t.Helper()
	if err := os.MkdirAll(p, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(p, uid, uid); err != nil {
		t.Fatal(err)
	}
}

func writeOwned(t *testing.T, p, content string, mode os.FileMode, uid int) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(p, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// newFixture lays out the directories of one harness run. rootMode: the
// harness is root, the work tree belongs to ownerUID and the workflow
// command files (world-writable, in a world-writable directory: the
// sandbox must tighten them) to runnerUID. Otherwise everything is the
// harness's uid, as on a developer's machine or a runner without root.
func newFixture(t *testing.T, rootMode bool) *fixture {
	t.Helper()
	base, err := os.MkdirTemp("", "sbx-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(base)
		// The agent CLIs' directories the sandbox users kept for this
		// work tree (they outlive a loop, not a test).
		if dir, err := PrivateDir("", filepath.Join(base, "wt")); err == nil {
			leftovers, _ := filepath.Glob(filepath.Join("/home", UserName+"*", ".agent-loop", filepath.Base(dir)))
			for _, d := range leftovers {
				os.RemoveAll(d)
			}
		}
	})
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fixture{base: base, wt: filepath.Join(base, "wt"), fc: filepath.Join(base, "file_commands")}
	wtUID, fcUID, fileMode, dirMode := ownerUID, runnerUID, os.FileMode(0o666), os.FileMode(0o777)
	if !rootMode {
		wtUID, fcUID, fileMode, dirMode = harnessUID, harnessUID, 0o644, 0o755
	}
	mkdir(t, f.wt, 0o755, wtUID)
	mkdir(t, filepath.Join(f.wt, ".git"), 0o755, wtUID)
	writeOwned(t, filepath.Join(f.wt, ".git", "config"), "[core]\n", 0o644, wtUID)
	writeOwned(t, filepath.Join(f.wt, "main.go"), "package main\n", 0o644, wtUID)
	mkdir(t, f.fc, dirMode, fcUID)
	for _, n := range []string{"GITHUB_PATH", "GITHUB_ENV", "GITHUB_OUTPUT"} {
		p := filepath.Join(f.fc, n)
		writeOwned(t, p, "", fileMode, fcUID)
		f.protect = append(f.protect, p)
	}
	secret := make([]byte, 8)
	rand.Read(secret)
	f.env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", secretEnv + "=hunter2-" + hex.EncodeToString(secret)}
	f.sc = scenario{WorkTree: f.wt, PrivateBase: filepath.Join(base, "priv"), Protect: f.protect}
	if !rootMode {
		home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
		mkdir(t, home, 0o700, harnessUID)
		mkdir(t, tmp, 0o700, harnessUID)
		mkdir(t, f.sc.PrivateBase, 0o700, harnessUID)
		f.env = append(f.env, "HOME="+home, "TMPDIR="+tmp, "USER=harness")
	}
	return f
}

// attack is one probe of the matrix: its call, and the weakenings under
// which it must get through (it must be stopped by the full sandbox).
type attack struct {
	call  probeCall
	gets  [][]string // each: a weakening under which the attack succeeds
	holds [][]string // weakenings under which it is still stopped (another layer holds)
}

func (f *fixture) attacks(rootMode bool) []attack {
	secretArgs := []string{"{pid}", "{secret}"}
	// The attacks on the harness (its memory, environment, signals, private
	// directory): as root the separate user stops them on its own (the
	// PID namespace also hides the harness's pid from kill and ptrace, so
	// it is off in the variants that show a layer alone); without root,
	// Landlock does.
	harness := [][]string{{"noLandlock", "noPIDNS"}}
	var harnessHolds [][]string
	if rootMode {
		harness = [][]string{{"sameUser", "noLandlock", "noPIDNS"}}
		harnessHolds = [][]string{{"noLandlock", "noPIDNS"}}
	} else {
		harnessHolds = [][]string{{"noPIDNS"}}
	}
	fcGets, fcHolds := [][]string{{"noLandlock"}}, [][]string(nil)
	readGets, readHolds := [][]string(nil), [][]string(nil)
	if rootMode {
		// The files and their directory are world-writable: only the
		// tightening (and Landlock, for writes) keep the sandbox user out.
		fcGets = [][]string{{"noProtect", "noLandlock"}, {"sameUser", "noLandlock"}}
		fcHolds = [][]string{{"noLandlock"}, {"noProtect"}}
		readGets, readHolds = [][]string{{"noProtect"}}, [][]string{{"noLandlock"}}
	}
	gitGets := [][]string{{"sameUser", "noLandlock"}}
	a := []attack{
		{call: probeCall{"environ", secretArgs}, gets: harness, holds: harnessHolds},
		{call: probeCall{"mem", []string{"{pid}"}}, gets: harness, holds: harnessHolds},
		{call: probeCall{"ptrace", []string{"{pid}"}}, gets: harness, holds: harnessHolds},
		{call: probeCall{"signal", []string{"{pid}"}}, gets: harness, holds: harnessHolds},
		{call: probeCall{"signal", []string{"{pid}", "URG"}}, gets: harness, holds: harnessHolds},
		{call: probeCall{"write", []string{"{private}/.aiwg/ralph/loops/l1/state.json", `{"forged":true}`}}, gets: harness, holds: harnessHolds},
		{call: probeCall{"write", []string{"{private}/tmp/credential", "x"}}, gets: harness, holds: harnessHolds},
		{call: probeCall{"write", []string{filepath.Join(f.fc, "GITHUB_PATH"), "/agent/bin"}}, gets: fcGets, holds: fcHolds},
		{call: probeCall{"write", []string{filepath.Join(f.fc, "GITHUB_ENV"), "NODE_OPTIONS=--require=/tmp/x"}}, gets: fcGets, holds: fcHolds},
		{call: probeCall{"abstract", []string{"{socket}"}}, gets: [][]string{{"noLandlock"}}},
		{call: probeCall{"survive", []string{"{survive}"}}, gets: [][]string{{"noPIDNS", "noSweep"}}, holds: [][]string{{"noPIDNS"}, {"noSweep"}}},
	}
	if rootMode {
		a = append(a,
			attack{call: probeCall{"read", []string{filepath.Join(f.fc, "GITHUB_ENV")}}, gets: readGets, holds: readHolds},
			attack{call: probeCall{"rename", []string{filepath.Join(f.fc, "GITHUB_OUTPUT"), filepath.Join(f.fc, "moved")}}, gets: fcGets, holds: fcHolds},
			attack{call: probeCall{"write", []string{filepath.Join(f.wt, ".git", "config"), "[core]\n\tfsmonitor = /tmp/x"}}, gets: gitGets, holds: [][]string{{"noLandlock"}}},
			attack{call: probeCall{"rename", []string{filepath.Join(f.wt, ".git"), filepath.Join(f.wt, ".git-moved")}}, gets: gitGets, holds: [][]string{{"noLandlock"}}},
			attack{call: probeCall{"privileges", nil}, gets: [][]string{{"sameUser"}}},
		)
	}
	return a
}

// controls are what the agent must be able to do in every variant: the
// sandbox is not simply broken.
func (f *fixture) controls() []probeCall {
	return []probeCall{
		{"write", []string{filepath.Join(f.wt, "new_file.go"), "package main"}},
		{"write", []string{filepath.Join(f.wt, "main.go"), "// edited"}},
		{"read", []string{filepath.Join(f.wt, ".git", "config")}},
	}
}

func key(w []string) string { return strings.Join(w, "+") }

// runMatrix runs every attack under the full sandbox and under each
// weakening named in the table, in harness processes (root, or the
// harness uid), and checks: stopped by the full sandbox, through under
// its "gets" weakenings, still stopped under its "holds" ones.
func runMatrix(t *testing.T, rootMode bool) {
	f := newFixture(t, rootMode)
	attacks := f.attacks(rootMode)
	variants := map[string][]string{"": nil}
	for _, a := range attacks {
		for _, w := range append(append([][]string(nil), a.gets...), a.holds...) {
			variants[key(w)] = w
		}
	}
	uid := -1
	if !rootMode {
		uid = harnessUID
	}
	for name, weak := range variants {
		sc := f.sc
		sc.Weak = weak
		sc.Probes = f.controls()
		var which []attack
		for _, a := range attacks {
			switch {
			case name == "":
			case contains(a.gets, name), contains(a.holds, name):
			default:
				continue
			}
			which = append(which, a)
			sc.Probes = append(sc.Probes, a.call)
		}
		start := time.Now()
		res, err := runHarness(sc, uid, f.env)
		label := name
		if label == "" {
			label = "full sandbox"
		}
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		t.Logf("%s (%s): %s", label, time.Since(start).Round(time.Millisecond), res.Layers)
		for i, c := range f.controls() {
			r := res.Results[i]
			if r.Exit != 0 {
				t.Errorf("%s: control %s %v failed: the agent must be able to do this (exit %d: %s %s)", label, c.Name, c.Args, r.Exit, r.Output, r.Err)
			}
		}
		for i, a := range which {
			r := res.Results[len(f.controls())+i]
			got := r.Exit == 0
			if a.call.Name == "survive" {
				got = r.Alive
				if r.Exit != 0 {
					t.Errorf("%s: survive could not start its processes: %s", label, r.Output)
				}
			}
			switch want := contains(a.gets, name); {
			case want && !got:
				t.Errorf("%s: %s %v was stopped; this weakened sandbox must let it through (the probe must be able to fail): %s %s", label, a.call.Name, a.call.Args, r.Output, r.Err)
			case !want && got:
				t.Errorf("%s: %s %v GOT THROUGH: %s %s", label, a.call.Name, a.call.Args, r.Output, r.Err)
			}
		}
		// What the writes targeted is as it was.
		if name == "" {
			for _, p := range f.protect {
				if b, err := os.ReadFile(p); err != nil || len(b) != 0 {
					t.Errorf("%s: %s = %q, %v", label, p, b, err)
				}
			}
			if b, err := os.ReadFile(filepath.Join(res.Private, ".aiwg/ralph/loops/l1/state.json")); err != nil || strings.Contains(string(b), "forged") {
				t.Errorf("%s: the private state = %q, %v", label, b, err)
			}
		}
		restoreFixture(t, f, rootMode)
	}
}

// restoreFixture undoes what a weakened run's attacks changed.
func restoreFixture(t *testing.T, f *fixture, rootMode bool) {
	if _, err := os.Lstat(filepath.Join(f.wt, ".git-moved")); err == nil {
		os.Rename(filepath.Join(f.wt, ".git-moved"), filepath.Join(f.wt, ".git"))
	}
	if _, err := os.Lstat(filepath.Join(f.fc, "moved")); err == nil {
		os.Rename(filepath.Join(f.fc, "moved"), filepath.Join(f.fc, "GITHUB_OUTPUT"))
	}
	fcUID, mode := runnerUID, os.FileMode(0o666)
	if !rootMode {
		fcUID, mode = harnessUID, 0o644
	}
	for _, p := range f.protect {
		writeOwned(t, p, "", mode, fcUID)
	}
}

func contains(ws [][]string, k string) bool {
	for _, w := range ws {
		if key(w) == k {
			return true
		}
	}
	return false
}

// TestProbesAsRoot: the harness is root (the container Action); the
// sandbox runs as the separate user.
func TestProbesAsRoot(t *testing.T) {
	needRoot(t)
	runMatrix(t, true)
}

// TestProbesWithoutRoot: the harness itself runs as an unprivileged uid
// (a developer's CLI run): this test binary re-executed with the uid
// dropped.
func TestProbesWithoutRoot(t *testing.T) {
	needRoot(t)
	runMatrix(t, false)
}
