package spec_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/actions"
	"github.com/aiwg/agent-loop/internal/spec"
)

var update = flag.Bool("update", false, "rewrite action.yml's inputs and the README's tables from the parameter table")

const (
	actionYAML = "../../action.yml"
	readme     = "../../README.md"
)

// action.yml declares exactly the table's inputs, in its order, with its
// descriptions and defaults. With -update its inputs block is rewritten.
func TestActionYAMLMatchesTable(t *testing.T) {
	if *update {
		b, err := os.ReadFile(actionYAML)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		start, end := strings.Index(s, "\ninputs:\n"), strings.Index(s, "\noutputs:\n")
		if start < 0 || end < start {
			t.Fatal("action.yml has no inputs: block followed by outputs:")
		}
		s = s[:start+1] + spec.ActionInputsYAML() + "\n" + s[end+1:]
		if err := os.WriteFile(actionYAML, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	yml, err := actions.LoadActionYAML(actionYAML)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range spec.Params() {
		if p.Input == "" {
			continue
		}
		want = append(want, p.Input)
		in, ok := yml.Input(p.Input)
		if !ok {
			continue
		}
		if got := strings.Join(strings.Fields(in.Description), " "); got != strings.Join(strings.Fields(p.DocText()), " ") {
			t.Errorf("input %s: action.yml's description differs from the table's:\n yml:   %s\n table: %s", p.Input, got, p.DocText())
		}
		if !in.HasDefault || in.Default != p.ActionDefault() {
			t.Errorf("input %s: action.yml's default %q, the table's %q", p.Input, in.Default, p.ActionDefault())
		}
		if in.Required {
			t.Errorf("input %s is required: the Action must start from a comment or a label without it", p.Input)
		}
		if p.Secret && in.Default != "" && !strings.HasPrefix(in.Default, "${{") {
			t.Errorf("secret input %s has the default %q; secrets come from the workflow", p.Input, in.Default)
		}
	}
	if d := cmp.Diff(want, yml.InputNames()); d != "" {
		t.Errorf("inputs: the table (-) and action.yml (+) differ; run go test ./internal/spec -update:\n%s", d)
	}
}

// The README's flag and input tables are the table's.
func TestReadmeMatchesTable(t *testing.T) {
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	sections := []struct{ begin, end, want string }{
		{spec.FlagsBegin, spec.FlagsEnd, spec.FlagsTable()},
		{spec.InputsBegin, spec.InputsEnd, spec.InputsTable()},
	}
	for _, sec := range sections {
		i, j := strings.Index(s, sec.begin+"\n"), strings.Index(s, sec.end)
		if i < 0 || j < i {
			t.Fatalf("README.md lacks the markers %q ... %q", sec.begin, sec.end)
		}
		got := s[i+len(sec.begin)+1 : j]
		if *update {
			s = s[:i+len(sec.begin)+1] + sec.want + s[j:]
			continue
		}
		if d := cmp.Diff(sec.want, got); d != "" {
			t.Errorf("README.md's table after %s differs from the parameter table (-want +got); run go test ./internal/spec -update:\n%s", sec.begin, d)
		}
	}
	if *update {
		if err := os.WriteFile(readme, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Every parameter is complete: named, reachable, helped, with a default
// that parses; names are kebab-case and unique across flags and inputs.
func TestTableIsComplete(t *testing.T) {
	t.Parallel()
	flags, inputs := map[string]bool{}, map[string]bool{}
	for _, p := range spec.Params() {
		if p.Flag == "" && p.Input == "" && !p.Positional {
			t.Errorf("%s is neither a flag nor an input", p.Name)
		}
		if (p.Flag != "" || p.Positional) && len(p.Help) < 15 {
			t.Errorf("%s: help %q is too short to tell a newcomer what it does", p.Name, p.Help)
		}
		if p.Input != "" && len(p.DocText()) < 40 {
			t.Errorf("input %s: description %q is too short", p.Input, p.DocText())
		}
		for _, n := range []string{p.Name, p.Flag, p.Input} {
			if n != "" && strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
				t.Errorf("%s: %q is not kebab-case", p.Name, n)
			}
		}
		if p.Flag != "" && flags[p.Flag] || p.Input != "" && inputs[p.Input] {
			t.Errorf("%s: flag %q or input %q declared twice", p.Name, p.Flag, p.Input)
		}
		flags[p.Flag], inputs[p.Input] = true, true
		if p.Env != "" && (!p.Secret || p.Input == "") {
			t.Errorf("credential %s must be a secret input", p.Name)
		}
	}
	for _, door := range []spec.Door{spec.DoorCLI, spec.DoorAction} {
		s := spec.Defaults(door)
		s.Spec.Task = "fix it"
		s.Spec.Criterion.Command = "true"
		s.Action.Token = "t"
		if _, err := spec.Validate(s, door); err != nil {
			t.Errorf("the defaults of %s do not validate: %v", door, err)
		}
	}
}

// The defaults are written once, in the table, and reach the Settings.
func TestDefaults(t *testing.T) {
	t.Parallel()
	cli, act := spec.Defaults(spec.DoorCLI), spec.Defaults(spec.DoorAction)
	if cli.Spec.Limits.MaxIterations != 10 || act.Spec.Limits.MaxIterations != 10 {
		t.Errorf("max iterations %d / %d, the table says %s", cli.Spec.Limits.MaxIterations, act.Spec.Limits.MaxIterations, spec.Lookup("max-iterations").Default)
	}
	if cli.Start.AutoCriteria || !act.Start.AutoCriteria {
		t.Error("auto-criteria: off at the CLI, on in the Action")
	}
	if !cli.Spec.Publish.Commit || act.Spec.Publish.PR != "open" || cli.Spec.Publish.PR != "" {
		t.Errorf("publish: %+v / %+v", cli.Spec.Publish, act.Spec.Publish)
	}
	if act.Action.Token != "" {
		t.Errorf("the runner expression of github-token became the value %q", act.Action.Token)
	}
	if !act.Action.FailOnIncomplete || act.Action.TriggerPhrase != "/agent-loop" {
		t.Errorf("action settings %+v", act.Action)
	}
}

// Each credential's variable is declared once; the names stay stable.
func TestCredentials(t *testing.T) {
	t.Parallel()
	if got := spec.CredentialInput("ANTHROPIC_API_KEY"); got != "anthropic-api-key" {
		t.Errorf("CredentialInput = %q", got)
	}
	if len(spec.Credentials()) != 6 {
		t.Errorf("%d credentials", len(spec.Credentials()))
	}
	secrets := spec.SecretInputs()
	if len(secrets) != 7 || secrets[0] != "github-token" {
		t.Errorf("secret inputs %v", secrets)
	}
	_ = filepath.Join
}
