package criteria

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// Canonical targets. CI often runs the suite in pieces (one step per part,
// one job per shard), through a wrapper that adds reporting (nyc npm test,
// make ci), or narrowed to what one job needs. The manifest's canonical
// target (npm test, make test, composer test, script/cibuild) is the team's
// name for the whole suite: when it runs every test step of the CI gate
// (the same runners, in the same directories, with the same or a broader
// selection) and adds no lint of its own, it is the criterion, and CI's
// steps are its evidence.

// testLeaves are the steps of a test command that do its work, as
// shellcmd analyses it: the test runners, and the programs shellcmd does
// not know (a test script's body is the test), without the setup and the
// CI plumbing (echo, mkdir).
func (m *manifests) testLeaves(command, workdir string) []shellcmd.Step {
	a := shellcmd.Analyze(m.tree, command, workdir)
	var out []shellcmd.Step
	for _, s := range a.Steps {
		if s.Fallback || s.Background || s.Piped {
			continue
		}
		if s.Kind.Has(kTest) || s.Kind == 0 && len(s.Args) > 0 && s.Args[0] != "" {
			out = append(out, s)
		}
	}
	return out
}

// gateSteps are the gate steps (tests, lint, type checks, builds) a command
// reaches.
func (m *manifests) gateSteps(command, workdir string) []shellcmd.Step {
	a := shellcmd.Analyze(m.tree, command, workdir)
	var out []shellcmd.Step
	for _, s := range a.Steps {
		if s.Fallback || s.Background || s.Piped || s.Kind&gateKinds == 0 || s.Role == shellcmd.RoleSetup {
			continue
		}
		out = append(out, s)
	}
	return out
}

// unknownSteps are the steps of a command shellcmd cannot classify (their
// words still identify them: `node test/run.mjs`).
func (m *manifests) unknownSteps(command, workdir string) []shellcmd.Step {
	a := shellcmd.Analyze(m.tree, command, workdir)
	var out []shellcmd.Step
	for _, s := range a.Steps {
		if !s.Fallback && !s.Background && !s.Piped && s.Kind == 0 && len(s.Args) > 0 && s.Args[0] != "" {
			out = append(out, s)
		}
	}
	return out
}

// stepWords is a step without its reporting decoration, for comparison.
func stepWords(s shellcmd.Step) string {
	return s.Dir + "\x00" + strings.Join(s.Plain, " ")
}

// unselected is a step's plain words without its selection.
func unselected(s shellcmd.Step) string {
	sel := map[string]bool{}
	for _, x := range s.Selection {
		for _, w := range strings.Fields(x) {
			sel[w] = true
		}
	}
	var out []string
	for _, w := range s.Plain {
		if !sel[w] {
			out = append(out, w)
		}
	}
	return s.Dir + "\x00" + strings.Join(out, " ")
}

// stepCovers reports whether step k runs at least what step g runs: the
// same words (reporting aside), or the same runner and flags with a
// selection that leaves out no more than g's.
func stepCovers(k, g shellcmd.Step) bool {
	if stepWords(k) == stepWords(g) {
		return true
	}
	if k.Runner == "" || k.Runner != g.Runner || k.Dir != g.Dir || unselected(k) != unselected(g) || matrixRunners[k.Runner] {
		return false
	}
	if len(k.Selection) >= len(g.Selection) && !allWholeSuite(k.Selection, k.Runner) {
		return false
	}
	for _, s := range k.Selection {
		if !slices.Contains(g.Selection, s) && !isWholeSuite(s, k.Runner) {
			return false
		}
	}
	// What g selects beyond k must only narrow (paths, names, groups): a
	// configuration or project flag picks other tests.
	for _, s := range g.Selection {
		if slices.Contains(k.Selection, s) {
			continue
		}
		flag, _, _ := strings.Cut(strings.Fields(s + " ")[0], "=")
		if strings.HasPrefix(flag, "-") && (!includeFlags[flag] || projectFlags[flag]) && !strings.HasPrefix(flag, "-Dtest") {
			return false
		}
	}
	return true
}

// projectFlags pick one of the runner's configured projects (vitest
// --project unit, jest --selectProjects): the others may need a browser or
// services, so running them all is no broader form of the same gate.
var projectFlags = map[string]bool{"--project": true, "--selectProjects": true, "--projects": true, "-pl": true}

