package criteria

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// evidence is everything the layers found, handed to synthesis.
type evidence struct {
	intent   taskIntent
	ci       []candidate
	ciNotes  []Finding
	context  []candidate
	ctxFacts []Finding
	aiwg     []candidate
	aiwgFact []Finding
	manifest []candidate
	m        *manifests
	r        *repo
	hasCI    bool
	// taskDir is the directory the task names ("" for none): the
	// criterion runs there.
	taskDir string
}

var (
	badJobRe  = lazyre.New(`(?i)(e2e|end-to-end|integration|bench|windows|macos|mac-os|osx|nightly|msrv|minimal|miri|sanitiz|asan|tsan|valgrind|docs?\b|fuzz|cross|wasm|android|ios|arm|32-?bit|i686|musl|freebsd|semver|min-versions|beta|canary|experimental|smoke|perf|browser|playwright|cypress|selenium|deploy|release|upgrade|compat|legacy|old|latest-deps|lowest|min\b|minimum|slow|stress|mutation)`)
	goodJobRe = map[kind]*lazyre.Regexp{
		kTest:     lazyre.New(`(?i)(test|spec|unit|check|ci|build)`),
		kLint:     lazyre.New(`(?i)(lint|style|format|fmt|clippy|check|static)`),
		kType:     lazyre.New(`(?i)(type|tsc|mypy|check)`),
		kBuild:    lazyre.New(`(?i)(build|compile)`),
		kCoverage: lazyre.New(`(?i)(cov)`),
	}
	ciFileRe = lazyre.New(`(?i)(^|/)(ci|test|tests|check|checks|build|main|pr|push|pull[-_]request|go|rust|node|python|java|ruby|php|elixir|dotnet|cmake|cpp|unit)[^/]*\.ya?ml$`)
)

// matchesWant reports whether a candidate checks what the class needs.
func matchesWant(c candidate, want kind) bool {
	return c.kind&want != 0
}

// score orders candidates: lower is better.
func score(c candidate, want kind) int {
	s := c.rank * 2
	s += 10 * len(c.problems)
	if want.Has(kCoverage) && !c.kind.Has(kCoverage) {
		s += 6
	}
	if want == kTest || want&kTest != 0 && !want.Has(kCoverage) {
		switch {
		case c.kind&(kLint|kFormat) != 0:
			s += 3
		case c.kind.Has(kType):
			s++ // type tests run with the suite (tsc over the test files)
		}
		if c.kind.Has(kE2E) {
			s += 8
		}
		if c.kind.Has(kCoverage) {
			s += 2 // a coverage run is the test run plus instrumentation: a plain one is the gate
		}
		s += 3 * buildProperties(c.command) // -Ptest.java.version=21: one configuration of several
		if matrixRunners[c.sig] && !selectsEnv(c.command) {
			s += 4 // bare tox or nox runs every env: other interpreters, lint, docs
		}
	}
	if want.Has(kLint) && !c.kind.Has(kLint) {
		s += 2 // a format check alone is a weaker lint gate
	}
	if want.Has(kLint) && c.kind&kTest != 0 {
		s += 6
	}
	if want.Has(kLint) && c.kind&kType != 0 {
		s += 2
	}
	if want == kType && c.kind&(kTest) != 0 {
		s += 6
	}
	if want == kBuild && c.kind&(kTest|kLint) != 0 {
		s += 4
	}
	if c.variant != "" {
		s += 12
	}
	s += 2 * c.narrow
	if c.layer == LayerCIConfig {
		job := c.source
		if i := strings.Index(job, " step "); i >= 0 {
			job = job[:i]
		}
		file, jobName, _ := strings.Cut(job, " job ")
		if badJobRe.MatchString(jobName) {
			s += 6
		}
		for k, re := range goodJobRe {
			if want&k != 0 && re.MatchString(jobName) {
				s -= 2
				break
			}
		}
		if !ciFileRe.MatchString(file) {
			s += 1
		}
		if c.workdir != "." {
			s++ // a subproject's gate is less often the repository's suite
		}
		if peripheralDir(c.workdir) {
			s += 2 // bindings, a client, the docs site: beside the project's own code
		}
	} else if !c.strong {
		s += 3
	}
	return s
}

// serviceTrapRe matches a manifest trap that says the suite needs a
// service the loop's machine may not run.
var serviceTrapRe = lazyre.New(`(?i)\b(database|postgres|mysql|redis|mongo|service|docker|browser)\b`)

// selectsEnv reports a tox or nox command that names its envs or sessions.
func selectsEnv(command string) bool {
	for _, f := range strings.Fields(command) {
		name, _, _ := strings.Cut(f, "=")
		switch name {
		case "-e", "--env", "-f", "--factor", "-s", "--session", "--sessions", "-t", "--tags", "-k", "-m", "TOXENV", "NOXSESSION", "TOX_ENV":
			return true
		}
		if strings.HasPrefix(f, "-e") && len(f) > 2 && !strings.HasPrefix(f, "--") {
			return true
		}
	}
	return false
}

