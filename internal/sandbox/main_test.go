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
	// Every stage this binary is re-executed as: no second of sleep at
	// exit when it is built with -race.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}
