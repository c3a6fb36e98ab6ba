package gitrepo

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
)

// childEnv marks the test binary re-run as an unprivileged user.
const childEnv = "GITREPO_UNREADABLE_CHILD"

// TestUnreadableFiles: files and a directory the agent made unreadable to
// the harness are left out of the commit and reported; `git add -A`, what
// the previous harness ran, fails on them outright. The harness must not be
// root for a mode to stop it: as root, the test runs itself again as
// nobody.
func TestUnreadableFiles(t *testing.T) {
	if os.Getenv(childEnv) == "" && os.Geteuid() == 0 {
		runAsNobody(t, "^TestUnreadableFiles$")
		return
	}
	e := newProbe(t, weakness{}, Options{})
	writeFiles(t, e.dir, map[string]string{"README.md": "readable change\n", "secret.txt": "s\n", "locked/inside.txt": "x\n",
		"src/app.go": "package app // changed, then locked\n"})
	for _, p := range []string{"secret.txt", "src/app.go", "locked"} {
		if err := os.Chmod(filepath.Join(e.dir, p), 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(e.dir, "locked"), 0o755) })
	if out, err := runGitErr(e.dir, nil, "add", "-A"); err == nil || !strings.Contains(out, "Permission denied") {
		t.Fatalf("git add -A on unreadable files: %v %s: the probe proves nothing (running as uid %d)", err, out, os.Geteuid())
	}
	runGit(t, e.dir, "reset", "-q")
	d := e.judge(t)
	if !strings.Contains(d, "+readable change") {
		t.Errorf("the readable change is not in the diff:\n%s", d)
	}
	got := map[string]string{}
	for _, n := range e.r.Notices() {
		got[n.Path] = n.Kind
	}
	for _, p := range []string{"secret.txt", "src/app.go", "locked"} {
		if got[p] != NoticeUnreadable {
			t.Errorf("notice for %s = %q, want %q (all: %v)", p, got[p], NoticeUnreadable, got)
		}
	}
	res := e.publish(t, map[string]string{"README.md": "readable change\n", "src/app.go": "package app\n\nfunc A() int { return 1 }\n",
		"secret.txt": ""})
	if want := []string{"locked", "secret.txt", "src/app.go"}; !slices.Equal(res.Excluded, want) {
		t.Errorf("Excluded = %v, want %v", res.Excluded, want)
	}
	if _, err := e.r.Commit(e.ctx, loop.CommitRequest{Subject: "again"}); err != nil {
		t.Errorf("a second commit with the files still unreadable: %v", err)
	}
}

// runAsNobody runs the test binary's test named by pattern as uid/gid
// 65534 in a directory that user owns, and fails with its output.
func runAsNobody(t *testing.T, pattern string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "gitrepo-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "gitrepo.test")
	in, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	in.Close()
	out.Close()
	tmp := filepath.Join(dir, "tmp")
	for _, p := range []string{dir, tmp} {
		os.MkdirAll(p, 0o755)
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Skipf("cannot hand a directory to nobody: %v", err)
		}
		os.Chmod(p, 0o755)
	}
	cmd := exec.Command(bin, "-test.run="+pattern, "-test.v", "-test.count=1")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp, childEnv + "=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test as nobody failed: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "--- PASS") {
		t.Fatalf("the test as nobody did not run:\n%s", b)
	}
	t.Logf("as nobody:\n%s", b)
}
