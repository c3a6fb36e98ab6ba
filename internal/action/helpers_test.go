package action

import (
	"os"
	"strings"
	"testing"
)

func writeEmpty(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readOutputNames returns the names written to a GITHUB_OUTPUT file.
func readOutputNames(t *testing.T, p string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		names[name] = true
		for i++; i < len(lines) && lines[i] != delim; i++ {
		}
	}
	return names
}
