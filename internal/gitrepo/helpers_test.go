package gitrepo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixedNow is the harness clock in tests.
func fixedNow() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

// gitEnv is the environment of the test's own git commands (the "real
// peer"): no user or system configuration.
func gitEnv(extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "LANG=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_AUTHOR_DATE=@1700000000 +0000", "GIT_COMMITTER_DATE=@1700000000 +0000",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*",
	}
	return append(env, extra...)
}

// runGit runs the real git CLI in dir and returns its trimmed stdout.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := runGitErr(dir, nil, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimRight(out, "\n")
}

func runGitErr(dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// writeFiles writes path -> content under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newWorkRepo creates a repository on branch main with one commit.
func newWorkRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "init", "-q", "-b", "main")
	if files == nil {
		files = map[string]string{"README.md": "# demo\n", "src/app.go": "package app\n\nfunc A() int { return 1 }\n",
			"src/app_test.go": "package app\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif A() != 1 {\n\t\tt.Fatal(\"A\")\n\t}\n}\n",
			".gitignore":      "node_modules/\n"}
	}
	writeFiles(t, dir, files)
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// newBare creates a bare repository and adds it as origin of dir.
func newBare(t testing.TB, dir string) string {
	t.Helper()
	bare := filepath.Join(t.TempDir(), "remote.git")
	runGit(t, t.TempDir(), "init", "-q", "--bare", "-b", "main", bare)
	if dir != "" {
		runGit(t, dir, "remote", "add", "origin", bare)
		runGit(t, dir, "push", "-q", "origin", "main")
	}
	return bare
}

// openRepo opens dir with test options.
func openRepo(t testing.TB, dir string, opts Options) *Repo {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedNow
	}
	r, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	r.retryDelay = 10 * time.Millisecond
	t.Cleanup(func() { r.Close() })
	return r
}

// privGit runs the real git CLI on the harness's private git directory (the
// trusted store) and returns its trimmed stdout.
func privGit(t testing.TB, r *Repo, args ...string) string {
	t.Helper()
	if r.p == nil {
		t.Fatal("the private git directory is not open yet")
	}
	return runGit(t, r.root, append([]string{"--git-dir=" + r.p.gitDir()}, args...)...)
}

// randName returns a random suffix for marker files.
func randName(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// onLoopBranch opens dir and starts the branch "loop" at its HEAD, as the
// engine does before the first iteration; it returns the repository, a
// test context and the base commit.
func onLoopBranch(t *testing.T, dir string) (*Repo, context.Context, string) {
	t.Helper()
	e := openProbe(t, dir, "", weakness{}, Options{})
	return e.r, e.ctx, e.base
}
