package heldout

import (
	"fmt"
	"path"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// A block is a run of lines [start, end) of a file that is a test inside
// product source, with a key that pairs it with the same block on the
// other side.
type block struct {
	key        string
	start, end int
}

// mergeInline returns the iteration's file with its inline test blocks
// replaced by the baseline's: blocks of the same key swap in place, the
// iteration's other blocks are dropped (added tests are removed) and the
// baseline's other blocks are put back (at the end for Rust test items, where
// `use super::*` still sees the module).
func mergeInline(p string, base, iter []byte) []byte {
	var find func([]string) []block
	var appendMissing bool
	var emptyBlock func(lines []string, b block) []string
	switch path.Ext(p) {
	case ".rs":
		find, appendMissing, emptyBlock = rustBlocks, true, rustEmptyDoc
	case ".py":
		find, emptyBlock = pythonDocstrings, pythonEmptyDocstring
	case ".ex":
		find, emptyBlock = elixirDocs, elixirEmptyDoc
	default:
		return iter
	}
	bl, il := splitKeepLines(base), splitKeepLines(iter)
	bb, ib := find(bl), find(il)
	baseText := func(b block) []string { return bl[b.start:b.end] }
	iterText := func(b block) []string { return il[b.start:b.end] }
	byKey := map[string]block{}
	for _, b := range bb {
		byKey[b.key] = b
	}
	used := map[string]bool{}
	var out []string
	pos := 0
	for _, b := range ib {
		out = append(out, il[pos:b.start]...)
		pos = b.end
		if other, ok := byKey[b.key]; ok && !used[b.key] && (other.end > other.start || b.end == b.start) {
			used[b.key] = true
			out = append(out, baseText(other)...)
			continue
		}
		if emptyBlock != nil {
			out = append(out, emptyBlock(iterText(b), b)...)
		}
	}
	out = append(out, il[pos:]...)
	if appendMissing {
		for _, b := range bb {
			if !used[b.key] && b.key != "" && !strings.HasPrefix(b.key, "doc:") && b.end > b.start {
				used[b.key] = true
				if len(out) > 0 && !strings.HasSuffix(out[len(out)-1], "\n") {
					out = append(out, "\n")
				}
				out = append(out, "\n")
				out = append(out, baseText(b)...)
			}
		}
	}
	return []byte(strings.Join(out, ""))
}

// ---- Rust ----

var (
	rustTestAttrRe = lazyre.New(`^\s*#\[(?:cfg\s*\([^\]]*\btest\b|(?:[\w:]*::)?test\b|rstest\b|test_case\b|tokio::test\b|bench\b)`)
	rustAttrRe     = lazyre.New(`^\s*#\[`)
	rustDocRe      = lazyre.New(`^\s*//[/!]`)
	rustItemRe     = lazyre.New(`^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:const\s+)?(?:fn|struct|enum|trait|mod|static|type|union|macro_rules!)\s*[A-Za-z_]`)
	rustItemNameRe = lazyre.New(`\b(fn|mod|struct|enum|trait|impl|const|static|type|union|macro_rules!|use)\s*([A-Za-z_][A-Za-z0-9_]*)?`)
)

// rustBlocks finds #[cfg(test)] and #[test] items (with their doc comments
// and attributes) and doc comments that hold code examples (doc tests).
func rustBlocks(lines []string) []block {
	var out []block
	seen := map[string]int{}
	key := func(k string) string {
		seen[k]++
		if seen[k] > 1 {
			return fmt.Sprintf("%s#%d", k, seen[k])
		}
		return k
	}
	for i := 0; i < len(lines); i++ {
		if rustTestAttrRe.MatchString(lines[i]) {
			start := i
			for start > 0 && rustDocRe.MatchString(lines[start-1]) {
				start--
			}
			j := i
			for j < len(lines) && (rustAttrRe.MatchString(lines[j]) || strings.TrimSpace(lines[j]) == "" || rustDocRe.MatchString(lines[j])) {
				j++
			}
			if j >= len(lines) {
				break
			}
			end := rustItemEnd(lines, j)
			name := "item"
			if m := rustItemNameRe.FindStringSubmatch(lines[j]); m != nil {
				name = m[1] + " " + m[2]
			}
			out = append(out, block{key: key("test:" + name), start: start, end: end})
			i = end - 1
			continue
		}
		if rustDocRe.MatchString(lines[i]) {
			start := i
			j := i
			for j < len(lines) && rustDocRe.MatchString(lines[j]) {
				j++
			}
			target := "module"
			if !strings.HasPrefix(strings.TrimSpace(lines[start]), "//!") {
				k := j
				for k < len(lines) && (rustAttrRe.MatchString(lines[k]) || strings.TrimSpace(lines[k]) == "") {
					k++
				}
				if k < len(lines) {
					target = rustItemKey(lines[k])
				}
				if attrsHaveTest(lines[j:min(k, len(lines))]) {
					// The doc comment of a test item goes with the item.
					i = j - 1
					continue
				}
			}
			out = append(out, block{key: key("doc:" + target), start: start, end: j})
			i = j - 1
			continue
		}
		if rustItemRe.MatchString(lines[i]) {
			// An item without a doc comment: an anchor where the
			// baseline's doc comment (and its doc tests) goes back.
			start := i
			for start > 0 && rustAttrRe.MatchString(lines[start-1]) {
				start--
			}
			out = append(out, block{key: key("doc:" + rustItemKey(lines[i])), start: start, end: start})
		}
	}
	return out
}

func attrsHaveTest(lines []string) bool {
	for _, l := range lines {
		if rustTestAttrRe.MatchString(l) {
			return true
		}
	}
	return false
}

func rustItemKey(line string) string {
	if m := rustItemNameRe.FindStringSubmatch(line); m != nil {
		return m[1] + " " + m[2]
	}
	return strings.TrimSpace(line)
}

// rustEmptyDoc keeps a doc comment the baseline does not have only when it
// holds no code example (a doc test).
func rustEmptyDoc(lines []string, _ block) []string {
	if docHasCode(lines) {
		return nil
	}
	return lines
}

func docHasCode(lines []string) bool {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		t = strings.TrimLeft(t, "/!")
		if strings.HasPrefix(strings.TrimSpace(t), "```") {
			return true
		}
	}
	return false
}

