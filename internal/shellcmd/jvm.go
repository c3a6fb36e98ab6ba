package shellcmd

import "strings"

// jvmTool classifies Maven, Gradle and the other JVM build tools.
func (c *cls) jvmTool(k call) (Info, bool) {
	switch k.tool {
	case "mvn":
		return classifyMaven(k.rest), true
	case "gradle":
		return classifyGradle(k.rest), true
	case "sbt", "lein", "ant", "mill", "scala-cli", "coursier", "cs", "clj", "clojure":
		return classifyNamesCmd(k.tool, k.rest), true
	}
	return Info{}, false
}

func classifyMaven(rest []string) Info {
	goals := positional(rest, set("-pl", "--projects", "-P", "--activate-profiles", "-f", "--file", "-s", "--settings", "-T", "--threads", "-rf", "--resume-from", "-gs", "-t", "-l", "--log-file"))
	skipTests := hasFlag(rest, "-DskipTests", "-Dmaven.test.skip", "-DskipUTs") && !hasFlag(rest, "-DskipTests=false", "-Dmaven.test.skip=false")
	var k Kind
	var sig []string
	for _, g := range goals {
		switch {
		case g == "test" || g == "surefire:test":
			k |= Test
			sig = append(sig, "test")
		case g == "verify" || g == "install" || g == "integration-test":
			k |= Test | Build
			sig = append(sig, g)
		case g == "package":
			k |= Build | Test
			sig = append(sig, g)
		case g == "compile" || g == "test-compile":
			k |= Build | Type
			sig = append(sig, g)
		case strings.HasPrefix(g, "jacoco:") || strings.HasPrefix(g, "cobertura:"):
			k |= Coverage
		case strings.HasSuffix(g, ":check") || strings.HasSuffix(g, "spotless:check") || strings.HasPrefix(g, "checkstyle:") || strings.HasPrefix(g, "pmd:") || strings.HasPrefix(g, "spotbugs:") || strings.HasPrefix(g, "fmt:") || strings.HasPrefix(g, "sortpom:") || strings.HasPrefix(g, "license:") || strings.HasPrefix(g, "enforcer:") || strings.HasPrefix(g, "formatter:validate") || strings.HasPrefix(g, "apache-rat:") || strings.HasPrefix(g, "rat:"):
			k |= Lint
			sig = append(sig, g)
		case g == "deploy" || strings.HasPrefix(g, "release:") || strings.HasPrefix(g, "deploy:") || g == "site-deploy":
			return Info{Kind: Deploy}
		case strings.HasPrefix(g, "dependency:"):
			k |= Install
			sig = append(sig, g)
		}
	}
	if skipTests {
		k &^= Test
	}
	if k.Has(Coverage) && !k.Has(Test) {
		k &^= Coverage
	}
	if k == 0 {
		return Info{}
	}
	return Info{Kind: k, Sig: "mvn " + strings.Join(sig, " ")}
}

