package cifailure

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/forge/github"
)

const testSHA = "3333333333333333333333333333333333333333"

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// apiJob is a job as the jobs API lists it: steps named "!x" failed.
func apiJob(name string, steps ...string) github.WorkflowJob {
	j := github.WorkflowJob{Name: name, Conclusion: "success", HTMLURL: "https://github.com/o/r/actions/runs/9/job/1"}
	all := append([]string{"Set up job"}, steps...)
	all = append(all, "Complete job")
	for i, s := range all {
		c := "success"
		if strings.HasPrefix(s, "!") {
			s, c, j.Conclusion = s[1:], "failure", "failure"
		}
		j.Steps = append(j.Steps, github.JobStep{Number: i + 1, Name: s, Status: "completed", Conclusion: c})
	}
	return j
}

func input(t *testing.T, file string, jobs ...github.WorkflowJob) Input {
	return Input{
		Run: github.WorkflowRun{ID: 9, Name: "CI", Path: ".github/workflows/" + file, Event: "pull_request",
			HeadBranch: "feature", HeadSHA: testSHA, Repo: "o/r", HeadRepo: "o/r", RunNumber: 4, RunAttempt: 1,
			HTMLURL: "https://github.com/o/r/actions/runs/9"},
		Jobs:     jobs,
		Workflow: fixture(t, file),
		ReadFile: func(p string) ([]byte, error) {
			return os.ReadFile(filepath.Join("testdata", "workflows", filepath.Base(p)))
		},
		PR:        &github.RunPR{Number: 5, HeadRef: "feature", HeadSHA: testSHA, BaseRef: "main"},
		Workspace: "/ws",
		IsSetup: func(script, _ string) bool {
			// The role model is shellcmd's at integration; here a table
			// of the fixtures' install commands.
			for _, s := range []string{"go mod download", "npm ci", "pip install"} {
				if strings.Contains(script, s) {
					return true
				}
			}
			return false
		},
		LookPath: func(p string) (string, error) {
			switch p {
			case "bash", "sh", "python3":
				return "/usr/bin/" + p, nil
			}
			return "", errors.New("not found")
		},
	}
}

func envOf(s Step) map[string]string {
	m := map[string]string{}
	for _, e := range s.Env {
		m[e.Name] = e.Value
	}
	return m
}

func TestResolveGoJob(t *testing.T) {
	t.Parallel()
	in := input(t, "go.yml", apiJob("build", "Run actions/checkout@v4", "Run actions/setup-go@v5", "Download modules", "Vet", "!Test", "Post Run actions/checkout@v4"))
	c, err := Resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 1 {
		t.Fatalf("steps %+v", c.Steps)
	}
	s := c.Steps[0]
	want := Step{Workflow: "Go", Job: "build", JobID: "build", JobURL: in.Jobs[0].HTMLURL, Name: "Test", Index: 4, File: ".github/workflows/go.yml", Line: 25,
		Run: "go test -race -count=1 ./...", Shell: Shell{Argv: []string{"bash", "-e", "{0}"}, Ext: ".sh"}, WorkingDirectory: ".",
		Env: []EnvVar{{"GOFLAGS", "-mod=readonly"}, {"GOTOOLCHAIN", "local"}, {"CGO_ENABLED", "1"}}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("step (-want +got):\n%s", diff)
	}
	if len(c.Setup) != 1 || c.Setup[0].Run != "go mod download" || c.Setup[0].Name != "Download modules" {
		t.Errorf("setup %+v", c.Setup)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "actions/setup-go@v5") {
		t.Errorf("notes do not name the setup action: %q", c.Notes)
	}
	if got := s.Evidence(c.RunURL); got != `workflow "Go", job "build", step "Test" (.github/workflows/go.yml:25), failed in `+c.RunURL {
		t.Errorf("evidence %q", got)
	}
}