// buildProperties counts the -P and -D properties of a JVM build command.
func buildProperties(command string) int {
	n := 0
	for _, f := range strings.Fields(command) {
		if len(f) > 2 && (strings.HasPrefix(f, "-P") || strings.HasPrefix(f, "-D")) && strings.Contains(f, "=") {
			n++
		}
	}
	return n
}

// pick returns the best usable candidate of a pool for the wanted kind.
func pick(pool []candidate, want kind) (candidate, bool) {
	var usable []candidate
	for _, c := range pool {
		if matchesWant(c, want) && c.unusable == "" {
			usable = append(usable, c)
		}
	}
	if len(usable) == 0 {
		return candidate{}, false
	}
	sort.SliceStable(usable, func(i, j int) bool {
		si, sj := score(usable[i], want), score(usable[j], want)
		if si != sj {
			return si < sj
		}
		return usable[i].order < usable[j].order
	})
	return usable[0], true
}

func layerPriority(layer string) int {
	switch layer {
	case LayerTaskVerb:
		return 0
	case LayerCIConfig:
		return 1
	case LayerAIWGArtifact:
		return 2
	case LayerContextFile:
		return 3
	case LayerManifest:
		return 4
	}
	return 5
}

// synthesize weighs the layers into a proposal.
func synthesize(task string, ev *evidence) Proposal {
	in := ev.intent
	p := Proposal{Task: task, Class: in.class, Criterion: in.criterion, Workdir: "."}
	p.Rationale = append(p.Rationale, taskFinding(in))
	want := wantKind(in.class)
	if ev.taskDir != "" {
		ev.ci = restrictTo(ev.ci, ev.taskDir)
		ev.context = restrictTo(ev.context, ev.taskDir)
		ev.aiwg = restrictTo(ev.aiwg, ev.taskDir)
		ev.manifest = restrictTo(ev.manifest, ev.taskDir)
		p.Rationale = append(p.Rationale, finding(LayerTaskVerb, "task", "the task names "+ev.taskDir+": the criterion is that directory's"))
	}

	var chosen candidate
	var ok bool
	if in.command != "" {
		info := ev.m.classifier().classify(strings.Fields(in.command), ".")
		chosen = candidate{command: in.command, workdir: ".", kind: info.kind | want, sig: info.sig, layer: LayerTaskVerb, source: "task", strong: true, runner: info.runner, script: info.script,
			evidence: []Finding{finding(LayerTaskVerb, "task", "the task names its own check: `"+in.command+"`")},
			origin:   &Origin{Named: in.commandFrom}}
		ok = true
	}
	if !ok {
		// Among CI gates, those a manifest or context file also states
		// (two layers agree) come first.
		ci := append([]candidate(nil), ev.ci...)
		for i := range ci {
			if confirmedElsewhere(ci[i], ev) > 0 {
				ci[i].rank--
			}
		}
		if chosen, ok = pick(ci, want); ok {
			chosen.rank = 0
			for _, c := range ev.ci {
				if c.order == chosen.order {
					chosen = c
				}
			}
			if c, narrower := narrowerLocal(chosen, ev, want); narrower {
				p.Rationale = append(p.Rationale, finding(LayerCIConfig, chosen.source, fmt.Sprintf("CI's `%s` checks more than the task needs (%s); it runs `%s`, which is the check for this task", chosen.command, (chosen.kind&gateKinds&^want).String(), c.command)))
				chosen = c
			}
			if want == kTest {
				chosen = ev.gateOf(chosen, &p)
			}
		}
	}
	if !ok {
		chosen, ok = pickLocal(ev, want)
	}
	if !ok && (want == kType) {
		// Compiling is the type check of a compiled language.
		if c, found := pick(ev.ci, kBuild); found {
			chosen, ok = c, true
		} else if c, found := pick(ev.manifest, kBuild); found {
			chosen, ok = c, true
		}
		if ok {
			p.Rationale = append(p.Rationale, finding(LayerFallback, chosen.source, "no type-check command found: the build stands in for it (compiling type-checks)"))
		}
	}
	if !ok {
		return fallback(p, ev)
	}

	// Setup: the candidate's own, or the manifest's install for its
	// directory.
	d := ev.m.at(chosen.workdir)
	setup := chosen.setup
	if setup == "" && chosen.layer != LayerManifest {
		from := d.setup
		for _, mc := range ev.manifest {
			if mc.workdir == chosen.workdir && mc.sig != "" && mc.sig == chosen.sig && mc.setup != "" {
				from = mc.setup
				break
			}
		}
		if from != "" {
			setup = from
			p.Rationale = append(p.Rationale, finding(LayerManifest, chosen.workdir, "setup from the manifest: `"+setup+"`"))
		}
	}
	cmd := chosen.command
	cmd, thresholdNote := applyThreshold(cmd, chosen, in)

	p.Command = cmd
	p.Origin = originOf(chosen)
	p.Workdir = chosen.workdir
	p.Setup = setup
	p.Rationale = append(p.Rationale, chosen.evidence...)
	if len(chosen.evidence) == 0 {
		p.Rationale = append(p.Rationale, finding(chosen.layer, chosen.source, "proposes `"+chosen.command+"`"))
	}
	if thresholdNote.Finding != "" {
		p.Rationale = append(p.Rationale, thresholdNote)
	}

	// Agreement of the other layers.
	confirms := confirmations(chosen, ev, d)
	p.Rationale = append(p.Rationale, confirms...)

	// Traps.
	var traps []Finding
	for _, pr := range chosen.problems {
		traps = append(traps, finding(chosen.layer, chosen.source, "trap: "+pr))
	}
	for _, t := range d.traps {
		traps = append(traps, finding(t.Layer, t.Source, "trap: "+t.Finding))
	}
	if chosen.workdir != "." {
		for _, t := range ev.m.at(".").traps {
			if strings.Contains(t.Finding, "workspace root") || strings.Contains(t.Finding, "root module") {
				traps = append(traps, finding(t.Layer, t.Source, "trap: "+t.Finding+" (so the check runs in "+chosen.workdir+")"))
			}
		}
	}
	if strings.HasPrefix(chosen.sig, "ctest") && !strings.Contains(chosen.command, "&&") {
		traps = append(traps, finding(chosen.layer, chosen.source, "trap: ctest runs the binaries last built; when the sources change they must be rebuilt (cmake --build) before a check, or the check tests stale code"))
	}
	traps = append(traps, similarRunnerTraps(chosen, d)...)
	traps = append(traps, recipeDiffers(chosen, ev)...)
	p.Rationale = append(p.Rationale, traps...)

	// What the manifests of the directory say.
	for i, f := range d.facts {
		if i == 3 {
			break
		}
		p.Rationale = append(p.Rationale, f)
	}
	p.Rationale = append(p.Rationale, summarizeIgnored(ev.ciNotes)...)
	p.Rationale = append(p.Rationale, ev.r.problems...)

	// Confidence.
	var below []string
	confirmed := false
	for _, f := range confirms {
		// A CI variant agreeing with the suite chosen instead of it is no
		// confirmation.
		if chosen.ciVariant == "" || f.Layer != LayerCIConfig {
			confirmed = true
		}
	}
	p.Confidence, below = confidence(chosen, ev, want, confirmed, thresholdNote)
	for _, t := range d.traps {
		if serviceTrapRe.MatchString(t.Finding) && p.Confidence == ConfidenceHigh {
			p.Confidence = ConfidenceMedium
			below = append(below, t.Finding)
		}
	}
	for _, w := range below {
		p.Rationale = append(p.Rationale, finding(chosen.layer, chosen.source, "below high: "+w))
	}
	if in.class == ClassImplementFeature && p.Confidence == ConfidenceHigh {
		p.Confidence = ConfidenceMedium
		p.Rationale = append(p.Rationale, finding(LayerTaskVerb, "task", "a new feature: the suite passing does not prove the feature exists until it has a test, so confidence is at most medium"))
	}
	p.Alternatives = alternatives(chosen, ev, want)
	if want == kTest && ev.taskDir == "" && in.command == "" {
		if p.Suites = ev.suitesOf(candidate{command: p.Command, workdir: p.Workdir, source: chosen.source}, want); len(p.Suites) > 1 {
			p.Rationale = append(p.Rationale, finding(LayerCIConfig, chosen.source, fmt.Sprintf("CI tests %d directories in their own jobs and no command runs them all: the proposal lists every suite; name a directory in the task to choose one", len(p.Suites))))
			if p.Confidence == ConfidenceHigh {
				p.Confidence = ConfidenceMedium
			}
		}
	}
	return p
}

