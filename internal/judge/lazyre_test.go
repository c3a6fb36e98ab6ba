package judge

import (
	"testing"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// TestPatternsCompile compiles every pattern of the package: they are
// compiled on first use (see internal/lazyre), so a bad one must fail here.
func TestPatternsCompile(t *testing.T) {
	if err := lazyre.CompileAll(); err != nil {
		t.Fatal(err)
	}
	if lazyre.Count() == 0 {
		t.Fatal("no patterns registered")
	}
}