// rustItemEnd returns the line after the item starting at line i: the line
// of its closing brace, or of its terminating semicolon. Strings, chars
// and comments are skipped.
func rustItemEnd(lines []string, i int) int {
	depth := 0
	opened := false
	inBlockComment := 0
	inString := false
	for k := i; k < len(lines); k++ {
		l := lines[k]
		for x := 0; x < len(l); x++ {
			c := l[x]
			switch {
			case inBlockComment > 0:
				if c == '*' && x+1 < len(l) && l[x+1] == '/' {
					inBlockComment--
					x++
				} else if c == '/' && x+1 < len(l) && l[x+1] == '*' {
					inBlockComment++
					x++
				}
			case inString:
				if c == '\\' {
					x++
				} else if c == '"' {
					inString = false
				}
			case c == '/' && x+1 < len(l) && l[x+1] == '/':
				x = len(l)
			case c == '/' && x+1 < len(l) && l[x+1] == '*':
				inBlockComment++
				x++
			case c == '"':
				inString = true
			case c == '\'':
				// A char literal ('a', '\n', '{'); a lifetime has no
				// closing quote within three bytes.
				if x+2 < len(l) && l[x+2] == '\'' {
					x += 2
				} else if x+3 < len(l) && l[x+1] == '\\' && l[x+3] == '\'' {
					x += 3
				}
			case c == '{':
				depth++
				opened = true
			case c == '}':
				depth--
				if opened && depth == 0 {
					return k + 1
				}
			case c == ';' && !opened && depth == 0:
				return k + 1
			}
		}
	}
	return len(lines)
}

// ---- Python doctests ----

var (
	pyDefRe       = lazyre.New(`^(\s*)(?:async\s+def|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)`)
	pyDocStartRe  = lazyre.New(`^(\s*)([rRuUbB]{0,2})("""|''')`)
	pyDoctestRe   = lazyre.New(`(?m)^\s*>>>`)
	pyCommentOnly = lazyre.New(`^\s*(?:#.*)?$`)
)