// pickLocal picks among the layers other than CI: the .aiwg artifacts,
// the context files and the manifests.
func pickLocal(ev *evidence, want kind) (candidate, bool) {
	var pool []candidate
	pool = append(pool, ev.aiwg...)
	pool = append(pool, ev.context...)
	pool = append(pool, ev.manifest...)
	for i := range pool {
		pool[i].order = i
		pool[i].rank += layerPriority(pool[i].layer)
	}
	chosen, ok := pick(pool, want)
	if ok {
		chosen.rank -= layerPriority(chosen.layer)
	}
	return chosen, ok
}

// gateOf turns the best CI test gate into the criterion: when every CI
// test job is a variant, the contributor doc or manifest's own suite wins;
// otherwise the canonical target that covers the gate (its steps, a
// broader selection, the same tests without CI's wrapper).
func (ev *evidence) gateOf(g candidate, p *Proposal) candidate {
	if g.variant != "" {
		if alt, ok := pickLocal(ev, kTest); ok && alt.variant == "" && !alt.kind.Has(kE2E) {
			p.Rationale = append(p.Rationale, finding(LayerCIConfig, g.source, "every CI test job is a variant ("+g.variant+"): the project's own suite is taken from "+layerName(alt.layer)+" instead"))
			alt.ciVariant = g.command
			return alt
		}
		return g
	}
	if k, why, ok := canonicalFor(g, ev); ok {
		p.Rationale = append(p.Rationale, finding(LayerCIConfig, g.source, fmt.Sprintf("CI runs `%s`; the canonical target `%s` covers it", strings.Join(append([]string{g.command}, g.parts...), "`, `"), k.command)))
		return adoptCanonical(k, g, why)
	}
	if k, why, ok := canonicalAcross(g, ev); ok {
		p.Rationale = append(p.Rationale, finding(LayerCIConfig, g.source, fmt.Sprintf("CI runs the suite job by job; the canonical target `%s` covers them all", k.command)))
		return adoptCanonical(k, g, why)
	}
	if k, ok := workspaceWide(g, ev); ok {
		p.Rationale = append(p.Rationale, finding(LayerCIConfig, g.source, fmt.Sprintf("CI tests one workspace package per job (`%s`); `%s` runs the tests of every package", g.command, k.command)))
		return adoptCanonical(k, g, "runs the tests of every workspace package")
	}
	if k, why, ok := broaderDefault(g, ev); ok {
		p.Rationale = append(p.Rationale, finding(LayerCIConfig, g.source, fmt.Sprintf("CI's `%s` selects a part of the suite; `%s` runs all of it", g.command, k.command)))
		return adoptCanonical(k, g, why)
	}
	if len(g.sameRunner) > 0 {
		all := append([]string{g.command}, g.sameRunner...)
		if u, ok := unionOf(all); ok {
			p.Rationale = append(p.Rationale, finding(LayerCIConfig, g.source, fmt.Sprintf("CI runs the suite in parts (`%s`); together they are `%s`", strings.Join(all, "`, `"), u)))
			g.command = u
		}
	}
	return g
}

