package process

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func shEnv() []string { return []string{"PATH=" + os.Getenv("PATH")} }

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// waitGone polls until pid no longer exists (zombies of init are reaped fast).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("process %d still alive", pid)
}

func TestRunExitCodeAndOutput(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	res, err := Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", "echo hello; echo oops >&2; exit 3"}, Env: shEnv(), Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Stopped() {
		t.Fatalf("res = %+v", res)
	}
	if got := out.String(); !strings.Contains(got, "hello") || !strings.Contains(got, "oops") {
		t.Fatalf("output %q", got)
	}
}

func TestRunNotFound(t *testing.T) {
	t.Parallel()
	_, err := Run(context.Background(), Spec{Path: "definitely-not-a-program-xyz", Env: shEnv()})
	var nf *NotFoundError
	if err == nil || !asNotFound(err, &nf) {
		t.Fatalf("err = %v, want NotFoundError", err)
	}
}

func asNotFound(err error, nf **NotFoundError) bool {
	e, ok := err.(*NotFoundError)
	*nf = e
	return ok
}

func TestRunTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The leader ignores SIGINT and SIGTERM, and so does its child: only
	// SIGKILL of the whole group ends them.
	script := `trap '' INT TERM; (trap '' INT TERM; sleep 60) & echo $! > ` + pidFile + `; sleep 60`
	start := time.Now()
	res, err := Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", script}, Env: shEnv(), Timeout: 300 * time.Millisecond, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Fatalf("res = %+v, want TimedOut", res)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("took %v", el)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	waitGone(t, pid)
}

func TestRunIdleTimeout(t *testing.T) {
	t.Parallel()
	res, err := Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", "echo start; sleep 30"}, Env: shEnv(), IdleTimeout: 300 * time.Millisecond, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Idle || res.TimedOut {
		t.Fatalf("res = %+v, want Idle", res)
	}
}

func TestRunChattyIsNotIdle(t *testing.T) {
	t.Parallel()
	res, err := Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", "for i in 1 2 3 4 5 6; do echo $i; sleep 0.1; done"}, Env: shEnv(), IdleTimeout: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped() || res.ExitCode != 0 {
		t.Fatalf("res = %+v", res)
	}
}

func TestRunCancelSendsSIGINTFirst(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	res, err := Run(ctx, Spec{Path: "sh", Args: []string{"-c", `trap 'echo got-int; exit 7' INT; while :; do sleep 0.05; done`}, Env: shEnv(), Stdout: &out, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.ExitCode != 7 || !strings.Contains(out.String(), "got-int") {
		t.Fatalf("res = %+v out=%q", res, out.String())
	}
}

func TestRunForkedChildrenDoNotSurvive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The leader exits at once, leaving a background child that holds stdout.
	res, err := Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", "sleep 60 & echo $! > " + pidFile + "; exit 0"}, Env: shEnv(), Stdout: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("res = %+v", res)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	waitGone(t, pid)
}

func TestTailBoundsMemory(t *testing.T) {
	t.Parallel()
	tail := NewTail(1024)
	// 64 MB through a 1 KB tail.
	res, err := Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", "head -c 67108864 /dev/zero | tr '\\0' 'x'; echo END"}, Env: shEnv(), Stdout: tail})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("res = %+v", res)
	}
	s := tail.String()
	if len(s) > 1024 || !strings.HasSuffix(s, "END\n") {
		t.Fatalf("tail len %d suffix %q", len(s), s[len(s)-10:])
	}
	if tail.Dropped() < 60<<20 {
		t.Fatalf("dropped %d", tail.Dropped())
	}
}

func TestSafeEnv(t *testing.T) {
	t.Parallel()
	in := []string{
		"PATH=/bin", "HOME=/root", "CI=true", "GITHUB_REPOSITORY=o/r",
		"GITHUB_TOKEN=ghs_x", "GH_TOKEN=y", "INPUT_GITHUB-TOKEN=z", "INPUT_TASK=t",
		"ACTIONS_RUNTIME_TOKEN=a", "ACTIONS_RESULTS_URL=u", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=b", "ACTIONS_ID_TOKEN_REQUEST_URL=c",
		"GITHUB_OUTPUT=/f", "GITHUB_STEP_SUMMARY=/s", "GITHUB_ENV=/e", "STATE_loop=1",
		"ANTHROPIC_API_KEY=k1", "OPENAI_API_KEY=k2", "NPM_TOKEN=n", "AWS_SECRET_ACCESS_KEY=s", "DB_PASSWORD=p",
	}
	got := Keys(SafeEnv(in, "ANTHROPIC_API_KEY=own"))
	want := []string{"ANTHROPIC_API_KEY", "CI", "GITHUB_REPOSITORY", "HOME", "PATH"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("keys = %v, want %v", got, want)
	}
	if v, _ := Lookup(SafeEnv(in, "ANTHROPIC_API_KEY=own"), "ANTHROPIC_API_KEY"); v != "own" {
		t.Fatalf("provider key = %q", v)
	}
}

// A child really sees only the filtered environment.
func TestChildSeesFilteredEnv(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	env := SafeEnv(append(shEnv(), "GITHUB_TOKEN=ghs_secret", "KEEP=1"))
	if _, err := Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", "env"}, Env: env, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "ghs_secret") || !strings.Contains(out.String(), "KEEP=1") {
		t.Fatalf("child env:\n%s", out.String())
	}
}

func TestKillTagged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	tag := "ralph-test-" + strconv.Itoa(os.Getpid())
	// A process that escaped its group with setsid, as a crashed harness
	// would leave it.
	cmd := exec.Command("setsid", "sh", "-c", "echo $$ > "+pidFile+"; exec sleep 60")
	cmd.Env = append(shEnv(), OwnerVar+"="+tag)
	if err := cmd.Start(); err != nil {
		t.Skip("setsid not available:", err)
	}
	go cmd.Wait()
	deadline := time.Now().Add(3 * time.Second)
	for {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("child did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if n := KillTagged(tag); n < 1 {
		t.Fatalf("KillTagged signalled %d processes", n)
	}
	waitGone(t, pid)
	if n := KillTagged(tag); n != 0 {
		t.Fatalf("second KillTagged signalled %d", n)
	}
}
