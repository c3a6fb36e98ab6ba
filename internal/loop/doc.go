// Package loop is agent-loop's engine: preflighted by the caller, it runs the
// baseline check, then a plain bounded for-loop of iterations (prompt ->
// agent -> diff -> check -> judge -> commit -> push -> state), applies the
// stop rules, and publishes the best iteration.
//
// The engine knows only the small interfaces of ports.go (Agent, Verifier,
// Repo, Judge) and the on-disk state of internal/state. Adapters import this
// package; it never imports them.
package loop
