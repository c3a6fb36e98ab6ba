package cifailure

import (
	"errors"
	"fmt"
	"os/exec"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/aiwg/agent-loop/internal/forge/github"
)

// Input is what Resolve needs to know about one failed workflow run.
type Input struct {
	Run github.WorkflowRun
	// Jobs are the run's jobs with their steps (github.Client.RunJobs).
	Jobs []github.WorkflowJob
	// Workflow is the run's workflow file (Run.Path) at the run's head
	// commit: from the checkout of that commit, or github.Client.FileAt.
	Workflow []byte
	// ReadFile reads another file of the repository at the run's head
	// commit: a reusable workflow of the repository that a job calls. Nil
	// reads none (such jobs fall back to inference).
	ReadFile func(path string) ([]byte, error)
	// PR is the pull request the run belongs to, for github.head_ref,
	// github.base_ref and github.event.pull_request (nil: none).
	PR *github.RunPR
	// Workspace is the absolute path of the checkout where the loop runs:
	// the value of ${{ github.workspace }}, and the directory an absolute
	// working-directory must be inside. Empty: both are refused.
	Workspace string
	// IsSetup says whether a run: script of the failed job, before the
	// failed step, installs what the step needs (dependencies, tools,
	// services): such steps become the loop's setup. This is the role
	// model of the shell-command package (shellcmd); nil takes no setup.
	IsSetup func(script, workdir string) bool
	// LookPath finds a shell program (default exec.LookPath).
	LookPath func(file string) (string, error)
}

// Criterion is the completion criterion taken from a failed workflow run:
// the failed steps themselves, run by the harness as the runner ran them.
type Criterion struct {
	Workflow     string // the workflow's name ("CI")
	WorkflowPath string // ".github/workflows/ci.yml"
	RunURL       string
	HeadSHA      string
	// Steps are the failed run: steps, each a criterion: the loop is done
	// when every one passes. Command runs them all.
	Steps []Step
	// Setup are the earlier run: steps of the failed jobs that install what
	// the failed steps need, in order (SetupCommand runs them).
	Setup []Step
	// Env is set for every step and setup step, under the workflow's own
	// env: CI=true, GITHUB_ACTIONS=true, the GITHUB_* values of the failed
	// run, RUNNER_OS=Linux, and the workflow command files (GITHUB_ENV,
	// GITHUB_OUTPUT, GITHUB_PATH, GITHUB_STEP_SUMMARY, GITHUB_STATE) sent to
	// /dev/null, so a step that writes them neither fails nor reaches the
	// harness's own files.
	Env []EnvVar
	// Fallbacks are the failed steps that cannot be run as they are (a
	// uses: action, a job whose file could not be read, a job that failed
	// outside its steps): for those the criterion is inferred, with the job
	// as context (Fallback.Task, Fallback.Hint), and the report says so.
	Fallbacks []Fallback
	// Notes say what the loop does not reproduce (earlier uses: steps,
	// services, other failed matrix entries, env left unset).
	Notes []string
}

// Step is one run: step of a workflow job, resolved for the failed matrix
// entry.
type Step struct {
	Workflow string
	// Job is the job's name as GitHub shows it; JobID its key in the
	// workflow; JobURL the failed job's page.
	Job    string
	JobID  string
	JobURL string
	// Name is the step's name as GitHub shows it ("Run npm test" for an
	// unnamed step); Index its position in the job (0-based); File the
	// workflow file it is in (a reusable workflow's for a called job) and
	// Line its line there.
	Name  string
	Index int
	File  string
	Line  int
	// Matrix are the values of the job's matrix entry.
	Matrix map[string]string
	// Run is the script with its expressions evaluated.
	Run string
	// Shell is how the runner ran it.
	Shell Shell
	// WorkingDirectory is relative to the repository root ("." for it).
	WorkingDirectory string
	// Env is the step's environment from the workflow, the job and the
	// step (later scopes override), expressions evaluated, by name.
	Env []EnvVar
}

// Evidence is the one line that says where the step comes from: the
// workflow, the job, the step with its file and line, and the failed run.
func (s Step) Evidence(runURL string) string {
	e := fmt.Sprintf("workflow %q, job %q, step %q", s.Workflow, s.Job, s.Name)
	if s.File != "" {
		e += " (" + s.File
		if s.Line > 0 {
			e += ":" + strconv.Itoa(s.Line)
		}
		e += ")"
	}
	if runURL != "" {
		e += ", failed in " + runURL
	}
	return e
}

