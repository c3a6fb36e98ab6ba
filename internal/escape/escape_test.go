package escape

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"plain words, 4/4 pass", "plain words, 4/4 pass"},
		{"## ✅ completed", `\#\# ✅ completed`},
		{"<!-- hide", `\<!-- hide`},
		{"a|b", `a\|b`},
		{"<img src=x>", `\<img src=x\>`},
		{"`code`", "\\`code\\`"},
		{"[link](javascript:alert(1))", "\\[link\\](javascript:\u2060alert(1))"},
		{"@octocat hi", "@\u2060octocat hi"},
		{"mail me@example.com", "mail me@example.com"},
		{"closes #12", "closes \\#\u206012"},
		{":white_check_mark: ok", ":\u2060white\\_check\\_mark: ok"},
		{"see https://evil.example", "see https\u2060://evil.example"},
		{"www.evil.example", "www\u2060.evil.example"},
		{"- item", `\- item`},
		{"1. first", `1\. first`},
		{"2) second", `2\) second`},
		{"a - b", "a - b"},
		{"=====", `\=====`},
		{"two\nlines\r\nhere", "two lines here"},
		{"\x1b[2Jclear", "^\\[\\[2Jclear"},
		{"bell\x07", "bell^G"},
		{"\u202eevil", `\[U+202E\]evil`},
		{"$x$ math", `\$x\$ math`},
		{"**bold** _it_ ~~del~~ &amp;", `\*\*bold\*\* \_it\_ \~\~del\~\~ \&amp;`},
		{"bad \xff byte", "bad \uFFFD byte"},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := strings.Repeat("x", 1000)
	if got := Text(long); utf8.RuneCountInString(got) != MaxInline || !strings.HasSuffix(got, "…") {
		t.Errorf("Text of 1000 characters is %d characters: %q", utf8.RuneCountInString(got), got[:20])
	}
}

