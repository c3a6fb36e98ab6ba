package process

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestHideSecretsHelper is the process whose environment is hidden (run by
// TestHideSecrets).
func TestHideSecretsHelper(t *testing.T) {
	if os.Getenv("AGENT_LOOP_HIDE_HELPER") != "1" {
		t.Skip("helper process of TestHideSecrets")
	}
	hidden, err := HideSecrets()
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	// The process keeps its own copy.
	fmt.Printf("hidden=%s token=%s\n", strings.Join(hidden, ","), os.Getenv("GITHUB_TOKEN"))
	io.Copy(io.Discard, os.Stdin) // until the test has looked
	os.Exit(0)
}

func TestHideSecrets(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHideSecretsHelper$")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "AGENT_LOOP_HIDE_HELPER=1", "GITHUB_TOKEN=ghs_hideMe0000000001",
		"INPUT_GITHUB-TOKEN=ghs_hideMe0000000002", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=hideMe0000000003",
		"OPENAI_API_KEY=sk-hideMe0000000004", "KEEP=visible"}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v (%q)", err, line)
	}
	want := "hidden=ACTIONS_ID_TOKEN_REQUEST_TOKEN,GITHUB_TOKEN,INPUT_GITHUB-TOKEN,OPENAI_API_KEY token=ghs_hideMe0000000001\n"
	if got := sortedHidden(line); got != want {
		t.Fatalf("helper said %q, want %q", got, want)
	}
	// What another process of the same user sees.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("hideMe")) {
		t.Errorf("/proc/<pid>/environ still holds a secret: %q", b)
	}
	if !bytes.Contains(b, []byte("\x00KEEP=visible\x00")) || !bytes.Contains(b, []byte("GITHUB_TOKEN=\x00")) {
		t.Errorf("/proc/<pid>/environ lost what it should keep: %q", b)
	}
}

// sortedHidden sorts the hidden= list of the helper's line.
func sortedHidden(line string) string {
	rest, ok := strings.CutPrefix(line, "hidden=")
	if !ok {
		return line
	}
	list, tail, _ := strings.Cut(rest, " ")
	names := strings.Split(list, ",")
	sort.Strings(names)
	return "hidden=" + strings.Join(names, ",") + " " + tail
}
