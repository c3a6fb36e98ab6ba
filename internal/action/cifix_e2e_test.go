package action_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ghforge "github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
	"github.com/aiwg/agent-loop/internal/sandbox/sandboxtest"
)

// The "CI failed: fix it" trigger end to end: the binary runs as the
// container runs it, for a workflow_run event as GitHub delivers it,
// against the loopback GitHub (runs, jobs, and job logs through the blob
// redirect that refuses a token) and a real git http-backend remote. The
// workflows are the fixtures of real-world shapes in
// internal/cifailure/testdata/workflows; the failing steps run for real
// (node and npm for the Node matrix, pytest for the Python job with its
// working-directory); the agent is the command provider running a script.

// ciWorld is a repository whose main is green and whose pull request
// branch feature broke CI, pushed to the http-backend remote, with the
// failed run on the loopback GitHub.
type ciWorld struct {
	*world
	good, bad string // main's commit, feature's (the failed one)
	pr        int
	workflow  string // the workflow file, as the fixture has it
}

func fixtureWorkflow(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "cifailure", "testdata", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newCIWorld makes main from files (green) and feature from main plus
// broken (the commit "break it" that the failed run is for), with a pull
// request feature -> main, a successful run on main's commit before it
// (so the culprit is known), and the agent script.
func newCIWorld(t *testing.T, workflowFile string, files, broken map[string]string, agent string) *ciWorld {
	return newCIWorldPR(t, workflowFile, files, broken, agent, true)
}

func newCIWorldPR(t *testing.T, workflowFile string, files, broken map[string]string, agent string, withPR bool) *ciWorld {
	t.Helper()
	w := &world{t: t, gh: githubtest.New(t), token: githubtest.DefaultToken, work: sandboxtest.SharedDir(t)}
	root := t.TempDir()
	w.bare = filepath.Join(root, "demo.git")
	seed := filepath.Join(t.TempDir(), "seed")
	wf := fixtureWorkflow(t, workflowFile)
	files[".github/workflows/ci.yml"] = wf
	writeTree(t, seed, files)
	git(t, seed, "init", "-q", "-b", "main")
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-qm", "green")
	good := git(t, seed, "rev-parse", "HEAD")
	git(t, seed, "checkout", "-q", "-b", "feature")
	writeTree(t, seed, broken)
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-qm", "break it")
	bad := git(t, seed, "rev-parse", "HEAD")
	git(t, root, "clone", "-q", "--bare", seed, w.bare)
	w.remoteURL = gitRemote(t, root, w.token) + "/demo.git"
	w.artURL, w.artToken = actArtifacts(t)
	w.agent = filepath.Join(w.work, "agent.sh")
	if err := os.WriteFile(w.agent, []byte(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &ciWorld{world: w, good: good, bad: bad, workflow: wf}
	// No SetBranch: the fake then takes any head for a new pull request
	// (the loop branch exists on the git remote only).
	w.gh.AddCommit(repoName, githubtest.Commit{SHA: good, Message: "green"})
	w.gh.AddCommit(repoName, githubtest.Commit{SHA: bad, Parent: good, Message: "break it", Author: "alice"})
	if withPR {
		c.pr = w.gh.AddPullRequest(repoName, githubtest.PullRequest{Title: "A feature", Head: "feature", HeadSHA: bad, Base: "main", Author: "alice"})
	}
	w.gh.AddWorkflowRun(repoName, githubtest.WorkflowRun{WorkflowID: 7, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
		Conclusion: "success", HeadBranch: "feature", HeadSHA: good, RunNumber: 1, Created: time.Date(2026, 6, 1, 11, 0, 0, 0, time.UTC)})
	return c
}

// addRun adds a run of the workflow on feature's commit: the jobs as
// GitHub lists them, the failed one with its log.
func (c *ciWorld) addRun(name string, conclusion, sha, message string, jobs []githubtest.Job, prs ...int) githubtest.WorkflowRun {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	return c.gh.AddWorkflowRun(repoName, githubtest.WorkflowRun{WorkflowID: 7, Name: name, Path: ".github/workflows/ci.yml", Event: "pull_request",
		Conclusion: conclusion, HeadBranch: "feature", HeadSHA: sha, RunNumber: 2, PullRequests: prs, Created: t0.Add(time.Hour),
		HeadCommitMessage: message, Jobs: jobs})
}

// checkoutAt clones the remote as the example workflow does (fetch-depth
// 0, the failed commit checked out, no credentials kept).
func (c *ciWorld) checkoutAt(name, sha string) string {
	ws := c.checkoutFull(name)
	git(c.t, ws, "checkout", "-q", "--detach", sha)
	return ws
}

func (w *world) checkoutFull(name string) string {
	ws := filepath.Join(w.work, name)
	cmd := exec.Command("git", "-c", "http.extraheader=Authorization: Basic "+basic(w.token), "clone", "-q", w.remoteURL, ws)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("clone: %v\n%s", err, out)
	}
	return ws
}

// runCI runs the Action's main step for the workflow_run event of run.
func (c *ciWorld) runCI(t *testing.T, ws string, runID int64, inputs map[string]string) (*step, int) {
	t.Helper()
	mainBin, _ := binary(t)
	in := map[string]string{"completion": "", "max-iterations": "3", "pr": "open"}
	for k, v := range inputs {
		in[k] = v
	}
	s := c.step(ws, "workflow_run", c.gh.WorkflowRunEvent(repoName, runID), in, "1")
	err := s.start(t, mainBin, nil).Wait()
	return s, exitCode(err)
}

func (c *ciWorld) loopState(t *testing.T, ws, loopID string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, ".aiwg", "ralph", "loops", loopID, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	validate(t, b, "completed")
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func criterionOf(st map[string]any) map[string]any {
	return st["agent_loop"].(map[string]any)["spec"].(map[string]any)["criterion"].(map[string]any)
}

const nodeLog = `2026-06-01T13:00:00.0000000Z ##[group]Run npm ci
2026-06-01T13:00:00.0000000Z npm ci
2026-06-01T13:00:00.0000000Z ##[endgroup]
2026-06-01T13:00:01.0000000Z added 0 packages
2026-06-01T13:00:01.0000000Z ##[group]Run echo "node $NODE_VERSION" > /dev/null
2026-06-01T13:00:01.0000000Z echo "node $NODE_VERSION" > /dev/null
2026-06-01T13:00:01.0000000Z npm test -- --ci --coverage-reporter="$COVERAGE"
2026-06-01T13:00:01.0000000Z shell: /usr/bin/bash --noprofile --norc -e -o pipefail {0}
2026-06-01T13:00:01.0000000Z ##[endgroup]
2026-06-01T13:00:02.0000000Z > demo@1.0.0 test
2026-06-01T13:00:02.0000000Z FAIL add: 2 + 3 gave -1, want 5
2026-06-01T13:00:02.0000000Z ##[error]Process completed with exit code 1.
2026-06-01T13:00:03.0000000Z Post job cleanup.`

func nodeJobs() []githubtest.Job {
	steps := func(test string) []githubtest.JobStep {
		return []githubtest.JobStep{{Name: "Set up job", Conclusion: "success"}, {Name: "Run actions/checkout@v4", Conclusion: "success"},
			{Name: "Use Node.js 20", Conclusion: "success"}, {Name: "Install", Conclusion: "success"}, {Name: "Test", Conclusion: test},
			{Name: "Complete job", Conclusion: "success"}}
	}
	return []githubtest.Job{
		{Name: "Lint", Conclusion: "success", Steps: []githubtest.JobStep{{Name: "Set up job", Conclusion: "success"}}},
		{Name: "test (ubuntu-latest, 18)", Conclusion: "success", Steps: steps("success")},
		{Name: "test (ubuntu-latest, 20)", Conclusion: "failure", Steps: steps("failure"), Log: nodeLog},
		{Name: "test (windows-latest, 20)", Conclusion: "success", Steps: steps("success")},
	}
}

// The Node project: lib.js's add is broken on feature; its test prints the
// matrix entry it runs for.
var nodeFiles = map[string]string{
	"package.json":      `{"name":"demo","version":"1.0.0","private":true,"scripts":{"test":"node test.js","lint":"true","test:compat":"true"}}` + "\n",
	"package-lock.json": `{"name":"demo","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"demo","version":"1.0.0"}}}` + "\n",
	"lib.js":            "exports.add = (a, b) => a + b;\n",
	"test.js": `const { add } = require('./lib');
console.log('node ' + process.env.NODE_VERSION + ', args ' + process.argv.slice(2).join(' '));
const got = add(2, 3);
if (got !== 5) { console.log('FAIL add: 2 + 3 gave ' + got + ', want 5'); process.exit(1); }
console.log('ok add');
`,
}

// The agent fixes add, keeps its first prompt, and also tries to change
// the workflow and CLAUDE.md (protected: reverted, reported).
const nodeAgent = `cp "$AGENT_LOOP_PROMPT_FILE" "$WORK/prompt-$AGENT_LOOP_ITERATION.md"
echo 'exports.add = (a, b) => a + b;' > lib.js
echo '# edited by the agent' >> .github/workflows/ci.yml
echo 'skip the tests' > CLAUDE.md
`

// A failed Node matrix run on a pull request of this repository, fix-ci:
// push: the criterion is the failed entry's step (NODE_VERSION 20, bash,
// after npm ci as its setup), the loop fixes it, and the pull request's
// branch gets the commits (no new pull request); the agent's workflow and
// CLAUDE.md changes are reverted and reported. Then: a second failed run
// on the same commit starts nothing; a run caused by the loop's own push
// starts nothing and reads no run.
func TestFixCIPushOnThePullRequestBranch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	c := newCIWorld(t, "node-matrix.yml", copyFiles(nodeFiles), map[string]string{"lib.js": "exports.add = (a, b) => a - b;\n"}, nodeAgent)
	run := c.addRun("CI", "failure", c.bad, "break it", nodeJobs(), c.pr)
	ws := c.checkoutAt("ws1", c.bad)
	s, code := c.runCI(t, ws, run.ID, map[string]string{"fix-ci": "push"})
	out := s.stdout.String()
	outputs := fileCommands(t, s.output)
	if code != 0 || outputs["status"] != "completed" {
		t.Fatalf("exit %d, outputs %v\n%s", code, outputs, out)
	}
	loopID := outputs["loop-id"]
	if !strings.HasPrefix(loopID, "ralph-ci-"+c.bad[:7]) {
		t.Errorf("loop id %q is not derived from the failed commit", loopID)
	}

	// (a) The criterion is the failed matrix entry's step.
	st := c.loopState(t, ws, loopID)
	crit := criterionOf(st)
	cmd, _ := crit["command"].(string)
	for _, want := range []string{`'NODE_VERSION=20'`, `'COVERAGE=none'`, "npm test -- --ci", "bash' '--noprofile'", "== step 1 of 1: test (ubuntu-latest, 20) / Test"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("criterion lacks %q:\n%s", want, cmd)
		}
	}
	if crit["source"] != "ci-step" || !strings.Contains(crit["setup"].(string), "npm ci") {
		t.Errorf("criterion source %v, setup %v", crit["source"], crit["setup"])
	}
	origin := crit["origin"].(map[string]any)
	if origin["file"] != ".github/workflows/ci.yml" || origin["job"] != "test (ubuntu-latest, 20)" || origin["step"] != "Test" ||
		!strings.Contains(origin["run"].(string), "/actions/runs/") {
		t.Errorf("origin %v", origin)
	}
	// (b) The first prompt carries the trimmed log and the culprit.
	prompt, err := os.ReadFile(filepath.Join(c.work, "prompt-1.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FAIL add: 2 + 3 gave -1, want 5", `"break it" by alice`, `job "test (ubuntu-latest, 20)", step "Test"`} {
		if !strings.Contains(string(prompt), want) {
			t.Errorf("the first prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(string(prompt), "2026-06-01T13") {
		t.Errorf("the prompt's log keeps the runner's timestamps")
	}
	// (c) fix-ci: push: feature advanced by the loop's commits, no new PR.
	head := git(t, c.bare, "rev-parse", "feature")
	if git(t, c.bare, "merge-base", "--is-ancestor", c.bad, head) != "" || head == c.bad {
		t.Fatalf("feature did not advance from %s (now %s)", c.bad, head)
	}
	if ids := git(t, c.bare, "log", "--format=%(trailers:key=Agent-Loop-Id,valueonly)", c.bad+"..feature"); !strings.Contains(ids, loopID) {
		t.Errorf("the new commits of feature are not the loop's: %q", ids)
	}
	if prs := c.gh.PullRequests(repoName); len(prs) != 1 {
		t.Errorf("fix-ci push opened a pull request: %+v", prs)
	}
	if changed := git(t, c.bare, "diff", "--name-only", c.bad, "feature"); changed != "lib.js" {
		t.Errorf("the fix changes %q; the workflow and CLAUDE.md changes must be reverted", changed)
	}
	git(t, c.bare, "fsck", "--strict")
	// (d) The report on the PR claims the attempt, and lists the reverts.
	cs := c.gh.Comments(repoName, c.pr)
	body := lastSticky(cs, loopID)
	if countSticky(cs, loopID) != 1 || !strings.Contains(body, ghforge.CIAttemptMarker(c.bad)) {
		t.Fatalf("report comments on #%d: %+v", c.pr, cs)
	}
	if !strings.Contains(body, "CLAUDE.md") || !strings.Contains(body, "protected") {
		t.Errorf("the report does not list the reverted protected paths:\n%s", body)
	}
	// (h) The token never followed the log redirect.
	if n := c.gh.LogRejections(); n != 0 {
		t.Errorf("%d log downloads carried the token to the blob host", n)
	}

	// (e) A second failed run (another workflow) on the same commit.
	second := c.addRun("Integration", "failure", c.bad, "break it", nodeJobs(), c.pr)
	ws2 := c.checkoutAt("ws2", c.bad)
	s2, code := c.runCI(t, ws2, second.ID, map[string]string{"fix-ci": "push"})
	if code != 0 || fileCommands(t, s2.output)["status"] != "skipped" || !strings.Contains(s2.stdout.String(), "already had 1 loop") {
		t.Errorf("a second failed run on the commit: exit %d\n%s", code, s2.stdout.String())
	}
	if got := git(t, c.bare, "rev-parse", "feature"); got != head {
		t.Errorf("feature moved to %s after the second run", got)
	}
	if n := len(c.gh.Comments(repoName, c.pr)); n != len(cs) {
		t.Errorf("the second run commented (%d comments, was %d)", n, len(cs))
	}

	// (f) A failed run on the loop's own commit starts nothing, and reads
	// nothing of the run.
	msg := git(t, c.bare, "log", "-1", "--format=%B", "feature")
	own := c.addRun("CI", "failure", head, msg, nodeJobs(), c.pr)
	before := len(c.gh.Requests())
	ws3 := c.checkoutAt("ws3", head)
	s3, code := c.runCI(t, ws3, own.ID, map[string]string{"fix-ci": "push"})
	if code != 0 || fileCommands(t, s3.output)["status"] != "skipped" || !strings.Contains(s3.stdout.String(), "made by agent-loop") {
		t.Errorf("a run of the loop's own push: exit %d\n%s", code, s3.stdout.String())
	}
	for _, r := range c.gh.Requests()[before:] {
		if strings.Contains(r.Path, "/actions/") {
			t.Errorf("a run that starts nothing read %s", r.Path)
		}
	}
}

func copyFiles(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// The Python service: backend/calc.py is broken on feature; pytest runs in
// backend/ (the workflow's defaults.run.working-directory).
var pythonFiles = map[string]string{
	"backend/conftest.py":        "",
	"backend/calc.py":            "def mul(a, b):\n    return a * b\n",
	"backend/tests/test_calc.py": "import os\nfrom calc import mul\n\n\ndef test_mul():\n    assert os.environ['PYTHONDONTWRITEBYTECODE'] == '1'\n    assert mul(3, 4) == 12\n",
	"backend/pyproject.toml":     "[project]\nname = \"backend\"\nversion = \"0.1.0\"\n",
}

const pythonLog = `2026-06-01T13:00:00.0000000Z ##[group]Run pytest -q tests/
2026-06-01T13:00:00.0000000Z pytest -q tests/
2026-06-01T13:00:00.0000000Z ##[endgroup]
2026-06-01T13:00:02.0000000Z FAILED tests/test_calc.py::test_mul - assert 7 == 12
2026-06-01T13:00:02.0000000Z 1 failed in 0.02s
2026-06-01T13:00:02.0000000Z ##[error]Process completed with exit code 1.`

// A failed Python run on a pull request, fix-ci: pr (the default): the
// criterion is pytest in backend/ (the working-directory), the fix is a
// pull request into the pull request's branch, and the report goes on the
// pull request.
func TestFixCIPullRequestIntoThePullRequestBranch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := os.Stat("/usr/bin/pytest"); err != nil {
		if os.Getenv("AGENT_LOOP_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("pytest is not installed (python3-pytest)")
		}
		t.Skip("pytest is not installed (python3-pytest)")
	}
	t.Parallel()
	agent := `printf 'def mul(a, b):\n    return a * b\n' > backend/calc.py
`
	c := newCIWorld(t, "python-workdir.yml", copyFiles(pythonFiles), map[string]string{"backend/calc.py": "def mul(a, b):\n    return a + b\n"}, agent)
	steps := []githubtest.JobStep{{Name: "Set up job", Conclusion: "success"}, {Name: "Run actions/checkout@v4", Conclusion: "success"},
		{Name: "Run actions/setup-python@v5", Conclusion: "success"}, {Name: "Install", Conclusion: "success"},
		{Name: "Generate fixtures", Conclusion: "success"}, {Name: "Run tests", Conclusion: "failure"}}
	run := c.addRun("Backend", "failure", c.bad, "break it", []githubtest.Job{
		{Name: "pytest (py3.11)", Conclusion: "failure", Steps: steps, Log: pythonLog},
		{Name: "pytest (py3.12)", Conclusion: "cancelled", Steps: steps[:3]},
	}, c.pr)
	ws := c.checkoutAt("ws", c.bad)
	// The Install step needs the network (pip install): the setup input
	// takes its place, as the README says for what the image lacks.
	s, code := c.runCI(t, ws, run.ID, map[string]string{"setup": "/usr/bin/python3 -m pytest --version"})
	out := s.stdout.String()
	outputs := fileCommands(t, s.output)
	if code != 0 || outputs["status"] != "completed" {
		t.Fatalf("exit %d, outputs %v\n%s", code, outputs, out)
	}
	st := c.loopState(t, ws, outputs["loop-id"])
	cmd := criterionOf(st)["command"].(string)
	for _, want := range []string{"cd -- 'backend'", "pytest -q tests/", "'PYTHONDONTWRITEBYTECODE=1'", "DATABASE_URL=sqlite:///" + ws + "/backend/test.db"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("criterion lacks %q:\n%s", want, cmd)
		}
	}
	prs := c.gh.PullRequests(repoName)
	if len(prs) != 2 || prs[1].Base != "feature" || prs[1].Head != outputs["branch"] || !strings.HasPrefix(prs[1].Head, "agent-loop/") {
		t.Fatalf("pull requests %+v, want one from the loop branch into feature\n%s", prs, out)
	}
	if git(t, c.bare, "rev-parse", "feature") != c.bad {
		t.Errorf("fix-ci pr moved the pull request's branch")
	}
	if body := git(t, c.bare, "show", outputs["branch"]+":backend/calc.py"); !strings.Contains(body, "a * b") {
		t.Errorf("the loop branch's calc.py:\n%s", body)
	}
	if cs := c.gh.Comments(repoName, c.pr); countSticky(cs, outputs["loop-id"]) != 1 || !strings.Contains(lastSticky(cs, outputs["loop-id"]), ghforge.CIAttemptMarker(c.bad)) {
		t.Errorf("no report on the pull request: %+v", cs)
	}
}

// A failed run of a fork's pull request is refused with a comment on it:
// nothing of the fork runs, nothing is pushed.
func TestFixCIRefusesAFork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	c := newCIWorld(t, "node-matrix.yml", copyFiles(nodeFiles), map[string]string{"lib.js": "exports.add = (a, b) => a - b;\n"}, "touch \"$WORK/agent-ran\"\n")
	forkPR := c.gh.AddPullRequest(repoName, githubtest.PullRequest{Title: "From a fork", Head: "patch-1", HeadSHA: c.bad, Base: "main", HeadRepo: "mallory/demo", Author: "mallory"})
	run := c.gh.AddWorkflowRun(repoName, githubtest.WorkflowRun{WorkflowID: 7, Name: "CI", Path: ".github/workflows/ci.yml", Event: "pull_request",
		Conclusion: "failure", HeadBranch: "patch-1", HeadSHA: c.bad, HeadRepo: "mallory/demo", HeadCommitMessage: "break it", Jobs: nodeJobs()})
	refsBefore := git(t, c.bare, "for-each-ref")
	ws := c.checkoutAt("ws", c.bad)
	s, code := c.runCI(t, ws, run.ID, nil)
	if code != 0 || fileCommands(t, s.output)["status"] != "refused" {
		t.Fatalf("exit %d\n%s", code, s.stdout.String())
	}
	cs := c.gh.Comments(repoName, forkPR)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "allow-forks: true") || !strings.Contains(cs[0].Body, "mallory/demo") {
		t.Errorf("comments on the fork's pull request: %+v", cs)
	}
	if _, err := os.Stat(filepath.Join(c.work, "agent-ran")); err == nil {
		t.Errorf("the agent ran for a fork's commit")
	}
	if after := git(t, c.bare, "for-each-ref"); after != refsBefore {
		t.Errorf("the remote changed:\n%s\nwas\n%s", after, refsBefore)
	}
}

// A failed run on a branch without a pull request: the fix is a pull
// request into that branch (fix-ci: push does not apply), and the report,
// with the attempt's marker, goes on the failed commit.
func TestFixCIBranchWithoutPullRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	c := newCIWorldPR(t, "node-matrix.yml", copyFiles(nodeFiles), map[string]string{"lib.js": "exports.add = (a, b) => a - b;\n"}, nodeAgent, false)
	run := c.addRun("CI", "failure", c.bad, "break it", nodeJobs())
	ws := c.checkoutAt("ws", c.bad)
	s, code := c.runCI(t, ws, run.ID, map[string]string{"fix-ci": "push"})
	out := s.stdout.String()
	outputs := fileCommands(t, s.output)
	if code != 0 || outputs["status"] != "completed" {
		t.Fatalf("exit %d, outputs %v\n%s", code, outputs, out)
	}
	if !strings.Contains(out, "fix-ci: push applies to pull requests") {
		t.Errorf("the log does not say fix-ci: push was not applied:\n%s", out)
	}
	prs := c.gh.PullRequests(repoName)
	if len(prs) != 1 || prs[0].Base != "feature" || prs[0].Head != outputs["branch"] {
		t.Fatalf("pull requests %+v, want one from the loop branch into feature", prs)
	}
	if git(t, c.bare, "rev-parse", "feature") != c.bad {
		t.Errorf("the branch itself moved")
	}
	var report string
	for _, cm := range c.gh.CommitComments(repoName, c.bad) {
		if strings.Contains(cm.Body, "loop="+outputs["loop-id"]) {
			report = cm.Body
		}
	}
	if !strings.Contains(report, ghforge.CIAttemptMarker(c.bad)) || !strings.Contains(report, "agent-loop completed") {
		t.Errorf("the report on the failed commit:\n%s\nall: %+v", report, c.gh.CommitComments(repoName, c.bad))
	}
	if n := len(c.gh.Comments(repoName, prs[0].Number)); n != 0 {
		t.Errorf("%d comments on the new pull request; the report goes on the commit", n)
	}
}

