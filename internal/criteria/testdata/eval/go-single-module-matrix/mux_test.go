package chi

import "testing"

func TestRouterInterfaceExists(t *testing.T) {
	var r Router
	if r != nil {
		t.Fatal("zero Router should be nil")
	}
}
