package heldout

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
)

// shellRunner runs the criterion with sh -c, as verify.Shell does.
type shellRunner struct{ runs []string }

func (s *shellRunner) Check(ctx context.Context, req loop.CheckRequest) (loop.CheckResult, error) {
	s.runs = append(s.runs, req.Dir)
	cmd := exec.CommandContext(ctx, "sh", "-c", req.Command)
	cmd.Dir = req.Dir
	cmd.Env = append(os.Environ(), req.Env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	res := loop.CheckResult{Passed: err == nil, Duration: time.Since(start), Output: out.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.ExitCode = ee.ExitCode()
	} else if err != nil {
		return res, err
	}
	return res, nil
}

// testRepo is a git repository with a baseline commit and an iteration
// staged on top of it.
type testRepo struct {
	dir        string
	base, tree string
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if body == "<delete>" {
			if err := os.Remove(full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newTestRepo(t *testing.T, base, change map[string]string) testRepo {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	writeFiles(t, dir, base)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	writeFiles(t, dir, change)
	git(t, dir, "add", "-A")
	return testRepo{dir: dir, base: git(t, dir, "rev-parse", "HEAD"), tree: git(t, dir, "write-tree")}
}

const goMod = "module example.com/calc\n\ngo 1.21\n"

func TestCheckGo(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	t.Parallel()
	base := map[string]string{
		"go.mod":       goMod,
		"calc.go":      "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
	}
	cases := []struct {
		name   string
		change map[string]string
		want   Verdict
	}{
		{"expected value changed", map[string]string{
			"calc_test.go": strings.Replace(base["calc_test.go"], "got != 5", "got != -1", 1),
		}, Failed},
		{"fix and a renamed test", map[string]string{
			"calc.go":      "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
			"calc_test.go": strings.Replace(base["calc_test.go"], "TestAdd", "TestAddSmall", 1),
		}, Passed},
		{"fix alone", map[string]string{
			"calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		}, NotNeeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRepo(t, base, tc.change)
			runner := &shellRunner{}
			c := &Checker{Objects: &Git{Dir: r.dir}, Runner: runner, ScratchRoot: t.TempDir()}
			res, err := c.Check(context.Background(), Request{
				Base: r.base, Iteration: r.tree, Deps: CriterionDeps{Command: "go test ./...", Runner: "go"}, WorkTree: r.dir,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s; runs %+v; output %v", res.Verdict, res.Reason, tc.want, res.Runs, res.HeldOut)
			}
			if tc.want == Failed && (len(res.Runs) != 3 || res.Control == nil || !res.Control.Passed) {
				t.Errorf("a failure is confirmed by a passing control and a second failing run: %+v", res.Runs)
			}
			if tc.want == Passed && len(res.Changes) != 1 {
				t.Errorf("changes %v", res.Changes)
			}
			for _, d := range runner.runs {
				if strings.HasPrefix(d, r.dir) {
					t.Errorf("a held-out run ran in the work tree: %s", d)
				}
			}
		})
	}
}

func TestCheckInconclusiveWhenTheScratchTreeLacksSomething(t *testing.T) {
	t.Parallel()
	// The check needs an ignored file of the work tree that the scratch
	// tree does not get: the control run fails too, so no veto.
	r := newTestRepo(t, map[string]string{
		".gitignore": "local.env\n",
		"check.sh":   "test -f local.env && grep -q ok result.txt\n",
		"result.txt": "bad\n",
	}, map[string]string{
		"result.txt": "ok\n",
		"local.env":  "x\n",
	})
	c := &Checker{Objects: &Git{Dir: r.dir}, Runner: &shellRunner{}, ScratchRoot: t.TempDir()}
	res, err := c.Check(context.Background(), Request{Base: r.base, Iteration: r.tree,
		Deps: CriterionDeps{Command: "sh check.sh", Files: []string{"check.sh", "result.txt"}}, WorkTree: r.dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Inconclusive || res.Control == nil || res.Control.Passed {
		t.Fatalf("verdict %s (%s)", res.Verdict, res.Reason)
	}
}

func TestBuildRefusesLinksOutOfTheTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	writeFiles(t, dir, map[string]string{"a.go": "package a\n"})
	for name, target := range map[string]string{"abs": "/etc", "up": "../../outside", "in": "a.go"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	tree := git(t, dir, "write-tree")
	obj := &Git{Dir: dir}
	plan, err := MakePlan(context.Background(), obj, tree, tree, CriterionDeps{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "s")
	if err := plan.Build(context.Background(), obj, BuildOptions{Dir: out}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(plan.Dropped, ",") != "abs,up" {
		t.Errorf("dropped %v, want abs and up", plan.Dropped)
	}
	if target, err := os.Readlink(filepath.Join(out, "in")); err != nil || target != "a.go" {
		t.Errorf("the link inside the tree: %q %v", target, err)
	}
}

// TestCargoCacheIsNeverStale runs the held-out check of three iterations
// with one CacheDir (the compiled dependencies are reused from one check to
// the next): a cheat, an honest fix, the cheat again. Cargo keys its
// fingerprints by the sources' paths and mtimes, so a shared or copied
// target directory would hand a later run the binary of an earlier tree.
func TestCargoCacheIsNeverStale(t *testing.T) {
	if _, err := exec.LookPath("cargo"); err != nil {
		t.Skip("cargo not installed")
	}
	t.Parallel()
	lib := "pub fn add(a: i64, b: i64) -> i64 {\n    a - b\n}\n"
	api := "#[test]\nfn adds() {\n    assert_eq!(calc::add(2, 3), 5);\n}\n"
	base := map[string]string{
		"Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/lib.rs": lib, "tests/api.rs": api, ".gitignore": "target\n",
	}
	cheat := map[string]string{"tests/api.rs": strings.Replace(api, "5)", "-1)", 1)}
	honest := map[string]string{"src/lib.rs": strings.Replace(lib, "a - b", "a + b", 1), "tests/api.rs": strings.Replace(api, "fn adds", "fn adds_small", 1)}
	cache := t.TempDir()
	for i, step := range []struct {
		change map[string]string
		want   Verdict
	}{{cheat, Failed}, {honest, Passed}, {cheat, Failed}} {
		r := newTestRepo(t, base, step.change)
		c := &Checker{Objects: &Git{Dir: r.dir}, Runner: &shellRunner{}, CacheDir: cache}
		res, err := c.Check(context.Background(), Request{Base: r.base, Iteration: r.tree,
			Deps: CriterionDeps{Command: "cargo test --offline", Runner: "cargo"}, WorkTree: r.dir, Env: []string{"CARGO_NET_OFFLINE=true"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != step.want {
			t.Fatalf("check %d: %s (%s), want %s", i+1, res.Verdict, res.Reason, step.want)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "held-out-target", "debug")); err != nil {
		t.Errorf("the held-out tree's own target directory is not under the cache: %v", err)
	}
}

// TestInstalledDependenciesAreLinked: the criterion imports a module that
// only the work tree's virtual environment has (git does not track it); the
// held-out tree reaches it through the link to .venv.
func TestInstalledDependenciesAreLinked(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	t.Parallel()
	r := newTestRepo(t, map[string]string{
		".gitignore":   ".venv\n",
		"calc.py":      "import depmod\n\n\ndef add(a, b):\n    return depmod.combine(a, -b)\n",
		"test_calc.py": "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
	}, map[string]string{
		"calc.py":      "import depmod\n\n\ndef add(a, b):\n    return depmod.combine(a, b)\n",
		"test_calc.py": "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add_small(self):\n        self.assertEqual(add(2, 3), 5)\n",
	})
	venv := filepath.Join(r.dir, ".venv")
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("python3 -m venv: %v\n%s", err, out)
	}
	site, err := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if err != nil || len(site) != 1 {
		t.Fatalf("site-packages: %v %v", site, err)
	}
	if err := os.WriteFile(filepath.Join(site[0], "depmod.py"), []byte("def combine(a, b):\n    return a + b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Checker{Objects: &Git{Dir: r.dir}, Runner: &shellRunner{}, ScratchRoot: t.TempDir()}
	res, err := c.Check(context.Background(), Request{Base: r.base, Iteration: r.tree,
		Deps: CriterionDeps{Command: ".venv/bin/python -m unittest", Runner: "unittest"}, WorkTree: r.dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Passed {
		t.Fatalf("verdict %s (%s): %v", res.Verdict, res.Reason, res.HeldOut)
	}
	// Without the link the same check cannot even import the module.
	c.Links = []string{}
	res, err = c.Check(context.Background(), Request{Base: r.base, Iteration: r.tree,
		Deps: CriterionDeps{Command: ".venv/bin/python -m unittest", Runner: "unittest"}, WorkTree: r.dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == Passed {
		t.Fatalf("without linking .venv the held-out run still passed: the test proves nothing")
	}
}