func TestResolveNodeMatrix(t *testing.T) {
	t.Parallel()
	steps := []string{"Run actions/checkout@v4", "Use Node.js %s", "Install", "!Test", "Post Run actions/checkout@v4"}
	job := func(name, node string) github.WorkflowJob {
		s := append([]string(nil), steps...)
		s[1] = strings.Replace(s[1], "%s", node, 1)
		return apiJob(name, s...)
	}
	tests := []struct {
		name       string
		jobs       []github.WorkflowJob
		wantMatrix map[string]string
		wantEnv    map[string]string
		wantNote   string
		wantErr    string
	}{
		{
			name:       "plain entry",
			jobs:       []github.WorkflowJob{job("test (ubuntu-latest, 20)", "20")},
			wantMatrix: map[string]string{"os": "ubuntu-latest", "node": "20"},
			wantEnv:    map[string]string{"NODE_VERSION": "20", "COVERAGE": "none"},
		},
		{
			name:       "entry extended by include",
			jobs:       []github.WorkflowJob{job("test (ubuntu-latest, 22)", "22")},
			wantMatrix: map[string]string{"os": "ubuntu-latest", "node": "22", "coverage": "true"},
			wantEnv:    map[string]string{"NODE_VERSION": "22", "COVERAGE": "lcov"},
		},
		{
			name:       "entry added by include, next to a failed entry",
			jobs:       []github.WorkflowJob{job("test (ubuntu-latest, 23, true)", "23"), job("test (ubuntu-latest, 20)", "20")},
			wantMatrix: map[string]string{"os": "ubuntu-latest", "node": "20"},
			wantEnv:    map[string]string{"NODE_VERSION": "20", "COVERAGE": "none"},
			wantNote:   `job "test (ubuntu-latest, 23, true)" failed but may (continue-on-error)`,
		},
		{
			name:       "Windows and Linux failed: Linux is checked",
			jobs:       []github.WorkflowJob{job("test (windows-latest, 22)", "22"), job("test (ubuntu-latest, 18)", "18")},
			wantMatrix: map[string]string{"os": "ubuntu-latest", "node": "18"},
			wantEnv:    map[string]string{"NODE_VERSION": "18", "COVERAGE": "none"},
			wantNote:   `job "test (windows-latest, 22)" failed on Windows too`,
		},
		{
			name:    "only Windows failed",
			jobs:    []github.WorkflowJob{job("test (windows-latest, 20)", "20")},
			wantErr: "the job runs on Windows and the loop runs on Linux",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Resolve(input(t, "node-matrix.yml", tt.jobs...))
			if tt.wantErr != "" {
				var rf *Refusal
				if err == nil || !errors.As(err, &rf) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want a refusal saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Steps) != 1 {
				t.Fatalf("steps %+v", c.Steps)
			}
			s := c.Steps[0]
			if diff := cmp.Diff(tt.wantMatrix, s.Matrix); diff != "" {
				t.Errorf("matrix (-want +got):\n%s", diff)
			}
			env := envOf(s)
			for k, v := range tt.wantEnv {
				if env[k] != v {
					t.Errorf("env %s = %q, want %q", k, env[k], v)
				}
			}
			if s.Shell.Name != "bash" || s.Shell.String() != "bash --noprofile --norc -e -o pipefail {0}" {
				t.Errorf("shell %+v", s.Shell)
			}
			if !strings.HasPrefix(s.Run, `echo "node $NODE_VERSION"`) || !strings.Contains(s.Run, "npm test -- --ci") {
				t.Errorf("run %q", s.Run)
			}
			if len(c.Setup) != 1 || c.Setup[0].Run != "npm ci" {
				t.Errorf("setup %+v", c.Setup)
			}
			if tt.wantNote != "" && !strings.Contains(strings.Join(c.Notes, "\n"), tt.wantNote) {
				t.Errorf("notes %q, want %q", c.Notes, tt.wantNote)
			}
		})
	}
}

