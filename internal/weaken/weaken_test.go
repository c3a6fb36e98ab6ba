package weaken

import (
	"strings"
	"testing"
)

func TestOnlyKnownNamesInATestBinary(t *testing.T) {
	t.Setenv(EnvVar, "")
	if err := Check(); err != nil || On("sandbox") {
		t.Fatalf("unset: Check %v, On %v", err, On("sandbox"))
	}
	t.Setenv(EnvVar, "sandbox, landlock")
	if err := Check(); err != nil {
		t.Fatal(err)
	}
	if !On("sandbox") || !On("landlock") || On("sweep") {
		t.Errorf("On: sandbox %v landlock %v sweep %v", On("sandbox"), On("landlock"), On("sweep"))
	}
	t.Setenv(EnvVar, "sandbox,nosuch")
	if err := Check(); err == nil || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("unknown name: %v", err)
	}
}

// A release binary (neither a test nor the tagged build) refuses to start
// with the variable set, and honours nothing.
func TestRefusedOutsideTests(t *testing.T) {
	if tagged {
		t.Skip("the tagged build honours it")
	}
	defer func(h func() bool) { honouredFn = h }(honouredFn)
	honouredFn = func() bool { return false }
	t.Setenv(EnvVar, "sandbox")
	if On("sandbox") {
		t.Error("On honoured the variable in a release binary")
	}
	if err := Check(); err == nil || !strings.Contains(err.Error(), "only a test build") {
		t.Errorf("Check = %v", err)
	}
}
