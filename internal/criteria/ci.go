package criteria

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// ciJob is one CI job, normalised from GitHub Actions or GitLab CI, with one
// matrix cell chosen.
type ciJob struct {
	file, id, name string
	workflow       string
	system         string // "github", "gitlab"
	steps          []ciStep
	services       []string
	runsOn         string
	matrixNote     string
	env            exprEnv
	defaultWD      string
	skip           string // why the job is not a gate (deploy, manual, ...)
	order          int
	gating         bool // runs on push / pull request
	// checkoutPath is where the job checks the repository out (the path:
	// of actions/checkout, as written and as resolved): a directory there
	// is the repository root (GOPATH layouts).
	checkoutPath []string
	// otherRepos are the other repositories the job checks out or clones:
	// a job that tests them is not this repository's gate.
	otherRepos []string
	// artifacts: the job tests what another job built (it downloads an
	// artifact before its commands).
	artifacts bool
}

// ciStep is one step: a run: script or a uses: action.
type ciStep struct {
	name, id   string
	uses       string
	with       map[string]string
	run        string
	rawRun     string // run: as written, before ${{ }} substitution
	unresolved []string
	shell      string
	wd         string
	cond       string
	softFail   bool
	env        map[string]string
	index      int
	setupOnly  bool // GitLab before_script
}

// title is the step's name as GitHub shows it: its name, or "Run " and
// the action it uses or the first line of its script.
func (s ciStep) title() string {
	if s.name != "" {
		return s.name
	}
	if s.uses != "" {
		return "Run " + s.uses
	}
	if s.run == "" {
		return s.id
	}
	line, _, _ := strings.Cut(strings.TrimSpace(s.run), "\n")
	if line = strings.TrimSpace(line); len(line) > 60 {
		line = line[:60] + "..."
	}
	return "Run " + line
}

func (s ciStep) label() string {
	switch {
	case s.name != "":
		return fmt.Sprintf("step %q", s.name)
	case s.uses != "":
		return "step " + strconv.Itoa(s.index+1) + " (" + s.uses + ")"
	case s.id != "":
		return "step " + s.id
	case s.run != "":
		line := strings.TrimSpace(strings.SplitN(strings.TrimSpace(s.run), "\n", 2)[0])
		if len(line) > 40 {
			line = line[:40] + "..."
		}
		return "step " + strconv.Itoa(s.index+1) + " (" + line + ")"
	}
	return "step " + strconv.Itoa(s.index+1)
}

// readCI reads every workflow the repository has.
func readCI(r *repo) []*ciJob {
	var jobs []*ciJob
	for _, dir := range []string{".github/workflows", ".gitea/workflows", ".forgejo/workflows"} {
		for _, n := range r.names(dir) {
			if !strings.HasSuffix(n, ".yml") && !strings.HasSuffix(n, ".yaml") {
				continue
			}
			file := dir + "/" + n
			data, ok := r.read(file)
			if !ok {
				continue
			}
			js, err := parseGitHubWorkflow(r, file, data)
			if err != nil {
				r.unreadable(LayerCIConfig, file, err)
				continue
			}
			jobs = append(jobs, js...)
		}
	}
	if data, ok := r.read(".gitlab-ci.yml"); ok {
		js, err := parseGitLabCI(".gitlab-ci.yml", data, r.host)
		if err != nil {
			r.unreadable(LayerCIConfig, ".gitlab-ci.yml", err)
		} else {
			jobs = append(jobs, js...)
		}
	}
	for i, j := range jobs {
		j.order = i
	}
	return jobs
}

var gatingTriggers = map[string]bool{"push": true, "pull_request": true, "pull_request_target": true, "merge_group": true, "workflow_call": true}

var deployNameRe = lazyre.New(`(?i)(deploy|release|publish|pages|backport|stale|label|triage|greet|welcome|automerge|auto-merge|changelog|dependabot|codeql|scorecard|sbom|snyk|lock|sponsor|translation|crowdin|docker-image|upload|cla\b|issue|comment)`)

