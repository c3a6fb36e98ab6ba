package glrepo

import "testing"

func TestDefaultHost(t *testing.T) {
	if DefaultHost != "gitlab.com" {
		t.Fatalf("got %q", DefaultHost)
	}
}
