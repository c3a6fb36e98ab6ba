package actionlint

import "testing"

func TestLinterOptionsDefault(t *testing.T) {
	if (LinterOptions{}).Verbose {
		t.Fatal("verbose must be off by default")
	}
}
