package criteria

import (
	"fmt"
	"path"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// jobCmd is one command of a CI job, classified.
type jobCmd struct {
	step       ciStep
	text       string
	args       []string
	dir        string
	dirUnknown bool
	info       cmdInfo
	orFallback bool
	compound   bool
	fromAction bool
	unresolved []string
	pipedTo    string
	// env is what the command sees that CI set: the step's env: and what
	// earlier steps wrote to $GITHUB_ENV.
	env map[string]string
}

var placeholderRe = lazyre.New(`__AL_EXPR_([0-9]+)__`)

// restore puts the original ${{ }} expressions back into a text.
func restore(text string, unresolved []string) string {
	return placeholderRe.ReplaceAllStringFunc(text, func(m string) string {
		var n int
		fmt.Sscanf(m, "__AL_EXPR_%d__", &n)
		if n >= 1 && n <= len(unresolved) {
			return unresolved[n-1]
		}
		return m
	})
}

var (
	serviceActionRe = lazyre.New(`(?i)(mongo|postgres|mysql|mariadb|redis|elasticsearch|opensearch|rabbitmq|kafka|compose|localstack|minio|docker-run)`)
	toolchainAction = lazyre.New(`(?i)(^actions/(setup-|checkout|cache|github-script|configure-pages)|/setup-|/install-|toolchain|rust-cache|sccache|ccache|/cache@|install-nix|nix-installer|cachix|msvc-dev-cmd|setup-msbuild|wait-for|get-cmake|lukka/|cmake-action|login-action|buildx|qemu|docker/metadata|checkout|gradle/actions/setup-gradle|gradle/wrapper-validation|gradle/actions/wrapper-validation|denoland/setup|oven-sh/setup|pnpm/action-setup|erlef/setup|ruby/setup|shivammathur/setup|astral-sh/setup-uv|mlugg/setup-zig|goto-bus-stop/setup-zig|haskell-actions/setup|jdx/mise-action|jdx/rtx-action|extractions/setup|arduino/setup|crazy-max/ghaction-setup|bufbuild/buf-setup|ilammy/)`)
	ciOnlyAction    = lazyre.New(`(?i)(upload|download|artifact|codecov|coveralls|coverage-report|report|annotat|comment|summary|problem-matcher|matcher|notify|slack|discord|labeler|stale|release|deploy|publish|pages|changesets|paths-filter|changed-files|dorny|github-script|cla|sonar|codeql|scorecard|dependency-review|cache|lychee|link-check|spell|typos|misspell|semantic-pull-request|pr-title|label)`)
)

// actionStep turns the steps of well-known actions into what they run.
func actionStep(s ciStep) (cmd string, setup string, note string) {
	uses := strings.ToLower(s.uses)
	name := uses
	if i := strings.Index(name, "@"); i >= 0 {
		name = name[:i]
	}
	w := s.with
	switch {
	case name == "golangci/golangci-lint-action":
		return strings.TrimSpace("golangci-lint run " + w["args"]), "", ""
	case name == "actions-rs/cargo":
		if w["command"] == "" {
			return "", "", ""
		}
		return strings.TrimSpace("cargo " + w["command"] + " " + w["args"]), "", ""
	case name == "actions-rs/clippy-check" || name == "giraffate/clippy-action" || name == "auguwu/clippy-action":
		return strings.TrimSpace("cargo clippy " + firstNonEmpty(w["args"], w["clippy_flags"])), "", ""
	case name == "gradle/gradle-build-action" || name == "gradle/actions/setup-gradle" || name == "eskatos/gradle-command-action":
		if w["arguments"] != "" {
			return "./gradlew " + w["arguments"], "", ""
		}
		return "", "", ""
	case name == "pre-commit/action":
		return strings.TrimSpace("pre-commit run " + firstNonEmpty(w["extra_args"], "--all-files")), "", ""
	case name == "astral-sh/ruff-action" || name == "chartboost/ruff-action" || name == "jpetrucciani/ruff-check":
		args := firstNonEmpty(w["args"], "check")
		return strings.TrimSpace("ruff " + args + " " + w["src"]), "", ""
	case name == "ruby/setup-ruby":
		if w["bundler-cache"] == "true" {
			return "", "bundle install", "ruby/setup-ruby with bundler-cache installs the gems"
		}
	case name == "pnpm/action-setup":
		if w["run_install"] != "" && w["run_install"] != "false" {
			return "", "pnpm install", "pnpm/action-setup with run_install installs the dependencies"
		}
	case name == "bahmutov/npm-install":
		return "", "npm ci", "bahmutov/npm-install installs the dependencies"
	case name == "ramsey/composer-install" || name == "php-actions/composer":
		return "", "composer install", s.uses + " installs the Composer dependencies"
	case name == "php-actions/phpunit":
		return "vendor/bin/phpunit", "", ""
	case name == "borales/actions-yarn":
		if w["cmd"] != "" {
			return "yarn " + w["cmd"], "", ""
		}
	case name == "cypress-io/github-action":
		return "npx cypress run", "", ""
	case name == "denoland/deployctl":
		return "", "", ""
	}
	return "", "", ""
}

// actionRole says what an action step is, for the rationale.
func actionRole(uses string) string {
	switch {
	case serviceActionRe.MatchString(uses) && !strings.Contains(strings.ToLower(uses), "setup-"):
		return "service"
	case toolchainAction.MatchString(uses):
		return "toolchain"
	case ciOnlyAction.MatchString(uses):
		return "ci-only"
	}
	return "ci-only"
}

// jobAnalysis is what one job runs, sorted into gates, setup and the rest.
type jobAnalysis struct {
	cmds       []jobCmd
	setups     []string // action-implied setup commands
	toolchain  []string
	ciOnly     []string
	services   []string
	notes      []string
	windows    bool
	unusableSh []string
}

func analyzeJob(j *ciJob, m *manifests) *jobAnalysis {
	a := &jobAnalysis{}
	a.services = append(a.services, j.services...)
	ro := strings.ToLower(j.runsOn)
	a.windows = strings.Contains(ro, "windows") || strings.Contains(ro, "macos") || strings.Contains(ro, "macOS")
	cl := m.classifier()
	written := map[string]string{}
	for _, s := range j.steps {
		env := j.stepEnv(s)
		if s.cond != "" && !env.condition(s.cond) {
			continue
		}
		cmdEnv := map[string]string{}
		for k, v := range env.env {
			cmdEnv[k] = v
		}
		for k, v := range written {
			if _, set := cmdEnv[k]; !set {
				cmdEnv[k] = v
			}
		}
		wd := j.rebase(firstNonEmpty(s.wd, j.defaultWD))
		wd = clean(strings.TrimPrefix(strings.TrimPrefix(wd, "${{ github.workspace }}"), "$GITHUB_WORKSPACE"))
		if s.uses != "" {
			cmd, setup, note := actionStep(s)
			if setup != "" {
				a.setups = append(a.setups, setup)
				a.notes = append(a.notes, note)
			}
			if cmd != "" {
				dir := wd
				if awd := s.with["working-directory"]; awd != "" {
					dir = clean(awd)
				}
				args := strings.Fields(cmd)
				a.cmds = append(a.cmds, jobCmd{step: s, text: cmd, args: args, dir: dir, info: cl.classify(args, dir), fromAction: true, orFallback: s.softFail, env: cmdEnv})
				continue
			}
			if setup != "" {
				continue
			}
			switch actionRole(s.uses) {
			case "service":
				a.services = append(a.services, s.uses)
			case "toolchain":
				a.toolchain = append(a.toolchain, actionName(s.uses))
			default:
				a.ciOnly = append(a.ciOnly, actionName(s.uses))
			}
			continue
		}
		if s.run == "" {
			continue
		}
		sh := ""
		if f := strings.Fields(s.shell); len(f) > 0 {
			sh = strings.ToLower(path.Base(f[0]))
		}
		if sh == "pwsh" || sh == "powershell" || sh == "cmd" || sh == "python" {
			a.unusableSh = append(a.unusableSh, s.label()+" runs in "+sh)
			continue
		}
		cmds, err := splitScript(s.run)
		if err != nil {
			a.notes = append(a.notes, fmt.Sprintf("%s: the script does not parse as shell (%v)", s.label(), err))
			continue
		}
		for k, v := range githubEnvWrites(s.run) {
			if !placeholderRe.MatchString(v) {
				written[k] = v
			}
		}
		for _, sc := range cmds {
			dir := j.rebase(join(wd, sc.Dir))
			jc := jobCmd{step: s, text: replaceWorkspaceVar(sc.Text, dir), args: sc.Args, dir: dir, dirUnknown: sc.DirUnknown, orFallback: sc.OrFallback || s.softFail,
				compound: sc.Compound, unresolved: s.unresolved, pipedTo: sc.PipedTo, env: cmdEnv}
			if sc.Compound {
				for _, in := range sc.Inner {
					info := cl.classify(in.Args, join(wd, in.Dir))
					jc.info.kind |= info.kind
					if jc.info.sig == "" {
						jc.info.sig = info.sig
					}
				}
			} else {
				jc.info = cl.classify(sc.Args, dir)
				// A runner that reads its selection from the environment
				// (TOXENV=pylint) is what that selection makes it.
				for _, v := range runnerEnvVars {
					if val := cmdEnv[v.name]; val != "" && jc.info.sig == v.sig && !placeholderRe.MatchString(val) {
						jc.info = cl.classify(append(append([]string(nil), sc.Args...), v.flag, val), dir)
						break
					}
				}
			}
			if sc.Background {
				jc.info.kind = kService
			}
			if a := shellcmd.StripWrappers(sc.Args).Args; len(a) > 0 && shellcmd.ToolName(a[0]) == "xargs" {
				// The tests it runs are the names on its input, which CI
				// computes (the files a pull request changed).
				jc.info.kind = kCIOnly
			}
			if jc.info.kind.Has(kTest) && updatesSnapshots(sc.Args) {
				// jest -u, vitest --update: rewrites the expectations to
				// match, so it passes whatever the code does.
				jc.info.kind = (jc.info.kind &^ (gateKinds | kE2E)) | kCIOnly
			}
			if s.setupOnly && jc.info.kind&gateKinds != 0 {
				jc.info.kind = (jc.info.kind &^ gateKinds) | kInstall
			}
			a.cmds = append(a.cmds, jc)
		}
	}
	return a
}

var workspaceVarRe = lazyre.New(`"?\$\{?GITHUB_WORKSPACE\}?"?`)

// replaceWorkspaceVar turns $GITHUB_WORKSPACE in a command into the path
// from the command's directory to the repository root.
func replaceWorkspaceVar(text, dir string) string {
	return workspaceVarRe.ReplaceAllStringFunc(text, func(string) string { return relPath(dir, ".") })
}

func actionName(uses string) string {
	if i := strings.Index(uses, "@"); i >= 0 {
		return uses[:i]
	}
	return uses
}

// category is one kind of gate a job can supply.
var categories = []kind{kTest, kLint | kFormat, kType, kBuild, kCoverage}

// ciCandidates turns the jobs into gate candidates, one per job and kind.
func ciCandidates(jobs []*ciJob, m *manifests) (cands []candidate, notes []Finding) {
	// A platform is a variant only beside Linux jobs: a project whose CI
	// runs only on macOS tests there.
	m.ciLinux = map[string]bool{}
	for _, j := range jobs {
		ro := strings.ToLower(j.runsOn)
		if j.skip == "" && !strings.Contains(ro, "windows") && !strings.Contains(ro, "macos") {
			m.ciLinux[j.file] = true
		}
	}
	for _, j := range jobs {
		src := j.file + " job " + j.id
		if j.skip != "" {
			notes = append(notes, finding(LayerCIConfig, src, "ignored: "+j.skip))
			continue
		}
		a := analyzeJob(j, m)
		deploy, gated := false, false
		for _, c := range a.cmds {
			if c.info.kind.Has(kDeploy) && !c.orFallback && !gated {
				deploy = true
			}
			if c.info.kind&gateKinds != 0 && !c.info.kind.Has(kDeploy) {
				gated = true
			}
		}
		if deploy {
			notes = append(notes, finding(LayerCIConfig, src, "ignored: the job publishes or deploys"))
			continue
		}
		for _, cat := range categories {
			if c, ok := jobCandidate(j, a, cat, m); ok {
				cands = append(cands, c)
			}
		}
	}
	for i := range cands {
		cands[i].order = i
		cands[i].layer = LayerCIConfig
	}
	return cands, notes
}

// jobCandidate builds the candidate for one kind of gate in one job.
func jobCandidate(j *ciJob, a *jobAnalysis, cat kind, m *manifests) (candidate, bool) {
	var gates []int
	for i, c := range a.cmds {
		k := c.info.kind
		if !k.Has(cat) || c.orFallback || k.Has(kBench) || k.Has(kDeploy) {
			continue
		}
		if cat == kBuild && k.Has(kTest) {
			continue // a test command is no build gate
		}
		if cat == kCoverage && !k.Has(kCoverage) {
			continue
		}
		gates = append(gates, i)
	}
	if len(gates) == 0 {
		return candidate{}, false
	}
	// Prefer non-e2e gates when the job has both.
	if cat == kTest {
		var plain []int
		for _, g := range gates {
			if !a.cmds[g].info.kind.Has(kE2E) {
				plain = append(plain, g)
			}
		}
		if len(plain) > 0 {
			gates = plain
		}
	}
	// Gates that check only this kind beat wider ones (a type check beats a
	// build that also type-checks).
	var pure []int
	for _, g := range gates {
		if a.cmds[g].info.kind&gateKinds&^(cat|kCoverage) == 0 {
			pure = append(pure, g)
		}
	}
	if cat != kTest && len(pure) > 0 && len(pure) < len(gates) {
		gates = pure
	}
	// One gate per job: the broadest (no filter to one package, binary or
	// test name), the first among equals.
	penalty := func(g int) int {
		n := narrowness(a.cmds[g], m.tree)
		// A build that also tests (mvn package, gradle build) is a worse
		// test gate than a plain test command of the same job.
		if cat == kTest && len(pure) > 0 && a.cmds[g].info.kind.Has(kBuild) {
			n++
		}
		// A linter is a better lint gate than a format check, and a known
		// linter better than a script whose body is not one known tool.
		if cat.Has(kLint) && !a.cmds[g].info.kind.Has(kLint) {
			n++
		}
		if cat.Has(kLint) && a.cmds[g].info.script != "" && a.cmds[g].info.inner == "" {
			n++
		}
		return n
	}
	best := gates[0]
	for _, g := range gates[1:] {
		if penalty(g) < penalty(best) {
			best = g
		}
	}
	first := a.cmds[best]
	chosen := []jobCmd{first}
	var others []jobCmd
	for _, g := range gates {
		if g != best {
			others = append(others, a.cmds[g])
		}
	}
	src := j.file + " job " + j.id + " " + first.step.label()
	c := candidate{source: src, sig: first.info.sig, runner: first.info.runner, script: first.info.script, inner: first.info.inner, strong: true,
		origin: &Origin{File: j.file, Job: j.id, Step: first.step.title()}}
	if cat == kTest {
		for _, o := range others {
			if o.compound || o.info.kind.Has(kE2E) {
				continue
			}
			var discard []Finding
			text, why, _ := m.localText(o, workdirOf(first, m), &discard, src)
			if why != "" {
				continue
			}
			c.sameRunner = append(c.sameRunner, text)
			if stepVariant(o) == "" {
				c.parts = append(c.parts, text)
			}
		}
	}
	var ev []Finding
	workdir := first.dir
	for !m.r.isDir(workdir) && workdir != "." {
		workdir = parentDir(workdir)
	}
	if workdir != first.dir {
		// The directory does not exist in a fresh clone: a step before the
		// gate must create it (a build directory), or the gate cannot run.
		made := false
		for i := 0; i < best; i++ {
			if producesFiles(a.cmds[i].info, a.cmds[i].args) {
				made = true
			}
		}
		if !made {
			c.unusable = "it runs in " + first.dir + ", which a left-out CI step creates (a clone, a worktree, a download)"
		}
	}
	var texts []string
	for _, g := range chosen {
		k := g.info.kind
		c.kind |= k & (gateKinds | kE2E)
		c.inners = append(c.inners, g.info.inners...)
		if g.compound {
			c.problems = append(c.problems, "the gate is a shell loop or condition taken whole")
		}
		text, why, problem := m.localText(g, workdir, &ev, src)
		if why != "" {
			c.unusable = why
		}
		if problem != "" {
			c.problems = append(c.problems, problem)
		}
		texts = append(texts, text)
	}
	c.command = strings.Join(texts, " && ")
	c.workdir = workdir
	c.sig = first.info.sig
	what := "runs"
	lead := fmt.Sprintf("%s `%s`", what, c.command)
	if first.fromAction {
		lead = fmt.Sprintf("the %s action runs `%s`", actionName(first.step.uses), c.command)
	}
	if wd := firstNonEmpty(first.step.wd, j.defaultWD); wd != "" {
		lead += " in " + clean(wd)
	}
	ev = append([]Finding{finding(LayerCIConfig, src, lead)}, ev...)
	if j.matrixNote != "" {
		ev = append(ev, finding(LayerCIConfig, j.file+" job "+j.id, j.matrixNote))
	}
	for i, o := range others {
		if i == 3 {
			ev = append(ev, finding(LayerCIConfig, j.file+" job "+j.id, fmt.Sprintf("and %d more %s commands", len(others)-3, kindWord(cat))))
			break
		}
		ev = append(ev, finding(LayerCIConfig, j.file+" job "+j.id+" "+o.step.label(), fmt.Sprintf("also runs `%s`: a narrower or later %s command of the same job, left out of the gate", restore(o.text, o.unresolved), kindWord(cat))))
	}
	// Setup: what installs dependencies before the gate. For ctest, the
	// configure and build steps go into the command instead: ctest runs
	// what was built, so every check must rebuild the current sources.
	var setups, chain []jobCmd
	rebuilds := strings.HasPrefix(first.info.sig, "ctest")
	// A test harness of the repository (./runtest, tests/run.sh) runs
	// what the job built before it; the check builds first as well.
	harness := first.info.runner == "" && !first.info.kind.Has(kBuild) && first.info.script == "" && len(first.args) > 0 && strings.Contains(first.args[0], "/")
	for i := 0; i < best; i++ {
		cmd := a.cmds[i]
		k := cmd.info.kind
		switch {
		case rebuilds && (k.Has(kBuild) || isConfigure(cmd)):
			chain = append(chain, cmd)
		case harness && k.Has(kBuild) && !k.Has(kInstall) && isCompile(cmd):
			chain = append(chain, cmd)
		case k.Has(kInstall) && !k.Has(kToolchain) && k&gateKinds == 0:
			setups = append(setups, cmd)
		}
	}
	if len(chain) > 0 {
		c.command = renderChain(chain, first, workdir)
		if rebuilds {
			ev = append(ev, finding(LayerCIConfig, j.file+" job "+j.id, "ctest runs what was last built, so the check configures and builds first, as CI does: every check tests the current sources"))
		} else {
			ev = append(ev, finding(LayerCIConfig, j.file+" job "+j.id, "the test harness runs what the job built before it, so the check builds first, as CI does: every check tests the current sources"))
		}
	}
	c.setup = renderSetup(setups, a.setups, workdir)
	for _, field := range []*string{&c.command, &c.setup} {
		if fixed, note := repairGenerator(*field, m.host); note != "" {
			*field = fixed
			ev = append(ev, finding(LayerCIConfig, src, note))
		}
	}
	if c.setup != "" {
		ev = append(ev, finding(LayerCIConfig, j.file+" job "+j.id, "setup before the gate: `"+c.setup+"`"))
	}
	if len(a.toolchain) > 0 {
		ev = append(ev, finding(LayerCIConfig, j.file+" job "+j.id, "toolchain steps left out (the loop's machine must have the tools): "+strings.Join(dedupe(a.toolchain), ", ")))
	}
	var dropped []string
	dropped = append(dropped, a.ciOnly...)
	for i, cmd := range a.cmds {
		if i == best {
			continue
		}
		if cmd.info.kind.Has(kCIOnly) && !cmd.info.kind.Has(kInstall) && len(dropped) < 8 {
			dropped = append(dropped, "`"+firstWords(cmd.text, 4)+"`")
		}
		if cmd.info.kind.Has(kToolchain) && len(dropped) < 8 {
			dropped = append(dropped, "`"+firstWords(cmd.text, 4)+"` (toolchain)")
		}
	}
	if len(dropped) > 0 {
		ev = append(ev, finding(LayerCIConfig, j.file+" job "+j.id, "CI-only steps left out: "+strings.Join(dedupe(dropped), ", ")))
	}
	if first.pipedTo != "" {
		ev = append(ev, finding(LayerCIConfig, src, "the output is piped to "+first.pipedTo+" in CI; the pipe is left out"))
	}
	if len(a.services) > 0 {
		c.problems = append(c.problems, "the job starts services ("+strings.Join(dedupe(a.services), ", ")+"): the suite needs them and the loop's machine may not have them")
	}
	for _, cmd := range a.cmds {
		if cmd.info.kind.Has(kService) && !cmd.info.kind.Has(gateKinds) {
			c.problems = append(c.problems, "the job starts a service before testing (`"+firstWords(cmd.text, 5)+"`)")
			break
		}
	}
	if c.kind.Has(kE2E) {
		c.problems = append(c.problems, "an end-to-end suite: it needs a browser or a running application")
	}
	if first.info.sig == "docker compose run" {
		c.problems = append(c.problems, "the suite runs in a container (`"+firstWords(first.text, 4)+"`): the loop's machine needs Docker")
	}
	if a.windows {
		c.problems = append(c.problems, "the job runs on "+j.runsOn+", not Linux")
	}
	c.narrow = narrowness(first, m.tree)
	c.pkg = workspaceSelection(first.args)
	if c.variant = jobVariant(j, a, cat, m.ciLinux[j.file], m.at(".").ecosystems); c.variant == "" {
		c.variant = stepVariant(first)
	}
	c.evidence = ev
	return c, true
}

// localText turns one command of a CI job into what runs the same check
// in a fresh clone, from workdir: CI-only variables, decoration, sharding
// and matrix pins left out, the runner's environment selection made a flag.
// why says why it cannot run at all; problem is a trap it keeps.
func (m *manifests) localText(g jobCmd, workdir string, ev *[]Finding, src string) (text, why, problem string) {
	g.text = dropSharding(g.text, ev, src)
	k := g.info.kind
	if g.dirUnknown {
		why = "it runs after a cd to a directory that is not literal"
	}
	if len(g.unresolved) > 0 && placeholderRe.MatchString(g.text) {
		why = "it uses " + strings.Join(g.unresolved, ", ") + ", which only CI can resolve"
	}
	if k.Has(kWatch) {
		if g.info.fix != "" {
			problem = g.info.note
		} else {
			why = "it starts a watcher that never exits"
		}
	}
	text = localEquivalent(g, ev, src)
	if k.Has(kWatch) && g.info.fix != "" {
		text = strings.Replace(text, strings.Join(g.args, " "), g.info.fix, 1)
	}
	text = dropCIAssignments(text, ev, src)
	text = dropMatrixProperties(text, g.step.rawRun, ev, src)
	text = runnerEnvAsFlags(text, g, ev, src)
	if expanded, ok := expandKnownVars(text, g.env); ok {
		*ev = append(*ev, finding(LayerCIConfig, src, "CI runs `"+restore(text, g.unresolved)+"`; the variables it sets in env: are expanded, since the loop does not set them"))
		text = expanded
	}
	text = unquoteNeedless(text)
	if plain, dec := m.plainCommand(text, g.dir); len(dec) > 0 {
		*ev = append(*ev, finding(LayerCIConfig, src, "CI-only decoration left out (it changes how results are reported, not which tests run): "+strings.Join(dec, " ")))
		text = plain
	}
	if plain, dec := m.plainPosargs(text, g); len(dec) > 0 {
		*ev = append(*ev, finding(LayerCIConfig, src, "CI-only decoration of the arguments passed to the test runner left out: "+strings.Join(dec, " ")))
		text = plain
	}
	if g.dir != workdir {
		text = localInDir(text, workdir, g.dir, g.info)
	}
	if g.info.note != "" && !k.Has(kWatch) {
		*ev = append(*ev, finding(LayerCIConfig, src, g.info.note))
	}
	return restore(text, g.unresolved), why, problem
}

// updatesSnapshots reports a test command told to rewrite its snapshots or
// expectations instead of checking them.
func updatesSnapshots(args []string) bool {
	for _, a := range args {
		switch a {
		case "-u", "--update", "--updateSnapshot", "--update-snapshots", "--update-snapshot", "--snapshot-update", "--bless", "--accept":
			return true
		}
	}
	return false
}

// workspaceSelection names the one workspace package a monorepo command
// runs in (yarn workspace X, pnpm --filter X, npm -w X, nx test X,
// turbo --filter X, lerna --scope X), "" for none.
func workspaceSelection(args []string) string {
	args = shellcmd.StripWrappers(args).Args
	if len(args) == 0 {
		return ""
	}
	tool := shellcmd.ToolName(args[0])
	for i := 1; i < len(args); i++ {
		a := args[i]
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		switch {
		case tool == "yarn" && a == "workspace" && i == 1:
			return next
		case (a == "--filter" || a == "-F" || a == "--scope") && next != "" && !strings.Contains(next, "..."):
			return next
		case strings.HasPrefix(a, "--filter=") || strings.HasPrefix(a, "--scope="):
			return strings.SplitN(a, "=", 2)[1]
		case tool == "npm" && (a == "-w" || a == "--workspace") && next != "":
			return next
		}
	}
	// nx TARGET PROJECT, nx run PROJECT:TARGET (run-many and affected run
	// many).
	for i, a := range args {
		if shellcmd.ToolName(a) != "nx" {
			continue
		}
		rest := args[i+1:]
		if len(rest) >= 2 && rest[0] != "run-many" && rest[0] != "affected" && !strings.HasPrefix(rest[1], "-") {
			if rest[0] == "run" {
				return strings.SplitN(rest[1], ":", 2)[0]
			}
			return rest[1]
		}
	}
	return ""
}

// workdirOf is the existing directory a job command runs in (the nearest
// existing ancestor of its directory).
func workdirOf(g jobCmd, m *manifests) string {
	w := g.dir
	for !m.r.isDir(w) && w != "." {
		w = parentDir(w)
	}
	return w
}

// narrowFlags select a part of a suite (used when the runner is not
// known to shellcmd, so its arguments are not sorted).
var narrowFlags = []string{"--projects", "-pl", "--bin", "--lib", "--test", "-p", "--package", "-run", "--run", "-k", "--filter", "--only", "--example", "--doc", "--testNamePattern", "-t", "--grep", "-g", "--tests", "--include-tag", "--tag", "--group", "--testsuite", "--selectProjects", "--project"}

// narrowness scores how much of the suite a command leaves out.
func narrowness(c jobCmd, tree *shellcmd.Tree) int {
	n := 0
	args := shellcmd.StripWrappers(c.args).Args
	counted := false
	if tree != nil && len(args) > 0 && !c.compound {
		a := shellcmd.Analyze(tree, strings.Join(quoteAll(args), " "), c.dir)
		for _, st := range a.Steps {
			if st.Runner == "" || st.Fallback || !st.Kind.Has(kTest) {
				continue
			}
			// Only what the command itself selects counts: a named
			// script's selection is the project's own definition of its
			// suite.
			if len(st.Via) == 0 {
				n += selectionNarrowness(st.Selection, st.Dir, tree)
			}
			counted = true
			break
		}
	}
	if !counted {
		for i, a := range args {
			for _, f := range narrowFlags {
				if a == f || strings.HasPrefix(a, f+"=") {
					n += 2
				}
			}
			if a == "--" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				n += 2 // cargo test -- some::test::name
			}
		}
	}
	if c.compound {
		n += 3
	}
	if s := c.info.script; s != "" && s != "test" && strings.HasPrefix(s, "test") {
		n++ // test:cf, test-unit: a part of the suite named after it
	}
	if workspaceSelection(c.args) != "" {
		n += 2 // one package of a monorepo
	}
	if c.info.kind.Has(kE2E) {
		n += 4
	}
	if strings.Contains(c.text, "/") && len(args) > 0 && strings.Contains(args[0], "/") && c.info.kind&gateKinds == 0 {
		n++
	}
	return n
}

