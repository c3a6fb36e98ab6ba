package action

import "testing"

func TestGateDecision(t *testing.T) {
	for in, want := range map[string]string{
		"approve": "approve", " Approve. ": "approve", "LGTM": "approve", "reject": "reject", "revert!": "reject",
		"fix the tests": "", "": "", "approve the change and fix more": "",
	} {
		if got := gateDecision(in); got != want {
			t.Errorf("gateDecision(%q) = %q, want %q", in, got, want)
		}
	}
}
