package testreport

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Feedback condenses the output of a failing check into what the agent needs
// to act on, in at most max bytes of valid UTF-8 (the same input always gives
// the same text). It replaces the raw log in the next prompt, so it keeps, in
// this order of priority:
//
//  1. a header with the counts from s (or a note that no runner was
//     recognised);
//  2. compiler and build errors (Go, rustc, gcc/clang, javac/Maven, tsc,
//     C#, Kotlin, Python syntax/import errors, Elixir);
//  3. each failing test with the file:line of its failure and the first lines
//     of its assertion or error message; the rest by name only when space
//     runs out;
//  4. the runners' own closing lines;
//  5. the last lines of the output, and when no runner was recognised, the
//     lines that look like errors.
//
// Each part has a share of max, so 5 MB of passing-test noise cannot crowd out
// the failures.
func Feedback(output string, s Summary, max int) string {
	if max <= 0 {
		return ""
	}
	lines := prepare(output)
	runs := parseRuns(lines)

	details := map[string][]string{}
	var closing, runFailing []string
	for _, r := range runs {
		for _, d := range r.details {
			if _, dup := details[d.name]; !dup {
				details[d.name] = d.block
			}
		}
		closing = append(closing, r.closing...)
		runFailing = append(runFailing, r.failing...)
	}
	names := s.Failing
	if len(names) == 0 {
		names = sortedUnique(runFailing)
	}

	b := &budget{max: max}
	b.add(header(s), max)

	errs := compileErrors(lines, 40)
	if len(errs) > 0 {
		b.section("Compiler errors:", errs, max*35/100)
	}
	if len(names) > 0 {
		b.failing(names, details, max*55/100)
	}
	if len(closing) > 0 {
		b.section("Summary lines:", uniqueLines(closing, 20), max*10/100)
	}
	if !s.Known && len(runs) == 0 {
		var others []string
		for _, l := range errorLines(lines, 30+len(errs)) {
			if !slices.Contains(errs, l) {
				others = append(others, l)
			}
		}
		if len(others) > 0 {
			b.section("Lines that look like errors:", others, max*30/100)
		}
	}
	b.tail(lines, max-b.len())
	return b.String()
}

func header(s Summary) string {
	if !s.Known {
		return "Test results: no test runner output recognised; the exit code decides."
	}
	var parts []string
	if s.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", s.Failed))
	}
	parts = append(parts, fmt.Sprintf("%d passed", s.Passed))
	if s.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", s.Skipped))
	}
	parts = append(parts, fmt.Sprintf("%d total", s.Total))
	h := "Tests: " + strings.Join(parts, ", ")
	if s.Runner != "" {
		h += " (" + s.Runner + ")"
	}
	if s.Coverage != nil {
		h += fmt.Sprintf("; coverage %.1f%%", *s.Coverage)
	}
	return h
}

// budget builds the feedback text without ever exceeding max bytes.
type budget struct {
	max int
	sb  strings.Builder
}

func (b *budget) len() int       { return b.sb.Len() }
func (b *budget) String() string { return b.sb.String() }
func (b *budget) left() int      { return b.max - b.sb.Len() }

// add appends one line (truncated to limit and to what is left) and reports
// whether anything was written.
func (b *budget) add(line string, limit int) bool {
	room := min(limit, b.left()) - 1 // the newline
	if room <= 0 {
		return false
	}
	b.sb.WriteString(truncate(line, room))
	b.sb.WriteByte('\n')
	return true
}

// section writes a title and as many whole lines as fit in share bytes.
func (b *budget) section(title string, lines []string, share int) {
	share = min(share, b.left())
	if share < len(title)+40 || len(lines) == 0 {
		return
	}
	start := b.len()
	b.add("", share)
	b.add(title, share)
	shown := 0
	for _, l := range lines {
		used := b.len() - start
		if used+len(l)+3 > share {
			break
		}
		b.add("  "+l, share-used)
		shown++
	}
	if shown < len(lines) {
		b.add(fmt.Sprintf("  … %d more not shown", len(lines)-shown), share-(b.len()-start))
	}
}