func taskFinding(in taskIntent) Finding {
	switch {
	case in.source == "hint":
		return finding(LayerTaskVerb, "completion hint", fmt.Sprintf("%q -> %s", in.matched, in.class))
	case in.matched != "":
		words := in.matched
		if w := taskWords(in.text); len(w) > 0 {
			words = strings.Join(w, ", ")
		}
		return finding(LayerTaskVerb, "task", fmt.Sprintf("%s -> %s", words, in.class))
	}
	return finding(LayerTaskVerb, "task", "no check named: a change whose tests must pass -> "+in.class)
}

// agrees reports whether two candidates state the same check.
func agrees(c, chosen candidate) bool {
	if effectiveDir(c) != effectiveDir(chosen) {
		return false
	}
	if normalizeCmd(c.command) == normalizeCmd(chosen.command) {
		return true
	}
	if c.sig != "" && c.sig == chosen.sig && c.kind&chosen.kind&gateKinds != 0 {
		return true
	}
	if c.kind&chosen.kind&gateKinds != 0 && (c.inner != "" && c.inner == chosen.sig || chosen.inner != "" && chosen.inner == c.sig) {
		return true
	}
	return chosen.script != "" && c.script == chosen.script && c.runner == chosen.runner
}

// effectiveDir is where a candidate's command runs: its workdir, moved by
// leading `cd DIR &&` steps.
func effectiveDir(c candidate) string {
	dir, cmd := c.workdir, strings.TrimSpace(c.command)
	for {
		rest, ok := strings.CutPrefix(cmd, "cd ")
		if !ok {
			return dir
		}
		d, tail, ok := strings.Cut(rest, " && ")
		if !ok || strings.ContainsAny(d, " ;|&$`\"'") {
			return dir
		}
		dir, cmd = join(dir, d), tail
	}
}

// confirmedElsewhere scores how well a manifest, context file or artifact
// states the same check as a CI candidate: 2 for a named script or an
// explicit instruction, 1 for an ecosystem's default command, 0 for none.
func confirmedElsewhere(c candidate, ev *evidence) int {
	best := 0
	for _, pool := range [][]candidate{ev.manifest, ev.context, ev.aiwg} {
		for _, o := range pool {
			if !agrees(o, c) {
				continue
			}
			if o.strong {
				return 2
			}
			best = 1
		}
	}
	return best
}

// narrowerLocal finds, for a CI gate that checks more than the class needs
// (a `composer test` that lints and tests, for a lint task), a command of
// another layer that the CI gate itself runs and that checks only what is
// needed.
func narrowerLocal(chosen candidate, ev *evidence, want kind) (candidate, bool) {
	allowed := want | kCoverage
	if want.Has(kLint) {
		allowed |= kFormat
	}
	// Only a gate that also tests or builds is wider in kind: a bundle of
	// static checks (lint + types + format) is the team's lint.
	if want.Has(kTest) || chosen.kind&gateKinds&^allowed&(kTest|kBuild) == 0 {
		return candidate{}, false
	}
	inners := map[string]bool{}
	for _, s := range chosen.inners {
		inners[s] = true
	}
	for _, pool := range [][]candidate{ev.manifest, ev.context} {
		for _, o := range pool {
			if o.unusable != "" || o.workdir != chosen.workdir || o.kind&gateKinds&^allowed != 0 || o.kind&want == 0 {
				continue
			}
			if inners[o.sig] || o.inner != "" && inners[o.inner] {
				o.evidence = append(append([]Finding(nil), chosen.evidence...), o.evidence...)
				return o, true
			}
		}
	}
	return candidate{}, false
}

