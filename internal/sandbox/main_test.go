package sandbox

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if code, ok := Main(os.Args); ok {
		os.Exit(code)
	}
	if code, ok := probeMain(os.Args); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