// parseGitHubWorkflow reads one GitHub Actions workflow file into jobs.
func parseGitHubWorkflow(r *repo, file string, data []byte) ([]*ciJob, error) {
	root, err := parseYAMLNode(data)
	if err != nil {
		return nil, err
	}
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("not a workflow: the top level is not a mapping")
	}
	jobsNode := mapGet(root, "jobs")
	if jobsNode == nil || jobsNode.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("not a workflow: no jobs mapping")
	}
	wfName := scalar(mapGet(root, "name"))
	triggers := workflowTriggers(mapGet(root, "on"))
	if len(triggers) == 0 {
		triggers = workflowTriggers(mapGet(root, "true")) // YAML 1.1 readers turn `on` into true
	}
	gating := false
	for _, t := range triggers {
		gating = gating || gatingTriggers[t]
	}
	inputs := map[string]string{}
	for _, trig := range []string{"workflow_call", "workflow_dispatch"} {
		for _, kv := range mapPairs(mapGet(mapGet(mapGet(root, "on"), trig), "inputs")) {
			if d := scalar(mapGet(kv[1], "default")); d != "" {
				inputs[kv[0].Value] = d
			}
		}
	}
	wfEnv := stringMap(mapGet(root, "env"))
	wfWD := scalar(mapGet(mapGet(mapGet(root, "defaults"), "run"), "working-directory"))
	wfShell := scalar(mapGet(mapGet(mapGet(root, "defaults"), "run"), "shell"))
	var jobs []*ciJob
	for _, kv := range mapPairs(jobsNode) {
		jn := resolveAlias(kv[1])
		if jn == nil || jn.Kind != yaml.MappingNode {
			continue
		}
		j := &ciJob{file: file, id: kv[0].Value, name: scalar(mapGet(jn, "name")), workflow: wfName, system: "github", gating: gating}
		if !gating {
			j.skip = "the workflow runs only on " + strings.Join(triggers, ", ") + ", not on push or pull request"
			if len(triggers) == 0 {
				j.skip = "the workflow has no trigger this reader understands"
			}
		}
		cell, note := pickMatrixCell(mapGet(mapGet(jn, "strategy"), "matrix"), r.host)
		j.matrixNote = note
		env := map[string]string{}
		for k, v := range wfEnv {
			env[k] = v
		}
		j.env = exprEnv{matrix: cell, env: env, inputs: inputs}
		for k, v := range j.envMap(mapGet(jn, "env")) {
			env[k] = v
		}
		// Resolve env values that refer to the matrix.
		for k, v := range env {
			if s, un := j.env.substitute(v); len(un) == 0 {
				env[k] = s
			}
		}
		if j.name != "" {
			j.name, _ = j.env.substitute(j.name)
		}
		runsOn := mapGet(jn, "runs-on")
		if runsOn != nil && runsOn.Kind == yaml.ScalarNode {
			j.runsOn, _ = j.env.substitute(runsOn.Value)
		} else {
			j.runsOn = strings.Join(scalarList(runsOn), ",")
			if l := scalar(mapGet(runsOn, "labels")); l != "" {
				j.runsOn = l
			}
		}
		for _, skv := range mapPairs(mapGet(jn, "services")) {
			img := scalar(mapGet(skv[1], "image"))
			if img == "" {
				img = scalar(skv[1])
			}
			j.services = append(j.services, skv[0].Value+" ("+img+")")
		}
		j.defaultWD = wfWD
		if wd := scalar(mapGet(mapGet(mapGet(jn, "defaults"), "run"), "working-directory")); wd != "" {
			j.defaultWD = wd
		}
		shell := wfShell
		if s := scalar(mapGet(mapGet(mapGet(jn, "defaults"), "run"), "shell")); s != "" {
			shell = s
		}
		if j.skip == "" {
			if cond := scalar(mapGet(jn, "if")); cond != "" && !j.env.condition(cond) {
				j.skip = "its if: condition is false for push and pull request runs"
			}
		}
		if j.skip == "" && (deployNameRe.MatchString(j.id) || deployNameRe.MatchString(j.name) || deployNameRe.MatchString(file) && !strings.Contains(strings.ToLower(file), "ci")) {
			j.skip = "a deploy/release/maintenance job by its name"
		}
		if uses := scalar(mapGet(jn, "uses")); uses != "" {
			j.skip = "calls the reusable workflow " + uses + " (read on its own)"
		}
		for i, st := range seqItems(mapGet(jn, "steps")) {
			j.steps = append(j.steps, j.readStep(r, st, i, shell, 0)...)
		}
		j.readCheckouts(seqItems(mapGet(jn, "steps")))
		jobs = append(jobs, j)
	}
	return jobs, nil
}

