package criteria_test

// TestInferEval is an accuracy check of completion inference against fixture repositories modelled on real
// open-source projects (testdata/eval/<fixture>/). Each testdata/eval/*.expect.json names a task and the commands
// the project's own CI runs for it; the expectations were written from the projects' CI before, and independently
// of, the implementation. The test reports every case in a table and fails when fewer than evalMinAccuracy of the
// cases match (a single miss does not hide the overall accuracy), or when a study-* case misses.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/aiwg/agent-loop/internal/criteria"
)

// evalMinAccuracy is the share of expect files whose command and workdir must match: the accuracy
// reached (106 of 110), so that no change lets it fall. The fixtures of the inference study's patterns
// (study-*) must all match: each is a mistake inference made on real repositories.
const evalMinAccuracy = 0.96

const evalDir = "testdata/eval"

// evalCase is one testdata/eval/*.expect.json file.
type evalCase struct {
	file string // base name of the expect file

	Task       string   `json:"task"`
	Fixture    string   `json:"fixture"`
	Class      string   `json:"class"`
	Commands   []string `json:"commands"`
	Workdir    string   `json:"workdir"`
	ModelledOn string   `json:"modelled_on"`
	Why        string   `json:"why"`
	Provenance string   `json:"provenance"`
}

// validClasses are the criterion_class values of the completion-proposal schema.
var validClasses = []string{
	"test-pass", "type-clean", "regression-gate", "coverage", "lint-clean",
	"build-pass", "implement-feature", "refused",
}

// evalResult is the outcome of one case.
type evalResult struct {
	c          evalCase
	gotCommand string
	gotWorkdir string
	gotClass   string
	confidence string
	err        error
	ok         bool
	classOK    bool
	reason     string
}

func TestInferEval(t *testing.T) {
	cases := loadEvalCases(t)
	if len(cases) == 0 {
		t.Fatalf("no *.expect.json files in %s", evalDir)
	}

	results := make([]evalResult, 0, len(cases))
	for _, c := range cases {
		results = append(results, runEvalCase(t, c))
	}

	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tfixture\texpected\tgot\tworkdir\tclass\tconfidence\tok")
	passed, classPassed := 0, 0
	var misses []string
	for _, r := range results {
		if r.ok {
			passed++
		} else {
			misses = append(misses, fmt.Sprintf("%s (%s)", r.c.file, r.reason))
		}
		if r.classOK {
			classPassed++
		}
		expected := "(refused)"
		if len(r.c.Commands) > 0 {
			expected = r.c.Commands[0]
			if n := len(r.c.Commands) - 1; n > 0 {
				expected += fmt.Sprintf(" [+%d]", n)
			}
		}
		got := r.gotCommand
		if r.err != nil {
			got = "error: " + r.err.Error()
		} else if got == "" {
			got = "(none)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%v\n",
			strings.TrimSuffix(r.c.file, ".expect.json"), r.c.fixtureName(),
			clip(expected, 70), clip(got, 70),
			pair(cleanWorkdir(r.c.Workdir), r.gotWorkdir), pair(r.c.Class, r.gotClass), r.confidence, r.ok)
	}
	_ = tw.Flush()
	t.Logf("inference results:\n%s", table.String())

	for _, r := range results {
		if strings.HasPrefix(r.c.file, "study-") && !r.ok {
			t.Errorf("%s: a pattern of the inference study is inferred wrongly again: %s", r.c.file, r.reason)
		}
	}
	accuracy := float64(passed) / float64(len(results))
	classAccuracy := float64(classPassed) / float64(len(results))
	t.Logf("accuracy %.1f%% (%d/%d); criterion_class agreement %.1f%% (%d/%d, reported, not gated)",
		100*accuracy, passed, len(results), 100*classAccuracy, classPassed, len(results))
	if accuracy < evalMinAccuracy {
		t.Errorf("inference accuracy %.1f%% (%d/%d) is below the %.0f%% bar; %d misses:\n  %s",
			100*accuracy, passed, len(results), 100*evalMinAccuracy, len(misses), strings.Join(misses, "\n  "))
	} else if len(misses) > 0 {
		t.Logf("%d misses (within the bar):\n  %s", len(misses), strings.Join(misses, "\n  "))
	}
}

// runEvalCase copies the fixture into its own git repository and runs Infer on it.
func runEvalCase(t *testing.T, c evalCase) evalResult {
	t.Helper()
	r := evalResult{c: c}
	dir := materializeFixture(t, c.fixtureName())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := inferRecovering(ctx, dir, c.Task)
	if err != nil {
		r.err = err
		r.gotWorkdir, r.gotClass = "-", "-"
		r.reason = "Infer error: " + err.Error()
		return r
	}
	r.gotCommand = normalizeCommand(p.Command)
	r.gotWorkdir = cleanWorkdir(p.Workdir)
	r.gotClass = string(p.Class)
	r.confidence = string(p.Confidence)
	r.classOK = r.gotClass == c.Class

	if c.Class == "refused" {
		// A refusal must say so and must not smuggle in a command.
		if r.gotClass != "refused" {
			t.Errorf("%s: task %q must be refused, got class %q with command %q", c.file, c.Task, r.gotClass, p.Command)
		}
		if strings.TrimSpace(p.Command) != "" {
			t.Errorf("%s: refused task %q must have an empty command, got %q", c.file, c.Task, p.Command)
		}
		r.ok = r.gotClass == "refused" && r.gotCommand == ""
		if !r.ok {
			r.reason = fmt.Sprintf("want refusal, got class %q command %q", r.gotClass, r.gotCommand)
		}
		return r
	}

	wantCommands := make([]string, len(c.Commands))
	for i, cmd := range c.Commands {
		wantCommands[i] = normalizeCommand(cmd)
	}
	commandOK := slices.Contains(wantCommands, r.gotCommand)
	workdirOK := r.gotWorkdir == cleanWorkdir(c.Workdir)
	r.ok = commandOK && workdirOK
	switch {
	case !commandOK && !workdirOK:
		r.reason = fmt.Sprintf("command %q not in expected set, workdir %q != %q", r.gotCommand, r.gotWorkdir, cleanWorkdir(c.Workdir))
	case !commandOK:
		r.reason = fmt.Sprintf("command %q not in expected set (first: %q)", r.gotCommand, wantCommands[0])
	case !workdirOK:
		r.reason = fmt.Sprintf("workdir %q != %q", r.gotWorkdir, cleanWorkdir(c.Workdir))
	}
	return r
}

