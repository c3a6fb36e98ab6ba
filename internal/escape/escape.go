// Package escape is the one place where text from the untrusted side (file
// names, test names, branch names, agent messages, task text, commands)
// is made safe for where a person reads it:
//
//   - GitHub-flavoured Markdown (PR comments, the PR body, the step
//     summary; GitHub renders them with cmark-gfm and an HTML allowlist):
//     Text for prose, Code for literal names and commands, HTML for text
//     inside a raw HTML element, Truncate to cut a document without
//     leaving a <details> or a code fence open.
//   - Terminals and the workflow log: Terminal (one line), Block (several
//     lines) and Log (keeps colour, nothing else).
//
// Every function makes control characters visible instead of passing them
// on (ESC as ^[, CR as ^M, the C1 controls, bidi overrides and isolates
// and zero-width characters as [U+202E]), and every Markdown function neutralises what GitHub would
// act on: headings, lists, quotes, tables, links and images, raw HTML and
// comments, entities, @mentions and #references.
package escape

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxInline is how many characters Text and Code keep of one value; longer
// ones end with "…".
const MaxInline = 300

// wordJoiner (U+2060) is inserted where GitHub would otherwise act on text:
// after an @ that would mention someone, after a # that would reference
// an issue, before the :// of an autolink. It is invisible and does not
// break the line.
const wordJoiner = "\u2060"

// visible returns the visible stand-in of r when r must not reach a reader
// as it is, or "" when r is harmless.
func visible(r rune) string {
	switch {
	case r == utf8.RuneError:
		return "\uFFFD"
	case r < 0x20:
		return "^" + string(rune(r+0x40)) // caret notation, as cat -v: ESC is ^[, CR ^M
	case r == 0x7f:
		return "^?"
	case r >= 0x80 && r <= 0x9f, // C1 controls (CSI, OSC, ...)
		r >= 0x202a && r <= 0x202e,            // bidi embeddings and overrides
		r >= 0x2066 && r <= 0x2069,            // bidi isolates
		r == 0x200e, r == 0x200f, r == 0x061c, // directional marks
		r >= 0x200b && r <= 0x200d, r == 0x2060, r == 0xfeff, // zero-width characters
		r >= 0xfff9 && r <= 0xfffb: // interlinear annotations
		return fmt.Sprintf("[U+%04X]", r)
	}
	return ""
}

// clean makes every control character of s visible, except those keep
// allows, and replaces invalid UTF-8. Runs of whitespace stay as they are.
func clean(s string, keep func(rune) bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			b.WriteString("\uFFFD")
			i++
			continue
		}
		i += n
		if keep != nil && keep(r) {
			b.WriteRune(r)
			continue
		}
		if v := visible(r); v != "" {
			b.WriteString(v)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// oneLine joins the lines of s with spaces and tabs become spaces, so a
// value cannot start a new Markdown block or overwrite a terminal line.
func oneLine(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ", "\v", " ", "\f", " ").Replace(s)
	return strings.TrimSpace(s)
}

// capRunes cuts s to at most n characters, ending with "…" when cut.
func capRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n-1; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// Terminal returns s as one line for a terminal or a log line: lines
// joined with spaces, at most MaxInline characters, every control
// character and escape sequence shown instead of sent (ESC as ^[, a bidi
// override as [U+202E]).
func Terminal(s string) string {
	return capRunes(clean(oneLine(s), nil), MaxInline)
}

// Block returns s for a terminal keeping its lines (LF and tab); CRLF
// becomes LF, and every other control character is shown instead of
// sent, a lone CR included (it would overwrite the line before it).
func Block(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return clean(s, func(r rune) bool { return r == '\n' || r == '\t' })
}

// Log returns s for the workflow log: as Block, except that colour
// sequences (ESC [ digits/semicolons m) are kept, since the log viewer
// renders them and test runners use them, and a lone CR becomes a line
// break, so text a progress bar would overwrite stays readable.
func Log(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		i := strings.IndexAny(s, "\x1b\r")
		if i < 0 {
			b.WriteString(Block(s))
			break
		}
		b.WriteString(Block(s[:i]))
		s = s[i:]
		if s[0] == '\r' {
			b.WriteByte('\n')
			s = s[1:]
			continue
		}
		if n := sgrLen(s); n > 0 {
			b.WriteString(s[:n])
			s = s[n:]
			continue
		}
		b.WriteString(visible(0x1b))
		s = s[1:]
	}
	return b.String()
}

// sgrLen returns the length of the SGR (colour) sequence s starts with, or 0.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s) && i < 64; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c == ';':
		case c == 'm':
			return i + 1
		default:
			return 0
		}
	}
	return 0
}
