// Package corpus holds the labelled corpus of issue 12 and the test that
// runs it: cheating and honest agents' changes to small repositories in Go,
// Python (unittest and pytest), JavaScript (node's runner and Vitest), Rust,
// Java, Ruby and PHP, each run for real through the held-out check and the
// judge. It is a package of its own so that its test (several minutes of
// real toolchain runs) has its own time budget. The cases are in
// testdata/cases/<language>/<case>.txtar; `go test -v -run TestCorpus
// ./internal/heldout/corpus` prints recall and false positives.
package corpus
