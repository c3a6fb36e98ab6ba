package action_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/nektos/act/pkg/artifacts"
	"github.com/nektos/act/pkg/common"

	"github.com/aiwg/agent-loop/internal/actions"
	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
	"github.com/aiwg/agent-loop/internal/sandbox/sandboxtest"
	"github.com/aiwg/agent-loop/internal/schemas"
	"github.com/aiwg/agent-loop/internal/weaken"
)

// The end-to-end test of the Action: the built binary runs as the container
// runs it (exec form, INPUT_* with hyphens, the Actions environment, the post
// step as /agent-loop-post), against a fake GitHub REST API that fails on
// unknown paths, a real smart-HTTP git remote (git http-backend) that
// requires the token, and act's artifact server.

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// stateBase holds the harness's private directories of this test binary's
// loops (AGENT_LOOP_STATE_DIR; the default is a system directory).
var stateBase string

// TestMain removes the binary built for the end-to-end tests and the
// loops' private directories.
func TestMain(m *testing.M) {
	var err error
	if stateBase, err = os.MkdirTemp("", "agent-loop-action-state-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// cliRun passes this process's environment on.
	os.Setenv(app.StateDirVar, stateBase)
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.RemoveAll(stateBase)
	os.Exit(code)
}

func binary(t *testing.T) (main, post string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "agent-loop-bin-")
		if buildErr != nil {
			return
		}
		// Tagged: the binary honours the test-only switches (weaken), for
		// the hostile probes' weakened runs and for the directories the
		// scripted agents report in (sandboxtest.WritableEnv).
		cmd := exec.Command("go", "build", "-tags", "agentloop_weaken", "-o", filepath.Join(binDir, "agent-loop"), "github.com/aiwg/agent-loop/cmd/agent-loop")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &buildError{err, string(out)}
			return
		}
		buildErr = os.Symlink("agent-loop", filepath.Join(binDir, "agent-loop-post"))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "agent-loop"), filepath.Join(binDir, "agent-loop-post")
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitRemote serves bare repositories with git-http-backend; 401 without
// basic auth x-access-token:<token>.
func gitRemote(t *testing.T, root, token string) string {
	execPath := git(t, root, "--exec-path")
	backend := &cgi.Handler{Path: filepath.Join(execPath, "git-http-backend"), Dir: root,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "REMOTE_USER=x-access-token"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "x-access-token" || p != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type osFS struct{}

func (osFS) Open(name string) (fs.File, error) { return os.Open(name) }
func (osFS) OpenWritable(name string) (artifacts.WritableFile, error) {
	os.MkdirAll(filepath.Dir(name), 0o755)
	return os.OpenFile(name, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
}
func (osFS) OpenAppendable(name string) (artifacts.WritableFile, error) {
	os.MkdirAll(filepath.Dir(name), 0o755)
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	_, err = f.Seek(0, io.SeekEnd)
	return f, err
}

// actArtifacts is act's artifacts v4 server with a token check in front.
func actArtifacts(t *testing.T) (url, token string) {
	token, err := common.CreateAuthorizationToken(7, 1234, 56)
	if err != nil {
		t.Fatal(err)
	}
	router := httprouter.New()
	artifacts.RoutesV4(router, t.TempDir(), osFS{}, osFS{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "UploadArtifact") && !strings.HasSuffix(r.URL.Path, "DownloadArtifact") {
			if _, err := common.ParseAuthorizationToken(r); err != nil {
				http.Error(w, "unauthenticated", http.StatusUnauthorized)
				return
			}
		}
		router.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", token
}

type world struct {
	t         *testing.T
	gh        *githubtest.Server
	remoteURL string
	bare      string
	token     string
	artURL    string
	artToken  string
	work      string
	agent     string
}

const repoName = githubtest.DefaultRepoFullName

func newWorld(t *testing.T) *world {
	t.Helper()
	// The scripted agents (the sandbox's user, as root) read their
	// scripts in w.work and report what they saw there; the checkouts are
	// made in it.
	w := &world{t: t, gh: githubtest.New(t), token: githubtest.DefaultToken, work: sandboxtest.SharedDir(t)}
	root := t.TempDir()
	w.bare = filepath.Join(root, "demo.git")
	seed := filepath.Join(t.TempDir(), "seed")
	os.MkdirAll(seed, 0o755)
	os.WriteFile(filepath.Join(seed, "calc.sh"), []byte("add() { echo $(($1 + $2)); }\nsub() { echo $(($1 + $2)); }\n"), 0o644)
	os.WriteFile(filepath.Join(seed, "test.sh"), []byte(`. ./calc.sh
n=0; failed=0
check() { n=$((n+1)); if [ "$2" = "$3" ]; then echo "ok $n - $1"; else echo "not ok $n - $1"; failed=$((failed+1)); fi; }
echo "1..3"
check "add" "$(add 2 3)" 5
check "sub" "$(sub 5 3)" 2
check "sub neg" "$(sub 0 4)" -4
[ "$failed" -eq 0 ]
`), 0o644)
	os.MkdirAll(filepath.Join(seed, ".github", "workflows"), 0o755)
	os.WriteFile(filepath.Join(seed, ".github", "workflows", "ci.yml"), []byte("on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: sh test.sh\n"), 0o644)
	git(t, seed, "init", "-q", "-b", "main")
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-qm", "calc with a bug")
	git(t, root, "clone", "-q", "--bare", seed, w.bare)
	w.remoteURL = gitRemote(t, root, w.token) + "/demo.git"
	w.artURL, w.artToken = actArtifacts(t)
	w.gh.SetCollaborator(repoName, "alice", "write")
	w.gh.SetCollaborator(repoName, "bob", "read")
	// The scripted agent (its pid as /proc sees it: $$ is its pid in the
	// sandbox's PID namespace): iteration 1 changes nothing useful; iteration 2
	// hangs the first time (the run is cancelled there) and fixes sub when
	// run again; it also tries to break CI (a protected path: reverted).
	w.agent = filepath.Join(w.work, "agent.sh")
	os.WriteFile(w.agent, []byte(`env > "$WORK/env-$AGENT_LOOP_ITERATION.txt"
case "$AGENT_LOOP_ITERATION" in
1) echo '# looked' >> calc.sh; echo '# agent edit' >> .github/workflows/ci.yml ;;
2)
	if [ ! -e "$WORK/hung" ]; then read -r pid _ < /proc/self/stat; echo $pid > "$WORK/agent.pid"; touch "$WORK/hung"; exec sleep 60; fi
	printf 'add() { echo $(($1 + $2)); }\nsub() { echo $(($1 - $2)); }\n' > calc.sh ;;
esac
`), 0o755)
	return w
}

// checkout clones the remote as actions/checkout does (depth 1, origin
// without credentials).
func (w *world) checkout(name string) string {
	ws := filepath.Join(w.work, name)
	cmd := exec.Command("git", "-c", "http.extraheader=Authorization: Basic "+basic(w.token), "clone", "-q", "--depth", "1", w.remoteURL, ws)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("clone: %v\n%s", err, out)
	}
	return ws
}

func basic(token string) string {
	return b64("x-access-token:" + token)
}

type step struct {
	env     map[string]string
	output  string
	state   string
	summary string
	stdout  bytes.Buffer
}

// env builds the environment of a container action step.
func (w *world) step(ws, event string, payload any, inputs map[string]string, attempt string) *step {
	dir := w.t.TempDir()
	ev := filepath.Join(dir, "event.json")
	b, _ := json.Marshal(payload)
	os.WriteFile(ev, b, 0o644)
	s := &step{output: filepath.Join(dir, "output"), state: filepath.Join(dir, "state"), summary: filepath.Join(dir, "summary")}
	for _, f := range []string{s.output, s.state, s.summary} {
		os.WriteFile(f, nil, 0o644)
	}
	s.env = map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": w.t.TempDir(), "CI": "true", "GITHUB_ACTIONS": "true", "WORK": w.work,
		"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": ev, "GITHUB_REPOSITORY": repoName, "GITHUB_REPOSITORY_OWNER": "octo-org",
		"GITHUB_RUN_ID": "1234", "GITHUB_RUN_ATTEMPT": attempt, "GITHUB_RUN_NUMBER": "9", "GITHUB_ACTOR": "alice",
		"GITHUB_API_URL": w.gh.URL, "GITHUB_SERVER_URL": "https://github.example", "GITHUB_GRAPHQL_URL": w.gh.GraphQLURL,
		"GITHUB_WORKSPACE": ws, "GITHUB_OUTPUT": s.output, "GITHUB_STATE": s.state, "GITHUB_STEP_SUMMARY": s.summary,
		"GITHUB_ENV": filepath.Join(dir, "env"), "GITHUB_PATH": filepath.Join(dir, "path"),
		"ACTIONS_RUNTIME_TOKEN": w.artToken, "ACTIONS_RESULTS_URL": w.artURL, "ACTIONS_RUNTIME_URL": w.artURL,
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-secret-value", "ACTIONS_ID_TOKEN_REQUEST_URL": "http://127.0.0.1:1/oidc",
		app.StateDirVar: stateBase, weaken.WritableVar: w.work, "GORACE": "atexit_sleep_ms=0",
	}
	defaults := map[string]string{
		"completion": "sh test.sh", "provider": "command", "agent-command": "sh " + w.agent, "max-iterations": "4",
		"timeout-minutes": "5", "github-token": w.token, "pr": "open", "trigger-phrase": "/agent-loop", "confirm-runs": "0",
	}
	for k, v := range inputs {
		defaults[k] = v
	}
	for k, v := range defaults {
		s.env[actions.InputEnvName(k)] = v
	}
	return s
}

// runPost runs the post step as the runner does after main: in ws, with
// the state main saved (STATE_ variables). It returns what the post step
// printed and that saved state.
func (s *step) runPost(t *testing.T, postBin, ws string) (string, map[string]string) {
	t.Helper()
	saved := fileCommands(t, s.state)
	env := map[string]string{}
	for k, v := range saved {
		env["STATE_"+k] = v
	}
	post := exec.Command(postBin, "action")
	post.Dir, post.Env = ws, s.environ(env)
	out, err := post.CombinedOutput()
	if err != nil {
		t.Fatalf("post: %v\n%s", err, out)
	}
	return string(out), saved
}

func (s *step) environ(extra map[string]string) []string {
	var out []string
	for k, v := range s.env {
		out = append(out, k+"="+v)
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}

func (s *step) start(t *testing.T, bin string, extra map[string]string) *exec.Cmd {
	cmd := exec.Command(bin, "action")
	cmd.Dir = s.env["GITHUB_WORKSPACE"]
	cmd.Env = s.environ(extra)
	cmd.Stdout, cmd.Stderr = &s.stdout, &s.stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// fileCommands parses GITHUB_OUTPUT / GITHUB_STATE (name<<delimiter).
func fileCommands(t *testing.T, path string) map[string]string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		name, delim, ok := strings.Cut(line, "<<")
		if !ok {
			if k, v, ok := strings.Cut(line, "="); ok {
				out[k] = v
			}
			continue
		}
		var val []string
		for sc.Scan() && sc.Text() != delim {
			val = append(val, sc.Text())
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

func waitFor(t *testing.T, path string) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", path)
}

func commentEvent(issue int, commentID int64, author, body string) map[string]any {
	return map[string]any{
		"action":     "created",
		"issue":      map[string]any{"number": issue, "title": "calc is broken", "body": "sub adds"},
		"comment":    map[string]any{"id": commentID, "body": body, "user": map[string]any{"login": author, "type": "User"}},
		"repository": map[string]any{"full_name": repoName, "default_branch": "main"},
		"sender":     map[string]any{"login": author},
	}
}

func TestActionEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	mainBin, postBin := binary(t)
	w := newWorld(t)
	issue := w.gh.AddIssue(repoName, "alice", "calc is broken", "sub adds")
	commentID := w.gh.AddComment(repoName, issue, "alice", "/agent-loop fix the calculator tests")
	payload := commentEvent(issue, commentID, "alice", "/agent-loop fix the calculator tests")

	// Run 1: cancelled (SIGINT, as the runner does) while the agent hangs in
	// iteration 2; the post step publishes and uploads the state.
	ws1 := w.checkout("ws1")
	s1 := w.step(ws1, "issue_comment", payload, nil, "1")
	cmd := s1.start(t, mainBin, nil)
	waitFor(t, filepath.Join(w.work, "hung"))
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if el := time.Since(start); el > 7500*time.Millisecond {
		t.Errorf("main took %v after SIGINT (the runner sends SIGTERM at 7.5 s)", el)
	}
	if code := exitCode(err); code != 1 {
		t.Fatalf("cancelled main exit %d, want 1\n%s", code, s1.stdout.String())
	}
	if b, _ := os.ReadFile(filepath.Join(w.work, "agent.pid")); len(b) > 0 {
		pid := atoi(strings.TrimSpace(string(b)))
		if alive(pid) {
			t.Errorf("the agent (pid %d) outlived the cancelled step", pid)
		}
	}
	postOut, saved := s1.runPost(t, postBin, ws1)
	if !strings.Contains(postOut, "uploaded as agent-loop-state-") {
		t.Fatalf("post did not upload the state:\n%s\nmain:\n%s", postOut, s1.stdout.String())
	}
	loopID := saved["loop_id"]
	baseID := saved["base_id"]
	if loopID == "" || baseID == "" {
		t.Fatalf("main saved no loop id for post: %v", saved)
	}
	comments := w.gh.Comments(repoName, issue)
	if n := countSticky(comments, loopID); n != 1 {
		t.Fatalf("%d sticky comments after run 1, want 1: %+v", n, comments)
	}
	if !strings.Contains(lastSticky(comments, loopID), "⛔ agent-loop stopped: the run was cancelled after 1 iteration") {
		t.Errorf("the comment does not say the run was cancelled:\n%s", lastSticky(comments, loopID))
	}
	// The sticky comment is edited in place, which notifies nobody: one
	// short comment tells the person who started the loop how it ended,
	// once, even when the post step runs again.
	s1.runPost(t, postBin, ws1)
	comments = w.gh.Comments(repoName, issue)
	notes := notifications(comments)
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "@alice ⛔ agent-loop stopped: the run was cancelled after 1 iteration") {
		t.Errorf("notifications after run 1 (its post step run twice), want one for @alice: %q", notes)
	}
	if rs := w.gh.Reactions(repoName, commentID); len(rs) == 0 || rs[0].Content != "eyes" {
		t.Errorf("reactions = %+v, want eyes", rs)
	}
	// The artifact is downloadable from act's server.
	ac, err := actions.NewArtifactClient(func(k string) string { return s1.env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := ac.Download(context.Background(), "agent-loop-state-"+baseID)
	if err != nil {
		t.Fatal(err)
	}
	validate(t, files["state.json"], "paused")
	for name, b := range files {
		if bytes.Contains(b, []byte(w.token)) || bytes.Contains(b, []byte(w.artToken)) {
			t.Errorf("artifact file %s contains a token", name)
		}
	}
	// GitHub would serve this artifact over REST to a later attempt; the
	// state ref is removed so the resume must come from the artifact.
	w.gh.AddArtifact(repoName, githubtest.Artifact{Name: "agent-loop-state-" + baseID, RunID: 1234, Files: files})
	git(t, w.bare, "update-ref", "-d", "refs/agent-loop-state/"+baseID)

	// Run 2 (attempt 2, a fresh runner): resumes from the artifact, finishes.
	ws2 := w.checkout("ws2")
	s2 := w.step(ws2, "issue_comment", payload, nil, "2")
	cmd2 := s2.start(t, mainBin, nil)
	if err := cmd2.Wait(); exitCode(err) != 0 {
		t.Fatalf("run 2 exit %d\n%s", exitCode(err), s2.stdout.String())
	}
	out := s2.stdout.String()
	if !strings.Contains(out, "restored "+loopID) || !strings.Contains(out, "from the artifact of run 1234") {
		t.Errorf("run 2 did not resume from the artifact:\n%s", out)
	}
	outputs := fileCommands(t, s2.output)
	if outputs["status"] != "completed" || outputs["loop-id"] != loopID || outputs["best-iteration"] != "2" || outputs["iterations"] != "2" {
		t.Errorf("outputs = %v", outputs)
	}
	if outputs["pr-number"] == "" || !strings.Contains(outputs["pr-url"], "/pull/") {
		t.Errorf("no PR in outputs: %v", outputs)
	}
	if s, _ := os.ReadFile(s2.summary); !strings.Contains(string(s), "agent-loop completed") {
		t.Errorf("step summary:\n%s", s)
	}
	// The remote has the loop branch with exactly one commit per iteration.
	branch := outputs["branch"]
	log := git(t, w.bare, "log", "--format=%(trailers:key=Agent-Loop-Iteration,valueonly)", branch)
	if got := strings.Fields(log); strings.Join(got, ",") != "2,1" {
		t.Errorf("iteration trailers on %s: %q", branch, got)
	}
	git(t, w.bare, "fsck", "--strict")
	if files := git(t, w.bare, "diff", "--name-only", "main", branch); strings.Contains(files, ".github/workflows") || !strings.Contains(files, "calc.sh") {
		t.Errorf("the branch changes %q; workflow edits must stay out", files)
	}
	prs := w.gh.PullRequests(repoName)
	if len(prs) != 1 || prs[0].Head != branch || prs[0].Base != "main" || prs[0].Draft {
		t.Errorf("pull requests = %+v", prs)
	}
	comments = w.gh.Comments(repoName, issue)
	if n := countSticky(comments, loopID); n != 1 {
		t.Errorf("%d sticky comments, want 1 (updated, not duplicated)", n)
	}
	sticky := lastSticky(comments, loopID)
	for _, want := range []string{"### ✅ agent-loop completed: the check passes on iteration 2", "**Change:** 1 file, +1 −1 in `calc.sh`",
		"[run log](https://github.example/octo-org/demo/actions/runs/1234)", "[compare view](https://github.example/octo-org/demo/compare/",
		"/pull/" + outputs["pr-number"] + "/checks)", "- The run was cancelled after 1 iteration and resumed from its saved state"} {
		if !strings.Contains(sticky, want) {
			t.Errorf("the sticky comment lacks %q:\n%s", want, sticky)
		}
	}
	var stickyID int64
	for _, c := range comments {
		if strings.Contains(c.Body, "loop="+loopID) {
			stickyID = c.ID
		}
	}
	notes = notifications(comments)
	reportURL := "https://github.example/octo-org/demo/issues/" + itoa(int64(issue)) + "#issuecomment-" + itoa(stickyID)
	if len(notes) != 2 || !strings.HasPrefix(notes[1], "@alice ✅ agent-loop completed: the check passes on iteration 2.") || !strings.Contains(notes[1], "("+reportURL+")") {
		t.Errorf("notifications, want the second to say completed and link %s: %q", reportURL, notes)
	}
	// The pull request's description is the change, not a copy of the
	// report: it links to the comment instead.
	body := prs[0].Body
	if strings.Contains(body, "| verdict |") || strings.Contains(body, "<details>") || !strings.Contains(body, "**Task:** fix the calculator tests") ||
		!strings.Contains(body, "[the agent-loop comment]("+reportURL+")") || !strings.Contains(body, "Started from #"+itoa(int64(issue))) {
		t.Errorf("pull request body:\n%s", body)
	}
	// The agent never saw a token.
	for _, f := range []string{"env-1.txt", "env-2.txt"} {
		b, err := os.ReadFile(filepath.Join(w.work, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{w.token, w.artToken, "oidc-secret-value", "INPUT_", "GITHUB_OUTPUT", "GITHUB_STATE="} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("the agent's environment (%s) contains %q", f, secret)
			}
		}
	}
	if leaks(out, w.token) {
		t.Errorf("the log contains the token outside ::add-mask::")
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// notifications are the bodies of the comments that mention someone.
func notifications(cs []githubtest.Comment) []string {
	var out []string
	for _, c := range cs {
		if strings.HasPrefix(c.Body, "@") {
			out = append(out, c.Body)
		}
	}
	return out
}

func countSticky(cs []githubtest.Comment, loopID string) int {
	n := 0
	for _, c := range cs {
		if strings.Contains(c.Body, "loop="+loopID) {
			n++
		}
	}
	return n
}

func lastSticky(cs []githubtest.Comment, loopID string) string {
	for i := len(cs) - 1; i >= 0; i-- {
		if strings.Contains(cs[i].Body, "loop="+loopID) {
			return cs[i].Body
		}
	}
	return ""
}

func validate(t *testing.T, b []byte, status string) {
	t.Helper()
	if err := schemas.Validate(schemas.LoopState, b); err != nil {
		t.Fatalf("state does not validate: %v", err)
	}
	var st struct{ Status string }
	json.Unmarshal(b, &st)
	if st.Status != status {
		t.Fatalf("state status %q, want %q", st.Status, status)
	}
}

func TestActionRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	mainBin, _ := binary(t)
	w := newWorld(t)
	issue := w.gh.AddIssue(repoName, "bob", "calc", "")
	run := func(event string, payload any, inputs map[string]string) (*step, int) {
		ws := w.checkout("ws-" + event + "-" + randomName())
		s := w.step(ws, event, payload, inputs, "1")
		err := s.start(t, mainBin, nil).Wait()
		return s, exitCode(err)
	}
	t.Run("commenter without write access", func(t *testing.T) {
		id := w.gh.AddComment(repoName, issue, "bob", "/agent-loop fix it")
		s, code := run("issue_comment", commentEvent(issue, id, "bob", "/agent-loop fix it"), nil)
		if code != 0 || fileCommands(t, s.output)["status"] != "refused" {
			t.Fatalf("exit %d, outputs %v\n%s", code, fileCommands(t, s.output), s.stdout.String())
		}
		last := w.gh.Comments(repoName, issue)
		if !strings.Contains(last[len(last)-1].Body, "only runs for people with write, maintain or admin permission") {
			t.Errorf("refusal comment: %q", last[len(last)-1].Body)
		}
	})
	t.Run("fork pull request", func(t *testing.T) {
		pr := w.gh.AddPullRequest(repoName, githubtest.PullRequest{Title: "from a fork", Head: "patch-1", Base: "main", HeadRepo: "mallory/demo", Author: "mallory"})
		payload := map[string]any{"action": "opened", "number": pr,
			"pull_request": map[string]any{"number": pr, "title": "from a fork", "head": map[string]any{"ref": "patch-1", "sha": "abc", "repo": map[string]any{"full_name": "mallory/demo"}}, "base": map[string]any{"ref": "main"}},
			"repository":   map[string]any{"full_name": repoName}, "sender": map[string]any{"login": "mallory"}}
		s, code := run("pull_request", payload, nil)
		if code != 0 || fileCommands(t, s.output)["status"] != "refused" {
			t.Fatalf("exit %d\n%s", code, s.stdout.String())
		}
		cs := w.gh.Comments(repoName, pr)
		if len(cs) == 0 || !strings.Contains(cs[len(cs)-1].Body, "forks") {
			t.Errorf("no refusal comment on the fork PR: %+v", cs)
		}
	})
	t.Run("missing token", func(t *testing.T) {
		s, code := run("workflow_dispatch", map[string]any{"inputs": map[string]any{}}, map[string]string{"github-token": "", "task": "fix the tests"})
		if code != 2 || !strings.Contains(s.stdout.String(), "github-token") {
			t.Fatalf("exit %d\n%s", code, s.stdout.String())
		}
	})
	t.Run("token that cannot push", func(t *testing.T) {
		w.gh.AddToken(githubtest.Token{Value: "ghs_readonlyToken000000000000", Kind: githubtest.ActionsToken})
		s, code := run("workflow_dispatch", map[string]any{"inputs": map[string]any{}}, map[string]string{"github-token": "ghs_readonlyToken000000000000", "task": "fix the tests"})
		if code != 2 || !strings.Contains(s.stdout.String(), "cannot push") {
			t.Fatalf("exit %d\n%s", code, s.stdout.String())
		}
		if leaks(s.stdout.String(), "ghs_readonlyToken000000000000") {
			t.Errorf("the token is in the log outside ::add-mask::\n%s", s.stdout.String())
		}
	})
}

var nameSeq int
var nameMu sync.Mutex

func randomName() string {
	nameMu.Lock()
	defer nameMu.Unlock()
	nameSeq++
	return string(rune('a' + nameSeq))
}

// leaks reports whether secret appears in the log other than in the
// ::add-mask:: command that tells the runner to hide it.
func leaks(log, secret string) bool {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, secret) && !strings.HasPrefix(line, "::add-mask::") {
			return true
		}
	}
	return false
}

// An inferred check is verified by running it before the Action adopts
// it: one that runs no test is not adopted, and the proposal (with what
// the run showed and the exact input to set) is commented instead.
func TestActionDoesNotAdoptAnInferredCheckThatRunsNoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	mainBin, _ := binary(t)
	w := newWorld(t)
	issue := w.gh.AddIssue(repoName, "alice", "calc is broken", "sub adds")
	id := w.gh.AddComment(repoName, issue, "alice", "/agent-loop fix the failing tests")
	ws := w.checkout("ws")
	// CI runs `sh test.sh`; this test.sh runs no test at all.
	os.WriteFile(filepath.Join(ws, "test.sh"), []byte("echo 1..0\n"), 0o644)
	git(t, ws, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "tests gone")
	s := w.step(ws, "issue_comment", commentEvent(issue, id, "alice", "/agent-loop fix the failing tests"), map[string]string{"completion": "", "pr": "none"}, "1")
	err := s.start(t, mainBin, nil).Wait()
	out := s.stdout.String()
	if exitCode(err) != 2 || fileCommands(t, s.output)["status"] != "configuration-error" {
		t.Fatalf("exit %d, outputs %v\n%s", exitCode(err), fileCommands(t, s.output), out)
	}
	cs := w.gh.Comments(repoName, issue)
	body := cs[len(cs)-1].Body
	for _, want := range []string{"agent-loop did not start", "ran no tests", "completion: \"", "```yaml"} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, body)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".aiwg", "ralph", "loops")); err == nil {
		entries, _ := os.ReadDir(filepath.Join(ws, ".aiwg", "ralph", "loops"))
		if len(entries) > 0 {
			t.Errorf("a loop was started: %v", entries)
		}
	}
}

