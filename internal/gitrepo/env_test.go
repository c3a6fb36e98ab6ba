package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChildEnvironment looks at the environment git's own children get: a
// trusted ssh command (GIT_SSH_COMMAND in the harness's environment when
// the repository is opened) dumps it during a push.
func TestChildEnvironment(t *testing.T) {
	secrets := map[string]string{
		"GITHUB_TOKEN": "ghs_harness_secret_1", "ACTIONS_RUNTIME_TOKEN": "runtime_secret_2",
		"ANTHROPIC_API_KEY": "sk-ant-secret-3", "INPUT_GITHUB-TOKEN": "input_secret_4",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	const token = "ghs_options_token_value_5"
	dir := newWorkRepo(t, nil)
	out := filepath.Join(t.TempDir(), "env")
	t.Setenv("GIT_SSH_COMMAND", "env > "+out+"; false")
	runGit(t, dir, "remote", "add", "origin", "ssh://git@example.invalid/o/r.git")
	r := openRepo(t, dir, Options{Token: token})
	if err := r.Push(ctxT(t), "main"); err == nil {
		t.Fatal("push through a failing ssh command succeeded")
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the ssh command did not run: %v", err)
	}
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, _, _ := strings.Cut(line, "=")
		keys = append(keys, k)
	}
	t.Logf("child environment: %s", strings.Join(keys, " "))
	allowed := map[string]bool{"PATH": true, "HOME": true, "LANG": true, "LC_ALL": true, "TMPDIR": true, "PWD": true,
		"SHLVL": true, "_": true, "OLDPWD": true, "SSH_AUTH_SOCK": true}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		key, val, _ := strings.Cut(line, "=")
		if !allowed[key] && !strings.HasPrefix(key, "GIT_") {
			t.Errorf("child environment holds %s", key)
		}
		for _, s := range append([]string{token}, valuesOf(secrets)...) {
			if strings.Contains(val, s) {
				t.Errorf("child environment leaks a secret in %s", key)
			}
		}
	}
	// (git itself removes GIT_DIR and the other repository variables
	// from the environment of the ssh command.)
	for _, want := range []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LANG=C", "GIT_TERMINAL_PROMPT=0",
		"HOME=" + r.p.home()} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("child environment lacks %s", want)
		}
	}
	if !strings.Contains(string(b), "=safe.directory\n") {
		t.Error("safe.directory is not set through GIT_CONFIG_KEY_n")
	}
}

func valuesOf(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestInfoLFS(t *testing.T) {
	t.Parallel()
	plain := newWorkRepo(t, nil)
	if openRepo(t, plain, Options{}).Info().LFS {
		t.Error("Info().LFS is true without LFS attributes")
	}
	lfs := newWorkRepo(t, map[string]string{"a.txt": "a\n", "assets/.gitattributes": "*.psd filter=lfs diff=lfs merge=lfs -text\n"})
	info := openRepo(t, lfs, Options{})
	if !info.Info().LFS {
		t.Error("Info().LFS is false with filter=lfs in assets/.gitattributes")
	}
	if info.Info().Shallow || len(info.Info().Fallback) != 0 {
		t.Errorf("Info() = %+v", info.Info())
	}
}

// TestIncludedConfigChanges: the agent edits a file the trusted
// .git/config includes (a command, a credential helper, a URL rewrite).
// The harness's git never reads the repository's configuration: nothing
// runs, the push goes to the URL recorded when the loop started, and the
// harness keeps working (the old harness refused once it saw the rewrite).
func TestIncludedConfigChanges(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, map[string]string{"repo.gitconfig": "[core]\n\teditor = vi\n"})
	runGit(t, dir, "config", "include.path", "../repo.gitconfig")
	remote := "ssh://git@127.0.0.1/x.git" // nothing listens: the connection is refused
	r := openRepo(t, dir, Options{Remote: remote})
	ctx := ctxT(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	if _, err := r.Dirty(ctx); err != nil {
		t.Fatal(err)
	}

	// The agent edits the included file: a command, a credential helper.
	writeFiles(t, dir, map[string]string{"repo.gitconfig": "[core]\n\teditor = vi\n\tsshCommand = \"touch " + marker + "; ssh\"\n" +
		"[credential]\n\thelper = \"!touch " + marker + "; echo\"\n"})
	err := r.Push(ctx, "main")
	if err == nil {
		t.Fatal("push to a closed port succeeded")
	}
	if fileExists(marker) {
		t.Fatal("the harness ran the included core.sshCommand")
	}
	// The attack is live for plain git in the same repository.
	runGitErr(dir, nil, "ls-remote", remote)
	if !fileExists(marker) {
		t.Fatal("plain git did not run the included sshCommand: the test proves nothing")
	}
	os.Remove(marker)

	// A URL rewrite in the included file does not redirect the harness.
	evil := newBare(t, "")
	writeFiles(t, dir, map[string]string{"repo.gitconfig": "[core]\n\teditor = vi\n[url \"" + evil + "\"]\n\tinsteadOf = " + remote + "\n"})
	var pe *PushError
	if err := r.Push(ctx, "main"); !errors.As(err, &pe) || pe.Reason != ReasonNetwork || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("Push with an included insteadOf: %v, want the refused connection to the recorded URL", err)
	}
	if out, err := runGitErr(evil, nil, "rev-parse", "--verify", "-q", "refs/heads/main"); err == nil {
		t.Errorf("the push went to the rewritten URL: %s", out)
	}
	if _, err := runGitErr(dir, nil, "push", "-q", remote, "main"); err != nil {
		t.Fatalf("plain git did not follow the rewrite: the test proves nothing: %v", err)
	}
	if _, err := r.Dirty(ctx); err != nil {
		t.Errorf("Dirty with an included insteadOf: %v", err)
	}
}

// TestSSHCommandRecorded: core.sshCommand as the repository said when the
// loop started (a deploy key, a wrapper outside the work tree) is how the
// harness reaches an ssh remote; the agent's later edit is not; a command
// in the work tree (the agent could rewrite it) is refused.
func TestSSHCommandRecorded(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, nil)
	used, edited := filepath.Join(t.TempDir(), "used"), filepath.Join(t.TempDir(), "edited")
	runGit(t, dir, "remote", "add", "origin", "ssh://git@example.invalid/o/r.git")
	runGit(t, dir, "config", "core.sshCommand", "touch "+used+"; false")
	r := openRepo(t, dir, Options{})
	runGit(t, dir, "config", "core.sshCommand", "touch "+edited+"; false")
	if err := r.Push(ctxT(t), "main"); err == nil {
		t.Fatal("push through a failing ssh command succeeded")
	}
	if !fileExists(used) || fileExists(edited) {
		t.Errorf("recorded command ran: %v; edited command ran: %v", fileExists(used), fileExists(edited))
	}
	inTree := newWorkRepo(t, nil)
	runGit(t, inTree, "config", "core.sshCommand", "sh "+filepath.Join(inTree, "tools", "ssh.sh"))
	if _, err := Open(inTree, Options{}); err == nil || !strings.Contains(err.Error(), "GIT_SSH_COMMAND") {
		t.Errorf("a core.sshCommand in the work tree: Open = %v", err)
	}
}
