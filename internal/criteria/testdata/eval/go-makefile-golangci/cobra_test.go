package cobra

import "testing"

func TestCommandSortingDefault(t *testing.T) {
	if !EnableCommandSorting {
		t.Fatal("command sorting should be enabled by default")
	}
}