// matrixRunners run every environment or session they define when none is
// selected (every interpreter, lint, docs): no selection is not the suite.
var matrixRunners = map[string]bool{"tox": true, "nox": true}

// isWholeSuite reports a positional selection that names the whole suite
// for the runner: ./... for go test (where "." is one package), the test
// root or "." for the others.
func isWholeSuite(s, runner string) bool {
	if runner == "go test" {
		return s == "./..." || s == "..."
	}
	return wholeSuite[s] || wholeSuite[strings.TrimSuffix(strings.TrimPrefix(s, "./"), "/")]
}

func allWholeSuite(sel []string, runner string) bool {
	for _, s := range sel {
		if !isWholeSuite(s, runner) {
			return false
		}
	}
	return true
}

// covers reports whether the command k runs every test step the commands
// gs run, and no lint or format check besides (it may type-check and
// build). why says how.
func (m *manifests) covers(k candidate, gs []string, workdir string) (bool, string) {
	kGates := m.gateSteps(k.command, k.workdir)
	kGates = append(kGates, m.unknownSteps(k.command, k.workdir)...)
	var kTests []shellcmd.Step
	for _, s := range kGates {
		if s.Kind.Has(kTest) {
			kTests = append(kTests, s)
		}
	}
	if len(kTests) == 0 {
		return false, ""
	}
	matched := make([]bool, len(kGates))
	narrower, wrapped := false, false
	for _, g := range gs {
		leaves := m.testLeaves(g, workdir)
		if len(leaves) == 0 {
			return false, ""
		}
		for _, gl := range leaves {
			found := false
			// The same step first, then a broader one.
			order := make([]int, 0, len(kGates))
			for i, ks := range kGates {
				if stepWords(ks) == stepWords(gl) {
					order = append(order, i)
				}
			}
			for i := range kGates {
				if !slices.Contains(order, i) {
					order = append(order, i)
				}
			}
			for _, i := range order {
				ks := kGates[i]
				if stepCovers(ks, gl) {
					matched[i] = true
					found = true
					if stepWords(ks) != stepWords(gl) {
						narrower = true
					}
					if len(gl.Decoration) > 0 || len(gl.Via) > len(ks.Via) {
						wrapped = true
					}
					break
				}
			}
			if !found {
				return false, ""
			}
		}
	}
	for i, ks := range kGates {
		if !matched[i] && ks.Kind&(kLint|kFormat) != 0 && !ks.Kind.Has(kTest) {
			return false, "" // the canonical target also lints: a wider gate than the task needs
		}
	}
	extra := 0
	for i := range kGates {
		if !matched[i] {
			extra++
		}
	}
	switch {
	case len(gs) > 1 && extra == 0:
		return true, "runs the same test steps CI runs one by one"
	case len(gs) > 1:
		return true, "runs every test step CI runs one by one, and more of the suite"
	case narrower:
		return true, "runs the same tests with a broader selection than CI's step"
	case extra > 0:
		return true, "runs CI's test step and the rest of the suite"
	case wrapped:
		return true, "runs the same tests; CI's command only adds reporting around them"
	}
	return false, ""
}

// canonicalFor finds the manifest's or contributor doc's named target that
// covers the CI gate (its step and the job's other test steps): the team's
// name for the whole suite.
func canonicalFor(g candidate, ev *evidence) (candidate, string, bool) {
	return canonicalCovering(g, append([]string{g.command}, g.parts...), ev)
}

// canonicalAcross is canonicalFor over every gate job of CI: a project that
// runs each suite in its own job (unit, node, browser) and names them all
// in one test script.
func canonicalAcross(g candidate, ev *evidence) (candidate, string, bool) {
	gs := []string{g.command}
	gs = append(gs, g.parts...)
	seen := map[string]bool{normalizeCmd(g.command): true}
	for _, o := range ev.ci {
		if o.unusable != "" || o.variant != "" || o.workdir != g.workdir || !o.kind.Has(kTest) || o.kind.Has(kE2E) {
			continue
		}
		for _, c := range append([]string{o.command}, o.parts...) {
			if !seen[normalizeCmd(c)] {
				seen[normalizeCmd(c)] = true
				gs = append(gs, c)
			}
		}
	}
	if len(gs) == 1+len(g.parts) {
		return candidate{}, "", false
	}
	k, why, ok := canonicalCovering(g, gs, ev)
	if ok {
		why = "runs the test commands of every CI gate job (" + strings.Join(gs, "; ") + ")"
	}
	return k, why, ok
}

