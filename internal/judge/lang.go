package judge

import (
	"path"
	"strings"
)

// language is a programming language (or file family) the detectors know.
type language string

// The languages and file families the detectors know.
const (
	langUnknown language = ""
	langGo      language = "go"
	langPython  language = "python"
	langJS      language = "js" // JavaScript and TypeScript
	langRust    language = "rust"
	langJava    language = "java"
	langKotlin  language = "kotlin"
	langCSharp  language = "csharp"
	langRuby    language = "ruby"
	langPHP     language = "php"
	langElixir  language = "elixir"
	langShell   language = "shell"
	langMake    language = "make"
	langYAML    language = "yaml"
	langJSON    language = "json"
	langTOML    language = "toml"
	langINI     language = "ini"
	langXML     language = "xml"
)

var extLang = map[string]language{
	".go": langGo,
	".py": langPython, ".pyi": langPython,
	".js": langJS, ".jsx": langJS, ".mjs": langJS, ".cjs": langJS,
	".ts": langJS, ".tsx": langJS, ".mts": langJS, ".cts": langJS,
	".rs":   langRust,
	".java": langJava,
	".kt":   langKotlin, ".kts": langKotlin,
	".cs": langCSharp,
	".rb": langRuby, ".rake": langRuby,
	".php": langPHP,
	".ex":  langElixir, ".exs": langElixir,
	".sh": langShell, ".bash": langShell, ".zsh": langShell, ".ps1": langShell,
	".mk":  langMake,
	".yml": langYAML, ".yaml": langYAML,
	".json": langJSON,
	".toml": langTOML,
	".ini":  langINI, ".cfg": langINI,
	".xml": langXML, ".dist": langXML, ".runsettings": langXML,
}

// langOf returns the language of a path.
func langOf(p string) language {
	base := path.Base(p)
	switch base {
	case "Makefile", "makefile", "GNUmakefile", "justfile", "Justfile", ".justfile":
		return langMake
	case "Rakefile", "Gemfile", ".rspec":
		return langRuby
	case "Jenkinsfile", "Dockerfile", "Containerfile":
		return langShell
	case ".coveragerc", "setup.cfg", "tox.ini", "pytest.ini", ".flake8":
		return langINI
	}
	if strings.HasPrefix(base, ".mocharc") || strings.HasPrefix(base, ".nycrc") {
		return langJSON
	}
	if strings.HasSuffix(base, ".xml.dist") {
		return langXML
	}
	return extLang[strings.ToLower(path.Ext(base))]
}

// isCode reports whether the language is a programming language whose
// tests and symbols the detectors understand.
func (l language) isCode() bool {
	switch l {
	case langGo, langPython, langJS, langRust, langJava, langKotlin, langCSharp, langRuby, langPHP, langElixir:
		return true
	}
	return false
}

// family groups languages whose tests and symbols can move between each
// other's files (a test moved from .js to .ts, from Java to Kotlin).
func (l language) family() language {
	switch l {
	case langKotlin:
		return langJava
	}
	return l
}

// pathSegments splits a slash path into its directory names.
func dirSegments(p string) []string {
	dir := path.Dir(p)
	if dir == "." || dir == "/" {
		return nil
	}
	return strings.Split(dir, "/")
}

func hasDir(p string, names ...string) bool {
	for _, seg := range dirSegments(p) {
		for _, n := range names {
			if seg == n {
				return true
			}
		}
	}
	return false
}

// isIgnoredPath reports paths no detector looks at: vendored and generated
// code, dependency trees, fixtures and test data (they are inputs, not code).
func isIgnoredPath(p string) bool {
	if hasDir(p, "vendor", "node_modules", "third_party", "testdata", "fixtures", "__fixtures__", ".aiwg", "dist") {
		return true
	}
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, ".pb.go"), strings.HasSuffix(base, ".min.js"),
		strings.Contains(base, "_generated."), strings.Contains(base, ".generated."),
		strings.HasSuffix(base, "_gen.go"):
		return true
	}
	return false
}

