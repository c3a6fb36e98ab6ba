// Package protected says which of the paths an agent changed it may not
// change: the CI workflows, CODEOWNERS and the files that configure agents
// (the protected-paths input). Their changes are reverted before the
// iteration is committed, for every trigger, and listed in the report.
//
// Patterns follow .gitignore: a pattern without a slash (other than a
// trailing one) matches a name at any depth ("CODEOWNERS" protects
// docs/CODEOWNERS too); a pattern with a slash is anchored at the root (a
// leading slash is dropped); a trailing slash matches directories only;
// "**/" matches any directories, "/**" everything inside, "/**/" zero or
// more directories; "*" and "?" do not match "/"; "[a-z]" is a class; "!"
// takes paths back out. A pattern that matches a directory protects
// everything in it. Two differences from .gitignore, both toward
// protection being predictable: matching ignores case (checkouts on macOS
// and Windows, and tools that look names up without regard to case, read
// CLAUDE.md and claude.md as the same file), and a later "!" pattern takes
// a path back out even when a directory above it is protected.
package protected

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Default is the protected-paths input's default.
var Default = []string{".github/**", "CODEOWNERS", ".github/CODEOWNERS", "AGENTS.md", "CLAUDE.md"}

// Set is a compiled list of patterns.
type Set struct {
	patterns []pattern
}

type pattern struct {
	text    string // as given
	negate  bool
	dirOnly bool
	re      *regexp.Regexp
}

// ParseInput reads the protected-paths input: one pattern a line, blank
// lines and lines starting with "#" ignored, a leading "- " dropped. Empty
// input is Default; the single word "none" protects nothing.
func ParseInput(input string) []string {
	var out []string
	for _, l := range strings.Split(input, "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimSpace(strings.TrimPrefix(l, "- "))
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	switch {
	case len(out) == 0:
		return append([]string(nil), Default...)
	case len(out) == 1 && strings.EqualFold(out[0], "none"):
		return nil
	}
	return out
}

// Compile compiles patterns; every bad pattern is reported, each with why
// and what is accepted.
func Compile(patterns []string) (*Set, error) {
	s := &Set{}
	var problems []error
	for _, p := range patterns {
		c, err := compile(p)
		if err != nil {
			problems = append(problems, fmt.Errorf("protected-paths pattern %q: %w; write .gitignore-style patterns such as .github/**, CODEOWNERS or docs/*.md", p, err))
			continue
		}
		if c != nil {
			s.patterns = append(s.patterns, *c)
		}
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return s, nil
}

// MustCompile is Compile for patterns known to be valid (Default).
func MustCompile(patterns []string) *Set {
	s, err := Compile(patterns)
	if err != nil {
		panic(err)
	}
	return s
}

func compile(raw string) (*pattern, error) {
	p := strings.TrimSpace(raw)
	if p == "" || strings.HasPrefix(p, "#") {
		return nil, nil
	}
	c := &pattern{text: raw}
	if strings.HasPrefix(p, "!") {
		c.negate, p = true, p[1:]
	} else if strings.HasPrefix(p, `\!`) || strings.HasPrefix(p, `\#`) {
		p = p[1:]
	}
	if strings.HasSuffix(p, "/") {
		c.dirOnly, p = true, strings.TrimRight(p, "/")
	}
	anchored := strings.Contains(p, "/")
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil, errors.New("it names no path")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." {
			return nil, errors.New(`"." and ".." are not allowed: paths are relative to the repository root`)
		}
		if seg == "" {
			return nil, errors.New("it has an empty path segment (//)")
		}
	}
	var b strings.Builder
	b.WriteString("(?i)^")
	if !anchored {
		b.WriteString("(?:.*/)?")
	}
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		if seg == "**" {
			switch {
			case last && i == 0:
				b.WriteString(".*")
			case last:
				b.WriteString(".*") // "a/**": everything inside a (the "/" was written)
			default:
				b.WriteString("(?:.*/)?") // "**/": any directories, none included
			}
			continue
		}
		re, err := segment(seg)
		if err != nil {
			return nil, err
		}
		b.WriteString(re)
		if !last {
			b.WriteString("/")
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("it does not compile: %w", err)
	}
	c.re = re
	return c, nil
}