// includeFlags pick some tests by name, group, package or project: a part
// of the suite. Exclusions (--exclude-group, -m "not slow", --skip) are how
// a gate leaves out what needs services, so they do not count.
var includeFlags = map[string]bool{
	"-run": true, "--run": true, "-k": true, "--filter": true, "--group": true, "-t": true, "--testNamePattern": true,
	"--grep": true, "-g": true, "--only": true, "--include-tag": true, "--tag": true, "-p": true, "--package": true,
	"-pl": true, "--projects": true, "--tests": true, "--selectProjects": true, "--project": true, "--testsuite": true,
	"-e": false, "--env": false, "-f": false, "--bin": true, "--lib": true, "--test": true, "--example": true, "--doc": true,
	"-R": true, "--tests-regex": true, "-L": true, "--label-regex": true, "-Dtest": true, "--testPathPattern": true,
	"--testPathPatterns": true, "-E": true, "--filter-expr": true, "--test-name-pattern": true, "--spec": true, "--fgrep": true,
}

// wholeSuite are positional selections that name the whole suite: the
// package pattern of Go, the current directory, the usual test roots.
var wholeSuite = map[string]bool{"./...": true, "...": true, ".": true, "./": true, "test": true, "tests": true, "spec": true, "specs": true, "t": true, "testing": true, "src": true, "lib": true}

