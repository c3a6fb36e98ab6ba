package judge

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// vline is one line of one side of a hunk: the old side is the context and
// removed lines, the new side the context and added lines.
type vline struct {
	text    string
	num     int  // line number on that side
	changed bool // removed (old side) or added (new side)
}

// fileView is a FileDiff prepared for the detectors.
type fileView struct {
	fd   *FileDiff
	path string // NewPath, or OldPath for a deleted file
	lang language
	// test is true for test code: a test file by its path, or a Rust file
	// whose visible lines hold #[test] or #[cfg(test)].
	test    bool
	ignored bool
	// oldSide and newSide hold one slice per hunk.
	oldSide [][]vline
	newSide [][]vline
	// sections are the hunks' section texts (git's funcname line).
	sections []string
}

var rustTestMarker = lazyre.New(`#\[(?:cfg\(test\)|(?:[\w:]*::)?test\b|rstest\b|test_case\b)`)

func buildViews(files []FileDiff) []*fileView {
	views := make([]*fileView, 0, len(files))
	for i := range files {
		f := &files[i]
		v := &fileView{fd: f, path: f.Path(), lang: langOf(f.Path())}
		v.ignored = isIgnoredPath(v.path) || (f.OldPath != "" && isIgnoredPath(f.OldPath) && f.NewPath == "")
		v.test = isTestPath(v.path) || (f.OldPath != "" && isTestPath(f.OldPath))
		for _, h := range f.Hunks {
			var o, n []vline
			for _, l := range h.Lines {
				switch l.Kind {
				case LineContext:
					o = append(o, vline{text: l.Text, num: l.OldLine})
					n = append(n, vline{text: l.Text, num: l.NewLine})
				case LineRemoved:
					o = append(o, vline{text: l.Text, num: l.OldLine, changed: true})
				case LineAdded:
					n = append(n, vline{text: l.Text, num: l.NewLine, changed: true})
				}
				if v.lang == langRust && !v.test && rustTestMarker.MatchString(l.Text) {
					v.test = true
				}
			}
			if v.lang == langRust && strings.Contains(h.Section, "mod tests") {
				v.test = true
			}
			v.oldSide = append(v.oldSide, o)
			v.newSide = append(v.newSide, n)
			v.sections = append(v.sections, h.Section)
		}
		views = append(views, v)
	}
	return views
}

// changedLines returns the changed lines of one side with their hunk index.
func changedLines(side [][]vline) []vline {
	var out []vline
	for _, h := range side {
		for _, l := range h {
			if l.changed {
				out = append(out, l)
			}
		}
	}
	return out
}

// norm is the comparison form of a line: trimmed, inner runs of blanks
// collapsed, so re-indented or moved lines compare equal.
func norm(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// lineBag counts normalised lines, to tell a line that moved (removed here,
// added there) from one that is new.
type lineBag map[string]int

func (b lineBag) take(s string) bool {
	k := norm(s)
	if b[k] > 0 {
		b[k]--
		return true
	}
	return false
}

// removedBag collects every removed line of the diff.
func removedBag(views []*fileView) lineBag {
	b := lineBag{}
	for _, v := range views {
		for _, l := range changedLines(v.oldSide) {
			b[norm(l.text)]++
		}
	}
	return b
}

// isCommentLine reports whether a line is only a comment in lang.
func isCommentLine(lang language, s string) bool {
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	switch lang {
	case langPython, langRuby, langElixir, langShell, langMake, langYAML, langTOML:
		return strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#[") && !strings.HasPrefix(t, "#!")
	case langINI:
		return strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";")
	case langPHP:
		return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") ||
			(strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#["))
	case langXML:
		return strings.HasPrefix(t, "<!--")
	default:
		return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*")
	}
}

// lineComment returns the comment part of a code line ("" when none),
// ignoring comment markers inside simple string literals.
func lineComment(lang language, s string) string {
	var markers []string
	switch lang {
	case langPython, langRuby, langElixir, langShell, langMake, langYAML, langTOML:
		markers = []string{"#"}
	case langPHP:
		markers = []string{"//", "#"}
	default:
		markers = []string{"//", "/*"}
	}
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		if c == '"' || c == '\'' || c == '`' {
			quote = c
			continue
		}
		for _, m := range markers {
			if strings.HasPrefix(s[i:], m) {
				if m == "#" && (strings.HasPrefix(s[i:], "#[") || strings.HasPrefix(s[i:], "#{")) {
					continue
				}
				return s[i:]
			}
		}
	}
	return ""
}

// identifiers returns the identifier-like tokens of s.
var identRe = lazyre.New(`[A-Za-z_][A-Za-z0-9_]*`)

func tokenSet(s string, stop map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, t := range identRe.FindAllString(s, -1) {
		if len(t) < 2 || stop[t] || stop[strings.ToLower(t)] {
			continue
		}
		out[t] = true
	}
	return out
}

// jaccard is the token similarity of two texts (0 when both are empty).
func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for k := range a {
		if b[k] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
