// Package gitrepo is the harness's git: the loop branch in the work tree
// (branch, commit with trailers, diff, reset, history), the push of that
// branch, and the durable state ref (refs/agent-loop/<loop_id>). It
// implements loop.Repo, loop.Pusher and loop.Unstager.
//
// Speed and safety pull in opposite directions. go-git runs no hook, filter or
// fsmonitor, but its Worktree.Status and Add walk ignored directories and are
// an order of magnitude slower than `git status` / `git add -A` on large trees
// (bench_test.go measures both). So the work-tree operations use the git CLI,
// hardened: every invocation runs with hooks disabled (core.hooksPath=/dev/null),
// no fsmonitor, every filter, textconv and merge driver the configuration or
// an attributes file names overridden to nothing, no system or global
// configuration, safe.directory=* and a minimal environment (PATH, HOME,
// LANG=C, TMPDIR) that never holds the harness's tokens. Before each
// invocation the guard (guard.go) checks that .git is still the directory
// sealed before the agent first ran and restores the sealed .git/config,
// .git/hooks/, .git/info/ and the other files that can redirect git. Index
// flags that hide a change from git ("assume unchanged", "skip worktree")
// are cleared before every status, diff and commit.
//
// go-git is used where it is safe and at least as fast: opening and
// inspecting the repository, writing commit objects, and writing and reading
// the state ref's objects in process; refs are read and moved in process too
// (refs.go, git's lock-file protocol) when they are plain loose or packed
// refs. When go-git cannot open a repository (extensions.worktreeConfig,
// partial clones, newer extensions) the git CLI does that too; Info reports
// why.
//
// Pushing uses the git CLI with the token in a 0600 file read by a
// GIT_ASKPASS helper, never in argv, the environment or .git/config.
package gitrepo