// failing writes each failing test with its location and message excerpt,
// then the names of those that did not fit.
func (b *budget) failing(names []string, details map[string][]string, share int) {
	share = min(share, b.left())
	if share < 60 {
		return
	}
	start := b.len()
	used := func() int { return b.len() - start }
	b.add("", share)
	b.add(fmt.Sprintf("Failing tests (%d):", len(names)), share)
	per := min(max(share/len(names), 300), 1500)
	i := 0
	for ; i < len(names); i++ {
		loc, msg := excerpt(details[names[i]])
		entry := "- " + names[i]
		if loc != "" {
			entry += "  (" + loc + ")"
		}
		need := len(entry) + 1
		for _, m := range msg {
			need += len(m) + 5
		}
		limit := min(per, share-used())
		if limit < min(need, 200) {
			break
		}
		entryStart := b.len()
		b.add(entry, limit)
		for _, m := range msg {
			if !b.add("    "+m, limit-(b.len()-entryStart)) {
				break
			}
		}
	}
	if i == len(names) {
		return
	}
	rest := fmt.Sprintf("- %d more failing: ", len(names)-i)
	for j := i; j < len(names); j++ {
		add := names[j]
		if j > i {
			add = ", " + add
		}
		if used()+len(rest)+len(add)+3 > share {
			rest += ", …"
			break
		}
		rest += add
	}
	b.add(rest, share-used())
}

// tail writes the last lines of the output that fit in share bytes.
func (b *budget) tail(lines []string, share int) {
	share = min(share, b.left())
	const title = "Last lines of output:"
	if share < len(title)+40 {
		return
	}
	var picked []string
	size := len(title) + 2
	for i := len(lines) - 1; i >= 0 && len(picked) < 40; i-- {
		l := strings.TrimRight(lines[i], " \t")
		if strings.TrimSpace(l) == "" {
			continue
		}
		l = truncate(l, 300)
		if size+len(l)+3 > share {
			break
		}
		size += len(l) + 3
		picked = append(picked, l)
	}
	if len(picked) == 0 {
		return
	}
	b.add("", share)
	b.add(title, share)
	for i := len(picked) - 1; i >= 0; i-- {
		b.add("  "+picked[i], b.left())
	}
}

var (
	noiseRE = lazyre.New(`^\s*(?:at |\d+: |goroutine \d+ \[|stack backtrace:|note: (?:run with|Some details)|Traceback \(most recent call last\)|File ".*", line \d+|\d+\s*\||\d+\|)` +
		`|^\s*(?:Error Message|Stack Trace|Standard Output Messages|Standard Error Messages):\s*$|\+0x[0-9a-f]+$|\(0x[0-9a-f]+|\{0x[0-9a-f]+|^[\s\-=_⎯─│|~^*]*$`)
	// stopRE marks where a stack dump starts: nothing after it is message.
	stopRE      = lazyre.New(`^goroutine \d+ \[|^\s*stack backtrace:`)
	codeFrameRE = lazyre.New(`^\s*>\s*\d+\s*\|`)
	keyRE       = lazyre.New(`(?i)error|assert|expect|fail|panic|exception|want|got|mismatch|not equal|!==?|undefined|cannot|unable|timed? ?out|refused|denied|differ|received`)
)

// excerpt picks the location and the message lines of a failure block: the
// most useful file:line, and up to six lines starting just before the first
// line that reads like an assertion or error, without stack frames, code
// frame context or separators.
func excerpt(block []string) (loc string, msg []string) {
	if len(block) == 0 {
		return "", nil
	}
	loc = bestLocation(block)
	var kept []string
	for _, l := range block {
		if stopRE.MatchString(l) {
			break
		}
		if codeFrameRE.MatchString(l) {
			kept = append(kept, strings.TrimSpace(l))
			continue
		}
		if noiseRE.MatchString(l) || isLibraryLine(l) {
			continue
		}
		kept = append(kept, strings.TrimSpace(l))
		if len(kept) >= 40 {
			break
		}
	}
	k := 0
	for i, l := range kept {
		if keyRE.MatchString(l) {
			k = max(i-1, 0)
			break
		}
	}
	kept = kept[k:]
	if len(kept) > 6 {
		kept = kept[:6]
	}
	for i := range kept {
		kept[i] = truncate(kept[i], 240)
	}
	return loc, kept
}

