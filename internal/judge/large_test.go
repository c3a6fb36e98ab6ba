package judge

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
)

// fileDiff renders a whole-file addition or deletion of lines.
func wholeFileDiff(path string, lines []string, added bool) string {
	var b strings.Builder
	if added {
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", path, path, path, len(lines))
	} else {
		fmt.Fprintf(&b, "diff --git a/%s b/%s\ndeleted file mode 100644\n--- a/%s\n+++ /dev/null\n@@ -1,%d +0,0 @@\n", path, path, path, len(lines))
	}
	sign := "-"
	if added {
		sign = "+"
	}
	for _, l := range lines {
		b.WriteString(sign + l + "\n")
	}
	return b.String()
}

// TestAssessLargeDiffs checks that hostile or huge diffs are judged in
// bounded time (the judge runs on every iteration).
func TestAssessLargeDiffs(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("large inputs; timing is meaningless under -race")
	}
	tests := func(prefix string, n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out,
				fmt.Sprintf("func Test%s%d(t *testing.T) {", prefix, i),
				"\tif err := run(); err != nil {",
				fmt.Sprintf("\t\tt.Errorf(\"case %d: %%v\", err)", i),
				"\t}",
				"}")
		}
		return out
	}
	long := "\tassert x == " + strings.Repeat("(a == b) < ", 20000) + "1"
	cases := map[string]string{
		"4000 tests moved between files": wholeFileDiff("a_test.go", tests("A", 4000), false) + wholeFileDiff("b_test.go", tests("B", 4000), true),
		"20000 error checks":             wholeFileDiff("x.go", tests("X", 4000), true),
		"a 200 KB assertion line":        wholeFileDiff("tests/test_x.py", []string{"def test_x():", long}, true),
	}
	for name, diff := range cases {
		start := time.Now()
		v, err := New(Options{}).Assess(context.Background(), loop.JudgeInput{BaseDiff: diff})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s: Assess took %v", name, d)
		}
		if len(v.Explain) != 5 {
			t.Errorf("%s: Explain %q", name, v.Explain)
		}
	}
}
