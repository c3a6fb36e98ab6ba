// Package exitcode holds the process exit codes of agent-loop's two doors,
// the CLI (internal/cli) and the GitHub Action (internal/action), in one
// place. The engine knows none of them: it reports how a loop ended, and
// each door turns that into its exit code (DESIGN.md, "Exit code").
package exitcode

const (
	// Completed: the completion criterion was verified by the harness.
	Completed = 0
	// NotCompleted: max iterations, timeout, budget, stall, failed,
	// aborted or paused.
	NotCompleted = 1
	// BadInput: bad input or configuration; nothing was started.
	BadInput = 2
)