// selectionNarrowness scores the selection arguments of a test step: 2 for
// each that includes only some tests, 0 for exclusions and for positional
// arguments that name the whole suite.
func selectionNarrowness(sel []string, dir string, tree *shellcmd.Tree) int {
	n := 0
	for _, s := range sel {
		flag, _, _ := strings.Cut(strings.Fields(s + " ")[0], "=")
		if strings.HasPrefix(flag, "-") {
			if strings.HasPrefix(flag, "-Dtest") || includeFlags[flag] {
				n += 2
			}
			continue
		}
		p := strings.TrimSuffix(strings.TrimPrefix(s, "./"), "/")
		if wholeSuite[s] || wholeSuite[p] || strings.HasSuffix(s, "/...") && wholeSuite[strings.TrimSuffix(p, "/...")] {
			continue
		}
		// A path of the repository or a test id selects; anything else is
		// likely the value of a flag the runner's table does not know.
		base := strings.TrimSuffix(p, "/...")
		if i := strings.Index(base, "::"); i >= 0 {
			base = base[:i]
		}
		if strings.ContainsAny(base, "*?[") {
			base = parentDir(base)
		}
		switch path.Ext(base) {
		case ".toml", ".json", ".yaml", ".yml", ".ini", ".cfg", ".xml", ".conf", ".config":
			continue // a configuration file, the value of a flag the table does not know
		}
		if strings.Contains(s, "::") || tree != nil && tree.Exists(join(dir, base)) {
			n += 2
		}
	}
	return n
}