// EnvVar is one environment variable.
type EnvVar struct {
	Name, Value string
}

// Fallback is a failed step that is not run as it is.
type Fallback struct {
	Job    string
	JobURL string
	// Step is the failed step's name ("" when the job failed outside its
	// steps); Uses the action it runs.
	Step string
	Uses string
	// Reason says why the step is not the criterion, for the report.
	Reason string
	// Task and Hint are what criteria.InferWithHint is asked: the job as
	// context.
	Task string
	Hint string
}

// Refusal is a failed step that cannot become the criterion, with what to
// do instead. Resolve returns it (possibly several, joined) as its error.
type Refusal struct {
	Workflow string
	Job      string
	Step     string
	// Expr is the expression that could not be evaluated, Need what it
	// needs ("secrets.NPM_TOKEN"); both empty for other causes.
	Expr string
	Need string
	// Cause says what is wrong.
	Cause string
}

func (r *Refusal) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the failed step %q of job %q (workflow %q) cannot be run by the loop: ", r.Step, r.Job, r.Workflow)
	b.WriteString(r.Cause)
	b.WriteString("; set the completion input (--completion) to a command that checks the fix without it, " +
		"for example the step's run: script with the value it needs written out")
	return b.String()
}

// ErrNoFailedJob is returned when the run has no failed job to take a
// criterion from.
var ErrNoFailedJob = errors.New("the run has no failed job (conclusion failure or timed_out)")

// Resolve takes the criterion from a failed run: the failed steps of the
// failed jobs, found in the workflow file at the run's head commit (a
// matrix job by its name as GitHub renders it for each entry, include and
// exclude applied), each run: with its working-directory, shell and env,
// expressions evaluated from the run and the matrix entry. An expression
// that needs the runner (secrets, step outputs, needs, hashFiles, ...)
// gives a *Refusal; a failed uses: step gives a Fallback.
func Resolve(in Input) (*Criterion, error) {
	if in.LookPath == nil {
		in.LookPath = exec.LookPath
	}
	wfPath := in.Run.Path
	wf, err := parseWorkflow(wfPath, in.Workflow)
	if err != nil {
		return nil, fmt.Errorf("reading the workflow of run %d: %w", in.Run.ID, err)
	}
	if wf.name == "" {
		wf.name = in.Run.Name
	}
	r := &resolver{in: in, root: wf}
	c := &Criterion{Workflow: in.Run.Name, WorkflowPath: wfPath, RunURL: in.Run.HTMLURL, HeadSHA: in.Run.HeadSHA}
	if c.Workflow == "" {
		c.Workflow = wf.name
	}
	c.Env = r.defaultEnv()

	insts := r.instances(wf, nil, nil, 0)
	var failed []github.WorkflowJob
	for _, j := range in.Jobs {
		if j.Conclusion == "failure" || j.Conclusion == "timed_out" {
			failed = append(failed, j)
		}
	}
	if len(failed) == 0 {
		return nil, ErrNoFailedJob
	}
	var refusals []error
	var linux, other []jobMatch
	for _, j := range failed {
		m := r.match(insts, j)
		if m.inst == nil {
			c.Fallbacks = append(c.Fallbacks, r.fallback(j, nil, "", "", fmt.Sprintf("no job of %s at %s is named %q", wfPath, short(in.Run.HeadSHA), j.Name)))
			continue
		}
		if m.inst.err != nil {
			c.Fallbacks = append(c.Fallbacks, r.fallback(j, m.inst, "", "", m.inst.err.Error()))
			continue
		}
		if coe := m.inst.job.continueOnError; coe != "" {
			if v, err := m.inst.cx.value(coe); err == nil && truthy(v) {
				c.Notes = append(c.Notes, fmt.Sprintf("job %q failed but may (continue-on-error): the loop does not check it", j.Name))
				continue
			}
		}
		if os := m.inst.runnerOS(); os != "" && os != "Linux" {
			other = append(other, m)
			continue
		}
		linux = append(linux, m)
	}
	switch {
	case len(linux) > 0:
		for _, m := range other {
			c.Notes = append(c.Notes, fmt.Sprintf("job %q failed on %s too; the loop runs on Linux and checks the Linux jobs", m.job.Name, m.inst.runnerOS()))
		}
	case len(other) > 0:
		for _, m := range other {
			refusals = append(refusals, &Refusal{Workflow: c.Workflow, Job: m.job.Name, Step: firstFailedName(m.job),
				Cause: fmt.Sprintf("the job runs on %s and the loop runs on Linux", m.inst.runnerOS())})
		}
	}
	for _, m := range linux {
		refusals = append(refusals, r.takeSteps(c, m)...)
	}
	if len(refusals) > 0 {
		return nil, errors.Join(refusals...)
	}
	c.Steps = dedupeSteps(c.Steps)
	c.Setup = dedupeSteps(c.Setup)
	if len(c.Steps) == 0 && len(c.Fallbacks) == 0 {
		return nil, fmt.Errorf("no failed step of run %d could be found in %s", in.Run.ID, wfPath)
	}
	return c, nil
}

