package corpus_test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/aiwg/agent-loop/internal/cli"
	"github.com/aiwg/agent-loop/internal/sandbox"
)

// TestMain lets more corpus cases run at once than there are cores (unless
// -test.parallel is given): a case spends most of its time waiting for the
// toolchains' processes to start and finish. It also puts this test binary
// on PATH as agent-loop (testscript.Main), for the loops of
// TestCorpusThroughTheBinary.
func TestMain(m *testing.M) {
	// The sandbox re-executes this binary as its trampoline.
	if code, ok := sandbox.Main(os.Args); ok {
		os.Exit(code)
	}
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			set = true
		}
	})
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(max(4, 2*runtime.GOMAXPROCS(0))))
	}
	testscript.Main(m, map[string]func(){
		"agent-loop": func() { os.Exit(cli.New("v0.0.0-test").Main(os.Args[1:])) },
	})
}
