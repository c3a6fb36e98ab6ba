package report_test

import (
	"os"
	"testing"

	"github.com/aiwg/agent-loop/internal/sandbox"
)

// TestMain lets the sandbox re-execute this test binary as its trampoline:
// the real runs of the stories contain their agent and checks as the binary
// does.
func TestMain(m *testing.M) {
	if code, ok := sandbox.Main(os.Args); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
