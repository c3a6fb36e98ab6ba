package testreport

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// prepare turns raw combined output into lines: ANSI escape sequences are
// removed, CRLF and lone CR (progress bars redrawing a line) become line
// breaks. The returned lines share memory with the cleaned text.
func prepare(output string) []string {
	s := stripANSI(output)
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// stripANSI removes terminal escape sequences: CSI (ESC [ ... final byte),
// OSC (ESC ] ... BEL or ESC \), character set designations (ESC ( B) and
// two-byte escapes. Text without ESC is
// returned unchanged, without copying.
func stripANSI(s string) string {
	i := strings.IndexByte(s, 0x1b)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c != 0x1b {
			j := strings.IndexByte(s[i:], 0x1b)
			if j < 0 {
				b.WriteString(s[i:])
				break
			}
			b.WriteString(s[i : i+j])
			i += j
			continue
		}
		// c is ESC.
		if i+1 >= len(s) {
			i++
			continue
		}
		switch s[i+1] {
		case '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j + 1
		case ']':
			j := i + 2
			for j < len(s) {
				if s[j] == 0x07 {
					j++
					break
				}
				if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
					j += 2
					break
				}
				j++
			}
			i = j
		case '(', ')', '*', '+', '-', '.', '/':
			i += 3
		default:
			i += 2
		}
	}
	return b.String()
}

// atoi parses a decimal count, returning 0 for anything else. Counts above a
// billion are clamped so sums cannot overflow.
func atoi(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0
	}
	return min(n, 1_000_000_000)
}

// matchIf runs re only when a cheap test of the line passed: most lines of
// a large output belong to no runner's summary, and regexps are the cost.
func matchIf(ok bool, re *lazyre.Regexp, s string) []string {
	if !ok {
		return nil
	}
	return re.FindStringSubmatch(s)
}

// indentOf is the number of leading spaces and tabs (a tab counts as one).
func indentOf(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t"))
}

// sortedUnique sorts names and removes duplicates and empty names.
func sortedUnique(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence and
// replaces invalid UTF-8, marking a cut with "…" (counted in n).
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	const ell = "…"
	if n < len(ell) {
		return cutUTF8(s, n)
	}
	return cutUTF8(s, n-len(ell)) + ell
}

// cutUTF8 returns the longest prefix of s of at most n bytes that ends on a
// rune boundary.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

var (
	// locRE finds "path/file.ext:12" or "path/file.ext:12:5".
	locRE = lazyre.New(`(?:[A-Za-z]:)?[\w./\\~@+-]*[\w-]\.[A-Za-z]\w{0,7}:\d+(?::\d+)?`)
	// pyLocRE finds Python's `File "x.py", line 12`.
	pyLocRE = lazyre.New(`File "([^"]+)", line (\d+)`)
	// dotnetLocRE finds .NET's "in /path/X.cs:line 12".
	dotnetLocRE = lazyre.New(`in (\S+):line (\d+)`)
)

// findLocation returns the first file:line reference in line, or "".
func findLocation(line string) string {
	if !strings.Contains(line, ":") && !strings.Contains(line, "line ") {
		return ""
	}
	if m := pyLocRE.FindStringSubmatch(line); m != nil {
		return m[1] + ":" + m[2]
	}
	if m := dotnetLocRE.FindStringSubmatch(line); m != nil {
		return m[1] + ":" + m[2]
	}
	loc := locRE.FindString(line)
	return strings.TrimPrefix(loc, "file://")
}

// libraryMarkers identify stack frames inside toolchains and dependencies,
// which are never the place a failing test should be fixed.
var libraryMarkers = []string{
	"/src/testing/", "/src/runtime/", "/usr/local/go/", "/usr/lib/go",
	"/rustc/", "library/core/src", "library/std/src", "/.cargo/registry/",
	"node_modules/", "node:internal", "(node:", "<anonymous>)",
	"site-packages/", "dist-packages/", "/usr/lib/python", "/lib/python3",
	"java.base/", "jdk.internal", "org.junit.", "junit.framework", "sun.reflect",
	"/usr/lib/ruby", "/gems/", "/vendor/", "System.Runtime", "Microsoft.",
	"/usr/share/php", "/usr/include/", "(elixir ", "(ex_unit ", ":erlang.",
}

// isLibraryLine reports whether a stack or log line points into library code.
func isLibraryLine(line string) bool {
	for _, m := range libraryMarkers {
		if strings.Contains(line, m) {
			return true
		}
	}
	return false
}

// isTestPath reports whether a location looks like a test file.
func isTestPath(loc string) bool {
	l := strings.ToLower(loc)
	return strings.Contains(l, "test") || strings.Contains(l, "spec")
}

// bestLocation picks the most useful file:line in a failure block: the first
// one in a test file outside library code, else the first outside library
// code, else the first at all.
func bestLocation(block []string) string {
	var first, nonLib string
	for _, l := range block {
		loc := findLocation(l)
		if loc == "" {
			continue
		}
		if first == "" {
			first = loc
		}
		if isLibraryLine(l) {
			continue
		}
		if isTestPath(loc) {
			return loc
		}
		if nonLib == "" {
			nonLib = loc
		}
	}
	if nonLib != "" {
		return nonLib
	}
	return first
}