// segment translates one path segment's glob to a regular expression.
func segment(seg string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch c {
		case '*':
			for i+1 < len(seg) && seg[i+1] == '*' {
				i++ // "a**b" is "a*b"
			}
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '\\':
			if i+1 == len(seg) {
				return "", errors.New("it ends with a lone backslash")
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(seg[i])))
		case '[':
			j := i + 1
			if j < len(seg) && (seg[j] == '!' || seg[j] == '^') {
				j++
			}
			if j < len(seg) && seg[j] == ']' {
				j++
			}
			for j < len(seg) && seg[j] != ']' {
				j++
			}
			if j >= len(seg) {
				return "", errors.New("a '[' class is not closed by ']'")
			}
			class := seg[i+1 : j]
			neg := strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^")
			if neg {
				class = class[1:]
			}
			class = strings.ReplaceAll(class, `\`, `\\`)
			if neg {
				b.WriteString("[^/" + class + "]")
			} else {
				b.WriteString("[" + class + "]")
			}
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String(), nil
}

// Match reports whether a repository path (slash-separated, relative to the
// root) is protected, and the pattern that decided it.
func (s *Set) Match(p string) (string, bool) {
	if s == nil {
		return "", false
	}
	p = path.Clean(strings.TrimPrefix(strings.ReplaceAll(p, `\`, "/"), "/"))
	if p == "." || p == "" {
		return "", false
	}
	// The path itself and each directory above it.
	var dirs []string
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		dirs = append(dirs, d)
	}
	protected, by := false, ""
	for _, pt := range s.patterns {
		hit := !pt.dirOnly && pt.re.MatchString(p)
		for _, d := range dirs {
			hit = hit || pt.re.MatchString(d)
		}
		if hit {
			protected, by = !pt.negate, pt.text
		}
	}
	return by, protected
}

// Change is one path an iteration changed, as `git diff --name-status`
// gives it.
type Change struct {
	// Status is A (added), M (modified), D (deleted), R (renamed), C
	// (copied) or T (type changed).
	Status byte
	Path   string
	// OldPath is the source of a rename or copy.
	OldPath string
}

// Revert is a change to a protected path, to be undone.
type Revert struct {
	Change
	// Pattern is the pattern that protects it.
	Pattern string
}

// Split separates an iteration's changes into those kept and those that
// touch a protected path, which are reverted: a rename or copy is reverted
// when its source or its destination is protected.
func (s *Set) Split(changes []Change) (keep []Change, revert []Revert) {
	for _, c := range changes {
		pat, hit := s.Match(c.Path)
		if !hit && c.OldPath != "" && (c.Status == 'R' || c.Status == 'C') {
			pat, hit = s.Match(c.OldPath)
			if hit && c.Status == 'C' {
				hit = false // copying a protected file leaves it as it was
			}
		}
		if hit {
			revert = append(revert, Revert{Change: c, Pattern: pat})
			continue
		}
		keep = append(keep, c)
	}
	return keep, revert
}

// Restore lists what undoing reverts means for the work tree: the paths to
// put back as they were at the iteration's start (modified, deleted, the
// source of a rename) and the paths to remove (added, the destination of a
// rename or copy). The caller does it with its own git (the engine's
// repository adapter), from its trusted objects.
func Restore(revert []Revert) (restore, remove []string) {
	seen := map[string]bool{}
	add := func(list *[]string, p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			*list = append(*list, p)
		}
	}
	for _, r := range revert {
		switch r.Status {
		case 'A', 'C':
			add(&remove, r.Path)
		case 'R':
			add(&remove, r.Path)
			add(&restore, r.OldPath)
		default:
			add(&restore, r.Path)
		}
	}
	sort.Strings(restore)
	sort.Strings(remove)
	return restore, remove
}

// Summary is the report's line for what was reverted ("" for nothing).
// Paths are the agent's: the caller escapes them for where it shows them.
func Summary(revert []Revert) string {
	if len(revert) == 0 {
		return ""
	}
	verbs := map[byte]string{'A': "added", 'M': "modified", 'D': "deleted", 'R': "renamed", 'C': "copied", 'T': "changed the type of"}
	var parts []string
	for _, r := range revert {
		v := verbs[r.Status]
		if v == "" {
			v = "changed"
		}
		what := r.Path
		if r.Status == 'R' || r.Status == 'C' {
			what = r.OldPath + " -> " + r.Path
		}
		parts = append(parts, fmt.Sprintf("%s %s (protected by %s)", v, what, r.Pattern))
	}
	n := "change"
	if len(revert) > 1 {
		n = "changes"
	}
	return fmt.Sprintf("Reverted %d %s to protected paths: %s.", len(revert), n, strings.Join(parts, "; "))
}