// confirmations lists the other layers that say the same.
func confirmations(chosen candidate, ev *evidence, d *dirManifests) []Finding {
	var out []Finding
	seen := map[string]bool{chosen.layer + chosen.source: true}
	// Agreement that raises confidence runs the same tests: the same
	// signature is not enough (`dotnet test` over the solution does not
	// confirm `dotnet test --project one.csproj --framework net11.0`).
	agree := func(c candidate) bool {
		if !agrees(c, chosen) {
			return false
		}
		if normalizeCmd(c.command) == normalizeCmd(chosen.command) || c.script != "" && c.script == chosen.script && c.runner == chosen.runner {
			return true
		}
		la, lb := ev.m.testLeaves(c.command, c.workdir), ev.m.testLeaves(chosen.command, chosen.workdir)
		if len(la) == 0 || len(lb) == 0 || !chosen.kind.Has(kTest) {
			return true // nothing to compare: the signatures speak
		}
		return sameTests(ev.m, c, chosen)
	}
	pools := [][]candidate{ev.ci, ev.aiwg, ev.context, ev.manifest}
	for _, pool := range pools {
		for _, c := range pool {
			if c.layer == chosen.layer || seen[c.layer] || !agree(c) {
				continue
			}
			seen[c.layer] = true
			out = append(out, finding(c.layer, c.source, "agrees: `"+c.command+"`"))
		}
	}
	// The script the chosen command runs exists in the manifest.
	if chosen.runner != "" && chosen.layer != LayerManifest && !seen[LayerManifest] {
		if body, ok := ev.m.script(chosen.runner, chosen.workdir, chosen.script); ok {
			file := runnerFile(chosen.runner, d)
			out = append(out, finding(LayerManifest, file, fmt.Sprintf("defines %q: `%s`", chosen.script, strings.ReplaceAll(body, "\n", "; "))))
		}
	}
	return out
}

func runnerFile(runner string, d *dirManifests) string {
	switch runner {
	case "npm":
		return join(d.dir, "package.json")
	case "make":
		if d.make != nil {
			return d.make.File
		}
	case "just":
		if d.just != nil {
			return d.just.File
		}
	case "task":
		if d.task != nil {
			return d.task.File
		}
	case "rake":
		if d.rake != nil {
			return d.rake.File
		}
	case "composer":
		return join(d.dir, "composer.json")
	case "deno":
		return join(d.dir, "deno.json")
	}
	return join(d.dir, "pyproject.toml")
}

var spaceRe = lazyre.New(`\s+`)

func normalizeCmd(s string) string {
	s = strings.TrimSpace(spaceRe.ReplaceAllString(s, " "))
	s = strings.TrimPrefix(s, "./")
	s = strings.Replace(s, "npm run test", "npm test", 1)
	return s
}

// similarRunnerTraps warns about two runners with similar names.
func similarRunnerTraps(c candidate, d *dirManifests) []Finding {
	var out []Finding
	cmd := normalizeCmd(c.command)
	if d.pkg != nil {
		body, hasScript := d.pkg.Scripts["test"]
		switch {
		case strings.HasPrefix(cmd, "bun test") && hasScript:
			out = append(out, finding(LayerManifest, d.pkg.file+" scripts.test", "trap: `bun test` runs Bun's built-in test runner, not the test script; `bun run test` would run `"+body+"`"))
		case strings.HasPrefix(cmd, "bun run test") && !strings.Contains(body, "bun test"):
			out = append(out, finding(LayerManifest, d.pkg.file+" scripts.test", "trap: `bun run test` runs the test script (`"+body+"`), not Bun's built-in runner (`bun test`)"))
		}
	}
	if d.deno != nil {
		if body, ok := d.deno["test"]; ok && strings.HasPrefix(cmd, "deno test") {
			out = append(out, finding(LayerManifest, join(d.dir, "deno.json")+" tasks.test", "trap: `deno test` is Deno's runner; the task `deno task test` runs `"+body+"`"))
		}
	}
	return out
}

// recipeDiffers reports a task-runner recipe that runs the same tool as the
// chosen command with other arguments.
func recipeDiffers(c candidate, ev *evidence) []Finding {
	if c.layer != LayerCIConfig && c.layer != LayerContextFile {
		return nil
	}
	var out []Finding
	cl := ev.m.classifier()
	for _, mc := range ev.manifest {
		if mc.workdir != c.workdir || mc.runner == "" || mc.runner == c.runner && mc.script == c.script || mc.kind&c.kind&gateKinds == 0 {
			continue
		}
		body, ok := ev.m.script(mc.runner, mc.workdir, mc.script)
		if !ok || body == "" {
			continue
		}
		cmds, err := splitScript(body)
		if err != nil {
			continue
		}
		for _, sc := range cmds {
			info := cl.classify(sc.Args, mc.workdir)
			if info.sig == "" || info.sig != c.sig || normalizeCmd(sc.Text) == normalizeCmd(c.command) {
				continue
			}
			out = append(out, finding(LayerManifest, mc.source, fmt.Sprintf("trap: `%s` runs `%s`, which differs from `%s` that %s runs; the latter is the team's gate", mc.command, sc.Text, c.command, layerName(c.layer))))
			break
		}
		if len(out) >= 2 {
			break
		}
	}
	return out
}

