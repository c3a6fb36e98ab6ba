package escape

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// alwaysEscaped are the characters Text always backslash-escapes: they
// open or close a construct wherever they stand (emphasis, code, links
// and images, raw HTML and autolinks, entities, headings, tables,
// strikethrough, math). CommonMark makes a backslash before any ASCII
// punctuation a literal, so the escaped text renders as it was.
const alwaysEscaped = "\\`*_[]<>&#|~$"

// startEscaped are escaped only as the first character of a value, where
// a value may start a line: a list item, a thematic break, a setext
// underline, a blockquote.
const startEscaped = "-+=>"

// Text returns s as inline Markdown prose that renders as exactly its
// characters: one line, at most MaxInline characters, the characters that
// could open a construct backslash-escaped ("|" included, so it is safe
// in a table cell), control characters shown, and an @mention, an #issue
// reference, an :emoji: shortcode or an autolink broken with an invisible
// word joiner so GitHub neither notifies, links nor draws a false ✅.
func Text(s string) string {
	s = capRunes(clean(oneLine(s), nil), MaxInline)
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	prev := rune(' ')
	digits := true // only digits so far: "1." or "1)" would start a list
	for i, r := range s {
		switch {
		case r == '@' && !isWord(prev) && i+1 < len(s) && isWord(rune(s[i+1])):
			b.WriteString("@" + wordJoiner)
		case r == '#' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			b.WriteString(`\#` + wordJoiner)
		case r == ':' && strings.HasPrefix(s[i:], "://"):
			b.WriteString(wordJoiner + ":")
		case r == ':' && i+1 < len(s) && isEmojiName(s[i+1]):
			b.WriteString(":" + wordJoiner)
		case r == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www"):
			b.WriteString(wordJoiner + ".")
		case strings.ContainsRune(alwaysEscaped, r),
			i == 0 && strings.ContainsRune(startEscaped, r),
			(r == '.' || r == ')') && digits && i > 0:
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		digits = digits && r >= '0' && r <= '9'
		prev = r
	}
	return b.String()
}

// isEmojiName reports whether c can follow the ":" of an emoji shortcode
// (":white_check_mark:" would render as a check mark).
func isEmojiName(c byte) bool {
	return c == '+' || c == '-' || isWord(rune(c))
}

func isWord(r rune) bool {
	return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// Code returns s as an inline code span that shows s literally: file,
// test and branch names, commands. One line, at most MaxInline
// characters, control characters shown; the fence is one backtick longer
// than the longest run of backticks in s. GitHub processes nothing inside
// a code span (no HTML, no mention). Not for a table cell: GFM splits
// cells on "|" before code spans, so a table needs Text.
func Code(s string) string {
	s = capRunes(clean(oneLine(s), nil), MaxInline)
	if s == "" {
		return "` `"
	}
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// HTML returns s as text inside a raw HTML element (such as <summary>),
// where Markdown is not parsed: one line, the five HTML special characters
// as entities, control characters shown, mentions and references broken.
func HTML(s string) string {
	s = capRunes(clean(oneLine(s), nil), MaxInline)
	var b strings.Builder
	prev := rune(' ')
	for i, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '@' && !isWord(prev) && i+1 < len(s) && isWord(rune(s[i+1])):
			b.WriteString("@" + wordJoiner)
		case r == '#' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			b.WriteString("#" + wordJoiner)
		case r == ':' && i+1 < len(s) && isEmojiName(s[i+1]):
			b.WriteString(":" + wordJoiner)
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// Link returns a Markdown link to u showing label (escaped with Text), or
// the label alone when u is not an absolute http(s) URL: a javascript: or
// data: URL never becomes a link. The URL's parentheses and spaces are
// percent-encoded so it cannot end the link early.
func Link(label, u string) string {
	if !SafeURL(u) {
		return Text(label)
	}
	enc := strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E", "\\", "%5C", "`", "%60", "\"", "%22").Replace(u)
	return "[" + Text(label) + "](" + enc + ")"
}

// SafeURL reports whether u is an absolute http or https URL with a host
// and no control characters.
func SafeURL(u string) bool {
	for _, r := range u {
		if r < 0x20 || r == 0x7f || visible(r) != "" {
			return false
		}
	}
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "https" || p.Scheme == "http") && p.Host != "" && p.User == nil
}

// Truncate returns markdown cut to at most limit bytes, followed by note
// (which must be trusted Markdown): cut at a line end when one is near,
// never inside a UTF-8 sequence, with any open code fence and <details>
// closed first so the note and the end of the document are not swallowed.
// markdown within the limit is returned unchanged.
func Truncate(markdown string, limit int, note string) string {
	if len(markdown) <= limit {
		return markdown
	}
	reserve := len(note) + 64 // closers
	cut := max(limit-reserve, 0)
	for cut > 0 && !utf8.RuneStart(markdown[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(markdown[:cut], '\n'); nl >= 0 && cut-nl < 4096 {
		cut = nl + 1
	}
	body := markdown[:cut]
	var b strings.Builder
	b.WriteString(body)
	if !strings.HasSuffix(body, "\n") {
		b.WriteString("\n")
	}
	if fence := openFence(body); fence != "" {
		b.WriteString(fence + "\n")
	}
	open := strings.Count(body, "<details") - strings.Count(body, "</details>")
	for range max(open, 0) {
		b.WriteString("</details>\n")
	}
	b.WriteString(note)
	out := b.String()
	for len(out) > limit { // only when the note itself is larger than limit
		_, size := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-size]
	}
	return out
}

// openFence returns the fence that closes the code block open at the end
// of md, or "" when none is open.
func openFence(md string) string {
	open := ""
	for line := range strings.SplitSeq(md, "\n") {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 {
			continue
		}
		for _, c := range []string{"`", "~"} {
			n := len(t) - len(strings.TrimLeft(t, c))
			if n < 3 {
				continue
			}
			switch {
			case open == "":
				open = strings.Repeat(c, n)
			case strings.HasPrefix(open, c) && n >= len(open) && strings.TrimSpace(t[n:]) == "":
				open = ""
			}
		}
	}
	return open
}
