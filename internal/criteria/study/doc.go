// Package study scores completion inference against real public repositories.
//
// The study set is testdata/study/repos/*.json: one label per repository,
// written by a person from the repository's CI workflows, manifests and
// contributor documents (format in testdata/study/README.md). A label names
// the commit it was read at, the command a maintainer would accept as "the
// tests pass", commands equivalent to it, other suites that are not the
// answer, and the evidence.
//
// The package does three things, each a plain function the infer-study
// command (cmd/infer-study, driven by .ci/infer-study) calls:
//
//   - LoadLabels reads and validates the label files (Validate is the pure
//     check, also run by a unit test in CI without any checkout);
//   - Prepare materialises every labelled commit from the fetch mirrors as a
//     fresh clone in a directory of checkouts outside the repository;
//   - Evaluate runs `agent-loop infer --format json TASK` in each checkout,
//     bounded in time, and Score compares each proposal with its label;
//     Summarise turns the results into accuracy, precision at high confidence
//     and calibration per confidence level, written as text or JSON.
//
// The repositories' files never enter this repository: only the labels do.
package study
