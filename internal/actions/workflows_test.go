package actions

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The workflow files this package owns: the release and fuzz workflows and
// the examples users copy.
func workflowFiles(t *testing.T) (examples, project []string) {
	t.Helper()
	examples, err := filepath.Glob("../../examples/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"release.yml", "fuzz.yml"} {
		project = append(project, filepath.Join("../../.github/workflows", name))
	}
	if len(examples) == 0 {
		t.Fatal("no example workflows in examples/workflows")
	}
	return examples, project
}

type workflow struct {
	On          yaml.Node      `yaml:"on"`
	Permissions yaml.Node      `yaml:"permissions"`
	Jobs        map[string]job `yaml:"jobs"`
}

type job struct {
	Permissions    yaml.Node `yaml:"permissions"`
	TimeoutMinutes any       `yaml:"timeout-minutes"`
	Steps          []step    `yaml:"steps"`
}

type step struct {
	Uses string         `yaml:"uses"`
	With map[string]any `yaml:"with"`
}

func readWorkflow(t *testing.T, path string) workflow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return w
}

var pinnedSHA = regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)

func TestWorkflows(t *testing.T) {
	t.Parallel()
	spec := loadActionSpec(t)
	examples, project := workflowFiles(t)
	for _, path := range append(slices.Clone(examples), project...) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			w := readWorkflow(t, path)
			if w.Permissions.Kind == 0 {
				t.Error("no top-level permissions: the token would get the repository's defaults")
			}
			for name, j := range w.Jobs {
				if j.TimeoutMinutes == nil {
					t.Errorf("job %s has no timeout-minutes", name)
				}
				for _, s := range j.Steps {
					switch {
					case s.Uses == "":
					case strings.HasPrefix(s.Uses, "aiwg/agent-loop@"):
						for key := range s.With {
							if _, ok := spec.Input(key); !ok {
								t.Errorf("job %s passes %q to agent-loop, which has no such input", name, key)
							}
						}
					case strings.HasPrefix(s.Uses, "./"), strings.HasPrefix(s.Uses, "docker://"):
					case !pinnedSHA.MatchString(s.Uses):
						t.Errorf("job %s: %s is not pinned to a commit SHA", name, s.Uses)
					}
					if strings.HasPrefix(s.Uses, "actions/checkout@") && slices.Contains(examples, path) {
						if v, ok := s.With["persist-credentials"]; !ok || v != false {
							t.Errorf("job %s: checkout without persist-credentials: false leaves the token in .git/config, where the agent can read it", name)
						}
					}
				}
			}
		})
	}
}

func TestExampleTriggers(t *testing.T) {
	t.Parallel()
	examples, _ := workflowFiles(t)
	seen := map[string]bool{}
	for _, path := range examples {
		w := readWorkflow(t, path)
		switch w.On.Kind {
		case yaml.ScalarNode:
			seen[w.On.Value] = true
		case yaml.SequenceNode:
			for _, n := range w.On.Content {
				seen[n.Value] = true
			}
		case yaml.MappingNode:
			for i := 0; i < len(w.On.Content); i += 2 {
				seen[w.On.Content[i].Value] = true
			}
		}
		data, _ := os.ReadFile(path)
		if !strings.Contains(string(data), "GitHub App") {
			t.Errorf("%s does not explain the GitHub App token (CI does not run on pushes made with GITHUB_TOKEN)", path)
		}
	}
	var missing []string
	for _, trigger := range []string{"workflow_dispatch", "issue_comment", "issues", "pull_request", "schedule"} {
		if !seen[trigger] {
			missing = append(missing, trigger)
		}
	}
	if len(missing) > 0 {
		t.Errorf("no example workflow for %v", missing)
	}
}

func TestReleaseWorkflowPermissions(t *testing.T) {
	t.Parallel()
	w := readWorkflow(t, "../../.github/workflows/release.yml")
	if w.Permissions.Kind != yaml.MappingNode || len(w.Permissions.Content) != 0 {
		t.Error("release.yml: top-level permissions must be {} (each job asks for what it needs)")
	}
	for name, j := range w.Jobs {
		var perms map[string]string
		if j.Permissions.Kind != yaml.MappingNode || j.Permissions.Decode(&perms) != nil {
			t.Errorf("job %s: no permissions mapping", name)
			continue
		}
		var keys []string
		for k := range perms {
			keys = append(keys, k+": "+perms[k])
		}
		sort.Strings(keys)
		if want := []string{"contents: write", "packages: write"}; !slices.Equal(keys, want) {
			t.Errorf("job %s permissions %v, want %v", name, keys, want)
		}
	}
}

// TestActionlint runs actionlint on the workflow files when it is installed
// (go install github.com/rhysd/actionlint/cmd/actionlint@latest).
func TestActionlint(t *testing.T) {
	bin, err := exec.LookPath("actionlint")
	if err != nil {
		t.Skip("actionlint is not installed")
	}
	examples, project := workflowFiles(t)
	cmd := exec.Command(bin, append(examples, project...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
}
