// Package actionlint is the implementation of the actionlint linter for GitHub Actions workflow files.
package actionlint

// LinterOptions is a set of options for Linter.
type LinterOptions struct {
	Verbose bool
}
