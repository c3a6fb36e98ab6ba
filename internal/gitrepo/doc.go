// Package gitrepo is the harness's git: the loop branch in the work tree
// (branch, commit with trailers, diff, reset, history), the push of that
// branch, and the durable state ref (refs/agent-loop/<loop_id>). It
// implements loop.Repo, loop.Pusher and loop.Unstager.
//
// Trusted by construction. The agent works in the same work tree and, when
// it runs as the harness's own user, can write all of .git. So the
// harness's git never reads .git: it runs on a private git directory
// (trust.go) in a directory the caller keeps out of the agent's reach
// (Options.PrivateDir), with a configuration the harness wrote (nothing
// included, no hook, filter, fsmonitor, credential helper, proxy or URL
// rewrite), its own index, and an object store every commit the harness
// reads is imported into through `git index-pack`, which names each object
// by its content. The repository's objects are read only through a view
// without objects/info/ (no alternates, commit-graph or packs list of the
// agent's) and only where a hash check follows. The repository's remote
// URL, excludes and the few content settings the harness needs are read
// once, when the loop starts. The user's branch and the loop branch are
// recorded there and put back after every agent run (Notices say so); the
// repository's refs, objects and .git/index are a mirror the harness
// writes after each commit.
//
// Bounded by construction. Staging lists what changed without reading a
// file (`git diff-files`, `git ls-files -o`), looks at each path, and
// hands git only what it can stage: a file above Options.MaxFileSize, an
// unreadable file and a special file are left out and reported. Every git
// process runs in its own process group under the caller's context; a
// FIFO where git reads a file is opened from the other end by a watchdog
// (fifo_linux.go). Object and network commands run with --bare and never
// read the work tree.
//
// The push token reaches git through a pipe inherited as fd 3 and read by
// a credential helper: never a file, argv or an environment. A credential
// in the repository's configuration (an http.extraheader, the token, a URL
// with a password) is refused (CheckCredentials, Seal): the agent could
// read it.
//
// go-git writes the harness's commit and state objects into the trusted
// store in process (SHA-1 repositories); the git CLI does everything that
// touches the work tree, being an order of magnitude faster there
// (bench_test.go). TRUST.md describes the trust boundary for the README
// and ARCHITECTURE.md.
package gitrepo