func layerName(l string) string {
	switch l {
	case LayerCIConfig:
		return "CI"
	case LayerContextFile:
		return "the context file"
	}
	return l
}

// applyThreshold makes a coverage criterion with a percentage enforceable.
func applyThreshold(cmd string, c candidate, in taskIntent) (string, Finding) {
	if in.class != ClassCoverage {
		return cmd, Finding{}
	}
	if in.threshold == 0 {
		if !c.kind.Has(kCoverage) {
			return cmd, finding(LayerTaskVerb, "task", "no coverage command found: the test command stands in; coverage is not measured by it")
		}
		return cmd, Finding{}
	}
	n := strconv.Itoa(in.threshold)
	switch {
	case c.sig == "pytest":
		if !strings.Contains(cmd, "--cov") {
			cmd += " --cov"
		}
		if !strings.Contains(cmd, "--cov-fail-under") {
			cmd += " --cov-fail-under=" + n
		}
		return cmd, finding(LayerTaskVerb, "task", "pytest-cov's --cov-fail-under="+n+" makes the command fail below "+n+"%")
	case c.sig == "go test" && !strings.Contains(cmd, "&&"):
		args := strings.TrimPrefix(cmd, "go test")
		args = goCoverFlagRe.ReplaceAllString(args, "")
		cmd = "go test -coverprofile=coverage.out" + args + " && go tool cover -func=coverage.out | awk '/^total:/ { sub(\"%\", \"\", $3); exit ($3 + 0 < " + n + ") }'"
		return cmd, finding(LayerTaskVerb, "task", "the go tool cover total is compared with "+n+"%: the command fails below it")
	}
	return cmd, finding(LayerTaskVerb, "task", "the threshold of "+n+"% is not enforced by this command: set it in the coverage tool's configuration (e.g. Jest coverageThreshold, nyc --check-coverage)")
}

// confidence applies the rule: high only when the evidence is direct
// (the task names the check, CI states it and no other gate job of CI
// tests something it leaves out, or a manifest and another layer agree)
// and nothing is known against it. why says what kept it below high.
func confidence(c candidate, ev *evidence, want kind, confirmed bool, thr Finding) (level string, why []string) {
	level = ConfidenceMedium
	switch {
	case c.layer == LayerTaskVerb:
		level = ConfidenceHigh
	case c.ciVariant != "":
		if confirmed {
			level = ConfidenceHigh // two layers besides CI state it
		} else {
			why = append(why, "CI tests only variants (`"+c.ciVariant+"`), so the suite comes from "+layerName(c.layer))
		}
	case c.layer == LayerCIConfig || c.ciBacked:
		if confirmed || c.ciBacked || ciUnambiguous(c, ev.ci, want) {
			level = ConfidenceHigh
		} else {
			why = append(why, "no other layer states the same check and CI has other gates of this kind")
		}
	default:
		if confirmed {
			level = ConfidenceHigh
		} else if !c.strong && c.rank >= 4 {
			level = ConfidenceLow
			why = append(why, "a default guessed from the manifest, stated nowhere")
		} else {
			why = append(why, "stated by "+layerName(c.layer)+" alone, not by CI or another layer")
		}
	}
	if c.layer != LayerTaskVerb && want.Has(kTest) && !want.Has(kCoverage) {
		if !c.ciBacked {
			for _, part := range c.parts {
				o := candidate{command: part, workdir: c.workdir}
				if ev.configVariantOf(o, c) {
					continue
				}
				why = append(why, "CI's gate job also runs `"+part+"`, which this command leaves out")
				break
			}
		}
		if o, ok := ev.uncoveredGate(c); ok {
			why = append(why, "CI also gates on `"+o.command+"` ("+o.source+"), which this command does not run")
		}
	}
	for _, p := range c.problems {
		why = append(why, p)
	}
	if configuresWithOptions(c.setup) {
		why = append(why, "the setup configures the build with CI's options (`"+firstWords(c.setup, 8)+"`), which need what CI installs")
	}
	if strings.Contains(thr.Finding, "not enforced") || strings.Contains(thr.Finding, "not measured") {
		why = append(why, thr.Finding)
	}
	if len(why) > 0 && level == ConfidenceHigh {
		level = ConfidenceMedium
	}
	if len(c.problems) > 1 {
		level = ConfidenceLow
	}
	return level, why
}

// configuresWithOptions reports a setup that configures a build with
// feature options (meson -D, cmake -D, ./configure --enable-...): CI's
// configuration of optional parts, which need what CI installs.
func configuresWithOptions(setup string) bool {
	cmds, err := shellcmd.Parse(setup)
	if err != nil {
		return false
	}
	for _, sc := range cmds {
		args := shellcmd.StripWrappers(sc.Args).Args
		if len(args) == 0 {
			continue
		}
		tool := shellcmd.ToolName(args[0])
		if tool != "meson" && tool != "cmake" && !strings.HasSuffix(args[0], "configure") {
			continue
		}
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-D") || strings.HasPrefix(a, "--enable-") || strings.HasPrefix(a, "--with-") {
				return true
			}
		}
	}
	return false
}