func firstFailedName(j github.WorkflowJob) string {
	for _, s := range j.Steps {
		if s.Conclusion == "failure" {
			return s.Name
		}
	}
	return ""
}

// resolver holds one resolution.
type resolver struct {
	in   Input
	root *workflow
}

// instance is one job of the run as GitHub made it: a job of a workflow
// (the run's own or a reusable one it calls) for one matrix entry.
type instance struct {
	wf       *workflow
	job      *wfJob
	entry    entry
	name     string
	pat      string // a regular expression of the shown name
	cx       contexts
	defaults runDefaults
	// scopes are the workflow's and the job's env, evaluated.
	scopes [2][]envValue
	err    error // why the job cannot be resolved (a remote reusable workflow)
}

type envValue struct {
	name, value string
	err         error
}

func (i *instance) runnerOS() string {
	if i.job.runsOn == nil {
		return ""
	}
	var labels []string
	v := nodeValue(i.job.runsOn)
	if s, ok := v.(string); ok {
		ev, err := i.cx.value(s)
		if err != nil {
			return ""
		}
		v = ev
	}
	switch x := v.(type) {
	case string:
		labels = []string{x}
	case []any:
		for _, e := range x {
			labels = append(labels, toString(e))
		}
	case map[string]any:
		labels = leafStrings(x["labels"])
	}
	for _, l := range labels {
		l = strings.ToLower(l)
		switch {
		case strings.HasPrefix(l, "windows"):
			return "Windows"
		case strings.HasPrefix(l, "macos"):
			return "macOS"
		}
	}
	return "Linux"
}

func (r *resolver) githubContext() map[string]any {
	run := r.in.Run
	owner, _, _ := strings.Cut(run.Repo, "/")
	g := map[string]any{
		"sha": run.HeadSHA, "repository": run.Repo, "repository_owner": owner, "event_name": run.Event,
		"workflow": run.Name, "workflow_ref": run.Repo + "/" + run.Path + "@refs/heads/" + run.HeadBranch,
		"run_id": toString(float64(run.ID)), "run_number": toString(float64(run.RunNumber)),
		"run_attempt": toString(float64(run.RunAttempt)), "actor": run.Actor, "triggering_actor": run.TriggeringActor,
		"server_url": "https://github.com", "api_url": "https://api.github.com", "graphql_url": "https://api.github.com/graphql",
		"ref": "refs/heads/" + run.HeadBranch, "ref_name": run.HeadBranch, "ref_type": "branch", "head_ref": "", "base_ref": "",
		"token":       &exprNeed{Need: "github.token", Why: "the loop never gives the token to the check"},
		"action_path": &exprNeed{Need: "github.action_path", Why: "it exists only while an action runs"},
		"event":       &exprNeed{Need: "github.event", Why: "the workflow_run event does not carry the failed run's own event payload"},
	}
	if r.in.Workspace != "" {
		g["workspace"] = r.in.Workspace
	} else {
		g["workspace"] = &exprNeed{Need: "github.workspace", Why: "the checkout's path is not known here"}
	}
	if pr := r.in.PR; pr != nil && strings.HasPrefix(run.Event, "pull_request") {
		g["ref"] = fmt.Sprintf("refs/pull/%d/merge", pr.Number)
		g["ref_name"] = fmt.Sprintf("%d/merge", pr.Number)
		g["head_ref"], g["base_ref"] = pr.HeadRef, pr.BaseRef
		// On a pull_request run github.sha is the merge commit, which the
		// loop does not have: the head commit is what it checks.
		g["event"] = map[string]any{
			"number": float64(pr.Number),
			"pull_request": map[string]any{
				"number": float64(pr.Number),
				"head":   map[string]any{"ref": pr.HeadRef, "sha": pr.HeadSHA},
				"base":   map[string]any{"ref": pr.BaseRef},
			},
		}
	}
	return g
}

