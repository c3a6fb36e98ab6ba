// Command agent-loop runs an AI coding agent in a bounded, verified loop
// until the repository's own completion command passes. See README.md.
package main

import (
	"os"

	"github.com/aiwg/agent-loop/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func main() {
	os.Exit(cli.New(version).Main(os.Args[1:]))
}