func kindWord(k kind) string {
	switch {
	case k.Has(kTest):
		return "test"
	case k.Has(kLint):
		return "lint"
	case k.Has(kType):
		return "type-check"
	case k.Has(kBuild):
		return "build"
	}
	return "coverage"
}

// localEquivalent rewrites a CI command into what runs the same check
// locally: gotestsum into go test, dotnet test --no-build into dotnet test.
func localEquivalent(g jobCmd, ev *[]Finding, src string) string {
	args := shellcmd.StripWrappers(g.args).Args
	if len(args) == 0 {
		return g.text
	}
	switch shellcmd.ToolName(args[0]) {
	case "gotestsum":
		rest := args[1:]
		for i, a := range rest {
			if a == "--" {
				goArgs := rest[i+1:]
				out := "go test " + strings.Join(quoteAll(goArgs), " ")
				if len(goArgs) == 0 {
					out = "go test ./..."
				}
				*ev = append(*ev, finding(LayerCIConfig, src, "gotestsum only formats `go test`: its local equivalent is `"+out+"`"))
				return out
			}
		}
		*ev = append(*ev, finding(LayerCIConfig, src, "gotestsum only formats `go test`: its local equivalent is `go test ./...`"))
		return "go test ./..."
	case "dotnet":
		out := g.text
		if shellcmd.HasFlag(args, "--no-build") {
			out = strings.Replace(out, " --no-build", "", 1)
			*ev = append(*ev, finding(LayerCIConfig, src, "CI builds in an earlier step and tests with --no-build; the check drops --no-build so that every check tests the current code"))
		}
		if shellcmd.HasFlag(args, "--no-restore") {
			out = strings.Replace(out, " --no-restore", "", 1)
			*ev = append(*ev, finding(LayerCIConfig, src, "CI restores in an earlier step and tests with --no-restore; a fresh clone has restored nothing, so the check lets dotnet restore"))
		}
		return out
	case "xvfb-run":
	}
	if len(g.args) > 0 && path.Base(g.args[0]) == "xvfb-run" {
		*ev = append(*ev, finding(LayerCIConfig, src, "CI runs the suite under xvfb-run (a virtual display); kept, so the loop's machine needs xvfb"))
	}
	return g.text
}

