package criteria

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExtractCommands(t *testing.T) {
	t.Parallel()
	md := "# Project\n\n## Installation\n\n```sh\nnpm install project\n```\n\n## Development\n\nRun `make test` before you push.\n\n```console\n$ make lint\nok: no issues\n$ make build \\\n  VERBOSE=1\n```\n\n```python\nprint('not a command')\n```\n\n~~~bash\n# comment\ngo test ./...\n~~~\n"
	type cmd struct {
		Text, Section string
		Inline        bool
	}
	collect := func(cmds []mdCommand) []cmd {
		var out []cmd
		for _, c := range cmds {
			out = append(out, cmd{c.text, c.section, c.inline})
		}
		return out
	}
	all := collect(extractCommands([]byte(md), func(string) bool { return true }))
	want := []cmd{
		{"npm install project", "Installation", false},
		{"make test", "Development", true},
		{"make lint", "Development", false},
		{"make build VERBOSE=1", "Development", false},
		{"go test ./...", "Development", false},
	}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("all sections (-want +got):\n%s", diff)
	}
	dev := collect(extractCommands([]byte(md), func(s string) bool { return devSectionRe.MatchString(s) && !userSetupRe.MatchString(s) }))
	if diff := cmp.Diff(want[1:], dev); diff != "" {
		t.Errorf("development sections (-want +got):\n%s", diff)
	}
}

func TestContextLayer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string]string
		task    string
		command string
		workdir string
		conf    string
	}{
		{
			name: "AGENTS.md agrees with the Makefile",
			files: map[string]string{
				"AGENTS.md": "## Checks\n\nAlways run `make verify` before finishing.\n",
				"Makefile":  "verify:\n\tgo vet ./...\n\tgo test ./...\n",
			},
			task: "fix the failing tests", command: "make verify", workdir: ".", conf: ConfidenceHigh,
		},
		{
			name: "README development section, user install ignored",
			files: map[string]string{
				"README.md": "# Lib\n\n## Install\n\n```\npip install lib\n```\n\n## Running the tests\n\n```bash\npython -m pytest tests\n```\n",
			},
			task: "fix the failing tests", command: "python -m pytest tests", workdir: ".", conf: ConfidenceMedium,
		},
		{
			name: "CONTRIBUTING in .github with a cd",
			files: map[string]string{
				".github/CONTRIBUTING.md": "## Testing\n\n```sh\ncd server && cargo test --all-features\n```\n",
				"server/Cargo.toml":       "[package]\nname = \"s\"\n",
			},
			// The doc alone states --all-features: the manifest's plain
			// `cargo test` runs other tests, so nothing confirms it.
			task: "fix the failing tests", command: "cargo test --all-features", workdir: "server", conf: ConfidenceMedium,
		},
		{
			name: "CI wins over the context file",
			files: map[string]string{
				"CLAUDE.md":                "Run tests with `npm test`.\n",
				"package.json":             `{"scripts":{"test":"jest","test:ci":"jest --ci --coverage"}}`,
				".github/workflows/ci.yml": "on: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm install\n      - run: npm run test:ci\n",
			},
			task: "fix the failing tests", command: "npm run test:ci", workdir: ".", conf: ConfidenceHigh,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Infer(t.Context(), writeRepo(t, tc.files), tc.task)
			if err != nil {
				t.Fatal(err)
			}
			if p.Command != tc.command || p.Workdir != tc.workdir || p.Confidence != tc.conf {
				t.Errorf("got %q in %q (%s); want %q in %q (%s)\n%s", p.Command, p.Workdir, p.Confidence, tc.command, tc.workdir, tc.conf, p.Summary())
			}
		})
	}
}

// Words in backticks that are not commands are not candidates: a path, a
// source or data file, a bot's slash command.
func TestNotACommand(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]bool{
		"test/": true, "/ok-to-test": true, "spec/project_spec.rb": true, ".github/workflows/check.yml": true,
		"exposed-tests/src/main/kotlin/": true, "make test": false, "./runtests.py": false, "script/test": false, "pytest": false,
		"bin/rails test": false,
	} {
		if got := notACommand(strings.Fields(cmd)); got != want {
			t.Errorf("notACommand(%q) = %v, want %v", cmd, got, want)
		}
	}
}