// uncoveredGate finds a primary CI test gate in the chosen command's
// directory that tests something the command does not: the gate is then
// one of several, not the gate.
func (ev *evidence) uncoveredGate(c candidate) (candidate, bool) {
	for _, o := range ev.ci {
		if o.unusable != "" || o.variant != "" || !o.kind.Has(kTest) || o.kind.Has(kE2E) || o.workdir != c.workdir || len(o.problems) > 0 || o.narrow >= 2 {
			continue
		}
		if o.kind.Has(kCoverage) || ev.configVariantOf(o, c) {
			continue
		}
		if ok, _ := ev.m.covers(c, append([]string{o.command}, o.parts...), c.workdir); ok {
			continue
		}
		return o, true
	}
	return candidate{}, false
}

// configVariantOf reports a command that runs what c runs in another
// configuration, or a part of it: the same words once environment
// assignments and build properties are set aside, the same tests with
// other flags (-race, a feature), a narrower selection, or c's own command.
func (ev *evidence) configVariantOf(o, c candidate) bool {
	if normalizeCmd(o.command) == normalizeCmd(c.command) || bareCommand(o.command) == bareCommand(c.command) {
		return true
	}
	if sameTests(ev.m, c, o) {
		return true
	}
	args := strings.Fields(o.command)
	if n := narrowness(jobCmd{args: args, text: o.command, dir: o.workdir}, ev.m.tree); n >= 2 {
		return true
	}
	for _, l := range ev.m.testLeaves(o.command, o.workdir) {
		if l.Kind.Has(kCoverage) {
			return true
		}
	}
	if cmds, err := shellcmd.Parse(o.command); err == nil && len(cmds) == 1 {
		// scripts/coverage after scripts/test: it reports (or enforces) the
		// coverage of the run before it; it tests nothing of its own.
		if k := ev.m.classifier().classify(cmds[0].Args, o.workdir).kind; k.Has(kCoverage) || k.Has(shellcmd.Report) {
			return true
		}
	}
	if ok, _ := ev.m.covers(c, []string{o.command}, c.workdir); ok {
		return true
	}
	return false
}

// bareCommand is a command without its leading environment assignments and
// its -P/-D build properties.
func bareCommand(command string) string {
	var out []string
	for i, f := range strings.Fields(command) {
		if len(out) == 0 && shellcmd.IsAssignment(f) {
			continue
		}
		if i > 0 && len(f) > 2 && (strings.HasPrefix(f, "-P") || strings.HasPrefix(f, "-D")) && strings.Contains(f, "=") {
			continue
		}
		out = append(out, f)
	}
	return strings.Join(out, " ")
}

// sameTests reports two commands whose test steps run the same runners
// over the same selection, whatever flags they differ in (-race,
// --all-features): the same suite, configured differently.
func sameTests(m *manifests, a, b candidate) bool {
	la, lb := m.testLeaves(a.command, a.workdir), m.testLeaves(b.command, b.workdir)
	if len(la) == 0 || len(la) != len(lb) {
		return false
	}
	for i := range la {
		if la[i].Runner == "" || la[i].Runner != lb[i].Runner || la[i].Dir != lb[i].Dir || strings.Join(la[i].Selection, " ") != strings.Join(lb[i].Selection, " ") {
			return false
		}
	}
	return true
}

// ciUnambiguous: every usable CI gate of this kind runs the same command
// signature.
func ciUnambiguous(c candidate, pool []candidate, want kind) bool {
	for _, o := range pool {
		if !matchesWant(o, want) || o.unusable != "" || score(o, want) > score(c, want)+4 {
			continue
		}
		if o.sig != c.sig || o.workdir != c.workdir {
			return false
		}
	}
	return true
}

// alternatives lists the other commands considered, with why not.
func alternatives(chosen candidate, ev *evidence, want kind) []Alternative {
	var out []Alternative
	seen := map[string]bool{normalizeCmd(chosen.command) + "|" + chosen.workdir: true}
	var all []candidate
	all = append(all, ev.ci...)
	all = append(all, ev.aiwg...)
	all = append(all, ev.context...)
	all = append(all, ev.manifest...)
	sort.SliceStable(all, func(i, j int) bool {
		ui, uj := all[i].unusable == "", all[j].unusable == ""
		if ui != uj {
			return ui
		}
		li, lj := layerPriority(all[i].layer), layerPriority(all[j].layer)
		if li != lj {
			return li < lj
		}
		return score(all[i], want) < score(all[j], want)
	})
	for _, c := range all {
		if !matchesWant(c, want) {
			continue
		}
		if c.layer == LayerManifest && c.kind.Has(kCoverage) && !want.Has(kCoverage) {
			continue // a coverage variant of a test command: noise here
		}
		key := normalizeCmd(c.command) + "|" + c.workdir
		if seen[key] {
			continue
		}
		seen[key] = true
		cmd := c.command
		if c.workdir != "." {
			cmd = inDir(".", c.workdir, c.command)
		}
		out = append(out, Alternative{Command: cmd, Source: c.source, WhyNot: whyNot(c, chosen, want)})
		if len(out) == 6 {
			break
		}
	}
	return out
}