// canonicalCovering finds the canonical target that covers the commands gs
// of CI (g is the best of them).
func canonicalCovering(g candidate, gs []string, ev *evidence) (candidate, string, bool) {
	// The named scripts CI's command runs through: a CI script that wraps
	// another (jest-coverage runs `yarn jest --coverage`) is a variant of
	// the one it wraps.
	wrapped := map[string]bool{}
	gTargets := shellcmd.Analyze(ev.m.tree, g.command, g.workdir).Depends.Targets
	if !canonicalName(g.script) {
		for _, t := range gTargets {
			wrapped[t] = true
		}
	}
	for _, pool := range [][]candidate{ev.manifest, ev.context} {
		for _, k := range pool {
			if k.unusable != "" || k.workdir != g.workdir || !k.kind.Has(kTest) || k.kind.Has(kCoverage) || k.variant != "" {
				continue
			}
			if !k.strong || k.layer == LayerManifest && !canonicalName(k.script) && !wrapped[ev.m.target(k)] {
				continue // the manifest's test target (or the script CI wraps), not another script or a runner's bare default
			}
			if normalizeCmd(k.command) == normalizeCmd(g.command) && len(g.parts) == 0 {
				continue
			}
			if matrixRunners[k.sig] {
				continue // tox or nox: which envs run is in the words, not in the steps they reach
			}
			if t := ev.m.target(k); t != "" && len(gTargets) > 0 && gTargets[0] == t {
				continue // the same script CI runs, through another runner (npm test for pnpm test)
			}
			if ok, why := ev.m.covers(k, gs, g.workdir); ok {
				return k, why, true
			}
		}
	}
	return candidate{}, "", false
}

// target is the "file:name" of the named script a candidate runs ("" for
// none), as shellcmd's Depends.Targets spells it.
func (m *manifests) target(c candidate) string {
	if c.runner == "" || c.script == "" {
		return ""
	}
	_, file, _ := m.tree.Script(c.runner, c.workdir, c.script)
	return file + ":" + c.script
}

// canonicalName reports the names a project gives its whole suite.
func canonicalName(script string) bool {
	switch script {
	case "test", "tests", "spec", "specs", "check":
		return true
	}
	return false
}

// broaderDefault finds, for a CI gate that selects a part of the suite, the
// manifest's default command that runs the same runner over all of it.
func broaderDefault(g candidate, ev *evidence) (candidate, string, bool) {
	if g.narrow == 0 {
		return candidate{}, "", false
	}
	for _, k := range ev.manifest {
		if k.unusable != "" || k.workdir != g.workdir || !k.kind.Has(kTest) || k.kind.Has(kE2E) {
			continue
		}
		if ok, why := ev.m.covers(k, []string{g.command}, g.workdir); ok {
			return k, why, true
		}
	}
	return candidate{}, "", false
}

// adoptCanonical makes k the chosen candidate with the CI gate g as its
// evidence.
func adoptCanonical(k, g candidate, why string) candidate {
	k.evidence = append(append([]Finding{finding(k.layer, k.source, fmt.Sprintf("`%s` %s", k.command, why))}, g.evidence...), k.evidence...)
	if k.setup == "" {
		k.setup = g.setup
	}
	k.ciBacked = true
	return k
}

