package testreport

import "github.com/aiwg/agent-loop/internal/lazyre"

// Ruby's minitest.
//
//	  1) Failure:
//	CalcTest#test_sub [calc_test.rb:15]:
//	Expected: 2
//	4 runs, 2 assertions, 1 failures, 1 errors, 1 skips
//
// Errors count as failures.

var (
	minitestSummaryRE = lazyre.New(`^(\d+) (?:runs|tests), (\d+) assertions, (\d+) failures, (\d+) errors, (\d+) skips\s*$`)
	minitestHeadRE    = lazyre.New(`^\s+\d+\) (Failure|Error):\s*$`)
	minitestNameRE    = lazyre.New(`^(\S+?#\S+?)(?: \[.+\])?:\s*$`)
)

func parseMinitest(lines []string) (run, bool) {
	var r run
	found := false
	type head struct {
		name       string
		start, end int
	}
	var heads []head
	for i, l := range lines {
		if m := minitestSummaryRE.FindStringSubmatch(l); m != nil {
			found = true
			r.closing = append(r.closing, l)
			r.total += atoi(m[1])
			r.failed += atoi(m[3]) + atoi(m[4])
			r.skipped += atoi(m[5])
			if n := len(heads); n > 0 && heads[n-1].end < 0 {
				heads[n-1].end = i
			}
			continue
		}
		if minitestHeadRE.MatchString(l) && i+1 < len(lines) {
			m := minitestNameRE.FindStringSubmatch(lines[i+1])
			if m == nil {
				continue
			}
			if n := len(heads); n > 0 && heads[n-1].end < 0 {
				heads[n-1].end = i
			}
			// The name line keeps its [file:line] for the excerpt.
			heads = append(heads, head{m[1], i + 1, -1})
		}
	}
	if !found {
		return run{}, false
	}
	for _, h := range heads {
		end := h.end
		if end < 0 {
			end = len(lines)
		}
		r.failing = append(r.failing, h.name)
		r.details = append(r.details, detail{h.name, block(lines, h.start, end, maxBlock)})
	}
	r.passed = r.total - r.failed - r.skipped
	return r, true
}
