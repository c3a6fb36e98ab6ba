// Package heldout decides whether a passing iteration earned its pass: it
// re-runs the completion criterion in a scratch tree whose product source is
// the iteration's and whose everything-else (tests, fixtures, snapshots, test
// and runner configuration, the criterion's own files, CI, dotfiles, new
// files at the root, files named like the tools the criterion runs) is
// exactly the baseline's. SWE-bench judges a patch by the tests it did not
// write; this package does the same with the repository's original tests.
//
// The parts:
//
//   - Classify says, for one repository path, whether it is product source
//     or something the held-out check restores, and why (per ecosystem: Go,
//     Python, JavaScript/TypeScript, Rust, Java/Kotlin, Ruby, PHP, Elixir,
//     .NET, C/C++).
//   - Merge builds the held-out version of a file that is both: package.json,
//     pyproject.toml, setup.cfg, Cargo.toml, composer.json, the criterion's
//     Makefile/justfile targets and CMake's test directives are restored
//     section by section; inline tests (Rust #[cfg(test)] items and doc
//     tests, Python and Elixir doctests) block by block.
//   - Plan compares the baseline tree with the iteration's tree (read from
//     git objects the harness trusts, through Objects) and lists what the
//     held-out tree restores; Build writes that tree into a scratch directory
//     and links in what the work tree has but git does not (installed
//     dependencies, build caches).
//   - Checker runs the criterion there through an injected Runner (the
//     sandboxed check of the integration) and returns a Result: passed, or
//     failed with the failure output, or inconclusive when a control run of
//     the iteration's own tree in the same scratch setup fails too.
package heldout