// A failed step that needs what only the runner has (a secret) cannot be
// the criterion: the Action says so on the pull request, naming the step,
// the expression and the fix (the completion input), and stops with a
// configuration error before any loop starts.
func TestFixCIRefusesAStepThatNeedsASecret(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	c := newCIWorld(t, "runner-only.yml", map[string]string{"VERSION": "1\n"}, map[string]string{"VERSION": "2\n"}, "touch \"$WORK/agent-ran\"\n")
	run := c.addRun("Integration", "failure", c.bad, "break it", []githubtest.Job{{Name: "api", Conclusion: "failure",
		Steps: []githubtest.JobStep{{Name: "Set up job", Conclusion: "success"}, {Name: "Run actions/checkout@v4", Conclusion: "success"},
			{Name: "Run echo \"v=$(cat VERSION)\" >> \"$GITHUB_OUTPUT\"", Conclusion: "success"}, {Name: "Contract tests", Conclusion: "failure"}},
		Log: "2026-06-01T13:00:00.0000000Z ##[error]Process completed with exit code 1."}}, c.pr)
	ws := c.checkoutAt("ws", c.bad)
	s, code := c.runCI(t, ws, run.ID, nil)
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, s.stdout.String())
	}
	cs := c.gh.Comments(repoName, c.pr)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, `"Contract tests"`) || !strings.Contains(cs[0].Body, "secrets.API_TOKEN") ||
		!strings.Contains(cs[0].Body, "completion input") {
		t.Errorf("comments on #%d: %+v", c.pr, cs)
	}
	if _, err := os.Stat(filepath.Join(c.work, "agent-ran")); err == nil {
		t.Errorf("the agent ran")
	}
	if strings.Contains(cs[0].Body, ghforge.CIAttemptMarker(c.bad)) {
		t.Errorf("a refusal claimed the attempt")
	}
}

