package process

import (
	"bufio"
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
)

// TestKillStraysHelper is the harness of TestKillStrays (its own process,
// as KillStrays acts on the caller's children).
func TestKillStraysHelper(t *testing.T) {
	dir := os.Getenv("AGENT_LOOP_STRAYS_HELPER")
	if dir == "" {
		t.Skip("helper process of TestKillStrays")
	}
	if err := AdoptOrphans(); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	// A service started before the agent (by the setup command): kept.
	service := exec.Command("sleep", "60")
	service.Start()
	keep := Children()
	// The agent: leaves a process that escaped its group (setsid) and
	// exits; Run stops its group, not the escapee.
	pidFile := filepath.Join(dir, "escaped.pid")
	script := "setsid sh -c 'echo $$ > " + pidFile + "; exec sleep 60' </dev/null >/dev/null 2>&1 & while [ ! -s " + pidFile + " ]; do sleep 0.01; done"
	if _, err := Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", script}, Env: []string{"PATH=" + os.Getenv("PATH")}}); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	killed := KillStrays(keep)
	fmt.Printf("service=%d killed=%v\n", service.Process.Pid, killed)
	service.Process.Kill()
	service.Wait()
	os.Exit(0)
}

func TestKillStrays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillStraysHelper$")
	cmd.Env = append(os.Environ(), "AGENT_LOOP_STRAYS_HELPER="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	line := ""
	for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "service=") {
			line = sc.Text()
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "escaped.pid"))
	if err != nil {
		t.Fatal(err)
	}
	escaped, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if !strings.Contains(line, "killed=["+strconv.Itoa(escaped)+"]") {
		t.Errorf("helper said %q; want the escaped process %d killed, and only it", line, escaped)
	}
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(escaped, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if syscall.Kill(escaped, 0) == nil {
		syscall.Kill(escaped, syscall.SIGKILL)
		t.Errorf("the escaped process %d is alive", escaped)
	}
}
