package judge

import (
	"fmt"
	"strconv"
	"strings"
)

// FileStatus says what a diff did to one file.
type FileStatus string

// The statuses a FileDiff can have.
const (
	StatusModified FileStatus = "modified"
	StatusAdded    FileStatus = "added"
	StatusDeleted  FileStatus = "deleted"
	StatusRenamed  FileStatus = "renamed"
	StatusCopied   FileStatus = "copied"
)

// LineKind says which side of a diff a line belongs to.
type LineKind byte

// The kinds of lines in a hunk.
const (
	LineContext LineKind = ' '
	LineAdded   LineKind = '+'
	LineRemoved LineKind = '-'
)

// Line is one line of a hunk. OldLine is its number in the old file (0 for
// an added line), NewLine its number in the new file (0 for a removed line).
type Line struct {
	Kind    LineKind
	Text    string // without the leading marker and the line ending
	OldLine int
	NewLine int
	// NoNewline is true when the diff says "\ No newline at end of file"
	// after this line.
	NoNewline bool
}

// Hunk is one "@@ -a,b +c,d @@ section" block.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	// Section is the text git prints after the second "@@" (the enclosing
	// function or heading, by git's funcname heuristic).
	Section string
	Lines   []Line
}

// FileDiff is the change to one file.
type FileDiff struct {
	// OldPath and NewPath are repository-relative; OldPath is "" for an added
	// file and NewPath is "" for a deleted one.
	OldPath string
	NewPath string
	Status  FileStatus
	// Similarity is git's similarity index (0-100) of a rename or copy.
	Similarity int
	OldMode    string
	NewMode    string
	Binary     bool
	Hunks      []Hunk
}

// Path is the file's path after the change (its old path when deleted).
func (f FileDiff) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// Added returns the added lines of every hunk.
func (f FileDiff) Added() []Line { return f.lines(LineAdded) }

// Removed returns the removed lines of every hunk.
func (f FileDiff) Removed() []Line { return f.lines(LineRemoved) }

func (f FileDiff) lines(kind LineKind) []Line {
	var out []Line
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Kind == kind {
				out = append(out, l)
			}
		}
	}
	return out
}

// Counts returns the number of added and removed lines.
func (f FileDiff) Counts() (added, removed int) {
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case LineAdded:
				added++
			case LineRemoved:
				removed++
			}
		}
	}
	return added, removed
}

// DiffError reports a malformed diff line.
type DiffError struct {
	Line   int // 1-based line number in the diff text
	Text   string
	Reason string
}

func (e *DiffError) Error() string {
	return fmt.Sprintf("parsing unified diff: line %d %q: %s", e.Line, truncate(e.Text, 80), e.Reason)
}

// ParseDiff parses unified diff text as git prints it (`git diff -M`): the
// extended headers (renames with their similarity, copies, new and deleted
// files, modes), "Binary files ... differ" and "GIT binary patch" sections,
// hunks with their line numbers, "\ No newline at end of file" and CRLF line
// endings (stripped from Line.Text). Plain `diff -u` output without the
// "diff --git" line is accepted too.
//
// On malformed input it returns the files parsed so far together with a
// *DiffError; it never panics.
func ParseDiff(unified string) ([]FileDiff, error) {
	p := diffParser{lines: splitLines(unified)}
	return p.parse()
}

type diffParser struct {
	lines []string
	i     int
	files []FileDiff
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

func (p *diffParser) errorf(format string, args ...any) error {
	text := ""
	if p.i < len(p.lines) {
		text = p.lines[p.i]
	}
	return &DiffError{Line: p.i + 1, Text: text, Reason: fmt.Sprintf(format, args...)}
}

func (p *diffParser) parse() ([]FileDiff, error) {
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		switch {
		case strings.HasPrefix(line, "diff --git "):
			if err := p.parseGitFile(); err != nil {
				return p.files, err
			}
		case strings.HasPrefix(line, "--- ") && p.i+1 < len(p.lines) && strings.HasPrefix(p.lines[p.i+1], "+++ "):
			var f FileDiff
			p.parseFileNames(&f)
			finishStatus(&f)
			if err := p.parseHunks(&f); err != nil {
				p.files = append(p.files, f)
				return p.files, err
			}
			p.files = append(p.files, f)
		default:
			// Preamble (commit message, "index" lines of other tools, ...).
			p.i++
		}
	}
	return p.files, nil
}

