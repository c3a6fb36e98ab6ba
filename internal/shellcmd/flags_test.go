package shellcmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Selection is kept, decoration can be stripped: the plain command runs
// the same tests.
func TestSelectionAndDecoration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd                   string
		selection, decoration []string
		plain                 string
	}{
		{"go test -v -race -run TestAdd -coverprofile=c.out ./pkg/...", []string{"-run TestAdd", "./pkg/..."}, []string{"-v", "-coverprofile=c.out"}, "go test -race -run TestAdd ./pkg/..."},
		{"python -m pytest -q -k 'not slow' --cov=src --cov-report=xml --junitxml r.xml tests/unit", []string{"-k not slow", "tests/unit"}, []string{"-q", "--cov=src", "--cov-report=xml", "--junitxml r.xml"}, "python -m pytest -k not slow tests/unit"},
		{"jest --ci --coverage --reporters=default -t adds src/math", []string{"-t adds", "src/math"}, []string{"--coverage", "--reporters=default"}, "jest --ci -t adds src/math"},
		{"vitest run --coverage.enabled --reporter=junit --project web", []string{"--project web"}, []string{"--coverage.enabled", "--reporter=junit"}, "vitest run --project web"},
		{"cargo test --workspace --color always -- --nocapture parser::", []string{"--workspace", "parser::"}, []string{"--color always", "--nocapture"}, "cargo test --workspace -- parser::"},
		{"cargo nextest run --profile ci -E 'test(foo)' --message-format libtest-json", []string{"-E test(foo)"}, []string{"--profile ci", "--message-format libtest-json"}, "cargo nextest run -E test(foo)"},
		{"mvn -B -ntp -Dtest=FooTest -Dstyle.color=always verify", []string{"-Dtest=FooTest"}, []string{"-B", "-ntp", "-Dstyle.color=always"}, "mvn -Dtest=FooTest verify"},
		{"gradle test --tests '*Foo' --info --console=plain", []string{"--tests *Foo"}, []string{"--info", "--console=plain"}, "gradle test --tests *Foo"},
		{"rspec spec/models -f documentation --tag ~slow", []string{"spec/models", "--tag ~slow"}, []string{"-f documentation"}, "rspec spec/models --tag ~slow"},
		{"phpunit --filter Foo --colors=always --coverage-clover c.xml", []string{"--filter Foo"}, []string{"--colors=always", "--coverage-clover c.xml"}, "phpunit --filter Foo"},
		{"mix test --only unit --cover test/a_test.exs", []string{"--only unit", "test/a_test.exs"}, []string{"--cover"}, "mix test --only unit test/a_test.exs"},
		{"dotnet test --filter Category=Unit --logger trx -v minimal", []string{"--filter Category=Unit"}, []string{"--logger trx", "-v minimal"}, "dotnet test --filter Category=Unit"},
		{"ctest --test-dir build --output-on-failure -R unit -j 4", []string{"-R unit"}, []string{"--output-on-failure"}, "ctest --test-dir build -R unit -j 4"},
		{"node --test --test-reporter=spec --test-name-pattern=add test/", []string{"--test-name-pattern=add", "test/"}, []string{"--test", "--test-reporter=spec"}, "node --test-name-pattern=add test/"},
		{"dotnet test --output-group-begin '::group::Tests' App.sln", []string{"App.sln"}, []string{"--output-group-begin ::group::Tests"}, "dotnet test App.sln"},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			a := Analyze(nil, tc.cmd, ".")
			if len(a.Steps) != 1 {
				t.Fatalf("steps: %+v", a.Steps)
			}
			s := a.Steps[0]
			if d := cmp.Diff(tc.selection, s.Selection); d != "" {
				t.Errorf("selection (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.decoration, s.Decoration); d != "" {
				t.Errorf("decoration (-want +got):\n%s", d)
			}
			if got := strings.Join(s.Plain, " "); got != tc.plain {
				t.Errorf("plain = %q, want %q", got, tc.plain)
			}
		})
	}
}
