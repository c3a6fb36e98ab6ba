package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/aiwg/agent-loop/internal/process"
)

func probeMain(args []string) (int, bool) { return 0, false }

func TestSmoke(t *testing.T) {
	base, _ := os.MkdirTemp("", "sbx-")
	os.Chmod(base, 0o755)
	t.Cleanup(func() { os.RemoveAll(base) })
	wt := filepath.Join(base, "wt")
	os.MkdirAll(wt, 0o755)
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("x"), 0o644)
	var log bytes.Buffer
	sb, err := New(Options{WorkTree: wt, PrivateBase: filepath.Join(base, "priv"), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(log.String())
	var out bytes.Buffer
	ctx := process.WithJail(context.Background(), sb)
	res, err := process.Run(ctx, process.Spec{Path: "sh", Args: []string{"-c", "id; grep -E 'CapEff|NoNewPrivs|Uid' /proc/self/status; echo hi > b.txt; echo $HOME $TMPDIR; (setsid sleep 100 &) ; echo x > /etc/nope; touch " + sb.PrivateDir() + "/x"}, Dir: wt, Env: []string{"PATH=/usr/bin:/bin"}, Stdout: &out, Stderr: &out})
	t.Logf("res=%+v err=%v\n%s", res, err, out.String())
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(wt, "b.txt"))
	t.Logf("%+v", fi.Sys())
}