// plainCommand takes CI-only decoration off a command that runs one test
// runner directly (coverage output, reporters, verbosity, log groups): the
// local equivalent runs the same tests and prints less. Flags that change
// which tests run are kept. It returns the command unchanged when it is
// not one simple command whose words are all literal.
func (m *manifests) plainCommand(command, workdir string) (string, []string) {
	cmds, err := shellcmd.Parse(command)
	if err != nil || len(cmds) != 1 || cmds[0].Compound || len(cmds[0].Piped) > 0 || cmds[0].Dir != "" && cmds[0].Dir != "." {
		return command, nil
	}
	a := shellcmd.Analyze(m.tree, command, workdir)
	var step *shellcmd.Step
	for i := range a.Steps {
		s := &a.Steps[i]
		if !s.Kind.Has(kTest) || len(s.Via) > 0 {
			continue
		}
		if step != nil {
			return command, nil
		}
		step = s
	}
	if step == nil {
		return command, nil
	}
	plain, defaults := dropDefaults(step.Plain, step.Runner)
	if len(step.Decoration) == 0 && len(defaults) == 0 {
		return command, nil
	}
	raw := cmds[0].Args
	if len(step.Args) > len(raw) {
		return command, nil
	}
	prefix := raw[:len(raw)-len(step.Args)]
	for i, w := range step.Args {
		if raw[len(prefix)+i] != w {
			return command, nil
		}
	}
	var words []string
	for i, w := range append(append([]string(nil), prefix...), plain...) {
		switch {
		case w == "":
			return command, nil // not literal: cannot be written back
		case i < len(prefix) && shellcmd.IsAssignment(w):
			words = append(words, w) // as written
		default:
			words = append(words, shellcmd.Quote(w))
		}
	}
	return strings.Join(words, " "), append(append([]string(nil), step.Decoration...), defaults...)
}

// defaultValued are flags whose value names what the runner uses anyway:
// `--file pom.xml`, `--manifest-path ./Cargo.toml`, `-c phpunit.xml.dist`.
var defaultValued = map[string]map[string][]string{
	"mvn":        {"-f": {"pom.xml"}, "--file": {"pom.xml"}},
	"gradle":     {"-p": {"."}, "--project-dir": {"."}},
	"cargo test": {"--manifest-path": {"Cargo.toml"}, "--target": {hostTriple()}},
	"phpunit":    {"-c": {"phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml"}, "--configuration": {"phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml"}},
}

// hostTriple is the Rust target of this machine: --target with it builds
// what cargo builds by default.
func hostTriple() string {
	switch runtime.GOARCH {
	case "arm64":
		return "aarch64-unknown-linux-gnu"
	case "386":
		return "i686-unknown-linux-gnu"
	}
	return "x86_64-unknown-linux-gnu"
}

// dropDefaults removes the default-valued flags of a runner from words.
func dropDefaults(words []string, runner string) ([]string, []string) {
	flags := defaultValued[runner]
	if runner == "cargo nextest" {
		flags = defaultValued["cargo test"]
	}
	if len(flags) == 0 {
		return words, nil
	}
	return dropFlags(words, func(name, val string, _ bool) (bool, bool) {
		defaults, ok := flags[name]
		return ok, ok && slices.Contains(defaults, strings.TrimPrefix(val, "./"))
	})
}

// dropFlags removes from words the flags (with their value, inline or the
// next word) that drop says to: known is whether name is a flag it knows
// (whose next word may be its value), remove whether to remove it.
func dropFlags(words []string, drop func(name, val string, inline bool) (known, remove bool)) (out, dropped []string) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, val, inline := strings.Cut(w, "=")
		if !inline && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			val = words[i+1]
		}
		known, remove := drop(name, val, inline)
		if !known || !remove {
			out = append(out, w)
			continue
		}
		if inline || val == "" {
			dropped = append(dropped, w)
		} else {
			dropped = append(dropped, w+" "+val)
			i++
		}
	}
	return out, dropped
}

// needlessQuoteRe matches a word quoted whole although it has nothing the
// shell would expand or split: "tests-3.12".
var needlessQuoteRe = lazyre.New(`(^|\s)(?:"([A-Za-z0-9._/:=@%+,-]+)"|'([A-Za-z0-9._/:=@%+,-]+)')(\s|$)`)

// unquoteNeedless writes such words without their quotes (a matrix value
// substituted into a quoted word leaves them).
func unquoteNeedless(s string) string {
	for i := 0; i < 3; i++ {
		n := needlessQuoteRe.ReplaceAllString(s, "$1$2$3$4")
		if n == s {
			break
		}
		s = n
	}
	return s
}

// posargRunners pass the words after `--` to the test runner of their
// session or env (pytest, almost always).
var posargRunners = map[string]bool{"tox": true, "nox": true}