// parseGitFile parses one "diff --git" section.
func (p *diffParser) parseGitFile() error {
	header := p.lines[p.i]
	var f FileDiff
	f.OldPath, f.NewPath = splitGitHeader(strings.TrimPrefix(header, "diff --git "))
	p.i++
	// Extended header lines.
headers:
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		switch {
		case strings.HasPrefix(line, "old mode "):
			f.OldMode = strings.TrimPrefix(line, "old mode ")
		case strings.HasPrefix(line, "new mode "):
			f.NewMode = strings.TrimPrefix(line, "new mode ")
		case strings.HasPrefix(line, "deleted file mode "):
			f.Status = StatusDeleted
			f.OldMode = strings.TrimPrefix(line, "deleted file mode ")
		case strings.HasPrefix(line, "new file mode "):
			f.Status = StatusAdded
			f.NewMode = strings.TrimPrefix(line, "new file mode ")
		case strings.HasPrefix(line, "rename from "):
			f.Status = StatusRenamed
			f.OldPath = unquotePath(strings.TrimPrefix(line, "rename from "))
		case strings.HasPrefix(line, "rename to "):
			f.Status = StatusRenamed
			f.NewPath = unquotePath(strings.TrimPrefix(line, "rename to "))
		case strings.HasPrefix(line, "copy from "):
			f.Status = StatusCopied
			f.OldPath = unquotePath(strings.TrimPrefix(line, "copy from "))
		case strings.HasPrefix(line, "copy to "):
			f.Status = StatusCopied
			f.NewPath = unquotePath(strings.TrimPrefix(line, "copy to "))
		case strings.HasPrefix(line, "similarity index "):
			f.Similarity = parsePercent(strings.TrimPrefix(line, "similarity index "))
		case strings.HasPrefix(line, "dissimilarity index "):
			f.Similarity = 100 - parsePercent(strings.TrimPrefix(line, "dissimilarity index "))
		case strings.HasPrefix(line, "index "):
			if fields := strings.Fields(line); len(fields) == 3 && f.NewMode == "" {
				f.OldMode, f.NewMode = fields[2], fields[2]
			}
		case strings.HasPrefix(line, "Binary files ") && strings.HasSuffix(line, " differ"):
			f.Binary = true
			p.binaryNames(&f, line)
		case line == "GIT binary patch":
			f.Binary = true
			p.i++
			for p.i < len(p.lines) && !strings.HasPrefix(p.lines[p.i], "diff --git ") {
				p.i++
			}
			break headers
		case strings.HasPrefix(line, "--- "):
			p.parseFileNames(&f)
			break headers
		default:
			break headers
		}
		p.i++
	}
	finishStatus(&f)
	err := p.parseHunks(&f)
	p.files = append(p.files, f)
	return err
}

// binaryNames takes the paths from "Binary files a/x and b/y differ".
func (p *diffParser) binaryNames(f *FileDiff, line string) {
	body := strings.TrimSuffix(strings.TrimPrefix(line, "Binary files "), " differ")
	old, nw, ok := strings.Cut(body, " and ")
	if !ok {
		return
	}
	if old == "/dev/null" {
		f.OldPath = ""
		f.Status = StatusAdded
	} else if o := stripPrefix(unquotePath(old)); o != "" && f.OldPath == "" {
		f.OldPath = o
	}
	if nw == "/dev/null" {
		f.NewPath = ""
		f.Status = StatusDeleted
	} else if n := stripPrefix(unquotePath(nw)); n != "" && f.NewPath == "" {
		f.NewPath = n
	}
}

