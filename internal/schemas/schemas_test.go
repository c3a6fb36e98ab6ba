package schemas

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The project's copy of the schemas must be the shared contracts, byte for byte.
func TestCopyMatchesShared(t *testing.T) {
	if _, err := os.Stat(SharedDir()); err != nil {
		t.Skipf("no ../shared/schemas beside the checkout: only the copy is used")
	}
	for _, name := range []string{LoopState, LoopRegistry, CompletionProposal} {
		a, err := os.ReadFile(filepath.Join(SharedDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(CopyDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("testdata/schemas/%s differs from ../shared/schemas/%s: copy it again", name, name)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	if err := Validate(LoopState, []byte(`{"version":"2.0.0","loop_id":"bad","status":"running","iteration":0}`)); err == nil {
		t.Fatal("a bad loop_id validated")
	}
	if err := Validate(LoopState, []byte(`{"version":"2.0.0","loop_id":"ralph-x-0123abcd","status":"running","iteration":0}`)); err != nil {
		t.Fatal(err)
	}
}
