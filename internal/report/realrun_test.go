package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/demo"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/provider"
	"github.com/aiwg/agent-loop/internal/report"
	"github.com/aiwg/agent-loop/internal/sandbox/sandboxtest"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// The stories from real runs: each is a loop the real engine runs (app.Run,
// and app.Resume for the resumed one) on a small shell project with a
// scripted agent (internal/provider's Scripted, the demo's), the real
// completion check, judge and git. One run of each is kept as it happened
// in testdata/runs/<story>.json (its machine scrubbed, the Action's links
// added), which the package's own tests (the goldens, the consistency
// check, the render in Chromium, the README screenshot) read as one of the
// stories. Every later run takes the kept run's commit ids, times and
// durations (normalise) and must then render in the four media exactly as
// the goldens the hand-written stories share
// (testdata/TestGoldens/<medium>/<story>.golden) and as the fixture does:
// the fixture is what the engine writes. `go test ./internal/report -run
// TestStoriesFromRealRuns -update` keeps a new run and rewrites the
// goldens.

// updating is the package's -update flag (report_test.go defines it).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// realStory is a loop to run: the project (files), the scripted agent,
// and the settings that differ from the defaults.
type realStory struct {
	name, task string
	files      map[string]string
	script     string
	configure  func(*spec.Settings)
	// cancelAfter cancels the run once this iteration is recorded; the
	// loop is then resumed to its end.
	cancelAfter int
	// demo: the story is `agent-loop demo` itself (app.Demo).
	demo bool
}

// calc is the demo's project with more tests (the demo's: two fail).
var calc = map[string]string{}