func TestCode(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"calc.go", "`calc.go`"},
		{"a`b", "``a`b``"},
		{"``x` y", "``` ``x` y ```"},
		{"`edge`", "`` `edge` ``"},
		{"<!-- x -->", "`<!-- x -->`"},
		{"multi\nline", "`multi line`"},
		{"", "` `"},
		{"\x1b]0;title\x07", "`^[]0;title^G`"},
	}
	for _, c := range cases {
		if got := Code(c.in); got != c.want {
			t.Errorf("Code(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestHTML(t *testing.T) {
	t.Parallel()
	if got, want := HTML(`<b>"x" & 'y'</b> @me #1`), "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt; @\u2060me #\u20601"; got != want {
		t.Errorf("HTML = %q, want %q", got, want)
	}
}

func TestLink(t *testing.T) {
	t.Parallel()
	cases := []struct{ label, url, want string }{
		{"run log", "https://github.com/o/r/actions/runs/1", "[run log](https://github.com/o/r/actions/runs/1)"},
		{"x", "javascript:alert(1)", "x"},
		{"x", "data:text/html,hi", "x"},
		{"x", "https://a.example/p(1) q", "[x](https://a.example/p%281%29%20q)"},
		{"x", "https://user:pw@a.example/", "x"},
		{"x", "https://a.example/\u202e", "x"},
		{"[y]", "https://a.example/", `[\[y\]](https://a.example/)`},
	}
	for _, c := range cases {
		if got := Link(c.label, c.url); got != c.want {
			t.Errorf("Link(%q, %q) = %q, want %q", c.label, c.url, got, c.want)
		}
	}
}

func TestTerminal(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"\x1b[2J\x1b[Hcleared", "^[[2J^[[Hcleared"},
		{"line\roverwrite", "line overwrite"},
		{"\x1b]0;title\x07", "^[]0;title^G"},
		{"\x1b]8;;https://e/\x1b\\link", "^[]8;;https://e/^[\\link"},
		{"\u009b31m", "[U+009B]31m"},
		{"a\u2066b\u2069", "a[U+2066]b[U+2069]"},
		{"del\x7f", "del^?"},
	}
	for _, c := range cases {
		if got := Terminal(c.in); got != c.want {
			t.Errorf("Terminal(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got, want := Block("a\r\nb\rc\n\td"), "a\nb^Mc\n\td"; got != want {
		t.Errorf("Block = %q, want %q", got, want)
	}
}

func TestLog(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"\x1b[31mred\x1b[0m ok", "\x1b[31mred\x1b[0m ok"},
		{"\x1b[2Jclear", "^[[2Jclear"},
		{"\x1b]0;title\x07", "^[]0;title^G"},
		{"50%\r100%\n", "50%\n100%\n"},
		{"crlf\r\n", "crlf\n"},
		{"\x1b[1;32", "^[[1;32"},
	}
	for _, c := range cases {
		if got := Log(c.in); got != c.want {
			t.Errorf("Log(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	note := "\n_(cut)_\n"
	short := "short"
	if got := Truncate(short, 100, note); got != short {
		t.Errorf("a short document changed: %q", got)
	}
	doc := "<details><summary>x</summary>\n\n```\n" + strings.Repeat("line é\n", 500)
	got := Truncate(doc, 1000, note)
	if len(got) > 1000 || !utf8.ValidString(got) {
		t.Fatalf("Truncate gave %d bytes (valid UTF-8: %v)", len(got), utf8.ValidString(got))
	}
	if !strings.HasSuffix(got, "```\n</details>\n"+note) {
		t.Errorf("the open fence and <details> are not closed before the note:\n%s", got[len(got)-80:])
	}
	tilde := "~~~~\n" + strings.Repeat("x\n", 400)
	if got := Truncate(tilde, 300, note); !strings.Contains(got, "x\n~~~~\n") {
		t.Errorf("a ~~~~ fence is not closed with ~~~~: %q", got[len(got)-40:])
	}
}

// FuzzText checks what Text promises for any input: one line, valid
// UTF-8, no control character but the word joiners it adds, and no
// character that opens a construct without its backslash.
func FuzzText(f *testing.F) {
	for _, s := range []string{"## x", "<!--", "a|b", "`", "@me", "\x1b[2J", "\u202e", "1. x", "\\", "\\|"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Text(s)
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r") {
			t.Fatalf("Text(%q) = %q: not one valid line", s, got)
		}
		for _, r := range strings.ReplaceAll(got, wordJoiner, "") {
			if r != utf8.RuneError && visible(r) != "" {
				t.Fatalf("Text(%q) = %q keeps the control character %U", s, got, r)
			}
		}
		escaped := false
		for _, r := range got {
			if !escaped && strings.ContainsRune(alwaysEscaped, r) && r != '\\' {
				t.Fatalf("Text(%q) = %q: %q is not escaped", s, got, r)
			}
			escaped = !escaped && r == '\\'
		}
		if escaped {
			t.Fatalf("Text(%q) = %q ends with a lone backslash", s, got)
		}
	})
}

// The Writer escapes a stream as Log escapes a string, whatever the
// writes' boundaries: a sequence or a character split between two writes
// is escaped as if it had come whole.
func TestWriterStream(t *testing.T) {
	in := "ok \x1b[32mgreen\x1b[0m\n\x1b]0;owned\x07title\x1b[2J clear\r\nbar\r50%\r100%\nnaïve é\n"
	want := Log(in)
	for _, size := range []int{1, 2, 3, 7, len(in)} {
		var out strings.Builder
		w := NewWriter(&out)
		for i := 0; i < len(in); i += size {
			end := min(i+size, len(in))
			if _, err := w.Write([]byte(in[i:end])); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		if out.String() != want {
			t.Errorf("writes of %d bytes: %q, want %q", size, out.String(), want)
		}
		if strings.Contains(out.String(), "\x1b]") || strings.Contains(out.String(), "\x1b[2J") {
			t.Errorf("writes of %d bytes: a control sequence got through: %q", size, out.String())
		}
	}
	// A line longer than the buffer is passed on in pieces, never holding
	// more than maxLine bytes, and never split inside a character.
	long := strings.Repeat("é", maxLine)
	var out strings.Builder
	w := NewWriter(&out)
	w.Write([]byte(long))
	if len(w.buf) > maxLine {
		t.Errorf("holds %d bytes", len(w.buf))
	}
	w.Close()
	if out.String() != long {
		t.Error("a long line of two-byte characters came out changed")
	}
}
