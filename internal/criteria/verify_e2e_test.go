package criteria_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/criteria"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/verify"
)

// TestVerifyEndToEnd infers the criterion of small projects of each
// toolchain (testdata/verify/<name>) and verifies it by running it with
// the harness's own verifier (verify.Shell, `sh -c` in the repository) and
// the real toolchains: go test, node --test, python3 -m unittest, cargo
// test (std only), make with a TAP harness. It also shows the refusal of a
// candidate that runs no test: zero tests, a runner that is not
// installed, a usage error (and then the next candidate is tried).
func TestVerifyEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real toolchains")
	}
	cases := []struct {
		fixture string
		tools   []string
		// want: the command after verification ("" for a refusal), the
		// verdicts in order, and what the first run's result says.
		command  string
		verdicts string
		result   string
	}{
		{"go-module", []string{"go"}, "go test ./...", "qualified", "ran 1 test package, all passed"},
		{"node-test", []string{"node", "npm"}, "npm test", "qualified", "ran 3 tests, 1 failed"},
		{"python-unittest", []string{"python3"}, "python3 -m unittest discover -s tests -v", "qualified", "ran 2 tests, all passed"},
		{"rust-crate", []string{"cargo"}, "cargo test", "qualified", "ran 2 tests, all passed"},
		{"make-tap", []string{"make"}, "make test", "qualified", "ran 3 tests, all passed"},
		{"node-zero-tests", []string{"node", "npm"}, "", "refused", "ran no tests"},
		{"node-missing-runner", []string{"npm"}, "", "refused", "command not found"},
		{"make-usage-error", []string{"make", "go"}, "go test ./...", "refused,qualified", "usage error"},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			for _, tool := range tc.tools {
				if _, err := exec.LookPath(tool); err != nil {
					t.Skipf("%s is not installed", tool)
				}
			}
			dir := filepath.Join(t.TempDir(), tc.fixture)
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "verify", tc.fixture))); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			p, err := criteria.Infer(ctx, dir, "fix the failing tests")
			if err != nil {
				t.Fatal(err)
			}
			env := process.SafeEnv(os.Environ())
			got, err := criteria.Verify(ctx, dir, p, criteria.VerifyOptions{Runner: &verify.Shell{}, Env: env, PerCandidate: 3 * time.Minute, Total: 4 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var verdicts []string
			for _, v := range got.Verification {
				verdicts = append(verdicts, v.Verdict)
			}
			if got.Command != tc.command || strings.Join(verdicts, ",") != tc.verdicts || len(got.Verification) == 0 || !strings.Contains(got.Verification[0].Result, tc.result) {
				t.Fatalf("inferred %q; after verification %q (%s) with verdicts %v, want %q with %s and %q first\n%s", p.Command, got.Command, got.Class, verdicts, tc.command, tc.verdicts, tc.result, got.Summary())
			}
			if tc.command == "" && (got.Class != criteria.ClassRefused || !strings.Contains(got.RefusalReason, tc.result)) {
				t.Errorf("a refusal must say why: class %s, reason %q", got.Class, got.RefusalReason)
			}
			if tc.command != "" && !strings.Contains(got.Summary(), "Verified:") {
				t.Errorf("the evidence does not say what the run showed:\n%s", got.Summary())
			}
		})
	}
}
