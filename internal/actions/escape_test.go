package actions

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestUntrustedShowsControlSequences: agent output echoed to the workflow
// log keeps its colours but cannot clear the screen, set a title, plant a
// hyperlink, overwrite a line or reverse text; and an annotation built
// from a test name cannot either.
func TestUntrustedShowsControlSequences(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := NewWriter(&out, func(string) string { return "" })
	u := w.Untrusted(nil)
	io.WriteString(u, "\x1b[32mok\x1b[0m\n\x1b[2J\x1b[Hcleared\n\x1b]0;pwned\x07\n\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\\nsecret\rpublic\ntest_\u202eexe.txt\n")
	u.Close()
	w.Annotate("error", "pkg/\x1b[2Ja_test.go", 3, "test \u202edeleted", "Test\x1b]0;x\x07Parse removed")
	log := out.String()
	if !strings.Contains(log, "\x1b[32mok\x1b[0m") {
		t.Errorf("colours were lost: %q", log)
	}
	for _, bad := range []string{"\x1b[2J", "\x1b]", "\x07", "\r", "\u202e"} {
		if strings.Contains(log, bad) {
			t.Errorf("the log holds the raw sequence %q:\n%q", bad, log)
		}
	}
	for _, want := range []string{"^[[2J^[[Hcleared", "^[]0;pwned^G", "secret\npublic", "test_[U+202E]exe.txt", "file=pkg/^[[2Ja_test.go", "Test^[]0;x^GParse removed"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not show %q:\n%q", want, log)
		}
	}
}