// parseFileNames reads the "--- " and "+++ " lines at p.i.
func (p *diffParser) parseFileNames(f *FileDiff) {
	oldName := fileName(strings.TrimPrefix(p.lines[p.i], "--- "))
	p.i++
	if p.i >= len(p.lines) || !strings.HasPrefix(p.lines[p.i], "+++ ") {
		return
	}
	newName := fileName(strings.TrimPrefix(p.lines[p.i], "+++ "))
	p.i++
	if oldName == "/dev/null" {
		f.OldPath = ""
		f.Status = StatusAdded
	} else {
		f.OldPath = stripPrefix(oldName)
	}
	if newName == "/dev/null" {
		f.NewPath = ""
		f.Status = StatusDeleted
	} else {
		f.NewPath = stripPrefix(newName)
	}
}

func finishStatus(f *FileDiff) {
	if f.Status != "" {
		if f.Status == StatusAdded {
			f.OldPath = ""
		}
		if f.Status == StatusDeleted {
			f.NewPath = ""
		}
		return
	}
	switch {
	case f.OldPath == "" && f.NewPath != "":
		f.Status = StatusAdded
	case f.NewPath == "" && f.OldPath != "":
		f.Status = StatusDeleted
	default:
		f.Status = StatusModified
	}
}

// parseHunks reads the hunks of one file, starting at p.i.
func (p *diffParser) parseHunks(f *FileDiff) error {
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		if !strings.HasPrefix(line, "@@ ") {
			if strings.HasPrefix(line, "diff --git ") || strings.HasPrefix(line, "--- ") {
				return nil
			}
			if strings.HasPrefix(line, "Binary files ") {
				f.Binary = true
				p.binaryNames(f, line)
				p.i++
				continue
			}
			// Anything else between files (a commit message in `git log
			// -p`, trailing text): let the caller skip it.
			return nil
		}
		h, err := parseHunkHeader(line)
		if err != nil {
			return p.errorf("%v", err)
		}
		p.i++
		oldN, newN := h.OldStart, h.NewStart
		oldLeft, newLeft := h.OldLines, h.NewLines
		for (oldLeft > 0 || newLeft > 0) && p.i < len(p.lines) {
			l := p.lines[p.i]
			if l == "" {
				// Some tools strip the single space of an empty context line.
				l = " "
			}
			switch l[0] {
			case ' ':
				if oldLeft == 0 || newLeft == 0 {
					return p.errorf("context line beyond the hunk's line counts")
				}
				h.Lines = append(h.Lines, Line{Kind: LineContext, Text: l[1:], OldLine: oldN, NewLine: newN})
				oldN++
				newN++
				oldLeft--
				newLeft--
			case '-':
				if oldLeft == 0 {
					return p.errorf("removed line beyond the hunk's old line count")
				}
				h.Lines = append(h.Lines, Line{Kind: LineRemoved, Text: l[1:], OldLine: oldN})
				oldN++
				oldLeft--
			case '+':
				if newLeft == 0 {
					return p.errorf("added line beyond the hunk's new line count")
				}
				h.Lines = append(h.Lines, Line{Kind: LineAdded, Text: l[1:], NewLine: newN})
				newN++
				newLeft--
			case '\\':
				if n := len(h.Lines); n > 0 {
					h.Lines[n-1].NoNewline = true
				}
			default:
				f.Hunks = append(f.Hunks, h)
				return p.errorf("hunk ended early: %d old and %d new lines missing", oldLeft, newLeft)
			}
			p.i++
		}
		if oldLeft > 0 || newLeft > 0 {
			f.Hunks = append(f.Hunks, h)
			return &DiffError{Line: len(p.lines), Reason: fmt.Sprintf("diff ended inside a hunk: %d old and %d new lines missing", oldLeft, newLeft)}
		}
		// A "\ No newline at end of file" marker after the last line.
		if p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], `\`) {
			if n := len(h.Lines); n > 0 {
				h.Lines[n-1].NoNewline = true
			}
			p.i++
		}
		f.Hunks = append(f.Hunks, h)
	}
	return nil
}

// parseHunkHeader parses "@@ -a,b +c,d @@ section".
func parseHunkHeader(line string) (Hunk, error) {
	var h Hunk
	rest := strings.TrimPrefix(line, "@@ ")
	ranges, section, ok := strings.Cut(rest, " @@")
	if !ok {
		return h, fmt.Errorf("hunk header without closing @@")
	}
	h.Section = strings.TrimPrefix(section, " ")
	oldR, newR, ok := strings.Cut(ranges, " ")
	if !ok || !strings.HasPrefix(oldR, "-") || !strings.HasPrefix(newR, "+") {
		return h, fmt.Errorf("hunk header ranges are not \"-a,b +c,d\"")
	}
	var err error
	if h.OldStart, h.OldLines, err = parseRange(oldR[1:]); err != nil {
		return h, err
	}
	if h.NewStart, h.NewLines, err = parseRange(newR[1:]); err != nil {
		return h, err
	}
	return h, nil
}

// maxHunkLines bounds the line counts of a hunk header so a hostile diff
// cannot make the parser loop on numbers it will never see.
const maxHunkLines = 1 << 30

func parseRange(s string) (start, count int, err error) {
	startS, countS, hasCount := strings.Cut(s, ",")
	start, err = strconv.Atoi(startS)
	if err != nil || start < 0 || start > maxHunkLines {
		return 0, 0, fmt.Errorf("bad hunk start %q", startS)
	}
	count = 1
	if hasCount {
		count, err = strconv.Atoi(countS)
		if err != nil || count < 0 || count > maxHunkLines {
			return 0, 0, fmt.Errorf("bad hunk line count %q", countS)
		}
	}
	return start, count, nil
}

func parsePercent(s string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if err != nil || n < 0 || n > 100 {
		return 0
	}
	return n
}

// fileName strips the tab-separated timestamp plain diff adds and unquotes.
// git itself adds a tab after names that contain a space.
func fileName(s string) string {
	if strings.HasPrefix(s, `"`) {
		name, _ := cutQuoted(s)
		return name
	}
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, " ")
}

