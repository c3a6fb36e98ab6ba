package testreport

import (
	"slices"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// RSpec, progress and documentation formatters.
//
//	Failures:
//	  1) Calc subtracts numbers
//	     Failure/Error: expect(Calc.sub(5, 3)).to eq(2)
//	6 examples, 2 failures, 2 pending
//	rspec ./spec/calc_spec.rb:8 # Calc subtracts numbers
//
// Pending examples count as skipped; errors outside examples (a spec file
// that does not load) count as failures.

var (
	rspecSummaryRE = lazyre.New(`^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?\s*$`)
	rspecRerunRE   = lazyre.New(`^rspec (\S+) # (.+)$`)
	rspecHeadRE    = lazyre.New(`^  (\d+)\) (.+)$`)
)

func parseRSpec(lines []string) (run, bool) {
	var r run
	found := false
	type head struct {
		name       string
		start, end int
	}
	var heads []head
	section := ""
	for i, l := range lines {
		if l == "" || l[0] == ' ' && !strings.HasPrefix(l, "  ") {
			continue
		}
		if m := rspecSummaryRE.FindStringSubmatch(l); m != nil {
			found = true
			r.closing = append(r.closing, l)
			outside := atoi(m[4])
			r.total += atoi(m[1]) + outside
			r.failed += atoi(m[2]) + outside
			r.skipped += atoi(m[3])
			section = ""
			continue
		}
		switch l {
		case "Failures:", "Pending: (Failures listed here are expected and do not affect your suite's status)":
			section = l
			continue
		case "Failed examples:":
			section = l
		}
		if strings.HasPrefix(l, "Finished in ") {
			section = ""
		}
		if m := rspecRerunRE.FindStringSubmatch(l); m != nil {
			r.failing = append(r.failing, m[2])
			continue
		}
		if section == "Failures:" {
			if m := rspecHeadRE.FindStringSubmatch(l); m != nil {
				if n := len(heads); n > 0 && heads[n-1].end < 0 {
					heads[n-1].end = i
				}
				heads = append(heads, head{m[2], i + 1, -1})
			}
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
		for j := h.start; j < end; j++ {
			if strings.HasPrefix(lines[j], "Finished in ") {
				end = j
				break
			}
		}
		r.details = append(r.details, detail{h.name, block(lines, h.start, end, maxBlock)})
		if !slices.Contains(r.failing, h.name) {
			r.failing = append(r.failing, h.name)
		}
	}
	r.passed = r.total - r.failed - r.skipped
	return r, true
}