func init() {
	dir, _ := os.MkdirTemp("", "calc-")
	defer os.RemoveAll(dir)
	if err := demo.WriteProject(dir); err != nil {
		panic(err)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			calc[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
}

// words is a project with three failing tests of six, for the stories
// that do not finish.
var words = map[string]string{
	"words.sh": `# words.sh: small text tools.
upper() { echo "$1" | tr a-z A-Z; }
lower() { echo "$1"; }
count() { echo 0; }
first() { echo "$1"; }
last() { echo "$1"; }
`,
	"test.sh": `#!/bin/sh
# test.sh: prints TAP and exits 1 when a test fails.
. ./words.sh
n=0
failed=0
check() {
	n=$((n + 1))
	if [ "$2" = "$3" ]; then echo "ok $n - $1"; else echo "not ok $n - $1"; echo "#   expected $3, got $2"; failed=$((failed + 1)); fi
}
echo "1..6"
check "upper" "$(upper abc)" ABC
check "lower" "$(lower ABC)" abc
check "count" "$(count 'a b c')" 3
check "first" "$(first 'a b c')" a
check "last" "$(last 'a b c')" c
check "upper empty" "$(upper '')" ""
[ "$failed" -eq 0 ]
`,
}

const fixedSub = "# calc.sh: a tiny calculator library for the agent-loop demo.\nadd() { echo $(($1 + $2)); }\nsub() { echo $(($1 - $2)); }\n"

// The word tools as the scripted agent writes them: lower fixed; count
// and first fixed too; everything rewritten, worse.
var (
	wordsLower = wordsFile("# words.sh: small text tools.\nupper() { echo \"$1\" | tr a-z A-Z; }\nlower() { echo \"$1\" | tr A-Z a-z; }\ncount() { echo 0; }\nfirst() { echo \"$1\"; }\nlast() { echo \"$1\"; }\n")
	wordsThree = wordsFile("# words.sh: small text tools.\nupper() { echo \"$1\" | tr a-z A-Z; }\nlower() { echo \"$1\" | tr A-Z a-z; }\ncount() { echo \"$1\" | wc -w | tr -d ' '; }\nfirst() { set -- $1; echo \"$1\"; }\nlast() { echo \"$1\"; }\n")
	wordsWorse = wordsFile("# words.sh: small text tools, rewritten.\nupper() { printf '%s' \"$1\" | tr a-z A-Z; echo; }\nlower() { printf '%s' \"$1\"; echo; }\ncount() { echo \"$1\" | wc -c; }\nfirst() { echo \"${1%% *}\"; }\nlast() { echo \"$1\"; }\n")
)

// wordsFile is a script step's files: words.sh with body.
func wordsFile(body string) string {
	return "      - path: words.sh\n        content: |\n" + indent(body, 10)
}

func realStories() []realStory {
	maxIt := func(n int) func(*spec.Settings) {
		return func(s *spec.Settings) { s.Spec.Limits.MaxIterations = n }
	}
	return []realStory{
		{name: "first_try", task: demo.Task, files: calc, configure: maxIt(4),
			script: "iterations:\n  - message: \"sub() added its arguments; it now subtracts them.\"\n    input_tokens: 2400\n    output_tokens: 310\n    cost_usd: 0.0141\n    files:\n      - path: calc.sh\n        content: |\n" + indent(fixedSub, 10)},
		{name: "cheat_then_fixed", demo: true},
		{name: "best_not_last", task: "make the word tools pass their tests", files: words, configure: maxIt(3),
			script: "iterations:\n" +
				"  - message: \"lower() now lower-cases its argument.\"\n    input_tokens: 3100\n    output_tokens: 600\n    cost_usd: 0.021\n    files:\n" + wordsLower +
				"  - message: \"count() counts the words and first() prints the first one.\\nlast() still prints the whole line.\"\n    input_tokens: 4200\n    output_tokens: 900\n    cost_usd: 0.029\n    files:\n" + wordsThree +
				"  - message: \"Rewrote the tools with printf to avoid echo's quirks.\"\n    input_tokens: 5100\n    output_tokens: 1300\n    cost_usd: 0.037\n    files:\n" + wordsWorse},
		{name: "stalled", task: "make the word tools pass their tests", files: words, configure: maxIt(10),
			script: "iterations:\n" +
				"  - message: \"lower() now lower-cases its argument.\"\n    input_tokens: 3100\n    output_tokens: 600\n    cost_usd: 0.021\n    files:\n" + wordsLower +
				"  - message: \"I could not find why count() fails.\"\n    input_tokens: 2900\n    output_tokens: 200\n    cost_usd: 0.018\n" +
				"  - message: \"I still could not find the cause.\"\n    input_tokens: 3000\n    output_tokens: 150\n    cost_usd: 0.018\n"},
		{name: "human_gate_waiting", task: demo.Task, files: calc, script: string(demo.Script()),
			configure: func(s *spec.Settings) { s.Spec.Limits.MaxIterations, s.Spec.Policy.Regression = 4, "human-gate" }},
		{name: "cancelled_and_resumed", task: demo.Task, files: calc, configure: maxIt(4), cancelAfter: 1,
			script: "iterations:\n" +
				"  - message: \"Looked at sub(); added a note where it goes wrong.\"\n    input_tokens: 1500\n    output_tokens: 200\n    cost_usd: 0.009\n    files:\n      - path: calc.sh\n        content: |\n" +
				indent("# calc.sh: a tiny calculator library for the agent-loop demo.\nadd() { echo $(($1 + $2)); }\n# FIXME: sub adds\nsub() { echo $(($1 + $2)); }\n", 10) +
				"  - message: \"sub() added its arguments; it now subtracts them.\"\n    input_tokens: 2400\n    output_tokens: 310\n    cost_usd: 0.0141\n    files:\n      - path: calc.sh\n        content: |\n" + indent(fixedSub, 10)},
	}
}

func indent(s string, n int) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(strings.Repeat(" ", n) + l)
		}
	}
	return b.String()
}

// cancelAfter cancels the run once iteration n is recorded.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (c cancelAfter) Observe(_ context.Context, ev loop.Event) {
	if ev.Kind == loop.EventIteration && ev.Record != nil && ev.Record.Iteration == c.n {
		c.cancel()
	}
}

