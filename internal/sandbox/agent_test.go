package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/fakemodel"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/provider"
)

// agentCLI finds a real agent CLI (AGENT_LOOP_CLI_BIN, as the provider
// tests) and puts a hard link to it where the sandbox user can run it:
// the CI installs them under /root, which only root can enter.
func agentCLI(t *testing.T, program, dir string) string {
	t.Helper()
	p := ""
	if d := os.Getenv("AGENT_LOOP_CLI_BIN"); d != "" {
		p = filepath.Join(d, program)
	} else if lp, err := exec.LookPath(program); err == nil {
		p = lp
	}
	real, err := filepath.EvalSymlinks(p)
	if p == "" || err != nil {
		msg := program + " CLI not installed: run `bash .ci/install-agents.sh` and set AGENT_LOOP_CLI_BIN"
		if os.Getenv("AGENT_LOOP_REQUIRE_CLIS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	link := filepath.Join(dir, program)
	if err := os.Link(real, link); err != nil {
		// Another filesystem: a copy.
		b, err := os.ReadFile(real)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(link, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return link
}

// The real Claude Code CLI runs inside the sandbox as the separate user:
// it reads and writes the work tree (its Read and Write tools), runs a
// shell command, keeps its configuration in AgentDir, and cannot reach the
// harness's private directory. This is what the Action does.
func TestRealAgentInSandbox(t *testing.T) {
	needRoot(t)
	f := newFixture(t, true)
	bindir := filepath.Join(f.base, "bin")
	mkdir(t, bindir, 0o755, 0)
	bin := agentCLI(t, "claude", bindir)
	writeOwned(t, filepath.Join(f.wt, "answer.txt"), "answer=41\n", 0o644, ownerUID)
	gitRepo(t, f.wt, ownerUID)
	var log bytes.Buffer
	sb, err := New(Options{WorkTree: f.wt, PrivateBase: filepath.Join(f.base, "priv"), Protect: f.protect, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	if err := sb.CheckExec(bin); err != nil {
		t.Fatal(err)
	}
	if err := sb.CheckExec("/root/.cache/x"); err == nil || !strings.Contains(err.Error(), "cannot run") {
		t.Errorf("CheckExec of a path under /root: %v", err)
	}

	secret := filepath.Join(sb.PrivateDir(), "secret")
	if err := os.WriteFile(secret, []byte("ghs_token"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runClaude(sb, bin, f.wt, secret)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(f.wt, name))
		return strings.TrimSpace(string(b))
	}
	if got := read("answer.txt"); got != "answer=42" {
		t.Errorf("answer.txt = %q; the CLI's Write tool did not edit the work tree\n%s", got, out)
	}
	if got := read("uid.txt"); got != strconv.Itoa(sb.UID()) {
		t.Errorf("the agent's shell ran as uid %q, want the sandbox user's %d", got, sb.UID())
	}
	if got := read("home.txt"); got != sb.Home() {
		t.Errorf("HOME = %q, want %s", got, sb.Home())
	}
	if got := read("stolen.txt"); strings.Contains(got, "ghs_token") || !strings.Contains(got, "ermission denied") {
		t.Errorf("reading the private directory: %q", got)
	}
	if got := read("git.txt"); strings.Contains(got, "dubious") || strings.Contains(got, "fatal") {
		t.Errorf("the agent's git cannot read the repository: %q", got)
	}
	if b, _ := os.ReadFile(secret); string(b) != "ghs_token" {
		t.Errorf("the private file was written: %q", b)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	// Given back: every file of the work tree is the owner's again.
	err = filepath.Walk(f.wt, func(p string, fi os.FileInfo, err error) error {
		if err == nil && ownerOf(fi) != ownerUID {
			t.Errorf("%s belongs to uid %d after Close, want the owner %d", p, ownerOf(fi), ownerUID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", log.String())
}

// gitRepo makes dir a git repository with one commit, all of it uid's.
func gitRepo(t *testing.T, dir string, uid int) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "start"}} {
		cmd := exec.Command("git", append([]string{"-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			err = os.Lchown(p, uid, uid)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ownerOf(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// runClaude runs the real Claude Code CLI in sb against the fake model:
// it reads and writes answer.txt in wt, then runs a shell command that
// records its uid and HOME, tries to read secret and runs git status.
func runClaude(sb *Sandbox, bin, wt, secret string) (string, error) {
	answer := filepath.Join(wt, "answer.txt")
	// Claude Code's own permission mode asks before a command that writes
	// outside the work tree; a script it runs does not ask (and is what a
	// hostile agent would write).
	look := "id -u > uid.txt; echo $HOME > home.txt; cat " + secret + " > stolen.txt 2>&1; echo forged >> " + secret + "; git status --short > git.txt 2>&1; true\n"
	if err := os.WriteFile(filepath.Join(wt, "look.sh"), []byte(look), 0o644); err != nil {
		return "", err
	}
	srv := fakemodel.Start(fakemodel.Script{Steps: []fakemodel.Step{
		{Text: "I will fix answer.txt.", ToolCalls: []fakemodel.ToolCall{{Name: "Read", Input: map[string]any{"file_path": answer}}}},
		{ToolCalls: []fakemodel.ToolCall{{Name: "Write", Input: map[string]any{"file_path": answer, "content": "answer=42\n"}}}},
		{ToolCalls: []fakemodel.ToolCall{{Name: "Bash", Input: map[string]any{
			"command":     "sh look.sh",
			"description": "Look around"}}}},
		{Text: "Fixed"},
	}})
	defer srv.Close()
	a, err := provider.New("claude", provider.Config{Binary: bin, Credentials: map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test"},
		StateDir: sb.AgentDir(), MaxTurns: 8})
	if err != nil {
		return "", err
	}
	env := process.SafeEnv([]string{"PATH=" + filepath.Dir(bin) + ":/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "TERM=dumb",
		"HOME=" + os.Getenv("HOME"), "ANTHROPIC_BASE_URL=" + srv.URL, "CLAUDE_CODE_MAX_RETRIES=1", "NO_PROXY=127.0.0.1,localhost",
		"GITHUB_TOKEN=ghs_harness_secret", "GORACE=" + os.Getenv("GORACE")})
	var out bytes.Buffer
	ctx := process.WithJail(context.Background(), sb)
	res, err := a.Run(ctx, loop.AgentRequest{LoopID: "ralph-sbx-0000abcd", Iteration: 1, Task: "fix", Criterion: "true",
		Prompt: "Fix answer.txt.", Dir: wt, Env: env, Output: &out, Timeout: 2 * time.Minute, IdleTimeout: time.Minute})
	if err != nil {
		return out.String(), err
	}
	if res.Class != loop.ClassNone || res.ExitCode != 0 {
		return out.String(), fmt.Errorf("class %q exit %d (%s)", res.Class, res.ExitCode, res.Detail)
	}
	return out.String(), nil
}

// The same without root: the harness runs as an unprivileged uid (this
// binary re-executed), the CLI as that uid under Landlock and in a PID
// namespace; it edits the work tree and cannot write the private
// directory (it can read it: the same user).
func TestRealAgentWithoutRoot(t *testing.T) {
	needRoot(t)
	f := newFixture(t, false)
	bindir := filepath.Join(f.base, "bin")
	mkdir(t, bindir, 0o755, 0)
	bin := agentCLI(t, "claude", bindir)
	writeOwned(t, filepath.Join(f.wt, "answer.txt"), "answer=41\n", 0o644, harnessUID)
	gitRepo(t, f.wt, harnessUID)
	sc := f.sc
	sc.Claude = bin
	res, err := runHarness(sc, harnessUID, f.env)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 || res.Results[0].Err != "" {
		t.Fatalf("claude in the sandbox: %+v\n%s", res.Results, res.Log)
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(f.wt, name))
		return strings.TrimSpace(string(b))
	}
	if got := read("answer.txt"); got != "answer=42" {
		t.Errorf("answer.txt = %q\n%s", got, res.Results[0].Output)
	}
	if got := read("uid.txt"); got != strconv.Itoa(harnessUID) {
		t.Errorf("uid %q, want the harness's %d", got, harnessUID)
	}
	if got := read("git.txt"); strings.Contains(got, "fatal") {
		t.Errorf("git status: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(res.Private, "secret")); string(b) != "ghs_token" {
		t.Errorf("the private file was written: %q", b)
	}
	t.Log(res.Layers)

	// Without Landlock the same script writes it: the check can fail.
	writeOwned(t, filepath.Join(f.wt, "answer.txt"), "answer=41\n", 0o644, harnessUID)
	sc.Weak = []string{"noLandlock"}
	if res, err = runHarness(sc, harnessUID, f.env); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(res.Private, "secret")); !strings.Contains(string(b), "forged") {
		t.Errorf("weakened (no Landlock): the private file = %q, want the agent's write; the check cannot fail", b)
	}
}
