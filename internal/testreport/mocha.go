package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Mocha, spec reporter (the default).
//
//	  2 passing (4ms)
//	  2 pending
//	  2 failing
//
//	  1) calc
//	       subtracts numbers:
//	     AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
//
// Test names are Mocha's full titles: suite titles and the test title joined
// by spaces ("calc subtracts numbers").

var (
	mochaCountRE = lazyre.New(`^\s*(\d+) (passing|pending|failing)\b`)
	mochaHeadRE  = lazyre.New(`^\s+(\d+)\) (.+)$`)
	mochaPassRE  = lazyre.New(`^(\s+)(?:✔|✓) (.+?)(?: \(\d+ms\))?$`)
	mochaTestRE  = lazyre.New(`^(\s+)(?:\d+\)|-) `)
)

func parseMocha(lines []string) (run, bool) {
	var r run
	found := false
	failingAt := -1
	var stack []nameAt
	for i, l := range lines {
		hasCount := strings.Contains(l, " passing") || strings.Contains(l, " pending") || strings.Contains(l, " failing")
		if m := matchIf(hasCount, mochaCountRE, l); m != nil {
			found = true
			r.closing = append(r.closing, strings.TrimSpace(l))
			n := atoi(m[1])
			switch m[2] {
			case "passing":
				r.passed += n
			case "pending":
				r.skipped += n
			case "failing":
				r.failed += n
				failingAt = i
			}
			continue
		}
		if failingAt >= 0 {
			continue
		}
		hasMark := strings.Contains(l, "✔") || strings.Contains(l, "✓")
		if m := matchIf(hasMark, mochaPassRE, l); m != nil {
			d := len(m[1])
			stack = popTo(stack, d)
			r.passing = append(r.passing, joinNames(stack, m[2], " "))
			continue
		}
		if mochaTestRE.MatchString(l) {
			stack = popTo(stack, indentOf(l))
			continue
		}
		if d := indentOf(l); d > 0 && strings.TrimSpace(l) != "" {
			stack = append(popTo(stack, d), nameAt{d, strings.TrimSpace(l)})
		} else if strings.TrimSpace(l) == "" {
			continue
		} else {
			stack = stack[:0]
		}
	}
	if !found {
		return run{}, false
	}
	if failingAt >= 0 {
		parseMochaFailures(lines[failingAt+1:], &r)
	}
	return r, true
}

// parseMochaFailures reads the numbered failure list after "N failing".
func parseMochaFailures(lines []string, r *run) {
	type head struct {
		name       string
		start, end int
	}
	var heads []head
	for i := 0; i < len(lines); i++ {
		m := mochaHeadRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		parts := []string{strings.TrimSpace(m[2])}
		base := indentOf(lines[i])
		j := i
		for !strings.HasSuffix(parts[len(parts)-1], ":") && j+1 < len(lines) && indentOf(lines[j+1]) > base &&
			strings.TrimSpace(lines[j+1]) != "" && j-i < 20 {
			j++
			parts = append(parts, strings.TrimSpace(lines[j]))
		}
		name := strings.TrimSuffix(strings.Join(parts, " "), ":")
		if n := len(heads); n > 0 {
			heads[n-1].end = i
		}
		heads = append(heads, head{name, j + 1, len(lines)})
		i = j
	}
	for _, h := range heads {
		r.failing = append(r.failing, h.name)
		r.details = append(r.details, detail{h.name, block(lines, h.start, h.end, maxBlock)})
	}
}
