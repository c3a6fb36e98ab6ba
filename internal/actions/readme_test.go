package actions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README documents every input and output of action.yml.
func TestReadmeDocumentsEveryInputAndOutput(t *testing.T) {
	spec, err := LoadActionYAML(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, in := range spec.Inputs {
		if !strings.Contains(readme, "| `"+in.Name+"` |") {
			t.Errorf("README.md has no table row for input %q", in.Name)
		}
	}
	for _, out := range spec.Outputs {
		if !strings.Contains(readme, "| `"+out.Name+"` |") {
			t.Errorf("README.md has no table row for output %q", out.Name)
		}
	}
}
