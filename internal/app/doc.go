// Package app wires agent-loop together: it turns a config.Config into the
// adapters (git repository, agent provider, verifier, judge, state) and the
// engine, runs the preflight checks, and implements what the CLI
// subcommands and the Action do. It is the only package that knows every
// other one; the engine (internal/loop) knows none of them.
package app
