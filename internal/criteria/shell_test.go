package criteria

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandKnownVars(t *testing.T) {
	t.Parallel()
	env := map[string]string{"PY": "3.12", "FLAGS": "--all-features --locked"}
	tests := []struct{ in, out string }{
		{"tox -e py${PY//./}-tests", "tox -e py312-tests"},
		{"cargo test $FLAGS", "cargo test --all-features --locked"},
		{`cargo test "$FLAGS"`, "cargo test '--all-features --locked'"},
		{"go test $(go list ./...)", "go test $(go list ./...)"},
		{"pytest $UNKNOWN", "pytest $UNKNOWN"},
		{"make test", "make test"},
	}
	for _, tc := range tests {
		if got, _ := expandKnownVars(tc.in, env); got != tc.out {
			t.Errorf("expandKnownVars(%q) = %q, want %q", tc.in, got, tc.out)
		}
	}
}

func TestGithubEnvWrites(t *testing.T) {
	t.Parallel()
	got := githubEnvWrites("echo \"PYVER=312\" >> $GITHUB_ENV\necho PLAIN=1 >> \"$GITHUB_ENV\"\necho \"OUT=2\" >> $GITHUB_OUTPUT\necho \"DYN=$(date)\" >> $GITHUB_ENV\n")
	if diff := cmp.Diff(map[string]string{"PYVER": "312", "PLAIN": "1"}, got); diff != "" {
		t.Errorf("githubEnvWrites (-want +got):\n%s", diff)
	}
}
