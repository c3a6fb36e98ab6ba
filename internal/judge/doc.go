// Package judge scores the iterations of a loop, catches an agent that
// cheats, picks the best iteration and decides how hard the next prompt
// pushes.
//
// It implements loop.Judge. Every decision is made from measured signals:
// the unified diff from the baseline commit (parsed by ParseDiff), the test
// results of the check (testreport.Summary) and what the agent run cost.
//
//   - Detect runs the regression detectors of seed 004: test_deletion,
//     test_skipping, assertion_weakening, error_suppression,
//     validation_bypass, coverage_regression and feature_removal. Each
//     regression carries the file and line that show it.
//   - Assess turns one iteration into a Verdict: the regressions and the
//     0-100 quality score with seed 004's weights (validation 30,
//     completeness 25, correctness 25, readability 10, efficiency 10), one
//     explanation line per part.
//   - Best picks the iteration to publish; an iteration with a critical
//     regression never qualifies.
//   - Guide sets the reinforcement level (OFF, MINIMAL, STANDARD,
//     AGGRESSIVE, ADAPTIVE) with its prompt paragraphs and says when the
//     loop has stalled.
//
// The detectors read the diff the way a reviewer would: test declarations
// of ten language families (Go, Python, JavaScript/TypeScript, Rust, Java,
// Kotlin, C#, Ruby, PHP, Elixir), their skip markers and assertions, error
// handling in non-test code, public declarations, and the files the
// completion command depends on: internal/shellcmd's analysis of the
// command (its wrappers, cd, make/just/task targets, package scripts,
// scripts it runs) merged with Options.Depends, the same analysis made in
// the repository when the loop starts (checker and runner configuration,
// the script files the named scripts call). A line that moved (removed in one place, added in another) is not
// a change. testdata/corpus holds the labelled diffs, built with git, that
// the detectors are measured on.
package judge