// defaultEnv is what the runner sets for every step, as far as it applies
// to the loop.
func (r *resolver) defaultEnv() []EnvVar {
	g := r.githubContext()
	get := func(k string) string { s, _ := g[k].(string); return s }
	env := []EnvVar{
		{"CI", "true"}, {"GITHUB_ACTIONS", "true"},
		{"GITHUB_REPOSITORY", get("repository")}, {"GITHUB_REPOSITORY_OWNER", get("repository_owner")},
		{"GITHUB_EVENT_NAME", get("event_name")}, {"GITHUB_WORKFLOW", get("workflow")},
		{"GITHUB_SHA", get("sha")}, {"GITHUB_REF", get("ref")}, {"GITHUB_REF_NAME", get("ref_name")},
		{"GITHUB_REF_TYPE", "branch"}, {"GITHUB_HEAD_REF", get("head_ref")}, {"GITHUB_BASE_REF", get("base_ref")},
		{"GITHUB_RUN_ID", get("run_id")}, {"GITHUB_RUN_NUMBER", get("run_number")}, {"GITHUB_RUN_ATTEMPT", get("run_attempt")},
		{"GITHUB_SERVER_URL", "https://github.com"}, {"RUNNER_OS", "Linux"}, {"RUNNER_ARCH", "X64"},
	}
	for _, f := range []string{"GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_STATE"} {
		env = append(env, EnvVar{f, "/dev/null"})
	}
	return env
}

func (r *resolver) baseContexts(inputs map[string]any) contexts {
	runner := map[string]any{"os": "Linux", "arch": "X64", "environment": "github-hosted",
		"temp":       &exprNeed{Need: "runner.temp", Why: "the runner's temporary directory does not exist where the loop runs"},
		"tool_cache": &exprNeed{Need: "runner.tool_cache", Why: "the runner's tool cache does not exist where the loop runs"},
		"name":       &exprNeed{Need: "runner.name", Why: "it names the runner of the failed job"},
	}
	cx := contexts{"github": r.githubContext(), "runner": runner, "env": map[string]any{}}
	switch {
	case inputs != nil:
		cx["inputs"] = inputs
	case r.in.Run.Event == "workflow_dispatch":
		cx["inputs"] = &exprNeed{Need: "inputs", Why: "the inputs of a manual run are not in the workflow_run event"}
	default:
		cx["inputs"] = map[string]any{}
	}
	return cx
}

func (cx contexts) with(name string, v any) contexts {
	out := make(contexts, len(cx)+1)
	for k, x := range cx {
		out[k] = x
	}
	out[name] = v
	return out
}

// instances lists the jobs the workflow makes: one per matrix entry, and
// for a job that calls a reusable workflow of this repository, that
// workflow's jobs under "caller / ".
func (r *resolver) instances(wf *workflow, prefix []string, inputs map[string]any, depth int) []*instance {
	base := r.baseContexts(inputs)
	wfEnv := evalEnv(wf.env, base)
	var out []*instance
	for _, j := range wf.jobs {
		cx := base.with("env", envMap(wfEnv))
		entries, merr := expandMatrix(j.matrix, cx)
		if merr != nil {
			entries = []entry{{values: map[string]any{}}}
		}
		for _, e := range entries {
			ecx := cx.with("matrix", e.valuesMap())
			if merr != nil {
				ecx = cx.with("matrix", &exprNeed{Need: "matrix", Why: "the job's matrix cannot be computed here (" + merr.Error() + ")"})
			}
			text, pat := displayName(j.name, j.id, e, ecx)
			if merr != nil && !strings.Contains(j.name, "${{") {
				pat = regexp.QuoteMeta(text) + `(?: \(.*\))?`
			}
			if len(prefix) == 2 {
				text, pat = prefix[0]+" / "+text, prefix[1]+" / "+pat
			}
			if j.uses != "" {
				out = append(out, r.called(j, ecx, text, pat, depth)...)
				continue
			}
			jobEnv := evalEnv(j.env, ecx)
			inst := &instance{wf: wf, job: j, entry: e, name: text, pat: pat, cx: ecx.with("env", envMap(wfEnv, jobEnv)),
				defaults: runDefaults{shell: firstOf(j.defaults.shell, wf.defaults.shell), wd: firstOf(j.defaults.wd, wf.defaults.wd)}}
			inst.scopes = [2][]envValue{wfEnv, jobEnv}
			out = append(out, inst)
		}
	}
	return out
}

