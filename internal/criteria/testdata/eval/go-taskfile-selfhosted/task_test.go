package task

import "testing"

func TestDefaultTaskfile(t *testing.T) {
	t.Parallel()
	if DefaultTaskfile != "Taskfile.yml" {
		t.Fatalf("got %q", DefaultTaskfile)
	}
}