func TestResolveNamedMatrixAndUnnamedSteps(t *testing.T) {
	t.Parallel()
	c, err := Resolve(input(t, "node-matrix.yml",
		apiJob("Node.js 20.x on ubuntu-22.04", "Run actions/checkout@v4", "Run npm ci", "!Run npm run test:compat"),
		apiJob("Lint", "Run actions/checkout@v4", "Run actions/setup-node@v4", "Run npm ci --ignore-scripts", "!Run npm run lint")))
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, s := range c.Steps {
		runs = append(runs, s.Job+": "+s.Run)
	}
	want := []string{"Node.js 20.x on ubuntu-22.04: npm run test:compat", "Lint: npm run lint"}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

func TestResolvePythonWorkingDirectory(t *testing.T) {
	t.Parallel()
	steps := []string{"Run actions/checkout@v4", "Run actions/setup-python@v5", "Install", "Generate fixtures", "!Run tests"}
	in := input(t, "python-workdir.yml", apiJob("pytest (py3.12)", steps...))
	c, err := Resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Steps[0]
	if s.WorkingDirectory != "backend" || s.Run != "pytest -q tests/" || s.Shell.Name != "bash" {
		t.Errorf("step %+v", s)
	}
	if got := envOf(s)["DATABASE_URL"]; got != "sqlite:////ws/backend/test.db" {
		t.Errorf("DATABASE_URL = %q", got)
	}
	if diff := cmp.Diff(map[string]string{"python-version": "3.12"}, s.Matrix); diff != "" {
		t.Errorf("matrix (-want +got):\n%s", diff)
	}
	if len(c.Setup) != 1 || c.Setup[0].WorkingDirectory != "backend" || !strings.Contains(c.Setup[0].Run, "pip install -e") {
		t.Errorf("setup %+v", c.Setup)
	}

	// The step's own working-directory wins over the defaults.
	steps[3], steps[4] = "!Generate fixtures", "Run tests"
	c, err = Resolve(input(t, "python-workdir.yml", apiJob("pytest (py3.11)", steps...)))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Steps[0]; s.WorkingDirectory != "tools" || s.Run != "python make_fixtures.py --out ../backend/tests/fixtures" {
		t.Errorf("step %+v", s)
	}

	// Without the checkout's path, a job env naming github.workspace is
	// left out (the script does not use it) and said so.
	in = input(t, "python-workdir.yml", apiJob("pytest (py3.12)", "Run actions/checkout@v4", "Run actions/setup-python@v5", "Install", "Generate fixtures", "!Run tests"))
	in.Workspace = ""
	c, err = Resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := envOf(c.Steps[0])["DATABASE_URL"]; ok || !strings.Contains(strings.Join(c.Notes, "\n"), "env DATABASE_URL is left unset") {
		t.Errorf("env %v, notes %q", c.Steps[0].Env, c.Notes)
	}
}

func TestResolveUsesFallsBack(t *testing.T) {
	t.Parallel()
	c, err := Resolve(input(t, "uses-fail.yml", apiJob("golangci-lint", "Run actions/checkout@v4", "Run actions/setup-go@v5", "go mod tidy is clean", "!golangci-lint", "Post golangci-lint")))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 0 || len(c.Fallbacks) != 1 {
		t.Fatalf("steps %+v, fallbacks %+v", c.Steps, c.Fallbacks)
	}
	f := c.Fallbacks[0]
	if f.Uses != "golangci/golangci-lint-action@v6" || f.Step != "golangci-lint" || !strings.Contains(f.Reason, "runs the action") {
		t.Errorf("fallback %+v", f)
	}
	for _, want := range []string{`CI job "golangci-lint"`, "go mod tidy is clean", "https://github.com/o/r/actions/runs/9"} {
		if !strings.Contains(f.Task, want) {
			t.Errorf("task %q lacks %q", f.Task, want)
		}
	}
	if !strings.Contains(f.Hint, "golangci-lint") {
		t.Errorf("hint %q", f.Hint)
	}
}

func TestResolveRefusesRunnerOnly(t *testing.T) {
	t.Parallel()
	steps := []string{"Run actions/checkout@v4", `Run echo "v=$(cat VERSION)" >> "$GITHUB_OUTPUT"`, "Contract tests", "Versioned build", "Cache key check", "Unit tests", "Reports DSN"}
	fail := func(i int) github.WorkflowJob {
		s := append([]string(nil), steps...)
		s[i] = "!" + s[i]
		return apiJob("api", s...)
	}
	tests := []struct {
		step     int
		wantNeed string
		wantExpr string
	}{
		{2, "secrets.API_TOKEN", "${{ secrets.API_TOKEN }}"},
		{3, "steps.ver.outputs.v", "${{ steps.ver.outputs.v }}"},
		{4, "hashFiles()", "${{ hashFiles('**/go.sum') }}"},
		{6, "secrets.SENTRY_DSN", ""},
	}
	for _, tt := range tests {
		t.Run(steps[tt.step], func(t *testing.T) {
			t.Parallel()
			_, err := Resolve(input(t, "runner-only.yml", fail(tt.step)))
			var rf *Refusal
			if !errors.As(err, &rf) {
				t.Fatalf("error %v, want a *Refusal", err)
			}
			msg := err.Error()
			for _, want := range []string{tt.wantNeed, steps[tt.step], `job "api"`, "completion"} {
				if !strings.Contains(msg, want) {
					t.Errorf("refusal %q lacks %q", msg, want)
				}
			}
			if tt.wantExpr != "" && rf.Expr != tt.wantExpr {
				t.Errorf("expr %q, want %q", rf.Expr, tt.wantExpr)
			}
		})
	}
	// A step that needs none of it passes, and the unset variable is said.
	c, err := Resolve(input(t, "runner-only.yml", fail(5)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Steps[0].Run != "make test" || !strings.Contains(strings.Join(c.Notes, "\n"), "env SENTRY_DSN is left unset") {
		t.Errorf("step %+v, notes %q", c.Steps[0], c.Notes)
	}
}

func TestResolveReusableWorkflow(t *testing.T) {
	t.Parallel()
	in := input(t, "caller.yml",
		apiJob("unit / test", "Run actions/checkout@v4", "!Test core"),
		apiJob("remote / build", "!Run make"))
	c, err := Resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 1 || c.Steps[0].Run != "go test -race -count=1 ./..." || c.Steps[0].WorkingDirectory != "core" ||
		c.Steps[0].Job != "unit / test" || c.Steps[0].File != ".github/workflows/reusable-tests.yml" {
		t.Errorf("steps %+v", c.Steps)
	}
	if len(c.Fallbacks) != 1 || !strings.Contains(c.Fallbacks[0].Reason, "octo-org/shared/.github/workflows/go.yml@v2") {
		t.Errorf("fallbacks %+v", c.Fallbacks)
	}
}

func TestResolveUnknownJobFallsBack(t *testing.T) {
	t.Parallel()
	c, err := Resolve(input(t, "go.yml", apiJob("deploy", "!Run ./deploy.sh")))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Fallbacks) != 1 || !strings.Contains(c.Fallbacks[0].Reason, `named "deploy"`) {
		t.Errorf("fallbacks %+v", c.Fallbacks)
	}
	if _, err := Resolve(input(t, "go.yml", apiJob("build", "Test"))); !errors.Is(err, ErrNoFailedJob) {
		t.Errorf("no failed job: %v", err)
	}
}