// inferRecovering runs Infer and turns a panic into an error, so one crashing fixture is reported as a miss
// (inference parses untrusted repositories and must never panic) instead of hiding every other result.
func inferRecovering(ctx context.Context, dir, task string) (p criteria.Proposal, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v %s", v, panicSite())
		}
	}()
	return criteria.InferWith(ctx, dir, task, criteria.Options{Host: evalHost})
}

// evalHost is the machine the fixtures' checks are inferred for, the same
// on every machine the test runs on.
var evalHost = criteria.StaticHost{PythonVersion: "3.11", Programs: map[string]bool{"ninja": true, "python3.11": true}}

// panicSite names the innermost frame of the criteria package in the panicking stack.
func panicSite() string {
	for _, line := range strings.Split(string(debug.Stack()), "\n") {
		line = strings.TrimSpace(line)
		if strings.Contains(line, "/internal/criteria/") && !strings.Contains(line, "_test.go") {
			return "at " + line
		}
	}
	return ""
}

func (c evalCase) fixtureName() string {
	if c.Fixture != "" {
		return c.Fixture
	}
	return strings.TrimSuffix(c.file, ".expect.json")
}

// loadEvalCases reads and validates every expect file; a malformed one is a broken fixture, not a miss.
func loadEvalCases(t *testing.T) []evalCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(evalDir, "*.expect.json"))
	if err != nil {
		t.Fatalf("listing expect files: %v", err)
	}
	slices.Sort(files)
	cases := make([]evalCase, 0, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		var c evalCase
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("decoding %s: %v", f, err)
		}
		c.file = filepath.Base(f)
		if err := c.validate(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cases = append(cases, c)
	}
	return cases
}

func (c evalCase) validate() error {
	var errs []error
	if strings.TrimSpace(c.Task) == "" {
		errs = append(errs, errors.New("task is empty"))
	}
	if !slices.Contains(validClasses, c.Class) {
		errs = append(errs, fmt.Errorf("class %q is not one of %s", c.Class, strings.Join(validClasses, ", ")))
	}
	if c.Class == "refused" && len(c.Commands) != 0 {
		errs = append(errs, errors.New("a refused case must list no commands"))
	}
	if c.Class != "refused" && len(c.Commands) == 0 {
		errs = append(errs, errors.New("commands is empty; list every equally right command, CI's first"))
	}
	for _, cmd := range c.Commands {
		if strings.TrimSpace(cmd) == "" {
			errs = append(errs, errors.New("commands contains an empty command"))
		}
	}
	if c.Workdir == "" || filepath.IsAbs(c.Workdir) || strings.HasPrefix(filepath.Clean(c.Workdir), "..") {
		errs = append(errs, fmt.Errorf("workdir %q must be a relative path inside the fixture (\".\" for the root)", c.Workdir))
	}
	if strings.TrimSpace(c.ModelledOn) == "" {
		errs = append(errs, errors.New("modelled_on is empty; name the owner/repo the fixture reproduces"))
	}
	if strings.TrimSpace(c.Why) == "" {
		errs = append(errs, errors.New("why is empty; cite the CI job and step the expectation comes from"))
	}
	if st, err := os.Stat(filepath.Join(evalDir, c.fixtureName())); err != nil || !st.IsDir() {
		errs = append(errs, fmt.Errorf("fixture directory %s is missing", filepath.Join(evalDir, c.fixtureName())))
	} else if c.Workdir != "" {
		if st, err := os.Stat(filepath.Join(evalDir, c.fixtureName(), c.Workdir)); err != nil || !st.IsDir() {
			errs = append(errs, fmt.Errorf("workdir %q does not exist in the fixture", c.Workdir))
		}
	}
	return errors.Join(errs...)
}

// materializeFixture copies a fixture into a fresh temporary directory and makes it the root of its own git
// repository, so inference sees the fixture as a whole repository and never the agent-loop checkout around it.
func materializeFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(evalDir, name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copying fixture %s: %v", name, err)
	}
	if git, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command(git, "init", "--quiet", dst)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init %s: %v: %s", dst, err, out)
		}
	}
	return dst
}

// normalizeCommand joins backslash-continued lines and collapses all whitespace runs to one space.
func normalizeCommand(s string) string {
	s = strings.ReplaceAll(s, "\\\r\n", " ")
	s = strings.ReplaceAll(s, "\\\n", " ")
	return strings.Join(strings.Fields(s), " ")
}

// cleanWorkdir maps "" and "./" to "." and otherwise cleans the slash path.
func cleanWorkdir(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "."
	}
	return filepath.ToSlash(filepath.Clean(s))
}

// pair shows one value when expectation and result agree, "want -> got" when they differ.
func pair(want, got string) string {
	if want == got {
		return want
	}
	return want + " -> " + got
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