// pythonDocstrings finds the docstrings (module, class, function) that hold
// doctests on either side: every docstring is a block, keyed by the
// qualified name of what it documents, so that one side's doctest is found
// even where the other side's docstring has none.
func pythonDocstrings(lines []string) []block {
	var out []block
	type scope struct {
		indent int
		name   string
	}
	var stack []scope
	expectDoc := "<module>"
	expectIndent := -1
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if pyCommentOnly.MatchString(l) {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " \t"))
		if expectDoc != "" {
			if m := pyDocStartRe.FindStringSubmatch(l); m != nil && (expectIndent < 0 || indent > expectIndent) {
				end := pyStringEnd(lines, i, m[3], len(m[0]))
				out = append(out, block{key: expectDoc, start: i, end: end})
				expectDoc = ""
				i = end - 1
				continue
			}
			// No docstring: an anchor where the baseline's goes back.
			out = append(out, block{key: expectDoc, start: i, end: i})
			expectDoc = ""
		}
		if m := pyDefRe.FindStringSubmatch(l); m != nil {
			ind := len(m[1])
			for len(stack) > 0 && stack[len(stack)-1].indent >= ind {
				stack = stack[:len(stack)-1]
			}
			name := m[2]
			if len(stack) > 0 {
				name = stack[len(stack)-1].name + "." + name
			}
			stack = append(stack, scope{ind, name})
			// The header may run over several lines, up to its colon.
			j := i
			for j < len(lines) && !strings.HasSuffix(strings.TrimSpace(stripPyComment(lines[j])), ":") {
				j++
			}
			i = j
			expectDoc, expectIndent = name, ind
		}
	}
	// Only docstrings matter here; each one is a block.
	return out
}

func stripPyComment(s string) string {
	if i := strings.Index(s, "#"); i >= 0 && !strings.ContainsAny(s[:i], `"'`) {
		return s[:i]
	}
	return s
}

func pyStringEnd(lines []string, i int, quote string, after int) int {
	rest := lines[i][after:]
	if strings.Contains(rest, quote) {
		return i + 1
	}
	for k := i + 1; k < len(lines); k++ {
		if strings.Contains(lines[k], quote) {
			return k + 1
		}
	}
	return len(lines)
}

// pythonEmptyDocstring keeps a docstring the baseline does not have only
// when it holds no doctest.
func pythonEmptyDocstring(lines []string, _ block) []string {
	if len(lines) == 0 {
		return nil
	}
	text := strings.Join(lines, "")
	if !pyDoctestRe.MatchString(text) {
		return lines
	}
	m := pyDocStartRe.FindStringSubmatch(lines[0])
	return []string{m[1] + m[3] + "(doctest held out)" + m[3] + "\n"}
}

// ---- Elixir doctests ----

var (
	exDocRe    = lazyre.New(`^(\s*)@(moduledoc|doc)\s+(~[sS])?("""|''')`)
	exDefRe    = lazyre.New(`^\s*(?:def|defp|defmacro|defmacrop|defguard)\s+([a-z_][A-Za-z0-9_?!]*)`)
	exModuleRe = lazyre.New(`^\s*defmodule\s+([A-Z][A-Za-z0-9_.]*)`)
)

// elixirDocs finds @moduledoc and @doc heredocs, keyed by the module or by
// the function that follows.
func elixirDocs(lines []string) []block {
	var out []block
	module := ""
	seen := map[string]int{}
	for i := 0; i < len(lines); i++ {
		if m := exModuleRe.FindStringSubmatch(lines[i]); m != nil {
			module = m[1]
			continue
		}
		m := exDocRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != m[4] {
			end++
		}
		if end < len(lines) {
			end++
		}
		key := "moduledoc:" + module
		if m[2] == "doc" {
			key = "doc:" + module + ".?"
			for k := end; k < len(lines); k++ {
				if d := exDefRe.FindStringSubmatch(lines[k]); d != nil {
					key = "doc:" + module + "." + d[1]
					break
				}
			}
		}
		seen[key]++
		if seen[key] > 1 {
			key = fmt.Sprintf("%s#%d", key, seen[key])
		}
		out = append(out, block{key: key, start: i, end: end})
		i = end - 1
	}
	return out
}

func elixirEmptyDoc(lines []string, _ block) []string {
	if len(lines) == 0 {
		return nil
	}
	if !strings.Contains(strings.Join(lines, ""), "iex>") {
		return lines
	}
	m := exDocRe.FindStringSubmatch(lines[0])
	return []string{m[1] + "@" + m[2] + " \"doctest held out\"\n"}
}