// run runs the story's loop for real and returns its final state.
func (rs realStory) run(t *testing.T) *state.State {
	t.Helper()
	if rs.demo {
		var out bytes.Buffer
		res, err := app.Demo(context.Background(), app.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Environ: os.Environ()}, app.DemoOptions{Quiet: true})
		if err != nil || res == nil {
			t.Fatalf("agent-loop demo: %v\n%s", err, out.String())
		}
		return res.State
	}
	dir := sandboxtest.TempDir(t)
	for name, body := range rs.files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "the project"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	script, err := provider.ParseScript([]byte(rs.script))
	if err != nil {
		t.Fatal(err)
	}
	id := "ralph-" + strings.ReplaceAll(rs.name, "_", "-") + "-0c0ffee1"
	s := spec.Defaults(spec.DoorCLI)
	s.Start.Dir, s.Start.LoopID, s.Start.Quiet, s.Start.Force = dir, id, true, true
	s.Spec.Task, s.Spec.Criterion.Command = rs.task, "sh test.sh"
	s.Spec.Agent.Provider, s.Spec.Agent.Command = "command", "(the demo's scripted agent)"
	if rs.configure != nil {
		rs.configure(&s)
	}
	v, err := spec.Validate(s, spec.DoorCLI)
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	o := app.IO{Stdin: strings.NewReader(""), Stdout: &errOut, Stderr: &errOut, Environ: os.Environ()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := app.Hooks{Script: script, Owner: "dev"}
	if rs.cancelAfter > 0 {
		h.Observer = cancelAfter{n: rs.cancelAfter, cancel: cancel}
	}
	res, err := app.Run(ctx, v, o, h)
	if err != nil || res == nil {
		t.Fatalf("%s: %v\n%s", rs.name, err, errOut.String())
	}
	if rs.cancelAfter > 0 {
		if res.State.Status != state.Paused {
			t.Fatalf("%s: the cancelled run is %s, not paused\n%s", rs.name, res.State.Status, errOut.String())
		}
		res, err = app.Resume(context.Background(), dir, id, app.ResumeOptions{Door: spec.DoorCLI}, o, app.Hooks{Script: script, Owner: "dev"})
		if err != nil {
			t.Fatalf("%s: resume: %v\n%s", rs.name, err, errOut.String())
		}
	}
	return res.State
}

var durationText = regexp.MustCompile(`\b(\d+h)?(\d+m)?\d+(\.\d+)?(ms|µs|s)\b`)

// scrub removes what belongs to the machine that ran the loop (its
// directory, host, process) and adds what the Action would when it
// publishes: the links to the repository, the run, the report comment and
// the pull request. What the fixture keeps of a run.
func scrub(st *state.State) {
	h := &st.Harness
	st.WorkingDirectory, h.Host, h.PIDStart, st.PID = "/home/dev/calc", "", 0, nil
	st.PersistenceMetrics, st.LastCheckpoint = nil, nil
	h.RepoURL, h.RunURL = "https://github.com/acme/calc", "https://github.com/acme/calc/actions/runs/4242"
	h.ReportURL, h.PRNumber, h.PRURL = "https://github.com/acme/calc/pull/7#issuecomment-99", 7, "https://github.com/acme/calc/pull/7"
}

// normalise makes what differs between two runs of the same story the
// kept run's (ref): the commit ids (the starting commit, each
// iteration's, the one that publishes the best tree), the times and the
// durations. Everything else must be what the engine wrote again.
func normalise(st, ref *state.State) {
	scrub(st)
	// The demo names its loop from the task and a random suffix.
	if st.LoopID != ref.LoopID {
		st.LoopID, st.Harness.Branch, st.Harness.Spec.Publish.Branch = ref.LoopID, ref.Harness.Branch, ref.Harness.Spec.Publish.Branch
	}
	shas := map[string]string{st.Harness.BaseSHA: ref.Harness.BaseSHA}
	for i := range st.IterationHistory {
		if i < len(ref.IterationHistory) {
			shas[st.IterationHistory[i].Commit] = ref.IterationHistory[i].Commit
		}
	}
	sha := func(s string) string {
		if v, ok := shas[s]; ok || s == "" {
			return v
		}
		return ref.Harness.HeadSHA // the commit that publishes the best tree
	}
	h, rh := &st.Harness, ref.Harness
	h.BaseSHA, h.HeadSHA, h.BestSHA = sha(h.BaseSHA), sha(h.HeadSHA), sha(h.BestSHA)
	if st.BestIteration != nil {
		st.BestIteration.Commit = sha(st.BestIteration.Commit)
		if ref.BestIteration != nil {
			st.BestIteration.UpdatedAt = ref.BestIteration.UpdatedAt
		}
	}
	if b, rb := h.Baseline, rh.Baseline; b != nil && rb != nil {
		b.Seconds = rb.Seconds
	}
	for i := range st.IterationHistory {
		it := &st.IterationHistory[i]
		it.Commit = sha(it.Commit)
		if i >= len(ref.IterationHistory) {
			continue
		}
		r := ref.IterationHistory[i]
		it.DurationSeconds, it.AgentSeconds, it.CheckSeconds, it.Timestamp = r.DurationSeconds, r.AgentSeconds, r.CheckSeconds, r.Timestamp
		for k := range it.Explain {
			if k < len(r.Explain) && durationText.ReplaceAllString(it.Explain[k], "_") == durationText.ReplaceAllString(r.Explain[k], "_") {
				it.Explain[k] = r.Explain[k]
			}
		}
		for k := range it.CriterionRuns {
			if k < len(r.CriterionRuns) {
				it.CriterionRuns[k].Seconds = r.CriterionRuns[k].Seconds
			}
		}
	}
	for i := range st.RegressionEvents {
		if i < len(ref.RegressionEvents) {
			st.RegressionEvents[i].Timestamp = ref.RegressionEvents[i].Timestamp
		}
	}
	for i := range st.Progress.CompletionChecks {
		if i < len(ref.Progress.CompletionChecks) {
			st.Progress.CompletionChecks[i].Timestamp = ref.Progress.CompletionChecks[i].Timestamp
		}
	}
	for i := range h.Resumes {
		if i < len(rh.Resumes) {
			h.Resumes[i].At = rh.Resumes[i].At
		}
	}
	st.Metrics.TotalDurationSeconds, st.Metrics.AverageIterationTimeSeconds = ref.Metrics.TotalDurationSeconds, ref.Metrics.AverageIterationTimeSeconds
	st.StartedAt, st.LastUpdated, st.CompletedAt = ref.StartedAt, ref.LastUpdated, ref.CompletedAt
	if st.BaselineMetrics != nil && ref.BaselineMetrics != nil {
		st.BaselineMetrics.CapturedAt = ref.BaselineMetrics.CapturedAt
	}
	st.ErrorContext = ref.ErrorContext
}