// stripPrefix removes the a/ or b/ (or c/, i/, w/, o/ of diff.mnemonicPrefix)
// prefix git puts on paths.
func stripPrefix(p string) string {
	if len(p) > 2 && p[1] == '/' && strings.IndexByte("abciwo", p[0]) >= 0 {
		return p[2:]
	}
	return p
}

// splitGitHeader splits "a/x b/x" of a "diff --git" line. Quoted paths are
// unquoted; for unquoted paths with spaces the two halves are assumed equal
// (the "rename"/"---" lines that follow correct it otherwise).
func splitGitHeader(s string) (string, string) {
	if strings.HasPrefix(s, `"`) {
		first, rest := cutQuoted(s)
		return stripPrefix(first), stripPrefix(unquotePath(strings.TrimSpace(rest)))
	}
	if i := strings.Index(s, ` "`); i >= 0 {
		return stripPrefix(s[:i]), stripPrefix(unquotePath(s[i+1:]))
	}
	// "a/P b/P": find the split where both halves name the same path.
	n := len(s)
	if n%2 == 1 {
		mid := n / 2
		if s[mid] == ' ' && stripPrefix(s[:mid]) == stripPrefix(s[mid+1:]) {
			return stripPrefix(s[:mid]), stripPrefix(s[mid+1:])
		}
	}
	if i := strings.Index(s, " b/"); i >= 0 {
		return stripPrefix(s[:i]), stripPrefix(s[i+1:])
	}
	old, nw, _ := strings.Cut(s, " ")
	return stripPrefix(old), stripPrefix(nw)
}

// cutQuoted returns the unquoted leading C-quoted string of s and the rest.
func cutQuoted(s string) (string, string) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return unquotePath(s[:i+1]), s[i+1:]
		}
	}
	return unquotePath(s), ""
}

// unquotePath undoes git's C-style quoting of unusual paths
// ("\"a/caf\\303\\251.txt\"").
func unquotePath(s string) string {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return s
	}
	s = s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3':
			if i+2 < len(s) {
				if n, err := strconv.ParseUint(s[i:i+3], 8, 8); err == nil {
					b.WriteByte(byte(n))
					i += 2
					continue
				}
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
