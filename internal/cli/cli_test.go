package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/sandbox/sandboxtest"
	"github.com/aiwg/agent-loop/internal/spec"
)

// /dev/null is a character device but not a terminal: nobody can answer.
func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	if New("").IsTerminal() {
		t.Fatal("/dev/null taken for a terminal")
	}
}

func TestUsageAndUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errOut, Environ: func() []string { return nil }}
	if code := c.Main([]string{"nope"}); code != 2 || !strings.Contains(errOut.String(), `unknown command "nope"`) {
		t.Fatalf("code %d: %s", code, errOut.String())
	}
	if code := c.Main([]string{"--help"}); code != 0 || !strings.Contains(out.String(), "agent-loop run [flags] TASK") {
		t.Fatalf("help: %d %s", code, out.String())
	}
	out.Reset()
	if code := c.Main([]string{"version"}); code != 0 || !strings.HasPrefix(out.String(), "agent-loop ") {
		t.Fatalf("version: %d %q", code, out.String())
	}
}

// `agent-loop run -h` and `resume -h` say what the parameter table says:
// every flag of the table with its help and default, and no other flag
// but -C.
func TestHelpMatchesTheTable(t *testing.T) {
	for _, tc := range []struct {
		cmd    string
		params []*spec.Param
		own    []string
		resume bool
	}{
		{"run", spec.Params(), []string{"C"}, false},
		{"resume", spec.ResumeParams(), []string{"C", "approve", "reject"}, true},
	} {
		var out, errOut bytes.Buffer
		c := &Command{Stdout: &out, Stderr: &errOut, Environ: func() []string { return nil }}
		if code := c.Main([]string{tc.cmd, "-h"}); code != 0 {
			t.Fatalf("%s -h: exit %d", tc.cmd, code)
		}
		help := errOut.String()
		seen := map[string]bool{}
		for _, line := range strings.Split(help, "\n") {
			if f, ok := strings.CutPrefix(line, "  -"); ok {
				seen[strings.TrimPrefix(strings.Fields(f)[0], "-")] = true
			}
		}
		want := map[string]bool{}
		for _, o := range tc.own {
			want[o] = true
		}
		for _, p := range tc.params {
			if p.Flag == "" {
				continue
			}
			want[p.Flag] = true
			entry := "  " + p.FlagName() + "\n        " + p.Help
			if tc.resume && !p.IsSwitch() {
				entry += " (default: the loop's own)"
			} else if d := p.FlagDefault(); d != "" {
				entry += " (default: " + d + ")"
			}
			if !strings.Contains(help, entry+"\n") {
				t.Errorf("%s -h lacks the table's entry %q", tc.cmd, entry)
			}
		}
		for f := range seen {
			if !want[f] {
				t.Errorf("%s -h shows -%s, which the parameter table does not declare", tc.cmd, f)
			}
		}
		for f := range want {
			if !seen[f] {
				t.Errorf("%s -h does not show -%s", tc.cmd, f)
			}
		}
	}
}

// Every flag of the table parses into the Spec through `run`: the value of
// --max-iterations reaches the state of the loop, unchanged.
func TestRunFlagReachesTheSpec(t *testing.T) {
	dir := sandboxtest.TempDir(t)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	var out, errOut bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errOut, Environ: func() []string { return []string{"PATH=" + os.Getenv("PATH")} }, Context: context.Background()}
	code := c.Main([]string{"run", "-C", dir, "--quiet", "--max-iterations", "3", "--completion", "test -e done", "--agent-command", "echo x >> notes.txt",
		"--loop-id", "ralph-flag-0123abcd", "make done exist"})
	if code != 1 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, ".aiwg", "ralph", "loops", "ralph-flag-0123abcd", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"max_iterations": 3`) || !strings.Contains(string(b), `"iteration": 3`) {
		t.Errorf("state:\n%s", b)
	}
}
