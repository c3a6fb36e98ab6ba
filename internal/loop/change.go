package loop

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aiwg/agent-loop/internal/state"
)

// maxChangePaths is how many files a Change names (the largest first).
const maxChangePaths = 50

// summaryLines and summaryRunes bound what the state keeps of the agent's
// own summary of its change.
const (
	summaryLines = 3
	summaryRunes = 240
)

// changeOf is the one function that sizes a change: the files, lines added
// and removed, and each file's status, of a unified diff as git writes it
// (Repo.Stage, Repo.Diff). An iteration's size in the report is its tree
// against the starting commit, measured here from the staged base diff.
// Every file counts, binary ones with no lines; the Paths are the largest
// files first, at most maxChangePaths of them.
func changeOf(diff string) state.Change {
	var (
		files []state.ChangedFile
		cur   *state.ChangedFile
		hunk  bool
	)
	for line := range strings.SplitSeq(diff, "\n") {
		if strings.HasPrefix(line, "diff --git ") {
			files = append(files, state.ChangedFile{Path: gitLinePath(line), Status: "modified"})
			cur, hunk = &files[len(files)-1], false
			continue
		}
		if cur == nil {
			continue
		}
		if hunk {
			switch {
			case strings.HasPrefix(line, "+"):
				cur.Additions++
			case strings.HasPrefix(line, "-"):
				cur.Deletions++
			case strings.HasPrefix(line, "@@"), strings.HasPrefix(line, " "), strings.HasPrefix(line, `\`), line == "":
			default:
				hunk = false
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "@@"):
			hunk = true
		case strings.HasPrefix(line, "new file mode"):
			cur.Status = "added"
		case strings.HasPrefix(line, "deleted file mode"):
			cur.Status = "deleted"
		case strings.HasPrefix(line, "rename to "):
			cur.Status, cur.Path = "renamed", unquotePath(strings.TrimPrefix(line, "rename to "))
		case strings.HasPrefix(line, "+++ b/"), strings.HasPrefix(line, `+++ "b/`):
			cur.Path = unquotePath(strings.TrimPrefix(line, "+++ "))
			cur.Path = strings.TrimPrefix(cur.Path, "b/")
		case strings.HasPrefix(line, "--- a/") && cur.Status == "deleted", strings.HasPrefix(line, `--- "a/`) && cur.Status == "deleted":
			cur.Path = strings.TrimPrefix(unquotePath(strings.TrimPrefix(line, "--- ")), "a/")
		}
	}
	c := state.Change{Files: len(files)}
	for _, f := range files {
		c.Additions += f.Additions
		c.Deletions += f.Deletions
	}
	slices.SortStableFunc(files, func(a, b state.ChangedFile) int {
		return cmp.Or(cmp.Compare(b.Additions+b.Deletions, a.Additions+a.Deletions), cmp.Compare(a.Path, b.Path))
	})
	if len(files) > maxChangePaths {
		files = files[:maxChangePaths]
	}
	if len(files) > 0 {
		c.Paths = files
	}
	return c
}

// changeWithout is c less the files named in excluded (kept out of the
// commit: the result does not hold them), recounted. Files past the
// named ones cannot be told apart and stay.
func changeWithout(c state.Change, excluded []string) state.Change {
	if len(excluded) == 0 {
		return c
	}
	out := state.Change{Files: c.Files, Additions: c.Additions, Deletions: c.Deletions}
	for _, f := range c.Paths {
		if slices.Contains(excluded, f.Path) {
			out.Files--
			out.Additions -= f.Additions
			out.Deletions -= f.Deletions
			continue
		}
		out.Paths = append(out.Paths, f)
	}
	return out
}

// gitLinePath is the path of a "diff --git a/P b/P" line; for a rename
// (two different paths) the new one, fixed by the "rename to" line.
func gitLinePath(line string) string {
	rest := strings.TrimPrefix(line, "diff --git ")
	if strings.HasPrefix(rest, `"`) {
		// Quoted paths: the second quoted (or bare) word is b/P.
		if end := closingQuote(rest); end > 0 && end+2 <= len(rest) {
			return strings.TrimPrefix(unquotePath(strings.TrimSpace(rest[end+1:])), "b/")
		}
		return rest
	}
	// a/P b/P: the two halves are equal, so P is the first half.
	if n := len(rest); n >= 7 && (n-1)%2 == 0 {
		half := (n - 1) / 2
		if rest[half] == ' ' && rest[:2] == "a/" && rest[half+1:half+3] == "b/" && rest[2:half] == rest[half+3:] {
			return rest[2:half]
		}
	}
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return strings.TrimPrefix(rest, "a/")
}

func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// unquotePath undoes git's C-style quoting of a path with unusual bytes.
func unquotePath(p string) string {
	p = strings.TrimSpace(p)
	if len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' {
		if u, err := strconv.Unquote(p); err == nil {
			return u
		}
	}
	return p
}

// agentSummary is the agent's own summary of its change, from its final
// message: the first paragraph (a heading such as "## Summary" before it
// is skipped), at most three lines, each trimmed and cut at summaryRunes
// characters. It is the agent's text: stored as it is, escaped where a
// report shows it.
func agentSummary(msg string) string {
	var lines []string
	heading := "" // a title skipped: the summary when nothing follows it
	fence := false
	for line := range strings.SplitSeq(strings.ReplaceAll(msg, "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			fence = !fence
			if len(lines) > 0 {
				break
			}
			continue
		}
		switch {
		case fence:
			continue
		case line == "":
			if len(lines) > 0 {
				return strings.Join(lines, "\n")
			}
			continue
		case len(lines) == 0 && isHeading(line):
			if heading == "" {
				heading = line
			}
			continue
		}
		if utf8.RuneCountInString(line) > summaryRunes {
			r := []rune(line)
			line = string(r[:summaryRunes-1]) + "…"
		}
		lines = append(lines, line)
		if len(lines) == summaryLines {
			break
		}
	}
	if len(lines) == 0 {
		return strings.TrimLeft(heading, "# ")
	}
	return strings.Join(lines, "\n")
}

// isHeading reports whether a line is only a title: a Markdown heading, or
// a short line ending in a colon ("Summary:", "Changes made:").
func isHeading(line string) bool {
	if strings.HasPrefix(line, "#") {
		return true
	}
	return strings.HasSuffix(line, ":") && len(strings.Fields(line)) <= 3
}