func workflowTriggers(on *yaml.Node) []string {
	on = resolveAlias(on)
	if on == nil {
		return nil
	}
	switch on.Kind {
	case yaml.ScalarNode:
		return []string{on.Value}
	case yaml.SequenceNode:
		return scalarList(on)
	case yaml.MappingNode:
		var out []string
		for _, kv := range mapPairs(on) {
			out = append(out, kv[0].Value)
		}
		return out
	}
	return nil
}

// matrixObjectRe matches an env: that is a whole matrix object:
// env: ${{ matrix.env }}.
var matrixObjectRe = lazyre.New(`^\$\{\{\s*matrix\.([A-Za-z0-9_.-]+)\s*\}\}$`)

// envMap reads an env: mapping; an env: that names a matrix object takes
// that object's fields from the chosen cell.
func (j *ciJob) envMap(n *yaml.Node) map[string]string {
	n = resolveAlias(n)
	if n != nil && n.Kind == yaml.ScalarNode {
		m := matrixObjectRe.FindStringSubmatch(strings.TrimSpace(n.Value))
		if m == nil {
			return nil
		}
		out := map[string]string{}
		for k, v := range j.env.matrix {
			if name, ok := strings.CutPrefix(k, m[1]+"."); ok && !strings.Contains(name, ".") {
				out[name] = v
			}
		}
		return out
	}
	return stringMap(n)
}

// retryActionRe matches the actions that run a shell command of their
// with: command (retrying it on failure).
var retryActionRe = lazyre.New(`(?i)^(nick-fields/retry|wandalen/wretry\.action|buildkite/retry)@`)

// readCheckouts records where the job checks this repository out and which
// other repositories it checks out or clones.
func (j *ciJob) readCheckouts(steps []*yaml.Node) {
	for _, st := range steps {
		uses := strings.ToLower(scalar(mapGet(st, "uses")))
		if !strings.HasPrefix(uses, "actions/checkout@") {
			continue
		}
		with := mapGet(st, "with")
		repo := scalar(mapGet(with, "repository"))
		p := scalar(mapGet(with, "path"))
		if repo != "" && !strings.Contains(repo, "github.repository") {
			j.otherRepos = append(j.otherRepos, repo)
			continue
		}
		if p != "" {
			resolved, _ := j.env.substitute(p)
			j.checkoutPath = append(j.checkoutPath, p, resolved)
		}
	}
	for _, s := range j.steps {
		if strings.HasPrefix(strings.ToLower(s.uses), "actions/download-artifact@") {
			j.artifacts = true
		}
		for _, line := range strings.Split(s.run, "\n") {
			if m := gitCloneRe.FindStringSubmatch(line); m != nil {
				j.otherRepos = append(j.otherRepos, m[1])
			}
		}
	}
}

// gitCloneRe finds a clone of another repository in a run: script.
var gitCloneRe = lazyre.New(`\bgit\s+clone\s+(?:-{1,2}\S+\s+)*(?:"|')?((?:https?://|git@)\S+?)(?:"|')?(?:\s|$)`)

// rebase maps a directory that lies in the job's checkout path (a GOPATH
// layout) to the repository-relative one.
func (j *ciJob) rebase(dir string) string {
	for _, p := range j.checkoutPath {
		p = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(p, "${{ github.workspace }}/"), "./"), "/")
		if p == "" || p == "." {
			continue
		}
		d := strings.TrimPrefix(dir, "./")
		switch {
		case d == p:
			return "."
		case strings.HasPrefix(d, p+"/"):
			return clean(strings.TrimPrefix(d, p+"/"))
		}
	}
	return dir
}