var ciAssignRe = lazyre.New(`^(PATH|HOME|TERM|CI|FORCE_COLOR|NO_COLOR|[A-Z_]*COLOR[A-Z_]*|GITHUB_[A-Z_]+|RUNNER_[A-Z_]+|[A-Z_]*TOKEN|[A-Z_]*SECRET[A-Z_]*|[A-Z_]*_KEY)=`)

// shardingFlags split a suite across CI machines (the union of the
// shards is the whole suite) or set how many workers run it: neither
// changes which tests run on one machine.
var shardingFlags = map[string]bool{
	"--shard": true, "--shards": true, "--partition": true, "--test-shard": true, "--total-shards": true, "--shard-index": true,
	"--splits": true, "--split": true, "--group-index": true, "--max-workers": true, "--maxWorkers": true, "-w": false,
	"--workers": true, "--numprocesses": true, "-n": false, "--jobs": true, "--parallel": false, "--concurrency": true,
	"--test-concurrency": true, "--ci-node-index": true, "--ci-node-total": true,
}

// dropSharding removes sharding and worker-count flags whose value CI
// computes or takes from its matrix (--shard=${{ matrix.shard }},
// --max-workers ${{ steps.cpu.outputs.count }}): the local check runs the
// whole suite with the runner's own default.
func dropSharding(text string, ev *[]Finding, src string) string {
	out, dropped := dropFlags(strings.Fields(text), func(name, val string, _ bool) (bool, bool) {
		always, known := shardingFlags[name]
		computed := placeholderRe.MatchString(val) || strings.Contains(val, "${{")
		shard := strings.Contains(name, "shard") || strings.Contains(name, "partition") || strings.Contains(name, "split") || strings.Contains(name, "node")
		return known, computed || shard && always
	})
	if len(dropped) == 0 {
		return text
	}
	*ev = append(*ev, finding(LayerCIConfig, src, "CI splits the suite across machines or sets its worker count; left out, so one run covers the whole suite: "+strings.Join(dropped, " ")))
	return strings.Join(out, " ")
}