// plainPosargs takes the reporting decoration off the words a tox or nox
// command passes to its test runner after `--`, read as pytest's: what is
// left selects tests; with nothing left, the `--` goes too.
func (m *manifests) plainPosargs(command string, g jobCmd) (string, []string) {
	if !posargRunners[g.info.sig] {
		return command, nil
	}
	fields := strings.Fields(command)
	at := slices.Index(fields, "--")
	if at < 0 || strings.ContainsAny(command, "'\"$`|;&<>") {
		return command, nil
	}
	rest := fields[at+1:]
	if len(rest) == 0 {
		return strings.Join(fields[:at], " "), []string{"--"}
	}
	a := shellcmd.Analyze(nil, "pytest "+strings.Join(rest, " "), ".")
	if len(a.Steps) != 1 || len(a.Steps[0].Decoration) == 0 {
		return command, nil
	}
	kept := a.Steps[0].Plain[1:]
	out := append([]string(nil), fields[:at]...)
	if len(kept) > 0 {
		out = append(append(out, "--"), kept...)
	}
	return strings.Join(out, " "), a.Steps[0].Decoration
}

// pathLike reports a word that names test files or directories (a path, a
// test id), not a script or subcommand.
func pathLike(w string) bool {
	return !strings.HasPrefix(w, "-") && (strings.Contains(w, "/") || strings.Contains(w, "::") || strings.HasSuffix(w, ".py") || strings.HasSuffix(w, ".js") || strings.HasSuffix(w, ".ts") || strings.HasSuffix(w, ".rb") || strings.HasSuffix(w, ".go"))
}

// unionOf joins a CI job's test steps that differ only in the paths or
// names they select (tests/unit, then tests/functional) into one command
// without that selection: together they run the whole suite.
func unionOf(cmds []string) (string, bool) {
	if len(cmds) < 2 {
		return "", false
	}
	base := strings.Fields(cmds[0])
	if len(base) < 3 {
		return "", false
	}
	differ := make([]bool, len(base))
	for _, c := range cmds[1:] {
		// Walk both: equal words match; a flag only the later step has
		// (--no-install: reuse what the first step installed) is skipped;
		// two different positional words are the parts' selections.
		f := strings.Fields(c)
		i, j := 0, 0
		for i < len(base) && j < len(f) {
			switch {
			case f[j] == base[i]:
				i++
				j++
			case strings.HasPrefix(f[j], "-") && !slices.Contains(base, f[j]):
				j++
			case i >= 2 && pathLike(f[j]) && pathLike(base[i]):
				differ[i] = true
				i++
				j++
			default:
				return "", false // another program or subcommand, or another flag
			}
		}
		for ; j < len(f); j++ {
			if !strings.HasPrefix(f[j], "-") {
				return "", false
			}
		}
		if i != len(base) {
			return "", false
		}
	}
	var out []string
	any := false
	for i, w := range base {
		if differ[i] {
			any = true
			continue
		}
		out = append(out, w)
	}
	if !any {
		return "", false
	}
	if len(out) > 0 && out[len(out)-1] == "--" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, " "), true
}

// workspaceWide finds, for a CI gate that tests one package of a monorepo,
// the manifest's test target that runs the same through the workspace
// runner for every package (nx run-many, turbo run, pnpm -r, yarn
// workspaces foreach).
func workspaceWide(g candidate, ev *evidence) (candidate, bool) {
	if g.pkg == "" {
		return candidate{}, false
	}
	for _, k := range ev.manifest {
		if k.unusable != "" || k.workdir != g.workdir || !k.kind.Has(kTest) || k.kind&(kE2E|kCoverage) != 0 || !canonicalName(k.script) {
			continue
		}
		for _, st := range shellcmd.Analyze(ev.m.tree, k.command, k.workdir).Steps {
			if st.Kind.Has(kTest) && workspaceRunner(st) {
				return k, true
			}
		}
	}
	return candidate{}, false
}

// workspaceRunner reports a step that runs a target in every package of a
// workspace.
func workspaceRunner(st shellcmd.Step) bool {
	if len(st.Args) == 0 {
		return false
	}
	switch shellcmd.ToolName(st.Args[0]) {
	case "nx":
		return slices.Contains(st.Args, "run-many")
	case "turbo", "lerna", "ultra", "wireit", "moon":
		return true
	case "pnpm", "npm", "yarn", "bun":
		return shellcmd.HasFlag(st.Args, "-r") || shellcmd.HasFlag(st.Args, "--recursive") || shellcmd.HasFlag(st.Args, "--workspaces") || shellcmd.HasFlag(st.Args, "-ws") || slices.Contains(st.Args, "workspaces") || slices.Contains(st.Args, "foreach")
	}
	return false
}
