// Package shellcmd is the one model of a shell command that inference and
// the judge share: what a completion command runs in a repository.
//
// Parse splits a shell script into its simple commands (with the directory
// each runs in, following cd, pushd and subshells). A Classifier says what
// one command is (a Kind: test, lint, build, setup, ...), seeing through
// wrappers (nice, timeout, env -u, xargs, sudo -u, npx, uv run, bundle exec,
// sh -c) and following the named scripts of task runners (make, just, task,
// npm/pnpm/yarn/bun scripts, composer scripts, rake, deno tasks, hatch/pdm/
// poe scripts, tox envs, nox sessions, mix aliases) through a Lookup.
// Analyze does the same for a whole completion command and also records
// every runnable step it reaches (role, test runner, selection flags and
// reporting decoration) and the criterion's dependencies: the repository
// files it reads to decide what runs, the targets it follows and its runner.
//
// The package is pure: it reads files through an fs.FS (Tree) and never
// runs anything. Following is bounded in depth and in work, and cycle-safe.
//
// The classifiers are split per ecosystem: go.go, node.go, python.go,
// rust.go, jvm.go, ruby.go, php.go, elixir.go, dotnet.go, cfamily.go,
// runners.go (make, just, task and friends), scripts.go (shells and script
// files) and tools.go (linters, formatters, containers, plumbing).
package shellcmd