// called lists the jobs of the reusable workflow a caller job runs.
func (r *resolver) called(j *wfJob, cx contexts, name, pat string, depth int) []*instance {
	remote := func(why error) []*instance {
		return []*instance{{job: j, name: name, pat: pat + `(?: / .*)?`, cx: cx, err: why}}
	}
	if !strings.HasPrefix(j.uses, "./") {
		return remote(fmt.Errorf("job %q %w (%s): its steps are not read", j.id, errRemoteWorkflow, j.uses))
	}
	if r.in.ReadFile == nil || depth >= 3 {
		return remote(fmt.Errorf("job %q calls %s, which is not read here", j.id, j.uses))
	}
	p := path.Clean(strings.TrimPrefix(j.uses, "./"))
	if i := strings.Index(p, "@"); i >= 0 {
		p = p[:i]
	}
	data, err := r.in.ReadFile(p)
	if err != nil {
		return remote(fmt.Errorf("job %q calls %s, which cannot be read: %w", j.id, p, err))
	}
	wf, err := parseWorkflow(p, data)
	if err != nil {
		return remote(err)
	}
	inputs := map[string]any{}
	for _, in := range wf.callInputs {
		if d := get(in.val, "default"); d != nil {
			v := nodeValue(d)
			if s, ok := v.(string); ok {
				if ev, err := cx.value(s); err == nil {
					v = ev
				} else {
					v = &exprNeed{Need: "inputs." + in.key, Why: "its default " + s + " cannot be evaluated"}
				}
			}
			inputs[in.key] = v
		}
	}
	for _, w := range j.with {
		v := nodeValue(w.val)
		if s, ok := v.(string); ok {
			ev, err := cx.value(s)
			if err != nil {
				inputs[w.key] = &exprNeed{Need: "inputs." + w.key, Why: fmt.Sprintf("the caller job %q passes %s", j.id, strings.TrimSpace(s))}
				continue
			}
			v = ev
		}
		inputs[w.key] = v
	}
	return r.instances(wf, []string{name, pat}, inputs, depth+1)
}

func (e entry) valuesMap() map[string]any {
	m := make(map[string]any, len(e.values))
	for k, v := range e.values {
		m[k] = v
	}
	return m
}

