package loop_test

import (
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/spec"
)

// The prompt says how completion is verified from the loop's criterion:
// the command, where it runs, and what it depends on (the files the agent
// must leave alone), when that is known.
func TestPromptCarriesTheCriterion(t *testing.T) {
	t.Parallel()
	crit := spec.Criterion{Command: "nice -n 10 make test", Workdir: "pkg/api",
		Depends: spec.Depends{Files: []string{"Makefile", "scripts/test.sh"}, Targets: []string{"Makefile:test"}, Runner: "go test"}}
	p := loop.BuildPrompt(loop.PromptInput{Task: "fix the api tests", Criterion: crit, Iteration: 1, MaxIterations: 3})
	for _, want := range []string{"runs this command in `pkg/api`", "nice -n 10 make test",
		"The check depends on `Makefile:test`, `Makefile`, `scripts/test.sh`", "Its tests run with go test."} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p)
		}
	}
	crit.Depends = spec.Depends{}
	if p := loop.BuildPrompt(loop.PromptInput{Task: "t", Criterion: crit, Iteration: 1, MaxIterations: 3}); strings.Contains(p, "depends on") {
		t.Errorf("nothing known, yet the prompt names dependencies:\n%s", p)
	}
}
