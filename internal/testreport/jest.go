package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Jest, default and --verbose output.
//
//	FAIL jesttests/calc.test.js
//	  ● calc › subtracts numbers
//	Test Suites: 1 failed, 1 passed, 2 total
//	Tests:       2 failed, 1 skipped, 1 todo, 3 passed, 7 total
//
// Todo tests count as skipped. A suite that fails to run (syntax error,
// missing module) has no test in the counts: it is counted as one failed test
// named "<file> › Test suite failed to run" so the run never reads as green.

var (
	jestTestsRE  = lazyre.New(`^Tests:\s+(.*\d+ total)`)
	jestSuitesRE = lazyre.New(`^Test Suites:\s+(.*\d+ total)`)
	jestCountRE  = lazyre.New(`(\d+) ([a-z]+)`)
	jestFileRE   = lazyre.New(`^(PASS|FAIL) (\S+)`)
	jestHeadRE   = lazyre.New(`^  ● (.+)$`)
	jestMarkRE   = lazyre.New(`^(\s+)(✓|√|✕|×|○|✎) (?:skipped |todo )?(.+?)(?: \(\d+(?:\.\d+)? m?s\))?$`)
)

func parseJest(lines []string) (run, bool) {
	var r run
	found := false
	file := ""
	var suiteFailures []string
	type head struct {
		name  string
		start int
	}
	var heads []head
	var stack []nameAt
	inListing := false
	for i, l := range lines {
		if !inListing && !strings.HasPrefix(l, "Test") && !strings.HasPrefix(l, "PASS ") && !strings.HasPrefix(l, "FAIL ") &&
			!strings.HasPrefix(l, "  ● ") {
			continue
		}
		if m := jestTestsRE.FindStringSubmatch(l); m != nil {
			found = true
			r.closing = append(r.closing, l)
			for _, c := range jestCountRE.FindAllStringSubmatch(m[1], -1) {
				n := atoi(c[1])
				switch c[2] {
				case "failed":
					r.failed += n
				case "passed":
					r.passed += n
				case "skipped", "todo", "pending":
					r.skipped += n
				case "total":
					r.total += n
				}
			}
			continue
		}
		if jestSuitesRE.MatchString(l) {
			r.closing = append(r.closing, l)
			continue
		}
		if m := jestFileRE.FindStringSubmatch(l); m != nil {
			file = m[2]
			stack, inListing = stack[:0], true
			continue
		}
		if m := jestHeadRE.FindStringSubmatch(l); m != nil {
			inListing = false
			name := m[1]
			if name == "Console" {
				continue
			}
			if name == "Test suite failed to run" {
				name = file + " › " + name
				suiteFailures = append(suiteFailures, name)
			}
			heads = append(heads, head{name, i + 1})
			continue
		}
		if !inListing {
			continue
		}
		if strings.TrimSpace(l) == "" {
			inListing = false
			continue
		}
		if m := jestMarkRE.FindStringSubmatch(l); m != nil {
			d := len(m[1])
			stack = popTo(stack, d)
			name := joinNames(stack, m[3], " › ")
			switch m[2] {
			case "✓", "√":
				r.passing = append(r.passing, name)
			case "✕", "×":
				r.failing = append(r.failing, name)
			}
			continue
		}
		if d := indentOf(l); d > 0 {
			stack = append(popTo(stack, d), nameAt{d, strings.TrimSpace(l)})
		}
	}
	if !found {
		return run{}, false
	}
	for k, h := range heads {
		end := len(lines)
		if k+1 < len(heads) {
			end = heads[k+1].start - 1
		}
		for j := h.start; j < end; j++ {
			if jestFileRE.MatchString(lines[j]) || jestSuitesRE.MatchString(lines[j]) ||
				strings.HasPrefix(lines[j], "Summary of all failing tests") {
				end = j
				break
			}
		}
		r.failing = append(r.failing, h.name)
		r.details = append(r.details, detail{h.name, block(lines, h.start, end, maxBlock)})
	}
	if r.failed == 0 && len(suiteFailures) > 0 {
		r.failed = len(sortedUnique(suiteFailures))
		r.total += r.failed
	}
	return r, true
}

// nameAt is one enclosing suite of a nested listing, at its indentation.
type nameAt struct {
	indent int
	name   string
}

// popTo drops the suites at indentation d or deeper.
func popTo(stack []nameAt, d int) []nameAt {
	for len(stack) > 0 && stack[len(stack)-1].indent >= d {
		stack = stack[:len(stack)-1]
	}
	return stack
}

// joinNames joins the enclosing suite names and a test title.
func joinNames(stack []nameAt, title, sep string) string {
	if len(stack) == 0 {
		return title
	}
	parts := make([]string, 0, len(stack)+1)
	for _, s := range stack {
		parts = append(parts, s.name)
	}
	return strings.Join(append(parts, title), sep)
}
