package verify

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
)

func env() []string { return process.SafeEnv(os.Environ()) }

func TestCheckPassFailAndCounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "t.sh"), []byte("echo 1..2\necho 'ok 1 - a'\necho 'not ok 2 - b'\nexit 1\n"), 0o644)
	var log bytes.Buffer
	res, err := (&Shell{}).Check(context.Background(), loop.CheckRequest{Command: "sh t.sh", Dir: dir, Env: env(), Output: &log})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || res.ExitCode != 1 || !res.Tests.Known || res.Tests.Total != 2 || res.Tests.Failed != 1 {
		t.Fatalf("res = %+v", res)
	}
	if !strings.Contains(log.String(), "not ok 2 - b") || !strings.Contains(res.Output, "ok 1 - a") {
		t.Fatalf("output not streamed/kept: %q", log.String())
	}
	res, err = (&Shell{}).Check(context.Background(), loop.CheckRequest{Command: "true", Dir: dir, Env: env()})
	if err != nil || !res.Passed || res.Tests.Known {
		t.Fatalf("true: %+v %v", res, err)
	}
}

func TestCheckTimeoutIsAFailure(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res, err := (&Shell{}).Check(context.Background(), loop.CheckRequest{Command: "sleep 30", Dir: t.TempDir(), Env: env(), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || !res.TimedOut || time.Since(start) > 10*time.Second || !strings.Contains(res.Output, "stopped after") {
		t.Fatalf("res = %+v", res)
	}
}

// The check runs code the agent wrote: it must not see the harness's token.
func TestCheckSeesFilteredEnvironment(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghs_checkSecret1234")
	res, err := (&Shell{}).Check(context.Background(), loop.CheckRequest{Command: "env", Dir: t.TempDir(), Env: process.SafeEnv(os.Environ())})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Output, "ghs_checkSecret1234") {
		t.Fatal("the completion command saw GITHUB_TOKEN")
	}
}

func TestCheckBoundsHugeOutput(t *testing.T) {
	t.Parallel()
	res, err := (&Shell{Keep: 4096}).Check(context.Background(), loop.CheckRequest{Command: "head -c 20000000 /dev/zero | tr '\\0' x; echo; echo 'ok 1 - last'", Dir: t.TempDir(), Env: env()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Output) > 4096+100 || !strings.Contains(res.Output, "bytes of earlier output dropped") || !strings.HasSuffix(strings.TrimSpace(res.Output), "ok 1 - last") {
		t.Fatalf("output len %d: %q", len(res.Output), res.Output[:80])
	}
}

func TestCheckReadsReports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	junit := `<?xml version="1.0"?><testsuite name="s" tests="3" failures="1" skipped="0"><testcase classname="A" name="one"/><testcase classname="A" name="two"/><testcase classname="A" name="three"><failure message="boom">boom</failure></testcase></testsuite>`
	cmd := "mkdir -p target/surefire-reports && printf '%s' '" + junit + "' > target/surefire-reports/TEST-A.xml; exit 1"
	res, err := (&Shell{ScanReports: true}).Check(context.Background(), loop.CheckRequest{Command: cmd, Dir: dir, Env: env()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Tests.Known || res.Tests.Total != 3 || res.Tests.Failed != 1 {
		t.Fatalf("tests = %+v", res.Tests)
	}
}
