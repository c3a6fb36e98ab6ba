package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
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
