package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// node --test with the spec reporter (the TAP reporter is read by tap.go).
//
//	▶ div
//	  ✔ divides (0.36ms)
//	  ✖ throws on zero (0.37ms)
//	    Error: division by zero
//	✖ div (1.17ms)
//	ℹ tests 6
//	ℹ pass 2
//	ℹ fail 2
//
// Nested tests are named "suite > test". Cancelled tests count as failed,
// todo tests as skipped.

var (
	nodeCountRE = lazyre.New(`^ℹ (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)\s*$`)
	nodeMarkRE  = lazyre.New(`^(\s*)(✔|✖|﹣|▶) (.+?)(?: \([\d.]+m?s\))?(?: # .*)?$`)
)

func parseNodeSpec(lines []string) (run, bool) {
	var r run
	found := false
	var stack []nameAt
	listing := true
	type head struct {
		name       string
		start, end int
		indent     int
	}
	var heads []head
	for i, l := range lines {
		if !strings.HasPrefix(l, "ℹ ") && !strings.Contains(l, "✔") && !strings.Contains(l, "✖") &&
			!strings.Contains(l, "﹣") && !strings.Contains(l, "▶") {
			continue
		}
		if m := nodeCountRE.FindStringSubmatch(l); m != nil {
			found = true
			listing = false
			n := atoi(m[2])
			switch m[1] {
			case "tests":
				r.total += n
				r.closing = append(r.closing, l)
			case "pass":
				r.passed += n
				r.closing = append(r.closing, l)
			case "fail", "cancelled":
				r.failed += n
				r.closing = append(r.closing, l)
			case "skipped", "todo":
				r.skipped += n
			}
			continue
		}
		if strings.HasPrefix(l, "✖ failing tests:") {
			listing = false
			continue
		}
		if !listing {
			if strings.HasPrefix(l, "✔ ") || strings.HasPrefix(l, "▶ ") {
				listing = true // a second run of node --test
				stack = stack[:0]
			} else {
				continue
			}
		}
		m := nodeMarkRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		d, mark, title := len(m[1]), m[2], m[3]
		if n := len(heads); n > 0 && heads[n-1].end < 0 && d <= heads[n-1].indent {
			heads[n-1].end = i
		}
		if mark == "▶" {
			stack = append(popTo(stack, d), nameAt{d, title})
			continue
		}
		// A ✔/✖ at a suite's own indentation with its title closes it.
		if n := len(stack); n > 0 && stack[n-1].indent == d && stack[n-1].name == title {
			stack = stack[:n-1]
			continue
		}
		stack = popTo(stack, d)
		name := joinNames(stack, title, " > ")
		switch mark {
		case "✔":
			if !strings.HasSuffix(l, "# TODO") {
				r.passing = append(r.passing, name)
			}
		case "✖":
			heads = append(heads, head{name, i + 1, -1, d})
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
			if nodeCountRE.MatchString(lines[j]) {
				end = j
				break
			}
		}
		r.failing = append(r.failing, h.name)
		r.details = append(r.details, detail{h.name, block(lines, h.start, end, maxBlock)})
	}
	return r, true
}
