package criteria

import "strings"

// kind is what a command checks or does, as a set of bits: `pnpm turbo run
// lint test` is both lint and test.
type kind uint32

const (
	kTest      kind = 1 << iota // runs tests
	kLint                       // lints (static checks of style and bugs)
	kFormat                     // checks formatting (counts as lint)
	kType                       // type-checks
	kBuild                      // compiles or bundles
	kCoverage                   // measures coverage
	kInstall                    // installs the project's dependencies or configures the build: setup
	kToolchain                  // installs a toolchain, system package or global tool: the loop's machine has it
	kCIOnly                     // CI plumbing: uploads, caches, annotations, echo
	kDeploy                     // publishes or deploys
	kService                    // starts or waits for a service (database, container)
	kWatch                      // starts a watcher that never exits
	kE2E                        // end-to-end / browser suite
	kBench                      // benchmarks
)

// gateKinds are the kinds a completion command can be.
const gateKinds = kTest | kLint | kFormat | kType | kBuild | kCoverage

func (k kind) has(o kind) bool { return k&o != 0 }

func (k kind) String() string {
	names := []struct {
		k kind
		n string
	}{
		{kTest, "test"}, {kLint, "lint"}, {kFormat, "format"}, {kType, "typecheck"}, {kBuild, "build"},
		{kCoverage, "coverage"}, {kInstall, "install"}, {kToolchain, "toolchain"}, {kCIOnly, "ci-only"},
		{kDeploy, "deploy"}, {kService, "service"}, {kWatch, "watch"}, {kE2E, "e2e"}, {kBench, "bench"},
	}
	var parts []string
	for _, n := range names {
		if k.has(n.k) {
			parts = append(parts, n.n)
		}
	}
	if len(parts) == 0 {
		return "other"
	}
	return strings.Join(parts, "+")
}

// wantKind is the kind of gate a criterion class needs.
func wantKind(class string) kind {
	switch class {
	case ClassLintClean:
		return kLint | kFormat
	case ClassTypeClean:
		return kType
	case ClassBuildPass:
		return kBuild
	case ClassCoverage:
		return kCoverage | kTest
	default:
		return kTest
	}
}