// readStep reads one step; a local composite action (uses: ./.github/
// actions/x) is replaced by its own steps.
func (j *ciJob) readStep(r *repo, st *yaml.Node, i int, shell string, depth int) []ciStep {
	s := ciStep{
		name:  scalar(mapGet(st, "name")),
		id:    scalar(mapGet(st, "id")),
		uses:  scalar(mapGet(st, "uses")),
		with:  stringMap(mapGet(st, "with")),
		shell: shell,
		wd:    scalar(mapGet(st, "working-directory")),
		cond:  scalar(mapGet(st, "if")),
		env:   j.envMap(mapGet(st, "env")),
		index: i,
	}
	if sh := scalar(mapGet(st, "shell")); sh != "" {
		s.shell = sh
	}
	env := j.stepEnv(s)
	if coe := scalar(mapGet(st, "continue-on-error")); coe == "true" {
		s.softFail = true
	} else if strings.Contains(coe, "${{") {
		if v, un := env.substitute(coe); len(un) == 0 && v == "true" {
			s.softFail = true
		}
	}
	if s.name != "" {
		s.name, _ = env.substitute(s.name)
	}
	for k, v := range s.with {
		s.with[k], _ = env.substitute(v)
	}
	if s.wd != "" {
		var un []string
		s.wd, un = env.substitute(s.wd)
		s.unresolved = append(s.unresolved, un...)
	}
	if cmd := s.with["command"]; s.run == "" && retryActionRe.MatchString(s.uses) && cmd != "" {
		// A retry action runs its command: a run: step in all but name.
		s.run, s.with = cmd, nil
		s.uses = ""
	}
	if run := mapGet(st, "run"); run != nil {
		var un []string
		s.rawRun = scriptText(run)
		s.run, un = env.substitute(scriptText(run))
		s.unresolved = append(s.unresolved, un...)
	}
	if strings.HasPrefix(s.uses, "./") && depth < 2 {
		dir := clean(s.uses)
		for _, f := range []string{"action.yml", "action.yaml"} {
			data, ok := r.read(join(dir, f))
			if !ok {
				continue
			}
			root, err := parseYAMLNode(data)
			if err != nil {
				r.unreadable(LayerCIConfig, join(dir, f), err)
				break
			}
			runs := mapGet(root, "runs")
			if scalar(mapGet(runs, "using")) != "composite" {
				break
			}
			var out []ciStep
			for k, inner := range seqItems(mapGet(runs, "steps")) {
				for _, is := range j.readStep(r, inner, k, "", depth+1) {
					is.index = i
					if is.name == "" {
						is.name = s.uses + " step " + strconv.Itoa(k+1)
					} else {
						is.name = s.uses + ": " + is.name
					}
					is.wd = firstNonEmpty(is.wd, s.wd)
					if s.cond != "" {
						is.cond = s.cond
					}
					out = append(out, is)
				}
			}
			return out
		}
	}
	return []ciStep{s}
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// stepEnv is the expression environment of a step: the job's plus the
// step's own env.
func (j *ciJob) stepEnv(s ciStep) exprEnv {
	if len(s.env) == 0 {
		return j.env
	}
	env := map[string]string{}
	for k, v := range j.env.env {
		env[k] = v
	}
	for k, v := range s.env {
		if sv, un := j.env.substitute(v); len(un) == 0 {
			env[k] = sv
		}
	}
	return exprEnv{matrix: j.env.matrix, env: env, inputs: j.env.inputs}
}

var (
	versionRe         = lazyre.New(`^v?[0-9]+(\.[0-9x*]+)*$`)
	embeddedVersionRe = lazyre.New(`[0-9]+(\.[0-9]+)*`)
)

// pickMatrixCell chooses one concrete cell: Linux for the OS, the newest
// version for version axes, the first value otherwise; include entries that
// match extend it, exclude entries are skipped.
func pickMatrixCell(m *yaml.Node, host Host) (map[string]string, string) {
	cell := map[string]string{}
	m = resolveAlias(m)
	if m == nil {
		return cell, ""
	}
	if m.Kind == yaml.ScalarNode {
		cell[unknownMatrix] = unknownMatrix
		return cell, "the matrix is computed (" + m.Value + "): no cell can be chosen"
	}
	type axis struct {
		key    string
		values []*yaml.Node
	}
	var axes []axis
	var includes, excludes []*yaml.Node
	total := 1
	for _, kv := range mapPairs(m) {
		switch kv[0].Value {
		case "include":
			includes = seqItems(kv[1])
		case "exclude":
			excludes = seqItems(kv[1])
		default:
			vals := seqItems(kv[1])
			if v := resolveAlias(kv[1]); v != nil && v.Kind == yaml.ScalarNode {
				// ${{ fromJSON(...) }}: unknown values.
				cell[kv[0].Value] = unknownMatrix
				continue
			}
			if len(vals) == 0 {
				continue
			}
			axes = append(axes, axis{kv[0].Value, orderAxis(kv[0].Value, vals, host)})
			total *= len(vals)
		}
	}
	// Try combinations in preference order, skipping excluded ones.
	idx := make([]int, len(axes))
	found := false
	for tries := 0; tries < 1000; tries++ {
		c := map[string]string{}
		for i, a := range axes {
			flattenInto(c, a.key, a.values[idx[i]])
		}
		if !matchesAny(c, excludes) {
			for k, v := range c {
				cell[k] = v
			}
			found = true
			break
		}
		// next combination (last axis fastest)
		i := len(axes) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(axes[i].values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			break
		}
	}
	if len(axes) == 0 && len(includes) > 0 {
		// A matrix of include entries only: the best entry (Linux, no
		// variant, an interpreter the machine has), the first among equals.
		pick := includes[0]
		best := entryScore(pick, host)
		for _, inc := range includes[1:] {
			if sc := entryScore(inc, host); sc < best {
				pick, best = inc, sc
			}
		}
		for _, kv := range mapPairs(pick) {
			flattenInto(cell, kv[0].Value, kv[1])
		}
		total = len(includes)
		found = true
	} else if found {
		// An include entry that adds its own combination (no axis value
		// matches) competes with the axes' pick: an interpreter the
		// machine has is the default entry.
		linuxCell := false
		for _, v := range cell {
			lv := strings.ToLower(v)
			linuxCell = linuxCell || strings.Contains(lv, "ubuntu") || strings.Contains(lv, "linux")
		}
		best := cellScore(cell, linuxCell, host)
		standalone := false
		for _, inc := range includes {
			if matchesEntry(cell, inc, false) || mentionsOtherOS(inc) {
				continue
			}
			if sc := entryScore(inc, host); sc < best {
				best = sc
				standalone = true
				cell = map[string]string{}
				for _, kv := range mapPairs(inc) {
					flattenInto(cell, kv[0].Value, kv[1])
				}
			}
		}
		// Include entries extend the axes' combinations; an entry that is
		// a combination of its own is not extended by the others.
		for _, inc := range includes {
			if !standalone && matchesEntry(cell, inc, true) {
				for _, kv := range mapPairs(inc) {
					if _, ok := cell[kv[0].Value]; !ok {
						flattenInto(cell, kv[0].Value, kv[1])
					}
				}
			}
		}
		if len(includes) > 0 {
			total += len(includes)
		}
	}
	if !found || len(cell) == 0 {
		return cell, ""
	}
	keys := sortedKeys(cell)
	var parts []string
	for _, k := range keys {
		if cell[k] == unknownMatrix {
			parts = append(parts, k+"=(computed)")
			continue
		}
		if !strings.Contains(k, ".") {
			parts = append(parts, k+"="+cell[k])
		}
	}
	if total <= 1 {
		return cell, "matrix of one cell: " + strings.Join(parts, ", ")
	}
	return cell, fmt.Sprintf("matrix of about %d cells: picked %s (Linux first, then the newest version or stable toolchain of each axis)", total, strings.Join(parts, ", "))
}

func flattenInto(c map[string]string, key string, v *yaml.Node) {
	v = resolveAlias(v)
	if v == nil {
		return
	}
	switch v.Kind {
	case yaml.ScalarNode:
		c[key] = v.Value
	case yaml.MappingNode:
		for _, kv := range mapPairs(v) {
			flattenInto(c, key+"."+kv[0].Value, kv[1])
		}
		c[key] = "" // an object: only its fields are usable
	case yaml.SequenceNode:
		c[key] = strings.Join(scalarList(v), " ")
	}
}

func isLinuxEntry(n *yaml.Node) bool {
	for _, kv := range mapPairs(n) {
		v := strings.ToLower(scalar(kv[1]))
		if strings.Contains(v, "ubuntu") || strings.Contains(v, "linux") {
			return true
		}
		for _, kv2 := range mapPairs(kv[1]) {
			v2 := strings.ToLower(scalar(kv2[1]))
			if strings.Contains(v2, "ubuntu") || strings.Contains(v2, "linux") {
				return true
			}
		}
	}
	return false
}

// mentionsOtherOS reports an include entry that names a runner other than
// Linux (an entry that names none runs on the job's runs-on).
func mentionsOtherOS(n *yaml.Node) bool {
	flat := map[string]string{}
	for _, kv := range mapPairs(n) {
		flattenInto(flat, kv[0].Value, kv[1])
	}
	for _, v := range flat {
		lv := strings.ToLower(v)
		if strings.Contains(lv, "windows") || strings.Contains(lv, "macos") || strings.HasPrefix(lv, "mac-") {
			return true
		}
	}
	return false
}

func matchesAny(cell map[string]string, entries []*yaml.Node) bool {
	for _, e := range entries {
		if matchesEntry(cell, e, false) {
			return true
		}
	}
	return false
}

// matchesEntry reports whether an include/exclude entry matches the cell on
// every key both have (for include: on the original axes only).
func matchesEntry(cell map[string]string, e *yaml.Node, include bool) bool {
	pairs := mapPairs(e)
	if len(pairs) == 0 {
		return false
	}
	matchedOne := false
	for _, kv := range pairs {
		cv, ok := cell[kv[0].Value]
		if !ok {
			if include {
				continue
			}
			return false
		}
		flat := map[string]string{}
		flattenInto(flat, kv[0].Value, kv[1])
		if flat[kv[0].Value] != cv {
			return false
		}
		matchedOne = true
	}
	return matchedOne || include
}

// entryScore ranks an include entry of a matrix (lower is better): a
// Linux entry (or one that names no OS), without variant words (minimum
// versions, experimental, a free-threaded or PyPy interpreter), with an
// interpreter the machine has.
func entryScore(n *yaml.Node, host Host) int {
	flat := map[string]string{}
	for _, kv := range mapPairs(n) {
		flattenInto(flat, strings.ToLower(kv[0].Value), kv[1])
	}
	return cellScore(flat, isLinuxEntry(n), host)
}

// cellScore is entryScore of a flattened cell.
func cellScore(flat map[string]string, linux bool, host Host) int {
	score := 0
	{
		for _, k := range sortedKeys(flat) {
			v := flat[k]
			k = strings.ToLower(k)
			lv := strings.ToLower(v)
			switch {
			case !linux && (strings.Contains(lv, "windows") || strings.Contains(lv, "macos") || strings.Contains(lv, "mac-") || strings.HasPrefix(lv, "mac")):
				score += 10
			case k == "experimental" && lv == "true":
				score += 5
			case variantValue(v):
				score += 5
			case pythonAxis(k) && hostPython(v, host):
				score -= 3
			}
		}
	}
	return score
}

// variantValue reports a matrix value that names a variant: prefer-lowest,
// tests-min, pypy-3.10, a free-threaded 3.14t, nightly.
func variantValue(v string) bool {
	if freeThreadedRe.MatchString(v) {
		return true
	}
	w, what := variantWord(v)
	return w != "" && what != "another platform"
}

var freeThreadedRe = lazyre.New(`^(py|python)?3\.[0-9]+t$`)

// pythonAxis reports a matrix axis that holds Python versions.
func pythonAxis(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "python") || k == "py" || strings.HasSuffix(k, ".python") || k == "interpreter"
}

