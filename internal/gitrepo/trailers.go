package gitrepo

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/aiwg/agent-loop/internal/loop"
)

var trailerKey = regexp.MustCompile(`^[A-Za-z-]+$`)

// buildMessage lays out a commit message: subject, blank line, body, blank
// line, one "Key: value" line per trailer.
func buildMessage(req loop.CommitRequest) (string, error) {
	subject := strings.TrimSpace(req.Subject)
	if subject == "" {
		return "", fmt.Errorf("commit subject is empty: pass a one-line subject")
	}
	if strings.ContainsAny(subject, "\n\r") {
		return "", fmt.Errorf("commit subject %q spans several lines: put the rest in the body", subject)
	}
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n")
	if body := strings.TrimSpace(strings.ReplaceAll(req.Body, "\r\n", "\n")); body != "" {
		b.WriteString("\n")
		b.WriteString(body)
		b.WriteString("\n")
	}
	if len(req.Trailers) > 0 {
		b.WriteString("\n")
	}
	for _, t := range req.Trailers {
		if !trailerKey.MatchString(t.Key) {
			return "", fmt.Errorf("trailer key %q is not valid: use letters and hyphens (for example Agent-Loop-Score)", t.Key)
		}
		v := strings.TrimSpace(t.Value)
		if strings.ContainsAny(v, "\n\r\x00") {
			return "", fmt.Errorf("trailer %s value %q spans several lines: trailer values are one line", t.Key, t.Value)
		}
		fmt.Fprintf(&b, "%s: %s\n", t.Key, v)
	}
	return b.String(), nil
}

// gitGeneratedPrefixes are the trailer prefixes git recognises without
// configuration (trailer.c).
var gitGeneratedPrefixes = []string{"Signed-off-by: ", "(cherry picked from commit "}

// parseTrailers returns the trailers of a commit message with the semantics
// of `git log --format=%(trailers:only,unfold)` (`git interpret-trailers
// --parse --no-divider`): the trailer block is the last paragraph after the
// title, made only of trailers (and continuation lines), or holding at least
// 25% trailers and a git-generated one. Later keys override earlier ones.
func parseTrailers(msg string) map[string]string {
	lines := strings.SplitAfter(msg, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	// Trailing comment and blank lines are not part of the message.
	end := len(lines)
	for end > 0 && (isCommentLine(lines[end-1]) || isBlankLine(lines[end-1])) {
		end--
	}
	lines = lines[:end]
	// The first paragraph is the title and cannot hold trailers.
	title := 0
	for title < len(lines) {
		if isCommentLine(lines[title]) {
			title++
			continue
		}
		if isBlankLine(lines[title]) {
			break
		}
		title++
	}
	start := -1
	onlySpaces, recognised := true, false
	trailerLines, nonTrailerLines, continuation := 0, 0, 0
scan:
	for l := len(lines) - 1; l >= title; l-- {
		line := lines[l]
		switch {
		case isCommentLine(line):
			nonTrailerLines += continuation
			continuation = 0
			continue
		case isBlankLine(line):
			if onlySpaces {
				continue
			}
			nonTrailerLines += continuation
			if (recognised && trailerLines*3 >= nonTrailerLines) || (trailerLines > 0 && nonTrailerLines == 0) {
				start = l + 1
			}
			break scan
		}
		onlySpaces = false
		for _, p := range gitGeneratedPrefixes {
			if strings.HasPrefix(line, p) {
				trailerLines++
				continuation = 0
				recognised = true
				continue scan
			}
		}
		if findSeparator(line) >= 1 && !isSpace(line[0]) {
			trailerLines++
			continuation = 0
		} else if isSpace(line[0]) {
			continuation++
		} else {
			nonTrailerLines += 1 + continuation
			continuation = 0
		}
	}
	if start < 0 {
		return nil
	}
	out := map[string]string{}
	var key string
	var val strings.Builder
	flush := func() {
		if key != "" {
			out[key] = unfold(val.String())
		}
		key = ""
		val.Reset()
	}
	for _, line := range lines[start:] {
		if isCommentLine(line) {
			continue
		}
		if key != "" && isSpace(line[0]) {
			val.WriteString(line)
			continue
		}
		flush()
		if sep := findSeparator(line); sep >= 1 {
			key = strings.TrimSpace(line[:sep])
			val.WriteString(line[sep+1:])
		}
	}
	flush()
	if len(out) == 0 {
		return nil
	}
	return out
}

// findSeparator is trailer.c's find_separator with ":" as separator: a token
// of letters, digits and hyphens, optional blanks, then the colon.
func findSeparator(line string) int {
	whitespace := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == ':' {
			return i
		}
		if !whitespace && (isAlnum(c) || c == '-') {
			continue
		}
		if i != 0 && (c == ' ' || c == '\t') {
			whitespace = true
			continue
		}
		break
	}
	return -1
}

// unfold is trailer.c's unfold_value after parse_trailer's trim: every
// newline and the blanks after it become one space.
func unfold(v string) string {
	v = strings.TrimSpace(v)
	var b strings.Builder
	for i := 0; i < len(v); {
		c := v[i]
		i++
		if c != '\n' {
			b.WriteByte(c)
			continue
		}
		for i < len(v) && isSpace(v[i]) {
			i++
		}
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

func isCommentLine(l string) bool { return strings.HasPrefix(l, "#") }

func isBlankLine(l string) bool { return strings.TrimSpace(l) == "" }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// subjectOf is git's %s: the first paragraph, lines joined by spaces.
func subjectOf(msg string) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if strings.TrimSpace(l) == "" {
			if len(parts) > 0 {
				break
			}
			continue
		}
		parts = append(parts, strings.TrimSpace(l))
	}
	return strings.Join(parts, " ")
}
