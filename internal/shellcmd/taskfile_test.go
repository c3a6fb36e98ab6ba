package shellcmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMakefile(t *testing.T) {
	t.Parallel()
	tf := ParseMakefile("Makefile", []byte(`GO ?= go
PKGS := ./...
.PHONY: all test lint
all: build
build:
	$(GO) build $(PKGS)
test: ## run tests
	@$(GO) test -race $(PKGS)
check: lint test
lint:
	-golangci-lint run
loop:
	for d in $(DIRS); do $(MAKE) -C $$d; done
%.o: %.c
	cc -c $<
VARIANTS := test-race test-short
test-race: ARGS=-race
test-short: ARGS := -short
$(VARIANTS): test
`))
	want := map[string]string{
		"all":        "make build",
		"build":      "go build ./...",
		"test":       "go test -race ./...",
		"check":      "make lint\nmake test",
		"lint":       "golangci-lint run",
		"loop":       "for d in $(DIRS); do make -C $d; done",
		"test-race":  "make test", // a target-specific variable is no prerequisite
		"test-short": "make test",
	}
	if diff := cmp.Diff(want, tf.Recipes); diff != "" {
		t.Errorf("recipes (-want +got):\n%s", diff)
	}
	if tf.First != "all" {
		t.Errorf("default target = %q, want all", tf.First)
	}
}

// Variables that repeat each other stay bounded.
func TestParseMakefileExpansionBounded(t *testing.T) {
	t.Parallel()
	src := "A := xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
	for _, v := range []string{"B", "C", "D", "E", "F", "G"} {
		prev := string(rune(v[0] - 1))
		src += v + " := $(" + prev + ")$(" + prev + ")$(" + prev + ")$(" + prev + ")$(" + prev + ")$(" + prev + ")$(" + prev + ")$(" + prev + ")\n"
	}
	src += "test:\n\techo $(G)$(G)$(G)\n"
	tf := ParseMakefile("Makefile", []byte(src))
	if n := len(tf.Recipes["test"]); n > 2*maxExpansion {
		t.Errorf("recipe grew to %d bytes", n)
	}
}

func TestParseJustfileAndRakefile(t *testing.T) {
	t.Parallel()
	jf := ParseJustfile("justfile", []byte("set shell := [\"bash\", \"-c\"]\nalias t := test\n\n# run the tests\ntest *args: build\n    cargo test {{args}}\n\nbuild:\n    @cargo build\n"))
	if diff := cmp.Diff(map[string]string{"t": "just test", "test": "just build\ncargo test {{args}}", "build": "cargo build"}, jf.Recipes); diff != "" {
		t.Errorf("justfile (-want +got):\n%s", diff)
	}
	rf := ParseRakefile("Rakefile", []byte("require 'rspec/core/rake_task'\nRSpec::Core::RakeTask.new(:spec)\nRuboCop::RakeTask.new\nRake::TestTask.new(:unit)\ntask default: %i[spec rubocop]\n"))
	want := map[string]string{"default": "rake spec\nrake rubocop", "spec": "rspec", "rubocop": "rubocop", "unit": "minitest"}
	if diff := cmp.Diff(want, rf.Recipes); diff != "" {
		t.Errorf("rakefile (-want +got):\n%s", diff)
	}
}

func TestParseTaskfile(t *testing.T) {
	t.Parallel()
	tf, err := ParseTaskfile("Taskfile.yml", []byte(`version: '3'
x-common: &common
  cmds: [go vet ./...]
tasks:
  default:
    deps: [lint, {task: test}]
  test:
    cmds:
      - go test ./...
      - cmd: echo done
      - task: lint
  lint: golangci-lint run
  vet: *common
  list:
    - echo a
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"default": "task lint\ntask test",
		"test":    "go test ./...\necho done\ntask lint",
		"lint":    "golangci-lint run",
		"vet":     "go vet ./...",
		"list":    "echo a",
	}
	if diff := cmp.Diff(want, tf.Recipes); diff != "" {
		t.Errorf("Taskfile (-want +got):\n%s", diff)
	}
	if tf.First != "default" {
		t.Errorf("default = %q", tf.First)
	}
	if _, err := ParseTaskfile("Taskfile.yml", []byte("tasks: [1, 2]\n")); err != nil {
		t.Errorf("a Taskfile of the wrong shape is an error: %v", err)
	}
	if _, err := ParseTaskfile("Taskfile.yml", []byte("tasks: {a: [\n")); err == nil {
		t.Error("broken YAML parsed")
	}
}