// A re-run of the fixing workflow after it was cancelled resumes the same
// loop (its key is the failed commit): the attempt its report claimed does
// not stop its own resume.
func TestFixCIRerunResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	agent := `if [ ! -e "$WORK/hung" ]; then touch "$WORK/hung"; exec sleep 60; fi
echo 'exports.add = (a, b) => a + b;' > lib.js
`
	c := newCIWorld(t, "node-matrix.yml", copyFiles(nodeFiles), map[string]string{"lib.js": "exports.add = (a, b) => a - b;\n"}, agent)
	run := c.addRun("CI", "failure", c.bad, "break it", nodeJobs(), c.pr)
	mainBin, _ := binary(t)
	ws1 := c.checkoutAt("ws1", c.bad)
	s1 := c.step(ws1, "workflow_run", c.gh.WorkflowRunEvent(repoName, run.ID), map[string]string{"completion": "", "max-iterations": "3"}, "1")
	cmd := s1.start(t, mainBin, nil)
	waitFor(t, filepath.Join(c.work, "hung"))
	cmd.Process.Signal(os.Interrupt)
	if code := exitCode(cmd.Wait()); code != 1 {
		t.Fatalf("cancelled run: exit %d\n%s", code, s1.stdout.String())
	}
	loopID := fileCommands(t, s1.state)["loop_id"]
	ws2 := c.checkoutAt("ws2", c.bad)
	s2, code := c.runCI(t, ws2, run.ID, nil)
	out := s2.stdout.String()
	outputs := fileCommands(t, s2.output)
	if code != 0 || outputs["status"] != "completed" || outputs["loop-id"] != loopID || !strings.Contains(out, "restored "+loopID) {
		t.Fatalf("the re-run: exit %d, outputs %v (loop %s)\n%s", code, outputs, loopID, out)
	}
	cs := c.gh.Comments(repoName, c.pr)
	if countSticky(cs, loopID) != 1 || !strings.Contains(lastSticky(cs, loopID), ghforge.CIAttemptMarker(c.bad)) ||
		!strings.Contains(lastSticky(cs, loopID), "agent-loop completed") {
		t.Errorf("the report on #%d: %+v", c.pr, cs)
	}
}

