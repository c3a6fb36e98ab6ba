package shellcmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStripWrappers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  string
		want Wrapped
	}{
		{"make test", Wrapped{Args: []string{"make", "test"}}},
		{"nice -n 10 make test", Wrapped{Args: []string{"make", "test"}, Wrappers: []string{"nice -n 10"}}},
		{"nice -10 make test", Wrapped{Args: []string{"make", "test"}, Wrappers: []string{"nice -10"}}},
		{"timeout 10m make test", Wrapped{Args: []string{"make", "test"}, Wrappers: []string{"timeout 10m"}}},
		{"timeout -k 5 --signal=TERM 1h make", Wrapped{Args: []string{"make"}, Wrappers: []string{"timeout -k 5 --signal=TERM 1h"}}},
		{"env -u CI -u GITHUB_ACTIONS A=1 make test", Wrapped{Args: []string{"make", "test"}, Wrappers: []string{"env -u CI -u GITHUB_ACTIONS A=1"}, Env: []string{"A=1"}, Unset: []string{"CI", "GITHUB_ACTIONS"}}},
		{"env -uCI make", Wrapped{Args: []string{"make"}, Wrappers: []string{"env -uCI"}, Unset: []string{"CI"}}},
		{"env -i HOME=/tmp make", Wrapped{Args: []string{"make"}, Wrappers: []string{"env -i HOME=/tmp"}, Env: []string{"HOME=/tmp"}, ClearEnv: true}},
		{"env - make", Wrapped{Args: []string{"make"}, Wrappers: []string{"env -"}, ClearEnv: true}},
		{"env -C sub make test", Wrapped{Args: []string{"make", "test"}, Wrappers: []string{"env -C sub"}, Chdir: "sub"}},
		{"sudo -E -u build --chdir=/srv make", Wrapped{Args: []string{"make"}, Wrappers: []string{"sudo -E -u build --chdir=/srv"}, Chdir: "srv"}},
		{"CI=1 FOO=bar nice make", Wrapped{Args: []string{"make"}, Wrappers: []string{"nice"}, Env: []string{"CI=1", "FOO=bar"}}},
		{"stdbuf -o L -eL make", Wrapped{Args: []string{"make"}, Wrappers: []string{"stdbuf -o L -eL"}}},
		{"xargs -0 -n 1 -I {} make", Wrapped{Args: []string{"make"}, Wrappers: []string{"xargs -0 -n 1 -I {}"}}},
		{"taskset -c 0-3 make", Wrapped{Args: []string{"make"}, Wrappers: []string{"taskset -c 0-3"}}},
		{"taskset 0x3 make", Wrapped{Args: []string{"make"}, Wrappers: []string{"taskset 0x3"}}},
		{"chrt -f 10 make", Wrapped{Args: []string{"make"}, Wrappers: []string{"chrt -f 10"}}},
		{"flock /tmp/l make", Wrapped{Args: []string{"make"}, Wrappers: []string{"flock /tmp/l"}}},
		{"flock /tmp/l -c 'make test'", Wrapped{Args: []string{"sh", "-c", "make test"}, Wrappers: []string{"flock /tmp/l"}}},
		// time is a keyword of the shell: the parser takes it off.
		{"time -p nohup make", Wrapped{Args: []string{"make"}, Wrappers: []string{"nohup"}}},
		{"sudo time -p make", Wrapped{Args: []string{"make"}, Wrappers: []string{"sudo", "time -p"}}},
		{"retry -t 3 -- make", Wrapped{Args: []string{"make"}, Wrappers: []string{"retry -t 3 --"}}},
		{"command -v make", Wrapped{Args: []string{"command", "-v", "make"}}},
		{"taskset -p 1234", Wrapped{Args: []string{"taskset", "-p", "1234"}}},
		{"timeout", Wrapped{Wrappers: []string{"timeout"}}},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			cmds, err := Parse(tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			got := StripWrappers(cmds[0].Args)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("StripWrappers(%q) (-want +got):\n%s", tc.cmd, d)
			}
		})
	}
}

// The wrappers of a step are those on its own line, outermost first.
func TestStepWrappers(t *testing.T) {
	t.Parallel()
	a := Analyze(nil, "nice -n 10 env -u CI CGO_ENABLED=0 timeout 10m npx --yes jest --ci", ".")
	if len(a.Steps) != 1 {
		t.Fatalf("steps = %+v", a.Steps)
	}
	s := a.Steps[0]
	want := "nice -n 10|env -u CI CGO_ENABLED=0|timeout 10m|npx --yes"
	if got := strings.Join(s.Wrappers, "|"); got != want {
		t.Errorf("wrappers = %q, want %q", got, want)
	}
	if d := cmp.Diff([]string{"CGO_ENABLED=0"}, s.Env); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"CI"}, s.Unset); d != "" {
		t.Errorf("unset (-want +got):\n%s", d)
	}
	if s.Runner != "jest" || s.Role != RoleTest {
		t.Errorf("runner %q role %q", s.Runner, s.Role)
	}
}
