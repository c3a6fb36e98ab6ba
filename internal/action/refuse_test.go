package action

import (
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/escape"
)

// TestRefusalIsEscapedWhole: the refusal comment's message carries values
// from outside (a login, a permission, a loop's gate reason); escaped as
// prose it cannot mention, link, draw an image or open a block, and a
// message longer than one escaped value is kept whole.
func TestRefusalIsEscapedWhole(t *testing.T) {
	msg := "@octocat, agent-loop only runs for people with write permission (yours: <img src=x onerror=alert(1)>). " +
		strings.Repeat("A long explanation that goes on. ", 12) + "Comment `/agent-loop approve` [here](javascript:alert(1)) #1 END"
	got := escapeProse(msg)
	for _, bad := range []string{"<img", "](javascript", "@octocat", "#1", "`/agent"} {
		if unescaped(got, bad) {
			t.Errorf("the escaped refusal holds %q as it was: %s", bad, got)
		}
	}
	if !unescaped(msg, "<img") {
		t.Fatal("unescaped cannot see a raw <img: the check above shows nothing")
	}
	if !strings.HasSuffix(got, "END") || strings.Contains(got, "…") {
		t.Errorf("the refusal was cut: %s", got)
	}
	// escape.Text alone keeps MaxInline characters of a value: it would
	// cut this message.
	if one := escape.Text(msg); !strings.Contains(one, "…") {
		t.Errorf("the message is not longer than one value (%d characters): the test shows nothing", len(msg))
	}
}

// unescaped reports whether s holds sub without a backslash before it.
func unescaped(s, sub string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return false
		}
		if i+j == 0 || s[i+j-1] != '\\' {
			return true
		}
		i += j + 1
	}
}
