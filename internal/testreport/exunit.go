package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Elixir's ExUnit (mix test).
//
//	  1) test subtracts numbers (CalcTest)
//	     test/calc_test.exs:8
//	     Assertion with == failed
//	5 tests, 2 failures, 1 skipped
//	1 doctest, 5 tests, 0 failures, 4 excluded
//
// Doctests and properties add to the total; skipped and excluded tests count
// as skipped, invalid tests (a failing setup_all) as failures.

var (
	exunitSummaryRE = lazyre.New(`^((?:\d+ (?:doctests?|propert(?:y|ies)|tests?), )+)?(\d+) failures?((?:, \d+ (?:excluded|skipped|invalid))*)\s*(?:\(.*\))?\s*$`)
	exunitPartRE    = lazyre.New(`(\d+) (\w+)`)
	exunitHeadRE    = lazyre.New(`^  \d+\) ((?:test|doctest|property) .+ \(.+\))\s*$`)
)

func parseExUnit(lines []string) (run, bool) {
	var r run
	found := false
	finished := false
	type head struct {
		name       string
		start, end int
	}
	var heads []head
	closeHead := func(i int) {
		if n := len(heads); n > 0 && heads[n-1].end < 0 {
			heads[n-1].end = i
		}
	}
	for i, l := range lines {
		if !strings.Contains(l, " failure") && !strings.HasPrefix(l, "Finished in ") && !strings.HasPrefix(l, "  ") {
			continue
		}
		if strings.HasPrefix(l, "Finished in ") {
			closeHead(i)
			finished = true
			continue
		}
		if m := exunitSummaryRE.FindStringSubmatch(l); m != nil && finished && m[1] != "" {
			found, finished = true, false
			r.closing = append(r.closing, l)
			for _, p := range exunitPartRE.FindAllStringSubmatch(m[1], -1) {
				r.total += atoi(p[1])
			}
			r.failed += atoi(m[2])
			for _, p := range exunitPartRE.FindAllStringSubmatch(m[3], -1) {
				switch p[2] {
				case "invalid":
					r.failed += atoi(p[1])
				default:
					r.skipped += atoi(p[1])
				}
			}
			continue
		}
		if m := exunitHeadRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			heads = append(heads, head{m[1], i + 1, -1})
		}
	}
	if !found {
		return run{}, false
	}
	closeHead(len(lines))
	for _, h := range heads {
		r.failing = append(r.failing, h.name)
		r.details = append(r.details, detail{h.name, block(lines, h.start, h.end, maxBlock)})
	}
	r.passed = r.total - r.failed - r.skipped
	return r, true
}