// A trigger comment's completion hint ("fix until green": the tests pass)
// is used: with no completion input, the criterion is inferred with it, and
// the state and the report say it came from the comment's hint.
func TestActionCommentHintInfersTheCriterion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	mainBin, _ := binary(t)
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.work, "hung"), nil, 0o644) // the agent does not hang
	issue := w.gh.AddIssue(repoName, "alice", "calc is broken", "sub adds")
	id := w.gh.AddComment(repoName, issue, "alice", "/agent-loop fix until green")
	ws := w.checkout("ws")
	s := w.step(ws, "issue_comment", commentEvent(issue, id, "alice", "/agent-loop fix until green"), map[string]string{"completion": "", "pr": "none"}, "1")
	err := s.start(t, mainBin, nil).Wait()
	out := s.stdout.String()
	outputs := fileCommands(t, s.output)
	if exitCode(err) != 0 || outputs["status"] != "completed" || outputs["completion-command"] != "sh test.sh" {
		t.Fatalf("exit %d, outputs %v\n%s", exitCode(err), outputs, out)
	}
	st := loopState(t, ws, outputs["loop-id"])
	crit := st["agent_loop"].(map[string]any)["spec"].(map[string]any)["criterion"].(map[string]any)
	if crit["source"] != "comment-hint" || crit["hint"] != "tests pass" {
		t.Errorf("criterion %v, want source comment-hint with the hint", crit)
	}
	if outputs["completion-confidence"] != "high" {
		t.Errorf("confidence %q", outputs["completion-confidence"])
	}
	summary, _ := os.ReadFile(s.summary)
	if !strings.Contains(string(summary), "inferred from `.github/workflows/ci.yml`") || !strings.Contains(string(summary), "as the trigger comment asked") {
		t.Errorf("the report does not say where the criterion came from:\n%s", summary)
	}
}
