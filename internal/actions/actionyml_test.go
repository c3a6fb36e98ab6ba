package actions

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// actionYAMLPath is the repository's action.yml seen from this package.
const actionYAMLPath = "../../action.yml"

var prebuiltImage = regexp.MustCompile(`^docker://ghcr\.io/[a-z0-9._-]+/[a-z0-9._-]+@sha256:[0-9a-f]{64}$`)

func loadActionSpec(t *testing.T) ActionSpec {
	t.Helper()
	spec, err := LoadActionYAML(actionYAMLPath)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestActionYAMLMatchesCode(t *testing.T) {
	t.Parallel()
	spec := loadActionSpec(t)
	if diff := cmp.Diff(ActionOutputs(), spec.OutputNames()); diff != "" {
		t.Errorf("outputs: code (-) and action.yml (+) differ:\n%s", diff)
	}
	for _, out := range spec.Outputs {
		if len(out.Description) < 20 {
			t.Errorf("output %s: description %q too short", out.Name, out.Description)
		}
	}
	// The inputs are the parameter table's (internal/spec checks them).
	for _, in := range spec.Inputs {
		if !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(in.Name) {
			t.Errorf("input %q: names are kebab-case", in.Name)
		}
	}
}

func TestActionYAMLRuns(t *testing.T) {
	t.Parallel()
	spec := loadActionSpec(t)
	r := spec.Runs
	if r.Using != "docker" {
		t.Errorf("runs.using = %q, want docker", r.Using)
	}
	if r.Image != "Dockerfile" && !prebuiltImage.MatchString(r.Image) {
		t.Errorf("runs.image = %q, want Dockerfile or docker://ghcr.io/OWNER/NAME@sha256:<digest>", r.Image)
	}
	if r.Entrypoint != "/agent-loop" || !slices.Equal(r.Args, []string{"action"}) {
		t.Errorf("runs.entrypoint %q args %q, want /agent-loop [action]", r.Entrypoint, r.Args)
	}
	// docker run --entrypoint takes one word: an argument here would make
	// docker look for an executable named "/agent-loop post".
	if r.PostEntrypoint != PostEntrypoint || strings.ContainsAny(r.PostEntrypoint, " \t") {
		t.Errorf("runs.post-entrypoint = %q, want %q", r.PostEntrypoint, PostEntrypoint)
	}
	if !IsPostInvocation([]string{r.PostEntrypoint}) || IsPostInvocation([]string{r.Entrypoint}) {
		t.Error("IsPostInvocation does not tell the post entrypoint from the main one")
	}
	if r.PostIf != "always()" {
		t.Errorf("runs.post-if = %q, want always() (save the state even when main fails)", r.PostIf)
	}
	colors := []string{"white", "black", "yellow", "blue", "green", "orange", "red", "purple", "gray-dark"}
	if spec.Branding.Icon == "" || !slices.Contains(colors, spec.Branding.Color) {
		t.Errorf("branding = %+v", spec.Branding)
	}
	if spec.Name == "" || spec.Description == "" {
		t.Error("name and description are required by the Marketplace")
	}
}

// TestReleaseRewriteKeepsActionYAMLValid applies release.yml's rewrite of
// runs.image to action.yml and checks the result is a valid prebuilt
// reference, so the two files cannot drift apart.
func TestReleaseRewriteKeepsActionYAMLValid(t *testing.T) {
	t.Parallel()
	release, err := os.ReadFile("../../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	const sedExpr = `s|^  image: .*$|  image: 'docker://${IMAGE}@${DIGEST}'|`
	if !strings.Contains(string(release), sedExpr) {
		t.Fatalf("release.yml no longer rewrites runs.image with %s; update this test with it", sedExpr)
	}
	data, err := os.ReadFile(actionYAMLPath)
	if err != nil {
		t.Fatal(err)
	}
	image := "ghcr.io/aiwg/agent-loop"
	digest := "sha256:" + strings.Repeat("ab", 32)
	re := regexp.MustCompile(`(?m)^  image: .*$`)
	if n := len(re.FindAllIndex(data, -1)); n != 1 {
		t.Fatalf("action.yml has %d lines matching the rewrite, want exactly 1", n)
	}
	rewritten := re.ReplaceAllLiteral(data, []byte("  image: 'docker://"+image+"@"+digest+"'"))
	spec, err := ParseActionYAML(rewritten)
	if err != nil {
		t.Fatal(err)
	}
	if want := "docker://" + image + "@" + digest; spec.Runs.Image != want {
		t.Errorf("rewritten image = %q, want %q", spec.Runs.Image, want)
	}
	orig := loadActionSpec(t)
	spec.Runs.Image = orig.Runs.Image
	if diff := cmp.Diff(orig, spec); diff != "" {
		t.Errorf("the rewrite changed more than runs.image (-before +after):\n%s", diff)
	}
}

func TestParseActionYAMLErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yaml, want string }{
		{"unknown key", "name: x\nrun:\n  using: docker\n", "run"},
		{"duplicate input", "inputs:\n  a:\n    description: x\n  a:\n    description: y\n", `"a"`},
		{"default is a list", "inputs:\n  a:\n    default: [1]\n", "default must be a string"},
		{"inputs not a mapping", "inputs: [a]\n", "inputs must be a mapping"},
		{"unknown input key", "inputs:\n  a:\n    descripton: typo\n", "descripton"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseActionYAML([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
	if _, err := LoadActionYAML("testdata/does-not-exist.yml"); err == nil || !strings.Contains(err.Error(), "does-not-exist.yml") {
		t.Errorf("LoadActionYAML of a missing file: %v", err)
	}
}
