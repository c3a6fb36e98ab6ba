package gitrepo

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/loop"
)

// httpRemote serves the bare repositories under root with the real
// git-http-backend (smart HTTP), and answers 401 to any request that does
// not carry basic auth x-access-token:<token>.
func httpRemote(t *testing.T, root, token string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var denied atomic.Int64
	srv, _ := smartHTTP(t, "127.0.0.1:0", root, token, nil, func() { denied.Add(1) })
	return srv, &denied
}

// httpSetup makes a work repository whose origin is a token-protected
// smart-HTTP remote.
func httpSetup(t *testing.T, token string) (dir, bare, url string, denied *atomic.Int64) {
	t.Helper()
	dir = newWorkRepo(t, nil)
	root := t.TempDir()
	bare = filepath.Join(root, "remote.git")
	runGit(t, root, "init", "-q", "--bare", bare)
	runGit(t, dir, "push", "-q", bare, "main")
	srv, denied := httpRemote(t, root, token)
	url = srv.URL + "/remote.git"
	runGit(t, dir, "remote", "add", "origin", url)
	return dir, bare, url, denied
}

func TestPushHTTPWithToken(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // to see that the credential file is removed
	const token = "ghs_s3cretTOKENvalue0123456789"
	dir, bare, _, denied := httpSetup(t, token)
	ctx := ctxT(t)

	r := openRepo(t, dir, Options{Token: token})
	_, base, _ := r.Head(ctx)
	if err := r.StartBranch(ctx, "agent-loop/http", base); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"src/app.go": "package app // http\n"})
	res, err := r.Commit(ctx, loop.CommitRequest{Subject: "iteration 1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, "agent-loop/http"); err != nil {
		t.Fatalf("Push with the token: %v", err)
	}
	if got := runGit(t, bare, "rev-parse", "refs/heads/agent-loop/http"); got != res.SHA {
		t.Errorf("remote branch = %s, want %s", got, res.SHA)
	}
	if denied.Load() == 0 {
		t.Error("the server never asked for credentials: the test does not exercise auth")
	}
	// The token is nowhere on disk afterwards.
	cfg, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
	if strings.Contains(string(cfg), token) {
		t.Error(".git/config holds the token")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "agent-loop-cred-*")); len(left) != 0 {
		t.Errorf("credential files left behind: %v", left)
	}

	// The state ref goes through the same authenticated remote.
	files := map[string][]byte{"state.json": []byte(`{"iteration":1}`), "checkpoints/iteration-001.json.gz": {0x1f, 0x8b, 0}}
	sha, err := r.PushRef(ctx, "refs/agent-loop/ralph-http-01234567", files, "state after iteration 1")
	if err != nil {
		t.Fatalf("PushRef: %v", err)
	}
	if got := runGit(t, bare, "rev-parse", "refs/agent-loop/ralph-http-01234567"); got != sha {
		t.Errorf("remote state ref = %s, want %s", got, sha)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	runGit(t, bare, "clone", "-q", bare, fresh)
	runGit(t, fresh, "remote", "set-url", "origin", runGit(t, dir, "remote", "get-url", "origin"))
	r2 := openRepo(t, fresh, Options{Token: token})
	got, gotSHA, err := r2.FetchRef(ctx, "refs/agent-loop/ralph-http-01234567")
	if err != nil {
		t.Fatalf("FetchRef over HTTP: %v", err)
	}
	if gotSHA != sha {
		t.Errorf("FetchRef sha = %s, want %s", gotSHA, sha)
	}
	if d := cmp.Diff(files, got); d != "" {
		t.Errorf("FetchRef files (-want +got):\n%s", d)
	}
}

func TestPushHTTPAuthFailures(t *testing.T) {
	t.Parallel()
	const token = "ghs_right"
	for _, tc := range []struct{ name, token string }{{"no token", ""}, {"wrong token", "ghs_wrong_value"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, bare, _, denied := httpSetup(t, token)
			ctx := ctxT(t)
			r := openRepo(t, dir, Options{Token: tc.token})
			_, base, _ := r.Head(ctx)
			if err := r.StartBranch(ctx, "loop", base); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Commit(ctx, loop.CommitRequest{Subject: "x"}); err != nil {
				t.Fatal(err)
			}
			err := r.Push(ctx, "loop")
			var pe *PushError
			if !errors.As(err, &pe) || pe.Reason != ReasonAuth {
				t.Fatalf("Push: %v, want a *PushError with reason auth", err)
			}
			if !strings.Contains(err.Error(), "token") {
				t.Errorf("the error does not say what to do: %v", err)
			}
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Errorf("the error shows the token: %v", err)
			}
			if out, err := runGitErr(bare, nil, "rev-parse", "--verify", "-q", "refs/heads/loop"); err == nil {
				t.Errorf("the branch reached the remote without valid credentials: %s", out)
			}
			// Authentication failures are not retried: one attempt, at most
			// two challenges (anonymous, then with the credentials).
			if n := denied.Load(); n > 2 {
				t.Errorf("%d unauthorised requests: auth failures were retried", n)
			}
		})
	}
}