var pythonVersionRe = lazyre.New(`^(?:py|python|cpython-?)?(3\.[0-9]+)(?:\.[0-9x]+)?$`)

// hostPython reports whether v is the version of the machine's default
// Python ("3.11" when python3 is 3.11).
func hostPython(v string, host Host) bool {
	if host == nil {
		return false
	}
	m := pythonVersionRe.FindStringSubmatch(strings.TrimSpace(v))
	return m != nil && m[1] == host.Python()
}

// orderAxis orders an axis's values by preference.
func orderAxis(key string, vals []*yaml.Node, host Host) []*yaml.Node {
	out := append([]*yaml.Node(nil), vals...)
	allScalar := true
	for _, v := range out {
		if v.Kind != yaml.ScalarNode {
			allScalar = false
		}
	}
	if !allScalar {
		// include-style objects: prefer one that mentions Linux.
		sort.SliceStable(out, func(a, b int) bool { return isLinuxEntry(out[a]) && !isLinuxEntry(out[b]) })
		return out
	}
	lk := strings.ToLower(key)
	osAxis := strings.Contains(lk, "os") || strings.Contains(lk, "runner") || strings.Contains(lk, "platform")
	if osAxis {
		rank := func(v string) int {
			v = strings.ToLower(v)
			switch {
			case v == "ubuntu-latest":
				return 0
			case strings.Contains(v, "ubuntu") || strings.Contains(v, "linux"):
				return 1
			case strings.Contains(v, "mac") || strings.Contains(v, "windows"):
				return 3
			}
			return 2
		}
		sort.SliceStable(out, func(a, b int) bool { return rank(out[a].Value) < rank(out[b].Value) })
		return out
	}
	versions, embedded, nVersions := true, true, 0
	for _, v := range out {
		if !versionRe.MatchString(v.Value) {
			versions = false
		} else {
			nVersions++
		}
		if embeddedVersionRe.FindString(v.Value) == "" {
			embedded = false
		}
	}
	if versions || nVersions*2 >= len(out) && nVersions > 0 {
		// Versions (with a few extras like jruby-head): for Python, an
		// interpreter the machine has first; then the newest version, the
		// extras last.
		py := pythonAxis(key)
		sort.SliceStable(out, func(a, b int) bool {
			if py {
				ha, hb := hostPython(out[a].Value, host), hostPython(out[b].Value, host)
				if ha != hb {
					return ha
				}
			}
			va, vb := versionRe.MatchString(out[a].Value), versionRe.MatchString(out[b].Value)
			if va != vb {
				return va
			}
			return va && compareVersions(out[a].Value, out[b].Value) > 0
		})
		return out
	}
	if embedded && len(out) > 1 {
		// "Node.js 18.x", "php-8.3": the newest by the version inside.
		sort.SliceStable(out, func(a, b int) bool {
			return compareVersions(embeddedVersionRe.FindString(out[a].Value), embeddedVersionRe.FindString(out[b].Value)) > 0
		})
		return out
	}
	// Prefer stable toolchains over nightly/beta/experimental ones, and the
	// plain value over one that names a variant (prefer-lowest, valgrind).
	rank := func(v string) int {
		v = strings.ToLower(v)
		switch {
		case hostPython(v, host):
			return -1
		case variantValue(v):
			return 3
		case v == "stable" || v == "latest" || v == "lts/*" || v == "lts":
			return 0
		case strings.Contains(v, "nightly") || strings.Contains(v, "beta") || strings.Contains(v, "dev") || strings.Contains(v, "canary") || strings.Contains(v, "experimental") || strings.Contains(v, "pypy") || strings.Contains(v, "head") || strings.Contains(v, "rc"):
			return 2
		}
		return 1
	}
	sort.SliceStable(out, func(a, b int) bool { return rank(out[a].Value) < rank(out[b].Value) })
	return out
}

