package action_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/actions"
	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
	"github.com/aiwg/agent-loop/internal/sandbox"
	"github.com/aiwg/agent-loop/internal/sandbox/sandboxtest"
	"github.com/aiwg/agent-loop/internal/schemas"
)

// Faults, end to end: the Action's binary against a git remote that starts
// refusing the token or dies mid-loop, a GitHub API that answers 5xx and
// rate limits, and an artifact service that fails every request.

// faultyRemote is git http-backend behind the token check of gitRemote,
// with faults switched on when the agent creates a marker file (so that
// they start at a known point of the loop).
type faultyRemote struct {
	url    string
	marker string // when this file exists, fault applies
	// fault is "revoke" (401 to the token, for good), "drop" (the
	// connection closed unanswered, for dropLimit requests: an outage that
	// passes) or "flaky" (503 twice).
	fault     string
	dropLimit int

	mu      sync.Mutex
	faulted int // requests answered with a fault
}

func newFaultyRemote(t *testing.T, w *world, fault string) *faultyRemote {
	t.Helper()
	root := filepath.Dir(w.bare)
	fr := &faultyRemote{marker: filepath.Join(w.work, "fault-on"), fault: fault, dropLimit: 8}
	execPath := git(t, root, "--exec-path")
	backend := &cgi.Handler{Path: filepath.Join(execPath, "git-http-backend"), Dir: root,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "REMOTE_USER=x-access-token"}}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if _, err := os.Stat(fr.marker); err == nil {
			fr.mu.Lock()
			fault := fr.fault
			if (fault == "flaky" && fr.faulted >= 2) || (fault == "drop" && fr.faulted >= fr.dropLimit) {
				fault = "" // recovered
			}
			if fault != "" {
				fr.faulted++
			}
			fr.mu.Unlock()
			switch fault {
			case "revoke":
				rw.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(rw, "Invalid username or token. Password authentication is not supported for Git operations.", http.StatusUnauthorized)
				return
			case "drop":
				if hj, ok := rw.(http.Hijacker); ok {
					if c, _, err := hj.Hijack(); err == nil {
						c.Close()
						return
					}
				}
				panic(http.ErrAbortHandler)
			case "flaky":
				http.Error(rw, "service unavailable", http.StatusServiceUnavailable)
				return
			}
		}
		if u, p, ok := r.BasicAuth(); !ok || u != "x-access-token" || p != w.token {
			rw.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(rw, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	fr.url = srv.URL + "/" + filepath.Base(w.bare)
	w.remoteURL = fr.url
	return fr
}

func (fr *faultyRemote) faults() int {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return fr.faulted
}

// faultAgent fixes nothing in iteration 1, switches the fault on and fixes
// the calculator in iteration 2.
func faultAgent(t *testing.T, w *world) string {
	p := filepath.Join(w.work, "fault-agent.sh")
	os.WriteFile(p, []byte(`case "$AGENT_LOOP_ITERATION" in
1) echo '# looked' >> calc.sh ;;
2) touch "$WORK/fault-on"; printf 'add() { echo $(($1 + $2)); }\nsub() { echo $(($1 - $2)); }\n' > calc.sh ;;
esac
`), 0o755)
	return p
}

func loopState(t *testing.T, ws, loopID string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, ".aiwg", "ralph", "loops", loopID, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func pushErrors(st map[string]any) []string {
	h, _ := st["agent_loop"].(map[string]any)
	var out []string
	if list, ok := h["push_errors"].([]any); ok {
		for _, e := range list {
			out = append(out, e.(string))
		}
	}
	return out
}

// The git remote fails mid-loop, after iteration 1 was pushed: it refuses
// the token from then on (not retried: it cannot succeed; the step fails,
// saying the result is not on the remote, and the state with push_errors
// is in the artifact), it drops connections for a while (each push is
// retried, the failures are recorded, and the branch is pushed once the
// remote is back), or it answers 503 twice (retried, nothing recorded).
func TestActionGitRemoteFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	mainBin, _ := binary(t)
	for _, tc := range []struct {
		fault     string
		code      int
		reason    string // in every push error
		faults    int    // requests the remote failed
		onRemote  bool   // the best commit reached the remote branch
		errorsMin int
	}{
		{fault: "revoke", code: 1, reason: "(auth)", onRemote: false, errorsMin: 2},
		{fault: "drop", code: 0, reason: "(network)", faults: 8, onRemote: true, errorsMin: 1},
		{fault: "flaky", code: 0, faults: 2, onRemote: true},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			fr := newFaultyRemote(t, w, tc.fault)
			agent := faultAgent(t, w)
			ws := w.checkout("ws")
			s := w.step(ws, "workflow_dispatch", map[string]any{"inputs": map[string]any{}}, map[string]string{
				"task": "fix the calculator", "agent-command": "sh " + agent, "pr": "none"}, "1")
			err := s.start(t, mainBin, nil).Wait()
			out := s.stdout.String()
			outputs := fileCommands(t, s.output)
			loopID := outputs["loop-id"]
			if loopID == "" || outputs["status"] != "completed" || exitCode(err) != tc.code {
				t.Fatalf("exit %d (want %d), outputs %v\n%s", exitCode(err), tc.code, outputs, out)
			}
			st := loopState(t, ws, loopID)
			errs := pushErrors(st)
			if len(errs) < tc.errorsMin || (tc.errorsMin == 0 && len(errs) > 0) {
				t.Errorf("push_errors = %q, want at least %d", errs, tc.errorsMin)
			}
			for _, e := range errs {
				if !strings.Contains(e, tc.reason) {
					t.Errorf("push error %q, want %s", e, tc.reason)
				}
				if strings.Contains(e, w.token) {
					t.Errorf("push error holds the token: %q", e)
				}
			}
			if tc.faults > 0 && fr.faults() != tc.faults {
				t.Errorf("the remote failed %d requests, want %d (retries)", fr.faults(), tc.faults)
			}
			branch, best := outputs["branch"], outputs["best-sha"]
			remoteHas := exec.Command("git", "-C", w.bare, "merge-base", "--is-ancestor", best, branch).Run() == nil
			if remoteHas != tc.onRemote {
				t.Errorf("the remote branch has the best commit: %v, want %v", remoteHas, tc.onRemote)
			}
			if tc.code != 0 {
				if !strings.Contains(out, "::error title=agent-loop%3A the result was not pushed::the loop branch "+branch+" could not be pushed") {
					t.Errorf("no error annotation says the result was not pushed:\n%s", out)
				}
			} else if len(errs) > 0 && !strings.Contains(out, "agent-loop: pushed "+branch) {
				t.Errorf("the log does not say the branch was pushed in the end:\n%s", out)
			}
			for _, e := range errs {
				if !strings.Contains(out, e[strings.Index(e, "push refs/"):][:60]) {
					t.Errorf("the step log does not show the push error %q", e)
				}
			}
			if leaks(out, w.token) {
				t.Errorf("the step log holds the token outside ::add-mask::")
			}
			// The state, push errors included, is kept in the artifact.
			ac, err := actions.NewArtifactClient(func(k string) string { return s.env[k] }, nil)
			if err != nil {
				t.Fatal(err)
			}
			files, err := ac.Download(context.Background(), "agent-loop-state-"+loopID)
			if err != nil {
				t.Fatalf("the state artifact: %v\n%s", err, out)
			}
			var saved map[string]any
			json.Unmarshal(files["state.json"], &saved)
			if len(pushErrors(saved)) != len(errs) {
				t.Errorf("the artifact's state has %d push errors, the workspace's %d", len(pushErrors(saved)), len(errs))
			}
			validate(t, files["state.json"], "completed")
			// The commits the remote lacks travel in the artifact as a git
			// bundle that a clone of the remote fetches the branch from.
			bundle, hasBundle := files["branch.bundle"]
			if hasBundle == tc.onRemote {
				t.Fatalf("the artifact has branch.bundle: %v; the remote has the result: %v", hasBundle, tc.onRemote)
			}
			if hasBundle {
				if !strings.Contains(out, "git fetch branch.bundle "+branch+":"+branch) {
					t.Errorf("the step log does not say how to fetch the commits from the bundle:\n%s", out)
				}
				bf := filepath.Join(t.TempDir(), "branch.bundle")
				os.WriteFile(bf, bundle, 0o644)
				clone := filepath.Join(t.TempDir(), "clone")
				git(t, w.work, "clone", "-q", w.bare, clone)
				git(t, clone, "fetch", "-q", bf, branch+":"+branch)
				head, _ := st["agent_loop"].(map[string]any)["head_sha"].(string)
				if got := git(t, clone, "rev-parse", branch); got != head || head == "" {
					t.Errorf("the bundle's branch is at %s, the loop's head is %s", got, head)
				}
				git(t, clone, "merge-base", "--is-ancestor", best, branch)
				git(t, clone, "fsck", "--strict", "--no-progress")
			}
		})
	}
}

