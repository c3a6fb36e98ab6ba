package cifailure

import (
	"errors"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/forge/github"
)

func FuzzExpressions(f *testing.F) {
	for _, s := range []string{"matrix.os", "format('{0}', 1)", "a && (b || !c) == 'x'", "fromJSON('[1]')[0]", "'''", "${{", "contains(x, ", "0x1g"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cx := testContexts()
		_, _ = cx.evalExpr(s)
		_, _ = cx.expand("x ${{ " + s + " }} y")
		_, _ = cx.condition(s)
	})
}

func FuzzResolve(f *testing.F) {
	f.Add([]byte("jobs:\n  a:\n    strategy:\n      matrix:\n        x: [1, 2]\n    steps:\n      - run: echo ${{ matrix.x }}\n"), "a (1)", "Run echo 1")
	f.Add([]byte("x: &a [*a]\njobs: {}"), "a", "b")
	f.Add([]byte("a: &a [1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\njobs:\n  j:\n    steps: [*c]"), "j", "Run x")
	f.Fuzz(func(t *testing.T, wf []byte, job, step string) {
		in := Input{
			Run:      github.WorkflowRun{Path: ".github/workflows/ci.yml", HeadSHA: strings.Repeat("a", 40), HeadBranch: "main", Repo: "o/r"},
			Jobs:     []github.WorkflowJob{{Name: job, Conclusion: "failure", Steps: []github.JobStep{{Name: step, Conclusion: "failure"}}}},
			Workflow: wf,
			LookPath: func(string) (string, error) { return "", errors.New("none") },
		}
		c, err := Resolve(in)
		if err == nil && c != nil && len(c.Steps) > 0 {
			if _, err := c.Command(); err != nil && !strings.Contains(err.Error(), "bytes") && !strings.Contains(err.Error(), "variable") {
				t.Errorf("a resolved criterion has no command: %v", err)
			}
		}
	})
}

func TestAliasBombRefused(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [")
		for k := 0; k < 9; k++ {
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*l" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	b.WriteString("jobs:\n  j:\n    env: {A: *l9}\n    steps: [{run: x}]\n")
	_, err := parseWorkflow("ci.yml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "expand too far") {
		t.Errorf("an alias bomb: %v", err)
	}
}