// fix-ci: push while someone pushes to the pull request's branch: the
// loop's fix is merged with the new commit before it is published, so the
// branch moves forward only (the push of the unmerged iteration was
// refused as a non-fast-forward); the report says what was merged.
func TestFixCIPushMergesTheMovedBranch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	agent := `touch "$WORK/agent-started"
while [ ! -e "$WORK/pushed" ]; do sleep 0.1; done
echo 'exports.add = (a, b) => a + b;' > lib.js
`
	c := newCIWorld(t, "node-matrix.yml", copyFiles(nodeFiles), map[string]string{"lib.js": "exports.add = (a, b) => a - b;\n"}, agent)
	run := c.addRun("CI", "failure", c.bad, "break it", nodeJobs(), c.pr)
	mainBin, _ := binary(t)
	ws := c.checkoutAt("ws", c.bad)
	s := c.step(ws, "workflow_run", c.gh.WorkflowRunEvent(repoName, run.ID), map[string]string{"completion": "", "max-iterations": "3", "fix-ci": "push"}, "1")
	cmd := s.start(t, mainBin, nil)
	waitFor(t, filepath.Join(c.work, "agent-started"))
	colleague := c.checkoutAt("colleague", c.bad)
	writeTree(t, colleague, map[string]string{"README.md": "a colleague's note\n"})
	git(t, colleague, "add", "-A")
	git(t, colleague, "commit", "-qm", "docs: a note")
	theirs := git(t, colleague, "rev-parse", "HEAD")
	git(t, colleague, "-c", "http.extraheader=Authorization: Basic "+basic(c.token), "push", "-q", "origin", "HEAD:feature")
	if err := os.WriteFile(filepath.Join(c.work, "pushed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code := exitCode(cmd.Wait())
	out := s.stdout.String()
	outputs := fileCommands(t, s.output)
	if code != 0 || outputs["status"] != "completed" {
		t.Fatalf("exit %d, outputs %v\n%s", code, outputs, out)
	}
	head := git(t, c.bare, "rev-parse", "feature")
	parents := strings.Fields(git(t, c.bare, "rev-list", "--parents", "-n", "1", head))
	if len(parents) != 3 || parents[2] != theirs {
		t.Fatalf("feature's head %s has parents %v, want a merge of %s", head, parents[1:], theirs)
	}
	if body := git(t, c.bare, "show", head+":lib.js"); !strings.Contains(body, "a + b") {
		t.Errorf("the merge lacks the fix: lib.js = %q", body)
	}
	if body := git(t, c.bare, "show", head+":README.md"); body != "a colleague's note" {
		t.Errorf("README.md after the merge: %q", body)
	}
	report := lastSticky(c.gh.Comments(repoName, c.pr), outputs["loop-id"])
	if !strings.Contains(report, "feature got 1 new commit while the loop ran") || !strings.Contains(report, "docs: a note") {
		t.Errorf("the report does not say what was merged:\n%s", report)
	}
	git(t, c.bare, "fsck", "--strict")
}