// runnerEnvVars are the variables a runner reads to choose what it runs,
// with the flag that says the same on the command line: CI's matrix sets
// TOXENV for each cell, and without it tox runs every env.
var runnerEnvVars = []struct{ sig, name, flag string }{
	{"tox", "TOXENV", "-e"}, {"tox", "TOX_ENV", "-e"}, {"nox", "NOXSESSION", "-s"},
}

// runnerEnvAsFlags makes the selection CI passes to a runner through the
// environment part of the command, as the runner's own flag.
func runnerEnvAsFlags(text string, g jobCmd, ev *[]Finding, src string) string {
	args := shellcmd.StripWrappers(g.args).Args
	for _, v := range runnerEnvVars {
		val, ok := g.env[v.name]
		if !ok || g.info.sig != v.sig || val == "" || strings.ContainsAny(val, "$ '\"\\") || placeholderRe.MatchString(val) {
			continue
		}
		if shellcmd.HasFlag(args, v.flag) || shellcmd.HasFlag(args, "--env") || shellcmd.HasFlag(args, "--session") || shellcmd.HasFlag(args, "-f") {
			continue
		}
		fields := strings.Fields(text)
		at := -1
		for i, f := range fields {
			if shellcmd.ToolName(f) == v.sig {
				at = i + 1
				if at < len(fields) && (fields[at] == "run" || fields[at] == "r") {
					at++
				}
				break
			}
		}
		if at < 0 {
			continue
		}
		out := append(append(append([]string(nil), fields[:at]...), v.flag, val), fields[at:]...)
		*ev = append(*ev, finding(LayerCIConfig, src, fmt.Sprintf("CI selects what %s runs with %s=%s in its environment; the command says it with %s %s", v.sig, v.name, val, v.flag, val)))
		return strings.Join(out, " ")
	}
	return text
}