// isTestPath reports whether a code file is a test file by its path.
func isTestPath(p string) bool {
	lang := langOf(p)
	if !lang.isCode() {
		return false
	}
	base := path.Base(p)
	stem := strings.TrimSuffix(base, path.Ext(base))
	switch lang {
	case langGo:
		return strings.HasSuffix(base, "_test.go")
	case langPython:
		if strings.HasPrefix(base, "test_") || strings.HasSuffix(stem, "_test") || base == "conftest.py" {
			return true
		}
	case langJS:
		if strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || strings.Contains(base, ".e2e.") {
			return true
		}
		if hasDir(p, "__tests__", "cypress") {
			return true
		}
	case langRust:
		// Unit tests live beside the code (mod tests); the detectors look at
		// the content for those.
		return hasDir(p, "tests", "benches")
	case langJava, langKotlin:
		if strings.Contains(p, "src/test/") || strings.Contains(p, "src/androidTest/") || strings.Contains(p, "src/integrationTest/") {
			return true
		}
		for _, suf := range []string{"Test", "Tests", "IT", "Spec", "TestCase"} {
			if strings.HasSuffix(stem, suf) {
				return true
			}
		}
	case langCSharp:
		if strings.HasSuffix(stem, "Tests") || strings.HasSuffix(stem, "Test") {
			return true
		}
		for _, seg := range dirSegments(p) {
			if strings.HasSuffix(seg, ".Tests") || strings.HasSuffix(seg, ".Test") || strings.HasSuffix(seg, ".UnitTests") {
				return true
			}
		}
	case langRuby:
		if strings.HasSuffix(stem, "_spec") || strings.HasSuffix(stem, "_test") {
			return true
		}
	case langPHP:
		if strings.HasSuffix(stem, "Test") {
			return true
		}
	case langElixir:
		if strings.HasSuffix(stem, "_test") {
			return true
		}
	}
	return hasDir(p, "test", "tests", "spec", "specs", "__tests__", "e2e", "Tests")
}

// isSnapshotPath reports files a test runner regenerates on request: Jest and
// Vitest snapshots, insta and syrupy snapshots, Go golden files, approval
// tests.
func isSnapshotPath(p string) bool {
	base := path.Base(p)
	switch {
	case hasDir(p, "__snapshots__", "__snapshot__"),
		strings.HasSuffix(base, ".snap"), strings.HasSuffix(base, ".snap.new"),
		strings.HasSuffix(base, ".golden"),
		strings.Contains(base, ".approved."):
		return true
	}
	return false
}

// snapshotOwner is the directory whose code a snapshot describes: the
// directory holding __snapshots__/testdata/snapshots, or "" (the whole
// repository) when that directory is itself a test directory.
func snapshotOwner(p string) string {
	segs := dirSegments(p)
	for i, seg := range segs {
		switch seg {
		case "__snapshots__", "__snapshot__", "testdata", "snapshots", "golden", "approved":
			owner := segs[:i]
			for _, s := range owner {
				switch s {
				case "test", "tests", "spec", "__tests__":
					return ""
				}
			}
			return strings.Join(owner, "/")
		}
	}
	if len(segs) == 0 {
		return ""
	}
	owner := segs
	for _, s := range owner {
		switch s {
		case "test", "tests", "spec", "__tests__":
			return ""
		}
	}
	return strings.Join(owner, "/")
}

// isScriptPath reports shell scripts, Makefiles and CI definitions: the
// files where `|| true` and friends hide a failing command.
func isScriptPath(p string) bool {
	switch langOf(p) {
	case langShell, langMake:
		return true
	}
	return isCIPath(p)
}

// isCIPath reports CI pipeline definitions.
func isCIPath(p string) bool {
	base := path.Base(p)
	switch {
	case strings.HasPrefix(p, ".github/workflows/") && (strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")),
		strings.HasPrefix(p, ".github/actions/"),
		base == ".gitlab-ci.yml", strings.HasPrefix(p, ".gitlab/ci/"),
		strings.HasPrefix(p, ".circleci/"),
		base == "azure-pipelines.yml", base == ".travis.yml", base == "bitbucket-pipelines.yml",
		base == "Jenkinsfile", strings.HasPrefix(p, ".buildkite/"), strings.HasPrefix(p, ".woodpecker"),
		base == ".drone.yml", base == "cloudbuild.yaml", base == "appveyor.yml":
		return true
	}
	return false
}