func firstOf(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// evalEnv evaluates an env: block in order; a value that cannot be
// evaluated is kept as its error.
func evalEnv(kvs []kv, cx contexts) []envValue {
	out := make([]envValue, 0, len(kvs))
	for _, p := range kvs {
		v := nodeValue(p.val)
		s, isStr := v.(string)
		if !isStr {
			out = append(out, envValue{name: p.key, value: toString(v)})
			continue
		}
		ev, err := cx.expand(s)
		out = append(out, envValue{name: p.key, value: ev, err: err})
	}
	return out
}

// envMap is the env context of scopes, later ones overriding.
func envMap(scopes ...[]envValue) map[string]any {
	m := map[string]any{}
	for _, sc := range scopes {
		for _, e := range sc {
			if e.err != nil {
				m[e.name] = &exprNeed{Need: "env." + e.name, Why: "its value " + e.err.Error()}
				continue
			}
			m[e.name] = e.value
		}
	}
	return m
}

// jobMatch is a failed job of the run and the instance it is.
type jobMatch struct {
	job  github.WorkflowJob
	inst *instance
}

func (r *resolver) match(insts []*instance, j github.WorkflowJob) jobMatch {
	for _, in := range insts {
		if in.name == j.Name {
			return jobMatch{job: j, inst: in}
		}
	}
	for _, in := range insts {
		if matchesPattern(j.Name, in.pat) {
			return jobMatch{job: j, inst: in}
		}
	}
	return jobMatch{job: j}
}

// systemSteps are the steps the runner adds around a job's own.
var systemSteps = map[string]bool{"Set up job": true, "Complete job": true, "Initialize containers": true,
	"Stop containers": true, "Set up runner": true}

// takeSteps adds the failed steps of one matched job to c.
func (r *resolver) takeSteps(c *Criterion, m jobMatch) []error {
	in := m.inst
	names := make([]string, len(in.job.steps))
	pats := make([]string, len(in.job.steps))
	for i, s := range in.job.steps {
		names[i], pats[i] = r.stepDisplay(in, s)
	}
	var refusals []error
	seen := map[string]int{}
	firstFailed := -1
	anyFailed := false
	for _, api := range m.job.Steps {
		if systemSteps[api.Name] {
			continue
		}
		post := strings.HasPrefix(api.Name, "Post ") || strings.HasPrefix(api.Name, "Pre ")
		key := api.Name
		ord := seen[key]
		if !post {
			seen[key]++
		}
		if api.Conclusion != "failure" {
			continue
		}
		anyFailed = true
		if post {
			c.Fallbacks = append(c.Fallbacks, r.fallback(m.job, in, api.Name, "",
				fmt.Sprintf("the action's %s step failed (%s), not a run: script", strings.ToLower(strings.Fields(api.Name)[0]), api.Name)))
			continue
		}
		idx := findStep(api.Name, ord, names, pats)
		if idx < 0 {
			c.Fallbacks = append(c.Fallbacks, r.fallback(m.job, in, api.Name, "",
				fmt.Sprintf("step %q is not in job %q of %s at %s", api.Name, in.job.id, in.wf.path, short(r.in.Run.HeadSHA))))
			continue
		}
		s := in.job.steps[idx]
		if v, err := in.cx.value(s.continueOnError); err == nil && truthy(v) && s.continueOnError != "" {
			continue // its failure did not fail the job
		}
		if firstFailed < 0 {
			firstFailed = idx
		}
		if !s.hasRun {
			c.Fallbacks = append(c.Fallbacks, r.fallback(m.job, in, api.Name, s.uses,
				fmt.Sprintf("the step runs the action %s, not a run: script", s.uses)))
			continue
		}
		st, notes, err := r.step(in, s, names[idx], m.job)
		if err != nil {
			refusals = append(refusals, err)
			continue
		}
		c.Steps = append(c.Steps, st)
		c.Notes = append(c.Notes, notes...)
	}
	if !anyFailed {
		why := "the job failed outside its steps"
		if m.job.Conclusion == "timed_out" {
			why = "the job ran out of time"
		}
		c.Fallbacks = append(c.Fallbacks, r.fallback(m.job, in, "", "", why))
	}
	if firstFailed > 0 {
		r.takeSetup(c, in, firstFailed, names, m.job)
	}
	if in.job.container {
		c.Notes = append(c.Notes, fmt.Sprintf("job %q runs in a container: the loop runs the steps in its own environment", m.job.Name))
	}
	if len(in.job.services) > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("job %q starts services (%s): the loop does not start them", m.job.Name, strings.Join(in.job.services, ", ")))
	}
	return refusals
}

// findStep returns the index of the ord-th step whose display name is
// shown (or matches its pattern).
func findStep(shown string, ord int, names, pats []string) int {
	n := 0
	for i := range names {
		ok := names[i] == shown || matchesPattern(shown, pats[i])
		if !ok && len(shown) >= 60 && strings.HasPrefix(names[i], shown) {
			ok = true // a long name the API cut short
		}
		if ok {
			if n == ord {
				return i
			}
			n++
		}
	}
	return -1
}

// stepDisplay is the name GitHub shows for a step (and a pattern when an
// expression in it cannot be evaluated here).
func (r *resolver) stepDisplay(in *instance, s wfStep) (string, string) {
	cx := in.cx.with("env", envMap(in.scopes[0], in.scopes[1], evalEnv(s.env, in.cx)))
	switch {
	case s.name != "":
		return renderPattern(s.name, cx)
	case s.hasRun:
		script, err := cx.expand(s.run)
		if err != nil {
			text, pat := renderPattern(firstLineOf(s.run), cx)
			return "Run " + text, regexp.QuoteMeta("Run ") + pat
		}
		name := "Run " + firstLineOf(script)
		return name, regexp.QuoteMeta(name)
	case strings.HasPrefix(s.uses, "docker://"):
		name := "Run " + strings.TrimPrefix(s.uses, "docker://")
		return name, regexp.QuoteMeta(name)
	}
	name := "Run " + s.uses
	return name, regexp.QuoteMeta(name)
}