// cliRun runs the built binary as the CLI in dir.
func cliRun(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	mainBin, _ := binary(t)
	cmd := exec.Command(mainBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GITHUB_TOKEN=ghs_cliToken000000000000000001"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), exitCode(err)
}

// The disk fills up while the agent works (it writes a large file into a
// 2 MiB tmpfs that holds the repository and its .aiwg): the loop stops with
// a clear error, no state file is half written (no temporary file is left
// either), the state from before the fault is intact and valid, and once
// there is room again the loop resumes from it and finishes.
func TestDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root; run the tests as root to cover a full disk")
	}
	t.Parallel()
	// The agent's script is in top (the sandbox's user reads it, as
	// root), its marker in a directory of its own: the sandbox refuses to
	// let it write a directory that holds the harness's private state.
	top := sandboxtest.TempDir(t)
	marks := sandboxtest.SharedDir(t)
	mnt := filepath.Join(top, "small")
	os.MkdirAll(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s); a full disk is not covered here", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	repo := filepath.Join(mnt, "repo")
	os.MkdirAll(repo, 0o755)
	if err := sandboxtest.Reach(repo); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, "calc.sh"), []byte("add() { echo $(($1 + $2)); }\nsub() { echo $(($1 + $2)); }\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "test.sh"), []byte(". ./calc.sh\n[ \"$(sub 5 3)\" = 2 ] || { echo 'not ok 1 - sub'; exit 1; }\necho 'ok 1 - sub'\n"), 0o644)
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-qm", "calc with a bug")
	agent := filepath.Join(top, "agent.sh")
	os.WriteFile(agent, []byte(`case "$AGENT_LOOP_ITERATION" in
1) echo '# looked' >> calc.sh ;;
*)
	if [ ! -e "$FILLED" ]; then
		touch "$FILLED"
		dd if=/dev/urandom of=fill bs=64k count=64 2>/dev/null
	fi
	printf 'add() { echo $(($1 + $2)); }\nsub() { echo $(($1 - $2)); }\n' > calc.sh
	;;
esac
`), 0o755)
	// The harness's private state is on the small disk too: the state
	// writes are what the full disk must not corrupt.
	stateDir := filepath.Join(mnt, "state")
	env := []string{"FILLED=" + filepath.Join(marks, "filled"), sandboxtest.WritableEnv(marks), app.StateDirVar + "=" + stateDir}
	priv, err := sandbox.PrivateDir(stateDir, repo)
	if err != nil {
		t.Fatal(err)
	}
	const id = "ralph-diskfull-00000112"
	out, code := cliRun(t, repo, env, "run", "--completion", "sh test.sh", "--agent-command", "sh "+agent, "--loop-id", id, "--max-iterations", "3", "fix the calculator")
	if code == 0 {
		t.Fatalf("a full disk did not stop the loop:\n%s", out)
	}
	if !strings.Contains(out, "no space left on device") || !strings.Contains(out, "The disk is full: the state from before the fault is kept") {
		t.Errorf("the error does not say the disk is full:\n%s", out)
	}
	// The live state, in the harness's private directory.
	loopDir := filepath.Join(priv, ".aiwg", "ralph", "loops", id)
	ents, _ := os.ReadDir(loopDir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("a temporary file is left behind: %s", e.Name())
		}
	}
	b, err := os.ReadFile(filepath.Join(loopDir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := schemas.Validate(schemas.LoopState, b); err != nil {
		t.Fatalf("the state after the fault does not validate: %v\n%s", err, b)
	}
	var st struct {
		Status    string `json:"status"`
		Iteration int    `json:"iteration"`
	}
	json.Unmarshal(b, &st)
	t.Logf("state after the fault: %s at iteration %d\n%s", st.Status, st.Iteration, out)
	if st.Iteration != 1 {
		t.Errorf("state iteration %d, want 1 (the last iteration recorded before the disk filled)", st.Iteration)
	}
	if reg, err := os.ReadFile(filepath.Join(priv, ".aiwg", "ralph", "registry.json")); err != nil || schemas.Validate(schemas.LoopRegistry, reg) != nil {
		t.Errorf("the registry is unreadable or invalid after the fault: %v\n%s", err, reg)
	}

	// Room again: the loop resumes from the state it had and finishes.
	os.Remove(filepath.Join(repo, "fill"))
	out, code = cliRun(t, repo, env, "resume", id)
	if code != 0 || !strings.Contains(out, "agent-loop completed") {
		t.Fatalf("resume after the disk was freed: exit %d\n%s", code, out)
	}
	b, _ = os.ReadFile(filepath.Join(loopDir, "state.json"))
	validate(t, b, "completed")
}

// The GitHub API answers 5xx and rate limits (primary: 403 with
// X-RateLimit-Remaining 0 until a reset; secondary: 403 with Retry-After)
// on every call the Action makes: each is retried after the wait GitHub
// asks for, and the loop finishes with its PR, reaction and one sticky
// comment.
func TestActionGitHubAPIFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	mainBin, _ := binary(t)
	w := newWorld(t)
	issue := w.gh.AddIssue(repoName, "alice", "calc is broken", "sub adds")
	commentID := w.gh.AddComment(repoName, issue, "alice", "/agent-loop fix the calculator tests")
	payload := commentEvent(issue, commentID, "alice", "/agent-loop fix the calculator tests")
	repo := "/repos/" + repoName
	reset := time.Now().Add(time.Second)
	faults := []githubtest.Fault{
		githubtest.RateLimited("GET", repo+"/collaborators/alice/permission", reset),
		githubtest.ServerError("POST", repo+"/issues/comments/"+itoa(commentID)+"/reactions", 502, 2),
		githubtest.ServerError("GET", repo+"/actions/artifacts", 503, 1),
		githubtest.SecondaryRateLimited("POST", repo+"/pulls", time.Second),
		githubtest.ServerError("POST", repo+"/issues/"+itoa(int64(issue))+"/comments", 500, 1),
		githubtest.RateLimited("GET", repo+"/issues/"+itoa(int64(issue))+"/comments", reset),
		githubtest.ServerError("PATCH", repo+"/issues/comments/*", 502, 1),
	}
	for _, f := range faults {
		w.gh.Fail(f)
	}
	agent := faultAgent(t, w)
	ws := w.checkout("ws")
	s := w.step(ws, "issue_comment", payload, map[string]string{"agent-command": "sh " + agent}, "1")
	err := s.start(t, mainBin, nil).Wait()
	out := s.stdout.String()
	if exitCode(err) != 0 {
		t.Fatalf("exit %d\n%s", exitCode(err), out)
	}
	outputs := fileCommands(t, s.output)
	if outputs["status"] != "completed" || outputs["pr-number"] == "" {
		t.Fatalf("outputs %v\n%s", outputs, out)
	}
	for _, f := range faults {
		if n := w.gh.Hits(f.Method, strings.TrimSuffix(f.Path, "*")); f.Path[len(f.Path)-1] != '*' && n < 2 {
			t.Errorf("%s %s was called %d time(s): the fault was not retried", f.Method, f.Path, n)
		}
	}
	if rs := w.gh.Reactions(repoName, commentID); len(rs) != 1 || rs[0].Content != "eyes" {
		t.Errorf("reactions = %+v, want one eyes", rs)
	}
	if prs := w.gh.PullRequests(repoName); len(prs) != 1 {
		t.Errorf("pull requests = %+v, want 1", prs)
	}
	comments := w.gh.Comments(repoName, issue)
	if n := countSticky(comments, outputs["loop-id"]); n != 1 {
		t.Errorf("%d sticky comments, want 1", n)
	}
	if !strings.Contains(lastSticky(comments, outputs["loop-id"]), "agent-loop completed") {
		t.Errorf("sticky comment:\n%s", lastSticky(comments, outputs["loop-id"]))
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The artifact service fails every request (HTTP 500) while a cancelled
// run's post step uploads the state: the step says so, the state ref keeps
// the state, and the re-run resumes from the state ref and finishes.
func TestActionArtifactServiceDown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	mainBin, postBin := binary(t)
	w := newWorld(t)
	var hits atomic.Int64
	down := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(rw, `{"msg":"internal error"}`, http.StatusInternalServerError)
	}))
	t.Cleanup(down.Close)
	issue := w.gh.AddIssue(repoName, "alice", "calc is broken", "sub adds")
	commentID := w.gh.AddComment(repoName, issue, "alice", "/agent-loop fix the calculator tests")
	payload := commentEvent(issue, commentID, "alice", "/agent-loop fix the calculator tests")

	// Run 1: cancelled while the agent hangs in iteration 2 (the world's
	// agent); the post step cannot upload.
	ws1 := w.checkout("ws1")
	s1 := w.step(ws1, "issue_comment", payload, nil, "1")
	s1.env["ACTIONS_RESULTS_URL"], s1.env["ACTIONS_RUNTIME_URL"] = down.URL+"/", down.URL+"/"
	cmd := s1.start(t, mainBin, nil)
	waitFor(t, filepath.Join(w.work, "hung"))
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCode(cmd.Wait()); code != 1 {
		t.Fatalf("cancelled main exit %d, want 1\n%s", code, s1.stdout.String())
	}
	postOut, saved := s1.runPost(t, postBin, ws1)
	if !strings.Contains(postOut, "uploading the state artifact failed (the state ref keeps it)") || !strings.Contains(postOut, "500") {
		t.Errorf("the post step does not report the failed upload:\n%s", postOut)
	}
	if hits.Load() < 2 {
		t.Errorf("the artifact service was not retried")
	}
	baseID := saved["base_id"]
	stateFiles := git(t, w.bare, "ls-tree", "-r", "--name-only", "refs/agent-loop-state/"+baseID)
	if !strings.Contains(stateFiles, "state.json") {
		t.Fatalf("the state ref holds %q", stateFiles)
	}
	validate(t, []byte(git(t, w.bare, "show", "refs/agent-loop-state/"+baseID+":state.json")), "paused")

	// Run 2 (a fresh runner, the service back): resumes from the state ref.
	ws2 := w.checkout("ws2")
	s2 := w.step(ws2, "issue_comment", payload, nil, "2")
	if code := exitCode(s2.start(t, mainBin, nil).Wait()); code != 0 {
		t.Fatalf("run 2 exit %d\n%s", code, s2.stdout.String())
	}
	if out := s2.stdout.String(); !strings.Contains(out, "restored "+saved["loop_id"]) || !strings.Contains(out, "from the state ref") {
		t.Errorf("run 2 did not resume from the state ref:\n%s", out)
	}
	if outputs := fileCommands(t, s2.output); outputs["status"] != "completed" || outputs["iterations"] != "2" {
		t.Errorf("run 2 outputs %v", outputs)
	}
}
