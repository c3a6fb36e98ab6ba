package study

import (
	"testing"
)

func ptr(s string) *string { return &s }

func TestNewTarget(t *testing.T) {
	tests := []struct {
		command, workdir string
		want             Target
	}{
		{"go  test\t./...", "", Target{"go test ./...", "."}},
		{"cd web && npm test", ".", Target{"npm test", "web"}},
		{"cd web && cd app && npm test", "./", Target{"npm test", "web/app"}},
		{"cd ../.. && dotnet test", "src/Tests", Target{"dotnet test", "."}},
		// Not folded: the directory is quoted or computed, or the step is not an && chain.
		{"cd '${{ env.GOPATH }}/src' && make test", ".", Target{"cd '${{ env.GOPATH }}/src' && make test", "."}},
		{"cd $DIR && make", ".", Target{"cd $DIR && make", "."}},
		{"cd build; make test", ".", Target{"cd build; make test", "."}},
		{"mkdir -p build && cd build && cmake ..", ".", Target{"mkdir -p build && cd build && cmake ..", "."}},
	}
	for _, tc := range tests {
		if got := NewTarget(tc.command, tc.workdir); got != tc.want {
			t.Errorf("NewTarget(%q, %q) = %+v, want %+v", tc.command, tc.workdir, got, tc.want)
		}
	}
}

func TestScore(t *testing.T) {
	label := Label{
		Command:     ptr("npm test"),
		Workdir:     "web",
		Equivalents: []string{"npm run test", "cd .. && npm --prefix web test"},
	}
	meson := Label{
		Command: ptr("meson setup build && meson test -C build"), Workdir: ".",
		WithSetup: []SetupPair{{Setup: "meson setup  build", Command: "meson test -C build"}},
	}
	several := Label{Command: ptr("mix test"), Workdir: ".", Several: true, Equivalents: []string{"MIX_ENV=test mix test"}}
	tests := []struct {
		name  string
		label Label
		p     Proposal
		want  string
	}{
		{"same command and workdir", label, Proposal{Class: "test-pass", Command: ptr("npm test"), Workdir: "web"}, VerdictRight},
		{"cd form of the command", label, Proposal{Class: "test-pass", Command: ptr("cd web && npm  test"), Workdir: "."}, VerdictRight},
		{"equivalent", label, Proposal{Class: "test-pass", Command: ptr("npm run test"), Workdir: "web"}, VerdictEquivalent},
		{"equivalent given from the root", label, Proposal{Class: "test-pass", Command: ptr("npm --prefix web test"), Workdir: "."}, VerdictEquivalent},
		{"right command, wrong workdir", label, Proposal{Class: "test-pass", Command: ptr("npm test"), Workdir: "."}, VerdictWrong},
		{"other command", label, Proposal{Class: "test-pass", Command: ptr("npm run test:smoke"), Workdir: "web"}, VerdictWrong},
		{"flag that changes the tests", label, Proposal{Class: "test-pass", Command: ptr("npm test -- --grep x"), Workdir: "web"}, VerdictWrong},
		{"refused", label, Proposal{Class: "refused", Workdir: "."}, VerdictRefused},
		{"empty command", label, Proposal{Class: "test-pass", Command: ptr("  ")}, VerdictRefused},
		{"setup pair", meson, Proposal{Class: "test-pass", Command: ptr("meson test -C build"), Setup: ptr("meson setup build")}, VerdictEquivalent},
		{"setup pair with another setup", meson, Proposal{Class: "test-pass", Command: ptr("meson test -C build"), Setup: ptr("meson setup build -Dx=on")}, VerdictWrong},
		{"pair's command without its setup", meson, Proposal{Class: "test-pass", Command: ptr("meson test -C build")}, VerdictWrong},
		{"command right whatever the setup", meson, Proposal{Class: "test-pass", Command: ptr("meson setup build && meson test -C build"), Setup: ptr("pip install meson")}, VerdictRight},
		{"several: one pick that is the command", several, Proposal{Class: "test-pass", Command: ptr("mix test")}, VerdictRight},
		{"several: suites listed", several, Proposal{Class: "test-pass", Suites: []Target{
			{Command: "npm test", Workdir: "."}, {Command: "MIX_ENV=test mix test", Workdir: "."},
		}}, VerdictEquivalent},
		{"several: one suite is not a list", several, Proposal{Class: "test-pass", Command: ptr("npm test"), Suites: []Target{
			{Command: "mix test", Workdir: "."},
		}}, VerdictWrong},
		{"suites do not count without several", label, Proposal{Class: "test-pass", Command: ptr("make"), Suites: []Target{
			{Command: "npm test", Workdir: "web"}, {Command: "go test ./...", Workdir: "."},
		}}, VerdictWrong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Score(tc.label, tc.p); got != tc.want {
				t.Errorf("Score = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseProposal(t *testing.T) {
	p, err := ParseProposal([]byte(`{"task":"t","criterion_class":"test-pass","command":"go test ./...","workdir":".","setup":null,"confidence":"high","rationale":[],"refusal_reason":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Target() != (Target{"go test ./...", "."}) || p.Confidence != "high" {
		t.Errorf("parsed %+v", p)
	}
	for _, bad := range []string{"", "not json", `{"command":"x"}`} {
		if _, err := ParseProposal([]byte(bad)); err == nil {
			t.Errorf("ParseProposal(%q) accepted", bad)
		}
	}
}
