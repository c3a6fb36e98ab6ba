// Package app is what agent-loop does, under its two front doors (the CLI,
// internal/cli, and the GitHub Action, internal/action): it takes a loop's
// validated Spec (internal/spec), builds the adapters (git repository,
// agent provider, verifier, judge, state) and the engine, runs the
// preflight checks, resolves the completion criterion into the Spec, and
// implements run, resume, status, pause, abort, attach, report and the
// demo. It returns how a command ended (RunResult, UsageError); the doors
// turn that into exit codes. The engine (internal/loop) knows none of the
// adapters; app is where they meet.
package app
