package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/process"
)

// BenchmarkSandboxOverhead measures what the sandbox adds to one command
// (the trampoline's two executions, the handover of the work tree, the
// sweep and the harness's check of /proc), against the same command run
// by process.Run without it, interleaved so that a busy machine slows
// both: ns/op is the sandboxed run, x-direct the ratio of the totals.
// Root only (the separate user).
func BenchmarkSandboxOverhead(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	base, _ := os.MkdirTemp("", "sbx-bench-")
	defer os.RemoveAll(base)
	os.Chmod(base, 0o755)
	wt := filepath.Join(base, "wt")
	os.MkdirAll(wt, 0o755)
	for i := 0; i < 1000; i++ {
		os.WriteFile(filepath.Join(wt, "f"+string(rune('a'+i%26))+string(rune('a'+i/26%26))), []byte("x"), 0o644)
	}
	sb, err := New(Options{WorkTree: wt, PrivateBase: filepath.Join(base, "priv")})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	jailed := process.WithJail(context.Background(), sb)
	spec := process.Spec{Path: "/bin/true", Dir: wt, Env: []string{"PATH=/bin", "GORACE=" + os.Getenv("GORACE")}}
	var direct, sandboxed time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		start := time.Now()
		if _, err := process.Run(context.Background(), spec); err != nil {
			b.Fatal(err)
		}
		direct += time.Since(start)
		b.StartTimer()
		start = time.Now()
		if _, err := process.Run(jailed, spec); err != nil {
			b.Fatal(err)
		}
		sandboxed += time.Since(start)
	}
	b.ReportMetric(float64(sandboxed)/float64(direct), "x-direct")
	b.ReportMetric(float64(direct.Microseconds())/float64(b.N), "direct-µs/op")
}