// matrixPropertyRe finds a JVM build property set from a matrix value:
// -Ptest.java.version=${{ matrix.java }}.
var matrixPropertyRe = lazyre.New(`(-[PD][A-Za-z0-9_.\-]+)=\$\{\{\s*matrix\.`)

// dropMatrixProperties removes the -P/-D build properties whose value CI
// takes from its matrix (one JVM or mode of several): the local build
// runs with the project's default.
func dropMatrixProperties(text, raw string, ev *[]Finding, src string) string {
	props := matrixPropertyRe.FindAllStringSubmatch(raw, -1)
	if len(props) == 0 {
		return text
	}
	fields := strings.Fields(text)
	var out, dropped []string
	for _, f := range fields {
		drop := false
		for _, p := range props {
			if strings.HasPrefix(f, p[1]+"=") {
				drop = true
			}
		}
		if drop {
			dropped = append(dropped, f)
			continue
		}
		out = append(out, f)
	}
	if len(dropped) == 0 {
		return text
	}
	*ev = append(*ev, finding(LayerCIConfig, src, "build properties CI takes from its matrix left out (the project's default is the local build): "+strings.Join(dropped, " ")))
	return strings.Join(out, " ")
}

// dropCIAssignments removes leading variable assignments that only serve CI
// (colours, PATH to CI-installed tools, tokens) or set nothing (X=”).
func dropCIAssignments(text string, ev *[]Finding, src string) string {
	fields := strings.Fields(text)
	i := 0
	var dropped []string
	for i < len(fields) && shellcmd.IsAssignment(fields[i]) && (!strings.ContainsAny(fields[i], `"'`) || strings.HasSuffix(fields[i], "=''") || strings.HasSuffix(fields[i], `=""`)) {
		_, val, _ := strings.Cut(fields[i], "=")
		if !ciAssignRe.MatchString(fields[i]) && val != "" && val != "''" && val != `""` {
			return text
		}
		dropped = append(dropped, strings.SplitN(fields[i], "=", 2)[0])
		i++
	}
	if len(dropped) == 0 || i == len(fields) {
		return text
	}
	*ev = append(*ev, finding(LayerCIConfig, src, "CI-only variables left out of the command: "+strings.Join(dropped, ", ")))
	return strings.Join(fields[i:], " ")
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellcmd.Quote(a)
	}
	return out
}

