package crashpoint

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want spec
	}{
		{"", spec{}},
		{"  ", spec{}},
		{"after-commit", spec{name: "after-commit", nth: 1}},
		{"after-commit#3", spec{name: "after-commit", nth: 3}},
		{" push#12 ", spec{name: "push", nth: 12}},
		{"before-rename:state.json#2", spec{name: "before-rename:state.json", nth: 2}},
		{"push#0", spec{}},
		{"push#-1", spec{}},
		{"push#x", spec{}},
		{"#2", spec{}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, parse(tc.in), cmp.AllowUnexported(spec{})); diff != "" {
				t.Errorf("parse(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// TestHelperProcess is the child of TestHit: it hits points a, b, a, a and
// a file point, printing a line after each, so the parent sees where it died.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("CRASHPOINT_HELPER") != "1" {
		t.Skip("helper process of TestHit")
	}
	for _, p := range []string{"a", "b", "a", "a"} {
		Hit(p)
		fmt.Printf("passed %s\n", p)
	}
	HitPath("before-rename", "/x/y/state.json")
	fmt.Println("passed before-rename:state.json")
	os.Exit(0)
}

func TestHit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		point  string
		killed bool
		out    string
	}{
		{"", false, "passed a\npassed b\npassed a\npassed a\npassed before-rename:state.json\n"},
		{"a", true, ""},
		{"b", true, "passed a\n"},
		{"a#2", true, "passed a\npassed b\n"},
		{"a#3", true, "passed a\npassed b\npassed a\n"},
		{"a#4", false, "passed a\npassed b\npassed a\npassed a\npassed before-rename:state.json\n"},
		{"before-rename:state.json", true, "passed a\npassed b\npassed a\npassed a\n"},
		{"c", false, "passed a\npassed b\npassed a\npassed a\npassed before-rename:state.json\n"},
	}
	for _, tc := range tests {
		t.Run(tc.point, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
			cmd.Env = append(os.Environ(), "CRASHPOINT_HELPER=1", EnvVar+"="+tc.point)
			out, err := cmd.Output()
			var ee *exec.ExitError
			killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() &&
				ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
			if err != nil && !killed {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			if killed != tc.killed {
				t.Errorf("killed = %v, want %v", killed, tc.killed)
			}
			if diff := cmp.Diff(tc.out, string(out)); diff != "" {
				t.Errorf("output mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
