// Package spec is the one specification of a loop and the one table of its
// parameters.
//
// A Spec holds everything that defines a loop: the task, the completion
// criterion (command, workdir, setup, where it came from, what it depends
// on), the limits, the agent, where the result goes (branch, commit, push,
// pull request) and the policies. It is resolved once, when a loop starts
// (internal/app), saved whole in state.json (the agent_loop extension,
// internal/state) and read back whole by resume; the engine
// (internal/loop) takes it as it is.
//
// Every parameter a user can set is declared once, in Params: its name,
// CLI flag, Action input, kind, default, help and whether it is a secret.
// The table makes the CLI flags (internal/cli), reads the Action inputs
// (INPUT_<NAME>, hyphens kept), writes the inputs of action.yml and the
// README's tables (go test ./internal/spec -update), and its tests fail
// when any of them disagree with it. Validate checks a Settings once, and
// words each problem for the door the user came through: the flag
// --max-iterations, or the input max-iterations. Nothing after it checks
// or defaults a parameter again: app.Run takes only a Validated.
package spec