// media are the four places a report goes (as report_test.go's).
var media = []struct {
	test string
	opts func(st *state.State) report.Options
}{
	{"TestComment", func(st *state.State) report.Options {
		return report.Options{Target: report.PR, Marker: "<!-- agent-loop:sticky loop=" + st.LoopID + " -->"}
	}},
	{"TestPRBody", func(*state.State) report.Options { return report.Options{Target: report.PRBody} }},
	{"TestStepSummary", func(*state.State) report.Options { return report.Options{Target: report.Summary} }},
	{"TestCLI", func(*state.State) report.Options { return report.Options{Target: report.CLI} }},
}

// TestStoriesFromRealRuns runs each story's loop, renders it in the four
// media and compares them with the goldens; the kept fixture must render
// the same.
func TestStoriesFromRealRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real loops")
	}
	for _, rs := range realStories() {
		t.Run(rs.name, func(t *testing.T) {
			st := rs.run(t)
			fixture := filepath.Join("testdata", "runs", rs.name+".json")
			if updating() {
				// The fixture keeps this run as it happened: its commit
				// ids, times and durations; later runs are compared after
				// taking those (normalise).
				scrub(st)
				b, err := json.MarshalIndent(st, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				os.MkdirAll(filepath.Dir(fixture), 0o755)
				if err := os.WriteFile(fixture, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(fixture)
			if err != nil {
				t.Fatalf("%v (go test ./internal/report -run TestStoriesFromRealRuns -update)", err)
			}
			var kept state.State
			if err := json.Unmarshal(b, &kept); err != nil {
				t.Fatalf("%s: %v", fixture, err)
			}
			var ref state.State // normalise changes what it is given
			_ = json.Unmarshal(b, &ref)
			normalise(st, &ref)
			for _, m := range media {
				got := report.Render(st, m.opts(st))
				path := filepath.Join("testdata", "TestGoldens", m.test, rs.name+".golden")
				if updating() {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(string(want), got); d != "" {
					t.Errorf("%s of the real run differs from %s (-want +got):\n%s", m.test, path, d)
				}
				if d := cmp.Diff(got, report.Render(&kept, m.opts(&kept))); d != "" {
					t.Errorf("%s: the fixture %s does not render as the run does (-run +fixture):\n%s", m.test, fixture, d)
				}
			}
			if rs.name == "cheat_then_fixed" {
				checkDemoIsTheDemo(t, st)
			}
		})
	}
}

// checkDemoIsTheDemo: the story "a cheat rejected then fixed" is what
// `agent-loop demo` runs (its script and project), so the README's
// screenshot of it is the demo's report.
func checkDemoIsTheDemo(t *testing.T, st *state.State) {
	t.Helper()
	if st.Task != demo.Task || st.CompletionCriteria != demo.Completion {
		t.Errorf("the story's task %q and check %q are not the demo's", st.Task, st.CompletionCriteria)
	}
	got := fmt.Sprint(st.Harness.Provider)
	if got != "scripted" {
		t.Errorf("the story's agent is %q, not the demo's scripted one", got)
	}
}
