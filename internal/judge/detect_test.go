package judge

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/shellcmd"
	"github.com/aiwg/agent-loop/internal/testreport"
)

func ptr(f float64) *float64 { return &f }

func types(regs []loop.Regression) []string {
	out := []string{}
	for _, r := range regs {
		out = append(out, r.Type+"/"+r.Severity)
	}
	return out
}

// testDiff is a small diff touching a test file, so that count-based
// findings are trusted even when the check failed.
const testDiff = `diff --git a/x_test.go b/x_test.go
index 1111111..2222222 100644
--- a/x_test.go
+++ b/x_test.go
@@ -1,3 +1,3 @@
 package x
-// old comment
+// new comment
 
`

func TestDetectFromResults(t *testing.T) {
	t.Parallel()
	known := func(total, passed, failed int, passing, failing []string, cov *float64) testreport.Summary {
		return testreport.Summary{Known: true, Runner: "go", Total: total, Passed: passed, Failed: failed, Passing: passing, Failing: failing, Coverage: cov}
	}
	tests := []struct {
		name   string
		base   testreport.Summary
		cur    testreport.Summary
		passed bool
		diff   string
		want   []string
	}{
		{
			name:   "count dropped with a passing check",
			base:   known(10, 8, 2, nil, nil, nil),
			cur:    known(8, 8, 0, nil, nil, nil),
			passed: true,
			want:   []string{"test_deletion/critical"},
		},
		{
			name: "count dropped on a failing check that touched no test: a broken build, not a deletion",
			base: known(10, 8, 2, nil, nil, nil),
			cur:  known(3, 1, 2, nil, nil, nil),
			want: []string{},
		},
		{
			name: "count dropped on a failing check that touched a test",
			base: known(10, 8, 2, nil, nil, nil),
			cur:  known(9, 7, 2, nil, nil, nil),
			diff: testDiff,
			want: []string{"test_deletion/critical"},
		},
		{
			name: "unknown counts say nothing",
			base: testreport.Summary{Total: 10},
			cur:  testreport.Summary{Total: 2},
			want: []string{},
		},
		{
			name:   "baseline-failing test vanished",
			base:   known(3, 2, 1, []string{"TestA", "TestB"}, []string{"TestC"}, nil),
			cur:    known(3, 3, 0, []string{"TestA", "TestB", "TestD"}, nil, nil),
			passed: true,
			want:   []string{"test_deletion/critical"},
		},
		{
			name:   "every baseline test still reported",
			base:   known(3, 2, 1, []string{"TestA", "TestB"}, []string{"TestC"}, nil),
			cur:    known(3, 3, 0, []string{"TestA", "TestB", "TestC"}, nil, nil),
			passed: true,
			want:   []string{},
		},
		{
			name:   "coverage down by more than half a point",
			base:   known(3, 3, 0, nil, nil, ptr(81.0)),
			cur:    known(3, 3, 0, nil, nil, ptr(80.4)),
			passed: true,
			want:   []string{"coverage_regression/medium"},
		},
		{
			name:   "coverage down within tolerance",
			base:   known(3, 3, 0, nil, nil, ptr(81.0)),
			cur:    known(3, 3, 0, nil, nil, ptr(80.6)),
			passed: true,
			want:   []string{},
		},
		{
			name:   "coverage unknown now",
			base:   known(3, 3, 0, nil, nil, ptr(81.0)),
			cur:    known(3, 3, 0, nil, nil, nil),
			passed: true,
			want:   []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files, err := ParseDiff(tt.diff)
			if err != nil {
				t.Fatal(err)
			}
			in := loop.JudgeInput{
				Criterion: "go test ./...",
				Baseline:  loop.BaselineMetrics{Check: loop.CheckResult{Tests: tt.base}},
				Check:     loop.CheckResult{Passed: tt.passed, Tests: tt.cur},
			}
			regs := Detect(files, in)
			if d := cmp.Diff(tt.want, types(regs)); d != "" {
				t.Errorf("regressions (-want +got):\n%s\n%+v", d, regs)
			}
			for _, r := range regs {
				if r.Baseline == nil && r.Current == nil {
					t.Errorf("%s: neither baseline nor current value", r.Type)
				}
			}
		})
	}
}

func TestDetectVanishedTestNames(t *testing.T) {
	t.Parallel()
	in := loop.JudgeInput{
		Baseline: loop.BaselineMetrics{Check: loop.CheckResult{Tests: testreport.Summary{
			Known: true, Total: 3, Passed: 2, Failed: 1, Passing: []string{"TestA", "TestB"}, Failing: []string{"TestC"},
		}}},
		Check: loop.CheckResult{Passed: true, Tests: testreport.Summary{Known: true, Total: 1, Passed: 1, Passing: []string{"TestA"}}},
	}
	regs := Detect(nil, in)
	var names []any
	for _, r := range regs {
		if strings.Contains(r.Summary, "no longer ran") {
			names = append(names, r.Baseline)
		}
	}
	want := []any{[]string{"TestB", "TestC"}}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("vanished tests (-want +got):\n%s", d)
	}
}

func TestCriterionOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  string
		deps shellcmd.Depends
		want criterion
	}{
		{
			cmd:  "make test",
			want: criterion{makeFiles: map[string][]string{"Makefile": {"test"}}, tools: map[string]bool{"make": true, "make test": true}},
		},
		{
			cmd:  "make -C backend check lint",
			want: criterion{makeFiles: map[string][]string{"backend/Makefile": {"check", "lint"}}, tools: map[string]bool{"make": true, "make check lint": true}},
		},
		{
			cmd:  "make",
			want: criterion{makeFiles: map[string][]string{"Makefile": nil}, tools: map[string]bool{"make": true}},
		},
		{
			cmd:  "nice -n 10 timeout 10m env -u CI make test",
			want: criterion{makeFiles: map[string][]string{"Makefile": {"test"}}, tools: map[string]bool{"make": true, "make test": true}},
		},
		{
			cmd:  "cd sub && make test",
			want: criterion{makeFiles: map[string][]string{"sub/Makefile": {"test"}}, tools: map[string]bool{"make": true, "make test": true}},
		},
		{
			cmd:  "cd web && npm run test:unit -- --ci",
			want: criterion{scriptManifests: map[string][]string{"web/package.json": {"test:unit", "pretest:unit", "posttest:unit"}}, tools: map[string]bool{"npm": true, "npm test:unit": true}},
		},
		{
			cmd:  "npm test",
			want: criterion{scriptManifests: map[string][]string{"package.json": {"test", "pretest", "posttest"}}, tools: map[string]bool{"npm": true, "npm test": true}},
		},
		{
			cmd:  "CI=1 poetry run pytest -c ci/pytest.ini tests",
			want: criterion{files: map[string]bool{"ci/pytest.ini": true}, tools: map[string]bool{"pytest": true}},
		},
		{
			cmd:  "./scripts/test.sh --fast",
			want: criterion{tools: map[string]bool{"test.sh": true, "scripts/test.sh": true}, files: map[string]bool{"scripts/test.sh": true}},
		},
		{
			cmd:  "bash ci/run-tests.sh",
			want: criterion{tools: map[string]bool{"bash": true, "ci/run-tests.sh": true}, files: map[string]bool{"ci/run-tests.sh": true}},
		},
		{
			cmd:  "cargo clippy --all-targets -- -D warnings",
			want: criterion{tools: map[string]bool{"cargo": true, "cargo clippy": true}},
		},
		{
			cmd:  "just test",
			want: criterion{makeFiles: map[string][]string{"justfile": {"test"}}, tools: map[string]bool{"just": true, "just test": true}},
		},
		{
			cmd:  "composer test",
			want: criterion{scriptManifests: map[string][]string{"composer.json": {"test"}}, tools: map[string]bool{"composer": true, "composer test": true}},
		},
		{
			cmd: "go test ./...",
			deps: shellcmd.Depends{
				Files:   []string{"Makefile", "tools/check.sh", "package.json", "go.mod", "conftest.py"},
				Targets: []string{"package.json:test", "Makefile:test"},
				Runner:  "go test",
			},
			want: criterion{
				makeFiles:       map[string][]string{"Makefile": {"test"}},
				scriptManifests: map[string][]string{"package.json": {"test", "pretest", "posttest"}},
				files:           map[string]bool{"tools/check.sh": true},
				support:         map[string]bool{"conftest.py": true},
				manifests:       map[string]bool{"go.mod": true},
				tools:           map[string]bool{"go": true, "go test": true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			t.Parallel()
			got := criterionOf(tt.cmd, tt.deps)
			want := tt.want
			for _, m := range []*map[string]bool{&want.files, &want.support, &want.manifests, &want.tools} {
				if *m == nil {
					*m = map[string]bool{}
				}
			}
			for _, m := range []*map[string][]string{&want.makeFiles, &want.scriptManifests} {
				if *m == nil {
					*m = map[string][]string{}
				}
			}
			if d := cmp.Diff(want, got, cmp.AllowUnexported(criterion{})); d != "" {
				t.Errorf("criterionOf(%q) (-want +got):\n%s", tt.cmd, d)
			}
		})
	}
}

func TestDetectMovedLinesAreNotAdded(t *testing.T) {
	t.Parallel()
	// A skip marker and an exported function move from one file to
	// another: nothing was added or deleted.
	diff := `diff --git a/a_test.go b/a_test.go
index 1111111..2222222 100644
--- a/a_test.go
+++ b/a_test.go
@@ -1,7 +1,2 @@
 package a
 
-func TestSlow(t *testing.T) {
-	t.Skip("slow")
-	run(t)
-}
-
diff --git a/b_test.go b/b_test.go
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/b_test.go
@@ -0,0 +1,6 @@
+package a
+
+func TestSlow(t *testing.T) {
+	t.Skip("slow")
+	run(t)
+}
`
	files, err := ParseDiff(diff)
	if err != nil {
		t.Fatal(err)
	}
	if regs := Detect(files, loop.JudgeInput{Criterion: "go test ./..."}); len(regs) != 0 {
		t.Errorf("a moved test was reported: %+v", regs)
	}
}

func TestAssessUsesDepends(t *testing.T) {
	t.Parallel()
	diff := `diff --git a/ci/env.sh b/ci/env.sh
index 1111111..2222222 100644
--- a/ci/env.sh
+++ b/ci/env.sh
@@ -1 +1 @@
-export TEST_TIMEOUT=60
+export TEST_TIMEOUT=600
`
	in := loop.JudgeInput{Iteration: 1, Criterion: "go test ./...", BaseDiff: diff, StepDiff: diff}
	plain, err := New(Options{}).Assess(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Critical() {
		t.Errorf("without the criterion's dependencies a script change is not a bypass: %+v", plain.Regressions)
	}
	withFiles, err := New(Options{Depends: shellcmd.Depends{Files: []string{"ci/env.sh"}}}).Assess(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := types(withFiles.Regressions); !cmp.Equal(got, []string{"validation_bypass/critical"}) {
		t.Errorf("with ci/env.sh as a criterion file: %v", got)
	}
}