var compileRE = []*lazyre.Regexp{
	lazyre.New(`^(?:\./)?[\w./\\-]+\.go:\d+:\d+: \S.*`),                                                // Go
	lazyre.New(`^[\w./\\-]+\.\w+:\d+:\d+: (?:fatal )?error: .+`),                                       // gcc, clang, swiftc
	lazyre.New(`^[\w./\\-]+\.java:\d+: error: .+`),                                                     // javac
	lazyre.New(`^\[ERROR\] \S+\.(?:java|kt|scala|groovy):\[\d+,\d+\] .+`),                              // Maven
	lazyre.New(`^[\w./\\-]+\.tsx?(?:\(\d+,\d+\): | ?:\d+:\d+ - )error TS\d+: .+`),                      // tsc
	lazyre.New(`^\S+\.cs\(\d+,\d+\): error CS\d+: .+`),                                                 // C#
	lazyre.New(`^e: \S+\.kts?:.+`),                                                                     // Kotlin
	lazyre.New(`^\s*(?:SyntaxError|IndentationError|TabError|ImportError|ModuleNotFoundError): .+`),    // Python
	lazyre.New(`^\*\* \((?:CompileError|SyntaxError|TokenMissingError|MismatchedDelimiterError)\) .+`), // Elixir
}

var (
	rustErrorRE = lazyre.New(`^error(?:\[E\d+\])?: .+`)
	rustLocRE   = lazyre.New(`^\s*--> (\S+)`)
	rustSkipRE  = lazyre.New(`^error: (?:could not compile|test failed|test run failed|no tests to run|build failed|aborting|\d+ targets? failed|Recipe|failed to|process didn't exit)`)
)

// compileErrors returns the build/compile error lines, in order, without
// repeats (Maven and cargo print some twice), at most limit of them.
func compileErrors(lines []string, limit int) []string {
	var out []string
	seen := map[string]bool{}
	add := func(l string) bool {
		l = truncate(strings.TrimSpace(l), 300)
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
		return len(out) >= limit
	}
	for i, l := range lines {
		if strings.HasPrefix(l, `{"`) && strings.Contains(l, `"Action":"build-output"`) {
			var e goEvent
			if json.Unmarshal([]byte(l), &e) == nil {
				l = strings.TrimRight(e.Output, "\n")
			}
		}
		if len(l) < 8 || !strings.Contains(l, "rror") && !strings.Contains(l, "RROR") && !strings.Contains(l, ".go:") && !strings.HasPrefix(l, "e: ") {
			continue
		}
		if rustErrorRE.MatchString(l) && !rustSkipRE.MatchString(l) {
			for j := i + 1; j < len(lines) && j <= i+3; j++ {
				if m := rustLocRE.FindStringSubmatch(lines[j]); m != nil {
					l += " --> " + m[1]
					break
				}
			}
			if add(l) {
				break
			}
			continue
		}
		for _, re := range compileRE {
			if re.MatchString(l) {
				if add(l) {
					return out
				}
				break
			}
		}
	}
	return out
}

var errorLineRE = lazyre.New(`(?i)\b(?:error|fail(?:ed|ure)?|fatal|panic|exception|traceback|assert(?:ion)?|segmentation fault|abort(?:ed)?)\b`)

// errorLines returns lines that read like errors, without repeats, when no
// runner was recognised.
func errorLines(lines []string, limit int) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lines {
		if !errorLineRE.MatchString(l) {
			continue
		}
		l = truncate(strings.TrimSpace(l), 300)
		if seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
		if len(out) >= limit {
			break
		}
	}
	return out
}

func uniqueLines(lines []string, limit int) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
		if len(out) >= limit {
			break
		}
	}
	return out
}
