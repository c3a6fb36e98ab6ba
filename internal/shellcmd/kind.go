package shellcmd

import "strings"

// Kind is what a command checks or does, as a set of bits: `pnpm turbo run
// lint test` is both Lint and Test.
type Kind uint32

// The kinds.
const (
	Test      Kind = 1 << iota // runs tests
	Lint                       // lints (static checks of style and bugs)
	Format                     // checks formatting (counts as lint)
	Type                       // type-checks
	Build                      // compiles or bundles
	Coverage                   // measures coverage
	Install                    // installs the project's dependencies or configures the build: setup
	Toolchain                  // installs a toolchain, system package or global tool
	CIOnly                     // CI plumbing: uploads, caches, annotations, echo
	Deploy                     // publishes or deploys
	Service                    // starts or waits for a service (database, container)
	Watch                      // starts a watcher that never exits
	E2E                        // end-to-end / browser suite
	Bench                      // benchmarks
	Report                     // reports or uploads results (coverage upload, merged reports)
)

// GateKinds are the kinds a completion command can be.
const GateKinds = Test | Lint | Format | Type | Build | Coverage

// Has reports whether k has any bit of o.
func (k Kind) Has(o Kind) bool { return k&o != 0 }

var kindNames = []struct {
	k Kind
	n string
}{
	{Test, "test"}, {Lint, "lint"}, {Format, "format"}, {Type, "typecheck"}, {Build, "build"},
	{Coverage, "coverage"}, {Install, "install"}, {Toolchain, "toolchain"}, {CIOnly, "ci-only"},
	{Deploy, "deploy"}, {Service, "service"}, {Watch, "watch"}, {E2E, "e2e"}, {Bench, "bench"},
	{Report, "report"},
}

// String names the bits: "test+coverage"; "other" for none.
func (k Kind) String() string {
	var parts []string
	for _, n := range kindNames {
		if k.Has(n.k) {
			parts = append(parts, n.n)
		}
	}
	if len(parts) == 0 {
		return "other"
	}
	return strings.Join(parts, "+")
}

// Role is the one role a runnable step plays in a criterion.
type Role string

// The roles.
const (
	RoleTest      Role = "test"      // runs the project's tests: a gate
	RoleVariant   Role = "variant"   // runs a variant of the tests: one runtime, smoke, docs, e2e, integration
	RoleSetup     Role = "setup"     // installs dependencies, configures, starts services, installs tools
	RoleBuild     Role = "build"     // compiles or bundles
	RoleLint      Role = "lint"      // lints, checks formatting or types
	RoleReport    Role = "report"    // reports or uploads results
	RoleBenchmark Role = "benchmark" // benchmarks
	RoleDeploy    Role = "deploy"    // publishes or deploys
	RoleUnknown   Role = "unknown"   // plumbing, a watcher, or nothing known
)

// variantWords in a script or target name say that a test script runs a
// variant of the suite: one runtime of several, a smoke or docs-only run.
var variantWords = map[string]bool{
	"smoke": true, "docs": true, "doc": true, "doctest": false, "e2e": true, "integration": true, "browser": true,
	"acceptance": true, "bun": true, "deno": true, "node": true, "edge": true, "workerd": true, "failpoint": true,
	"failpoints": true, "panic": true, "abort": true, "nightly": true, "slow": true, "flaky": true, "stress": true,
	"fuzz": true, "canary": true, "legacy": true, "compat": true, "windows": true, "macos": true, "win": true,
	"system": true, "visual": true, "a11y": true, "perf": true, "update": true, "snapshot": true, "snapshots": true,
}

// roleOf is the role of a step of kind k, reached through the named
// scripts names (outermost first).
func roleOf(k Kind, names []string) Role {
	switch {
	case k.Has(Deploy):
		return RoleDeploy
	case k.Has(Bench):
		return RoleBenchmark
	case k.Has(Test):
		if k.Has(E2E) {
			return RoleVariant
		}
		for _, n := range names {
			if isVariantName(n) {
				return RoleVariant
			}
		}
		return RoleTest
	case k.Has(Lint | Format):
		return RoleLint
	case k.Has(Build):
		return RoleBuild
	case k.Has(Type):
		return RoleLint
	case k.Has(Report) || k.Has(Coverage):
		return RoleReport
	case k.Has(Install | Toolchain | Service):
		return RoleSetup
	}
	return RoleUnknown
}

// isVariantName reports a script or target name that names a variant of the
// tests: test:bun, test-smoke, test:docs.
func isVariantName(name string) bool {
	for _, w := range nameWords(name) {
		if variantWords[w] {
			return true
		}
	}
	return false
}

func nameWords(name string) []string {
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return r == ':' || r == '-' || r == '_' || r == '.' || r == '/' || r == ' '
	})
}