func compareVersions(a, b string) int {
	pa := strings.Split(strings.TrimPrefix(a, "v"), ".")
	pb := strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// GitLab CI.

var gitlabReserved = map[string]bool{"image": true, "services": true, "stages": true, "types": true, "before_script": true, "after_script": true, "variables": true, "cache": true, "include": true, "default": true, "workflow": true}

var gitlabVarRe = lazyre.New(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

func parseGitLabCI(file string, data []byte, host Host) ([]*ciJob, error) {
	root, err := parseYAMLNode(data)
	if err != nil {
		return nil, err
	}
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("not a GitLab CI file: the top level is not a mapping")
	}
	templates := map[string]*yaml.Node{}
	for _, kv := range mapPairs(root) {
		templates[kv[0].Value] = resolveAlias(kv[1])
	}
	def := mapGet(root, "default")
	globalBefore := mapGet(root, "before_script")
	if b := mapGet(def, "before_script"); b != nil {
		globalBefore = b
	}
	globalServices := mapGet(root, "services")
	if s := mapGet(def, "services"); s != nil {
		globalServices = s
	}
	globalVars := stringMap(mapGet(root, "variables"))
	var jobs []*ciJob
	for _, kv := range mapPairs(root) {
		name := kv[0].Value
		if gitlabReserved[name] || strings.HasPrefix(name, ".") {
			continue
		}
		jn := resolveAlias(kv[1])
		if jn == nil || jn.Kind != yaml.MappingNode {
			continue
		}
		get := func(key string) *yaml.Node { return gitlabGet(jn, key, templates, 0) }
		if get("script") == nil && get("trigger") == nil {
			continue
		}
		j := &ciJob{file: file, id: name, name: name, system: "gitlab", gating: true}
		stage := scalar(get("stage"))
		if stage == "" {
			stage = "test"
		}
		switch {
		case deployNameRe.MatchString(name) || deployNameRe.MatchString(stage) || name == "pages":
			j.skip = "a deploy/release job (stage " + stage + ")"
		case scalar(get("when")) == "manual":
			j.skip = "a manual job"
		case get("trigger") != nil:
			j.skip = "triggers a downstream pipeline"
		}
		vars := map[string]string{}
		for k, v := range globalVars {
			vars[k] = v
		}
		for k, v := range stringMap(get("variables")) {
			vars[k] = v
		}
		var cell map[string]string
		if pm := mapGet(get("parallel"), "matrix"); pm != nil {
			items := seqItems(pm)
			if len(items) > 0 {
				c, note := pickMatrixCell(items[0], host)
				cell = c
				j.matrixNote = strings.Replace(note, "matrix of", "parallel:matrix of", 1)
				for k, v := range c {
					vars[k] = v
				}
			}
		}
		vars["CI_PROJECT_DIR"] = "."
		j.env = exprEnv{matrix: cell, env: vars}
		services := get("services")
		if services == nil {
			services = globalServices
		}
		for _, s := range seqItems(services) {
			img := scalar(s)
			if img == "" {
				img = scalar(mapGet(s, "name"))
			}
			if img != "" {
				j.services = append(j.services, img)
			}
		}
		j.runsOn = scalar(get("image"))
		if j.runsOn == "" {
			j.runsOn = scalar(mapGet(get("image"), "name"))
		}
		expand := func(s string) string {
			return gitlabVarRe.ReplaceAllStringFunc(s, func(m string) string {
				sub := gitlabVarRe.FindStringSubmatch(m)
				if v, ok := vars[sub[1]]; ok && !strings.Contains(v, "$") {
					return v
				}
				return m
			})
		}
		before := get("before_script")
		if before == nil {
			before = globalBefore
		}
		if text := scriptText(before); text != "" {
			j.steps = append(j.steps, ciStep{name: "before_script", run: expand(text), index: 0, setupOnly: true})
		}
		j.steps = append(j.steps, ciStep{name: "script", run: expand(scriptText(get("script"))), index: 1})
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// gitlabGet looks a key up in a job, then in what it extends.
func gitlabGet(jn *yaml.Node, key string, templates map[string]*yaml.Node, depth int) *yaml.Node {
	if v := mapGet(jn, key); v != nil {
		return v
	}
	if depth > 4 {
		return nil
	}
	ext := scalarList(mapGet(jn, "extends"))
	for i := len(ext) - 1; i >= 0; i-- {
		if t, ok := templates[ext[i]]; ok {
			if v := gitlabGet(t, key, templates, depth+1); v != nil {
				return v
			}
		}
	}
	return nil
}
