package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/process"
)

func TestTimingOneRun(t *testing.T) {
	needRoot(t)
	f := newFixture(t, true)
	sb, err := New(Options{WorkTree: f.wt, PrivateBase: filepath.Join(f.base, "priv")})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	ctx := process.WithJail(context.Background(), sb)
	for i := 0; i < 3; i++ {
		start := time.Now()
		process.Run(ctx, process.Spec{Path: "/bin/true", Dir: f.wt, Env: []string{"PATH=/bin", "GORACE=" + os.Getenv("GORACE")}})
		t.Logf("true: %s", time.Since(start))
		start = time.Now()
		process.Run(ctx, process.Spec{Path: "/proc/self/exe", Dir: f.wt, Env: []string{"PATH=/bin", probeEnv + "=read", "GORACE=" + os.Getenv("GORACE")}, Args: []string{"/etc/hostname"}})
		t.Logf("probe: %s", time.Since(start))
		start = time.Now()
		sb.sweepUser(0)
		t.Logf("sweep: %s", time.Since(start))
		start = time.Now()
		sb.HandOver()
		t.Logf("handover: %s", time.Since(start))
	}
	_ = os.Getpid
}
