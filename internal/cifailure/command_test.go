package cifailure

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCommand runs a criterion's command as the check does: sh -c at the
// repository root.
func runCommand(t *testing.T, dir, command string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("running the command: %v\n%s", err, out)
	return "", -1
}

func TestCommandRunsEveryStepAsTheRunnerDoes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	dir := t.TempDir()
	for _, d := range []string{"web", "api dir"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hostile := `it's $(touch pwned) ` + "`touch pwned2`" + ` "quoted" ; touch pwned3`
	c := &Criterion{
		RunURL: "https://github.com/o/r/actions/runs/1\ntouch pwned4",
		Env:    []EnvVar{{"CI", "true"}, {"GITHUB_OUTPUT", "/dev/null"}},
		Steps: []Step{
			{Job: "test (ubuntu-latest, 20)", Name: "fails first", WorkingDirectory: "web",
				Run:   "echo \"in $(basename \"$PWD\") with $NODE_VERSION and $CI\"\nfalse\necho not reached",
				Shell: Shell{Name: "bash", Argv: []string{"bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "{0}"}, Ext: ".sh"},
				Env:   []EnvVar{{"NODE_VERSION", "20"}}},
			{Job: hostile, Name: hostile, WorkingDirectory: "api dir",
				Run:   "printf '%s\\n' \"$VALUE\"\necho out=1 >> \"$GITHUB_OUTPUT\"\nexit 0",
				Shell: Shell{Argv: []string{"bash", "-e", "{0}"}, Ext: ".sh"},
				Env:   []EnvVar{{"VALUE", hostile}}},
			{Name: "pipefail", Run: "false | true\necho after-pipe",
				Shell: Shell{Name: "bash", Argv: []string{"bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "{0}"}, Ext: ".sh"}},
			{Name: "no pipefail by default", Run: "false | true\necho default-shell-goes-on",
				Shell: Shell{Argv: []string{"bash", "-e", "{0}"}, Ext: ".sh"}},
		},
	}
	cmd, err := c.Command()
	if err != nil {
		t.Fatal(err)
	}
	out, code := runCommand(t, dir, cmd)
	if code == 0 {
		t.Errorf("a failed step must fail the command; output:\n%s", out)
	}
	for _, want := range []string{"in web with 20 and true", hostile, "default-shell-goes-on", "== step 4 of 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"not reached", "after-pipe"} {
		if strings.Contains(out, bad) {
			t.Errorf("output has %q: -e or pipefail not applied:\n%s", bad, out)
		}
	}
	for _, f := range []string{"pwned", "pwned2", "pwned3", "pwned4"} {
		for _, d := range []string{dir, filepath.Join(dir, "web"), filepath.Join(dir, "api dir")} {
			if _, err := os.Stat(filepath.Join(d, f)); err == nil {
				t.Errorf("%s was created: text reached the shell unquoted", filepath.Join(d, f))
			}
		}
	}

	// Every step passing: the command passes.
	c.Steps = c.Steps[1:2]
	cmd, _ = c.Command()
	if out, code := runCommand(t, dir, cmd); code != 0 {
		t.Errorf("exit %d for a passing step:\n%s", code, out)
	}
}

// TestCommandQuotingCanFail runs the same hostile text through a command
// built without quoting, to show the probe above detects injection.
func TestCommandQuotingCanFail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	naive := "printf '%s\\n' " + `it is $(touch pwned)`
	runCommand(t, dir, naive)
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err != nil {
		t.Fatal("the unquoted text did not run: the probe cannot see injection")
	}
}

func TestCommandSetupStopsAtFirstFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sh := Shell{Name: "sh", Argv: []string{"sh", "-e", "{0}"}, Ext: ".sh"}
	c := &Criterion{Setup: []Step{{Name: "a", Run: "exit 3", Shell: sh}, {Name: "b", Run: "touch second", Shell: sh}}}
	cmd, err := c.SetupCommand()
	if err != nil {
		t.Fatal(err)
	}
	if _, code := runCommand(t, dir, cmd); code == 0 {
		t.Error("a failed setup step must fail the setup")
	}
	if _, err := os.Stat(filepath.Join(dir, "second")); err == nil {
		t.Error("setup went on after a failed step")
	}
	if s, _ := (&Criterion{}).SetupCommand(); s != "" {
		t.Errorf("no setup: %q", s)
	}
}

func TestCommandPythonAndTemplates(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	sh, err := resolveShell("python", func(p string) (string, error) {
		if p == "python3" {
			return py, nil
		}
		return "", errors.New("not found")
	})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := resolveShell(`sh -c ". {0}"`, exec.LookPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &Criterion{Steps: []Step{
		{Name: "py", Run: "import os\nprint('py', os.environ['X'])", Shell: sh, Env: []EnvVar{{"X", "1"}}},
		{Name: "tpl", Run: "echo tpl-ran", Shell: tpl},
	}}
	cmd, err := c.Command()
	if err != nil {
		t.Fatal(err)
	}
	out, code := runCommand(t, dir, cmd)
	if code != 0 || !strings.Contains(out, "py 1") || !strings.Contains(out, "tpl-ran") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestResolveShell(t *testing.T) {
	t.Parallel()
	only := func(progs ...string) func(string) (string, error) {
		return func(p string) (string, error) {
			for _, q := range progs {
				if p == q {
					return "/usr/bin/" + p, nil
				}
			}
			return "", errors.New("not found")
		}
	}
	tests := []struct {
		spec    string
		look    func(string) (string, error)
		want    string
		wantErr string
	}{
		{"", only("bash", "sh"), "bash -e {0}", ""},
		{"", only("sh"), "sh -e {0}", ""},
		{"bash", only("bash"), "bash --noprofile --norc -e -o pipefail {0}", ""},
		{"sh", only("sh"), "sh -e {0}", ""},
		{"python", only("python"), "python {0}", ""},
		{"pwsh", only("pwsh"), "pwsh -command . '{0}'", ""},
		{"pwsh", only("bash"), "", "pwsh is not installed"},
		{"cmd", only("bash"), "", "only on Windows"},
		{"perl {0}", only("perl"), "perl {0}", ""},
		{"bash -l {0}", only("bash"), "bash -l {0}", ""},
		{"perl", only("perl"), "", "not bash, sh, python, pwsh or a template"},
		{"perl -w", only("perl"), "", "has no {0}"},
		{"fish {0}", only("bash"), "", "fish is not installed"},
	}
	for _, tt := range tests {
		got, err := resolveShell(tt.spec, tt.look)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.spec, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.spec, err)
		case got.String() != tt.want:
			t.Errorf("%q: %q, want %q", tt.spec, got.String(), tt.want)
		}
	}
}

func TestCommandTooLong(t *testing.T) {
	t.Parallel()
	c := &Criterion{Steps: []Step{{Name: "big", Run: strings.Repeat("x", MaxCommandBytes), Shell: Shell{Argv: []string{"sh", "-e", "{0}"}}}}}
	if _, err := c.Command(); err == nil || !strings.Contains(err.Error(), "completion input") {
		t.Errorf("a command over the bound: %v", err)
	}
	if _, err := (&Criterion{}).Command(); err == nil {
		t.Error("an empty criterion made a command")
	}
}
