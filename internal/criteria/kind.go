package criteria

import "github.com/aiwg/agent-loop/internal/shellcmd"

// kind is what a command checks or does (shellcmd's model): `pnpm turbo
// run lint test` is both lint and test.
type kind = shellcmd.Kind

const (
	kTest      = shellcmd.Test
	kLint      = shellcmd.Lint
	kFormat    = shellcmd.Format
	kType      = shellcmd.Type
	kBuild     = shellcmd.Build
	kCoverage  = shellcmd.Coverage
	kInstall   = shellcmd.Install
	kToolchain = shellcmd.Toolchain
	kCIOnly    = shellcmd.CIOnly
	kDeploy    = shellcmd.Deploy
	kService   = shellcmd.Service
	kWatch     = shellcmd.Watch
	kE2E       = shellcmd.E2E
	kBench     = shellcmd.Bench
)

// gateKinds are the kinds a completion command can be.
const gateKinds = shellcmd.GateKinds

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