func classifyGradle(rest []string) Info {
	tasks := positional(rest, set("-x", "--exclude-task", "-p", "--project-dir", "--max-workers", "-I", "--init-script", "-c", "--settings-file", "-b", "--build-file", "-g", "--gradle-user-home"))
	excluded := map[string]bool{}
	for i := 0; i < len(rest)-1; i++ {
		if rest[i] == "-x" || rest[i] == "--exclude-task" {
			excluded[rest[i+1]] = true
		}
	}
	var k Kind
	var sig []string
	for _, t := range tasks {
		name := t
		if i := strings.LastIndex(t, ":"); i >= 0 {
			name = t[i+1:]
		}
		switch {
		case name == "test" || strings.HasSuffix(name, "Test") && !strings.HasPrefix(name, "compile") || name == "allTests" || name == "jvmTest" || name == "testDebugUnitTest" || name == "testReleaseUnitTest":
			k |= Test
		case name == "check":
			k |= Test | Lint
		case name == "build":
			k |= Test | Build | Lint
		case name == "assemble" || strings.HasPrefix(name, "compile") || name == "classes" || name == "jar" || strings.HasPrefix(name, "assemble") || name == "shadowJar":
			k |= Build
		case strings.HasPrefix(name, "jacoco") || strings.HasPrefix(name, "koverXml") || strings.HasPrefix(name, "kover"):
			k |= Coverage
		case strings.HasPrefix(name, "spotless") && strings.HasSuffix(name, "Check") || strings.HasPrefix(name, "ktlint") || strings.HasPrefix(name, "detekt") || strings.HasPrefix(name, "checkstyle") || name == "lint" || strings.HasPrefix(name, "lint") || strings.HasPrefix(name, "pmd") || strings.HasPrefix(name, "spotbugs") || name == "apiCheck":
			k |= Lint
		case strings.HasPrefix(name, "publish") || strings.HasPrefix(name, "release") || name == "uploadArchives":
			return Info{Kind: Deploy}
		case name == "dependencies" || name == "downloadDependencies":
			k |= Install
		default:
			continue
		}
		sig = append(sig, name)
	}
	if excluded["test"] {
		k &^= Test
	}
	if k.Has(Coverage) && !k.Has(Test) {
		k |= Test
	}
	if k == 0 {
		return Info{}
	}
	return Info{Kind: k, Sig: "gradle " + strings.Join(sig, " ")}
}

// classifyNamesCmd handles tools whose first positional argument names what
// they do: swift test, stack test, dart analyze, sbt test.
func classifyNamesCmd(tool string, rest []string) Info {
	p := positional(rest, set("--project", "-p", "--package-path", "-C", "--scheme", "-scheme", "-project", "-workspace", "-destination", "-sdk", "-configuration", "-e"))
	var k Kind
	var sig []string
	for _, a := range p {
		name := strings.Trim(a, "\"'")
		if tool == "sbt" && strings.Contains(name, "/") {
			name = name[strings.LastIndex(name, "/")+1:]
		}
		var nk Kind
		switch name {
		case "analyze", "analyse":
			nk = Lint | Type
		case "eunit", "ct", "runtest", "check":
			nk = Test
			if tool == "dune" && name == "check" || tool == "gleam" && name == "check" {
				nk = Type
			}
		case "xref", "dialyzer":
			nk = Type
		case "scalafmtCheck", "scalafmtCheckAll", "scalafmtSbtCheck":
			nk = Format
		case "coverage":
			nk = Coverage
		default:
			nk = ClassifyName(name)
			if nk.Has(Watch) || nk.Has(Install) && tool != "cabal" && tool != "stack" {
				nk &^= Watch
			}
		}
		if nk != 0 {
			sig = append(sig, name)
		}
		k |= nk
		if tool != "sbt" && tool != "rebar3" && tool != "mill" && tool != "lein" && tool != "ant" {
			break // the first positional is the subcommand
		}
	}
	if tool == "xcodebuild" && hasAny(rest, "test") {
		k |= Test
	}
	if tool == "dart" || tool == "flutter" {
		if len(p) > 0 && (p[0] == "pub" || p[0] == "packages") {
			return Info{Kind: Install, Sig: tool + " pub get"}
		}
		if len(p) > 0 && p[0] == "format" {
			if hasFlag(rest, "--set-exit-if-changed") || hasFlag(rest, "-o") {
				return Info{Kind: Format, Sig: tool + " format"}
			}
			return Info{}
		}
	}
	if (tool == "cabal" || tool == "stack") && len(p) > 0 && (p[0] == "update" || p[0] == "setup") {
		return Info{Kind: Install, Sig: tool + " " + p[0]}
	}
	if k == 0 {
		return Info{}
	}
	return Info{Kind: k &^ Watch, Sig: tool + " " + strings.Join(sig, " ")}
}