// localInDir makes a command that CI ran in dir runnable from workdir (an
// existing ancestor): ctest gets --test-dir, anything else a cd.
func localInDir(text, workdir, dir string, info cmdInfo) string {
	rel := relPath(workdir, dir)
	if strings.HasPrefix(info.sig, "ctest") && strings.HasPrefix(strings.TrimSpace(text), "ctest") {
		return "ctest --test-dir " + shellcmd.Quote(rel) + strings.TrimPrefix(strings.TrimSpace(text), "ctest")
	}
	return "cd " + shellcmd.Quote(rel) + " && " + text
}

// renderSetup joins setup commands, with the cds between their directories,
// starting from workdir.
func renderSetup(cmds []jobCmd, implied []string, workdir string) string {
	var parts []string
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[restore(c.text, c.unresolved)] = true
	}
	for _, s := range dedupe(implied) {
		if !seen[s] {
			parts = append(parts, s)
		}
	}
	cur := workdir
	for _, c := range cmds {
		text := restore(c.text, c.unresolved)
		if len(c.args) > 0 && c.args[0] == "mkdir" && !strings.Contains(text, "-p") {
			text = strings.Replace(text, "mkdir", "mkdir -p", 1)
		}
		if c.dir != cur {
			parts = append(parts, "cd "+shellcmd.Quote(relPath(cur, c.dir)))
			cur = c.dir
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, " && ")
}

// isCompile reports a command that compiles the project in place (make,
// cmake --build, ninja, meson compile).
func isCompile(c jobCmd) bool {
	args := shellcmd.StripWrappers(c.args).Args
	if len(args) == 0 {
		return false
	}
	switch shellcmd.ToolName(args[0]) {
	case "make", "gmake", "ninja", "cmake", "meson", "scons", "bazel":
		return true
	}
	return false
}

// isConfigure reports whether a command configures a C/C++ build (or makes
// its build directory).
func isConfigure(c jobCmd) bool {
	switch c.info.sig {
	case "cmake configure", "mkdir", "meson setup", "configure", "autogen.sh", "autoreconf", "bootstrap", "bootstrap.sh", "conan", "vcpkg":
		return true
	}
	return false
}

// renderChain joins the configure and build commands with the gate, with
// the cds between their directories, starting from workdir.
func renderChain(chain []jobCmd, gate jobCmd, workdir string) string {
	var parts []string
	cur := workdir
	for _, c := range chain {
		text := restore(c.text, c.unresolved)
		if len(c.args) > 0 && c.args[0] == "mkdir" && !strings.Contains(text, "-p") {
			text = strings.Replace(text, "mkdir", "mkdir -p", 1)
		}
		if c.dir != cur {
			parts = append(parts, "cd "+shellcmd.Quote(relPath(cur, c.dir)))
			cur = c.dir
		}
		parts = append(parts, text)
	}
	text := restore(gate.text, gate.unresolved)
	if gate.dir != cur {
		if cur == workdir {
			text = localInDir(text, workdir, gate.dir, gate.info)
		} else {
			parts = append(parts, "cd "+shellcmd.Quote(relPath(cur, gate.dir)))
		}
	}
	return strings.Join(append(parts, text), " && ")
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		return strings.Join(f[:n], " ") + " ..."
	}
	return s
}