func TestPushNetworkRetries(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	dir := newWorkRepo(t, nil)
	r := openRepo(t, dir, Options{Remote: srv.URL + "/x.git", Token: "t"})
	err := r.Push(ctxT(t), "main")
	var pe *PushError
	if !errors.As(err, &pe) || pe.Reason != ReasonNetwork {
		t.Fatalf("Push to a failing server: %v, want reason network", err)
	}
	if n := hits.Load(); n != pushAttempts {
		t.Errorf("the server saw %d requests, want %d (one push and three retries)", n, pushAttempts)
	}
}

func TestPushNonFastForward(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	bare := newBare(t, dir)
	ctx := ctxT(t)
	r := openRepo(t, dir, Options{})
	_, base, _ := r.Head(ctx)
	if err := r.StartBranch(ctx, "loop", base); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(ctx, loop.CommitRequest{Subject: "one"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, "loop"); err != nil {
		t.Fatal(err)
	}
	// Someone else pushes to the same branch.
	other := filepath.Join(t.TempDir(), "other")
	runGit(t, bare, "clone", "-q", "-b", "loop", bare, other)
	runGit(t, other, "commit", "-q", "--allow-empty", "-m", "theirs")
	runGit(t, other, "push", "-q", "origin", "loop")
	if _, err := r.Commit(ctx, loop.CommitRequest{Subject: "two"}); err != nil {
		t.Fatal(err)
	}
	err := r.Push(ctx, "loop")
	var pe *PushError
	if !errors.As(err, &pe) || pe.Reason != ReasonNonFastForward {
		t.Fatalf("Push: %v, want reason non-fast-forward", err)
	}
	if !strings.Contains(err.Error(), "--branch") {
		t.Errorf("the error does not say what to do: %v", err)
	}

	noRemote := newWorkRepo(t, nil)
	r2 := openRepo(t, noRemote, Options{})
	if err := r2.Push(ctx, "main"); !errors.As(err, &pe) || pe.Reason != ReasonNoRemote {
		t.Errorf("Push without a remote: %v", err)
	}
}

func TestShallowClone(t *testing.T) {
	t.Parallel()
	src := newWorkRepo(t, nil)
	for i := 0; i < 3; i++ {
		writeFiles(t, src, map[string]string{"history.txt": strings.Repeat("x", i+1)})
		runGit(t, src, "add", "-A")
		runGit(t, src, "commit", "-q", "-m", "history")
	}
	bare := newBare(t, src)
	clone := filepath.Join(t.TempDir(), "shallow")
	runGit(t, t.TempDir(), "clone", "-q", "--depth", "1", "file://"+bare, clone)
	if n := runGit(t, clone, "rev-list", "--count", "HEAD"); n != "1" {
		t.Fatalf("clone has %s commits, want a depth-1 clone", n)
	}
	ctx := ctxT(t)
	r := openRepo(t, clone, Options{})
	if !r.Info().Shallow {
		t.Error("Info().Shallow is false for a depth-1 clone")
	}
	_, base, _ := r.Head(ctx)
	if err := r.StartBranch(ctx, "agent-loop/shallow", base); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, clone, map[string]string{"src/app.go": "package app // shallow\n"})
	if _, err := r.Diff(ctx, base); err != nil {
		t.Fatal(err)
	}
	res, err := r.Commit(ctx, loop.CommitRequest{Subject: "iteration 1",
		Trailers: []loop.Trailer{{Key: "Agent-Loop-Iteration", Value: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, "agent-loop/shallow"); err != nil {
		t.Fatalf("Push from a shallow clone: %v", err)
	}
	if got := runGit(t, bare, "rev-parse", "refs/heads/agent-loop/shallow"); got != res.SHA {
		t.Errorf("remote branch = %s, want %s", got, res.SHA)
	}
	runGit(t, bare, "fsck", "--strict", "--no-progress")
	privGit(t, r, "fsck", "--strict", "--no-progress")
	hist, err := r.History(ctx, "agent-loop/shallow", base)
	if err != nil || len(hist) != 1 || hist[0].Trailers["Agent-Loop-Iteration"] != "1" {
		t.Errorf("History in a shallow clone: %+v %v", hist, err)
	}
	if _, err := r.PushRef(ctx, "refs/agent-loop/shallow", map[string][]byte{"state.json": []byte("{}")}, "state"); err != nil {
		t.Errorf("PushRef from a shallow clone: %v", err)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	for out, want := range map[string]string{
		" ! [rejected]        loop -> loop (non-fast-forward)":                               ReasonNonFastForward,
		"! [rejected] loop -> loop (fetch first)":                                            ReasonNonFastForward,
		"fatal: Authentication failed for 'https://github.com/o/r.git/'":                     ReasonAuth,
		"fatal: could not read Username for 'https://github.com': terminal prompts disabled": ReasonAuth,
		"remote: Permission to o/r.git denied to github-actions[bot].\nfatal: unable to access 'https://github.com/o/r.git/': The requested URL returned error: 403": ReasonAuth,
		"fatal: unable to access 'https://github.com/o/r.git/': Could not resolve host: github.com":                                                                  ReasonNetwork,
		"error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502":                                                                                  ReasonNetwork,
		"fatal: unable to access 'http://127.0.0.1:40123/x.git/': Failed to connect to 127.0.0.1 port 40123":                                                         ReasonNetwork,
		" ! [remote rejected] loop -> loop (refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` permission)":  ReasonWorkflowPermission,
		" ! [remote rejected] main -> main (protected branch hook declined)":                                                                                         ReasonRejected,
		"fatal: '/srv/gone.git' does not appear to be a git repository\nfatal: Could not read from remote repository.":                                               ReasonNoRemote,
		"ssh: connect to host example.com port 22: Connection refused\nfatal: Could not read from remote repository.":                                                ReasonNetwork,
		"fatal: something new": ReasonUnknown,
	} {
		if got := classify(out); got != want {
			t.Errorf("classify(%q) = %s, want %s", out, got, want)
		}
	}
}

func TestFetchBranch(t *testing.T) {
	t.Parallel()
	src := newWorkRepo(t, nil)
	bare := newBare(t, src)
	base := runGit(t, src, "rev-parse", "HEAD")
	runGit(t, src, "checkout", "-q", "-b", "agent-loop/x")
	runGit(t, src, "commit", "-q", "--allow-empty", "-m", "on the loop branch")
	writeFiles(t, src, map[string]string{"src/app.go": "package app // iteration 2\n"})
	runGit(t, src, "commit", "-q", "-am", "iteration 2")
	runGit(t, src, "push", "-q", "origin", "agent-loop/x")
	want := runGit(t, src, "rev-parse", "HEAD")

	clone := filepath.Join(t.TempDir(), "shallow")
	runGit(t, t.TempDir(), "clone", "-q", "--depth", "1", "file://"+bare, clone)
	r := openRepo(t, clone, Options{})
	ctx := ctxT(t)
	got, err := r.FetchBranch(ctx, "agent-loop/x")
	if err != nil || got != want {
		t.Fatalf("FetchBranch = %s, %v; want %s", got, err, want)
	}
	if err := r.StartBranch(ctx, "agent-loop/x", got); err != nil {
		t.Fatal(err)
	}
	if err := r.ResetTo(ctx, got); err != nil {
		t.Fatal(err)
	}
	// A resume reads the loop's history and diffs from its base: both from
	// the trusted store, which the fetch filled (checked by index-pack).
	if hist, err := r.History(ctx, "agent-loop/x", base); err != nil || len(hist) != 2 || hist[1].SHA != want {
		t.Errorf("History after the fetch: %+v %v", hist, err)
	}
	if d, err := r.Diff(ctx, base); err != nil || !strings.Contains(d, "iteration 2") {
		t.Errorf("Diff from the base after the fetch: %v\n%s", err, d)
	}
	privGit(t, r, "fsck", "--strict", "--no-progress")
	runGit(t, clone, "fsck", "--strict", "--no-progress")
	if _, err := r.FetchBranch(ctx, "nope"); err == nil {
		t.Error("FetchBranch of a branch that exists nowhere succeeded")
	}
	if _, err := r.FetchBranch(ctx, "x:refs/heads/main"); err == nil {
		t.Error("FetchBranch accepted a refspec as branch name")
	}
}