// firstLineOf is the runner's first line of a script: leading blanks and
// newlines skipped, up to the next line break.
func firstLineOf(script string) string {
	s := strings.TrimLeft(script, " \t\r\n")
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

// step resolves one run: step of an instance.
func (r *resolver) step(in *instance, s wfStep, name string, job github.WorkflowJob) (Step, []string, error) {
	refuse := func(err error, cause string) error {
		rf := &Refusal{Workflow: r.root.name, Job: job.Name, Step: name, Cause: cause}
		var te *templateError
		if errors.As(err, &te) {
			rf.Expr = te.expr
			var need *exprNeed
			if asNeed(te.err, &need) {
				rf.Need = need.Need
				rf.Cause = fmt.Sprintf("%s %s needs %s (%s)", cause, te.expr, need.Need, need.Why)
			} else {
				rf.Cause = fmt.Sprintf("%s %s does not evaluate: %v", cause, te.expr, te.err)
			}
		} else if err != nil {
			rf.Cause = cause + " " + err.Error()
		}
		return rf
	}
	stepEnv := evalEnv(s.env, in.cx.with("env", envMap(in.scopes[0], in.scopes[1])))
	cx := in.cx.with("env", envMap(in.scopes[0], in.scopes[1], stepEnv))
	script, err := cx.expand(s.run)
	if err != nil {
		return Step{}, nil, refuse(err, "its run: script uses")
	}
	if strings.ContainsRune(script, 0) {
		return Step{}, nil, refuse(nil, "its run: script holds a NUL byte")
	}
	wd, err := r.workdir(firstOf(s.wd, in.defaults.wd), cx)
	if err != nil {
		return Step{}, nil, refuse(err, "its working-directory")
	}
	shellSpec, err := cx.expand(firstOf(s.shell, in.defaults.shell))
	if err != nil {
		return Step{}, nil, refuse(err, "its shell:")
	}
	sh, err := resolveShell(shellSpec, r.in.LookPath)
	if err != nil {
		return Step{}, nil, refuse(nil, err.Error())
	}
	st := Step{Workflow: r.root.name, Job: job.Name, JobID: in.job.id, JobURL: job.HTMLURL, Name: name, Index: s.index,
		File: in.wf.path, Line: s.line, Matrix: in.entry.matrixStrings(), Run: script, Shell: sh, WorkingDirectory: wd}
	env, notes, err := mergeEnv(in.scopes[0], in.scopes[1], stepEnv, s.run)
	if err != nil {
		return Step{}, nil, refuse(err, "its env")
	}
	st.Env = env
	for i, n := range notes {
		notes[i] = fmt.Sprintf("step %q of job %q: %s", name, job.Name, n)
	}
	return st, notes, nil
}

// mergeEnv is a step's environment: workflow, job and step env in that
// order. A workflow or job value that cannot be evaluated is left out when
// the script does not name the variable, and refused when it does; a step
// value that cannot be evaluated is refused.
func mergeEnv(wfEnv, jobEnv, stepEnv []envValue, rawScript string) ([]EnvVar, []string, error) {
	vals := map[string]string{}
	var order, notes []string
	add := func(scope []envValue, strict bool) error {
		for _, e := range scope {
			if !validEnvName(e.name) {
				return fmt.Errorf("variable %q: not a valid name for the environment", e.name)
			}
			if e.err != nil {
				if strict || namesVar(rawScript, e.name) {
					return &namedEnvError{name: e.name, err: e.err}
				}
				if _, ok := vals[e.name]; ok {
					delete(vals, e.name)
				}
				notes = append(notes, fmt.Sprintf("env %s is left unset: %v", e.name, e.err))
				continue
			}
			if strings.ContainsRune(e.value, 0) {
				return fmt.Errorf("variable %s holds a NUL byte", e.name)
			}
			if _, ok := vals[e.name]; !ok {
				order = append(order, e.name)
			}
			vals[e.name] = e.value
		}
		return nil
	}
	if err := add(wfEnv, false); err != nil {
		return nil, nil, err
	}
	if err := add(jobEnv, false); err != nil {
		return nil, nil, err
	}
	if err := add(stepEnv, true); err != nil {
		return nil, nil, err
	}
	var out []EnvVar
	for _, k := range order {
		if v, ok := vals[k]; ok {
			out = append(out, EnvVar{Name: k, Value: v})
		}
	}
	return out, notes, nil
}

type namedEnvError struct {
	name string
	err  error
}

func (e *namedEnvError) Error() string { return e.name + ": " + e.err.Error() }
func (e *namedEnvError) Unwrap() error { return e.err }

var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func validEnvName(s string) bool { return envNameRe.MatchString(s) }

// namesVar reports whether a script mentions a variable by name.
func namesVar(script, name string) bool {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_])`)
	return re.MatchString(script)
}

// workdir resolves a working-directory to a clean path relative to the
// repository root.
func (r *resolver) workdir(spec string, cx contexts) (string, error) {
	if spec == "" {
		return ".", nil
	}
	wd, err := cx.expand(spec)
	if err != nil {
		return "", err
	}
	wd = strings.TrimSpace(wd)
	if path.IsAbs(wd) {
		ws := strings.TrimSuffix(r.in.Workspace, "/")
		if ws == "" || (wd != ws && !strings.HasPrefix(wd, ws+"/")) {
			return "", fmt.Errorf("%q is outside the checkout", wd)
		}
		wd = strings.TrimPrefix(strings.TrimPrefix(wd, ws), "/")
	}
	wd = path.Clean("./" + wd)
	if wd == ".." || strings.HasPrefix(wd, "../") {
		return "", fmt.Errorf("%q is outside the repository", spec)
	}
	return wd, nil
}

// takeSetup adds the earlier run: steps of the job that install what the
// failed step needs, and notes the earlier actions the loop does not run.
func (r *resolver) takeSetup(c *Criterion, in *instance, upto int, names []string, job github.WorkflowJob) {
	var actions []string
	for _, s := range in.job.steps[:upto] {
		if ok, err := in.cx.condition(s.cond); err == nil && !ok {
			continue // it did not run
		}
		if !s.hasRun {
			if s.uses != "" && !strings.HasPrefix(s.uses, "actions/checkout@") {
				actions = append(actions, s.uses)
			}
			continue
		}
		if r.in.IsSetup == nil {
			continue
		}
		st, _, err := r.step(in, s, names[s.index], job)
		if err != nil {
			c.Notes = append(c.Notes, fmt.Sprintf("setup step %q of job %q is not run: %v", names[s.index], job.Name, err))
			continue
		}
		if r.in.IsSetup(st.Run, st.WorkingDirectory) {
			c.Setup = append(c.Setup, st)
		}
	}
	if len(actions) > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("job %q runs %s before the failed step; the loop does not run actions: "+
			"what they install must already be where the loop runs (the setup input)", job.Name, strings.Join(actions, ", ")))
	}
}

// fallback is a failed step that inference replaces, with the job as
// context.
func (r *resolver) fallback(job github.WorkflowJob, in *instance, step, uses, reason string) Fallback {
	f := Fallback{Job: job.Name, JobURL: job.HTMLURL, Step: step, Uses: uses, Reason: reason}
	var b strings.Builder
	fmt.Fprintf(&b, "Make the CI job %q of workflow %q pass again", job.Name, r.root.name)
	if step != "" {
		fmt.Fprintf(&b, ": its step %q failed", step)
	} else {
		b.WriteString(": it failed")
	}
	if r.in.Run.HTMLURL != "" {
		fmt.Fprintf(&b, " in %s", r.in.Run.HTMLURL)
	}
	b.WriteString(".")
	if in != nil && in.job != nil && len(in.job.steps) > 0 {
		b.WriteString(" The job's steps:")
		for _, s := range in.job.steps {
			name, _ := r.stepDisplay(in, s)
			b.WriteString("\n- " + name)
		}
	}
	f.Task = b.String()
	if step != "" {
		f.Hint = fmt.Sprintf("the CI step %q passes", strings.TrimPrefix(step, "Run "))
	} else {
		f.Hint = fmt.Sprintf("the CI job %q passes", job.Name)
	}
	return f
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// dedupeSteps drops a step that is the same as an earlier one (the same
// step failing in two matrix entries that do not change it).
func dedupeSteps(steps []Step) []Step {
	seen := map[string]bool{}
	var out []Step
	for _, s := range steps {
		var b strings.Builder
		b.WriteString(s.Run + "\x00" + s.WorkingDirectory + "\x00" + strings.Join(s.Shell.Argv, "\x01"))
		for _, e := range s.Env {
			b.WriteString("\x00" + e.Name + "=" + e.Value)
		}
		if seen[b.String()] {
			continue
		}
		seen[b.String()] = true
		out = append(out, s)
	}
	return out
}