func whyNot(c, chosen candidate, want kind) string {
	switch {
	case c.unusable != "":
		return "cannot run locally: " + c.unusable
	case len(c.problems) > 0:
		return strings.Join(c.problems, "; ")
	case c.layer == LayerCIConfig && chosen.layer == LayerCIConfig:
		if c.kind.Has(kE2E) {
			return "an end-to-end suite"
		}
		if want&kTest != 0 && c.kind&(kLint|kFormat|kType) != 0 {
			return "also lints or type-checks: a wider gate than the task needs"
		}
		return "another CI job's gate; " + chosen.source + " fits the task better"
	case layerPriority(c.layer) > layerPriority(chosen.layer):
		return layerName(chosen.layer) + " is the team's definition of passing and runs `" + chosen.command + "`"
	case c.kind&(kLint|kFormat|kType) != 0 && want&kTest != 0:
		return "also lints or type-checks: a wider gate than the task needs"
	}
	return "less specific to the task than `" + chosen.command + "`"
}

func summarizeIgnored(notes []Finding) []Finding {
	if len(notes) == 0 {
		return nil
	}
	byFile := map[string][]string{}
	reasons := map[string]string{}
	for _, n := range notes {
		file, job, _ := strings.Cut(n.Source, " job ")
		byFile[file] = append(byFile[file], job)
		reasons[file] = strings.TrimPrefix(n.Finding, "ignored: ")
	}
	var out []Finding
	for _, f := range sortedKeys(byFile) {
		jobs := byFile[f]
		out = append(out, finding(LayerCIConfig, f, fmt.Sprintf("ignored %d job(s) (%s): %s", len(jobs), strings.Join(limitList(jobs, 4), ", "), reasons[f])))
		if len(out) == 4 {
			break
		}
	}
	return out
}

// fallback is the last resort: seed 001's legacy table for a Node project
// or one with no recognisable manifest, a refusal otherwise.
func fallback(p Proposal, ev *evidence) Proposal {
	root := ev.m.at(".")
	ecos := root.ecosystems
	for _, t := range root.traps {
		if strings.Contains(t.Finding, "placeholder") && wantKind(p.Class).Has(kTest) {
			p.Class = ClassRefused
			p.Criterion = ""
			p.Confidence = ConfidenceMedium
			p.RefusalReason = "the project has no test suite: " + t.Finding + "; add tests and a test script, or give --completion CMD"
			p.Rationale = append(p.Rationale, finding(LayerManifest, t.Source, "trap: "+t.Finding))
			p.Rationale = append(p.Rationale, ev.r.problems...)
			return p
		}
	}
	// The legacy table assumes a Node project; it is used only when the
	// repository shows no ecosystem at all.
	if row, ok := legacyFallback(p.Task, p.Class); ok && len(ecos) == 0 {
		p.Command = row.command
		p.Confidence = ConfidenceLow
		p.Rationale = append(p.Rationale, finding(LayerFallback, "seed 001 legacy table", "no layer found a command for "+p.Class+"; the legacy table says "+row.says))
		if len(ecos) == 0 {
			p.Rationale = append(p.Rationale, finding(LayerFallback, ".", "no manifest of a known ecosystem at the repository root: the legacy table assumes a Node project"))
		}
		p.Rationale = append(p.Rationale, summarizeIgnored(ev.ciNotes)...)
		p.Rationale = append(p.Rationale, ev.r.problems...)
		if setup := root.setup; setup != "" {
			p.Setup = setup
		}
		return p
	}
	p.Class = ClassRefused
	p.Criterion = ""
	p.Confidence = ConfidenceLow
	what := map[string]string{ClassLintClean: "lint", ClassTypeClean: "type-check", ClassBuildPass: "build", ClassCoverage: "coverage or test"}[ev.intent.class]
	if what == "" {
		what = "test"
	}
	eco := "no manifest of a known ecosystem"
	if len(ecos) > 0 {
		eco = "a " + strings.Join(ecos, "/") + " project"
	}
	p.RefusalReason = fmt.Sprintf("found no %s command in CI, context files or manifests (%s): give --completion CMD", what, eco)
	p.Rationale = append(p.Rationale, finding(LayerFallback, ".", p.RefusalReason))
	p.Rationale = append(p.Rationale, summarizeIgnored(ev.ciNotes)...)
	p.Rationale = append(p.Rationale, ev.r.problems...)
	return p
}

// goCoverFlagRe is a coverage flag of go test, replaced by the harness's own.
var goCoverFlagRe = lazyre.New(`\s-cover(profile=\S+|mode=\S+|pkg=\S+)?`)
