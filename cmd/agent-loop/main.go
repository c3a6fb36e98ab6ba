// Command agent-loop runs an AI coding agent in a bounded, verified loop
// until the repository's own completion command passes. See README.md.
package main

import (
	"os"

	"github.com/aiwg/agent-loop/internal/cli"
	"github.com/aiwg/agent-loop/internal/sandbox"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func main() {
	// The sandbox's trampoline: this binary re-executed, by the harness,
	// under a hidden argv[0] (internal/sandbox).
	if code, ok := sandbox.Main(os.Args); ok {
		os.Exit(code)
	}
	os.Exit(cli.New(version).Main(os.Args[1:]))
}
