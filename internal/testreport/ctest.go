package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// CTest.
//
//	2/6 Test #2: sub_works ........................***Failed    0.00 sec
//	67% tests passed, 2 tests failed out of 6
//	The following tests did not run:
//		  6 - skipped_one (Skipped)
//	The following tests FAILED:
//		  2 - sub_works (Failed)
//
// Tests that did not run (skipped, disabled) are in the total but neither
// passed nor failed.

var (
	ctestSummaryRE = lazyre.New(`^\d+% tests passed, (\d+) tests? failed out of (\d+)`)
	ctestListRE    = lazyre.New(`^\s+\d+ - (.+?) \(([^)]*)\)\s*$`)
	ctestResultRE  = lazyre.New(`^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*(\*{3})?(\w+)`)
)

func parseCTest(lines []string) (run, bool) {
	var r run
	found := false
	list := ""
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
	notRun := 0
	for i, l := range lines {
		if !strings.Contains(l, "tests") && !strings.Contains(l, "Test") && !strings.HasPrefix(l, "\t") &&
			!strings.Contains(l, "Start ") {
			list = ""
			continue
		}
		if m := ctestSummaryRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			found = true
			list = ""
			r.closing = append(r.closing, l)
			r.failed += atoi(m[1])
			r.total += atoi(m[2])
			continue
		}
		switch {
		case strings.HasPrefix(l, "The following tests FAILED:"):
			list = "failed"
			r.closing = append(r.closing, l)
			continue
		case strings.HasPrefix(l, "The following tests did not run:"):
			list = "notrun"
			continue
		}
		if list != "" {
			if m := ctestListRE.FindStringSubmatch(l); m != nil {
				if list == "failed" {
					r.failing = append(r.failing, m[1])
					r.closing = append(r.closing, l)
				} else {
					notRun++
				}
				continue
			}
			list = ""
		}
		if m := ctestResultRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			switch {
			case m[2] == "" && m[3] == "Passed":
				r.passing = append(r.passing, m[1])
			case m[3] != "Skipped" && m[3] != "Not":
				heads = append(heads, head{m[1], i, -1}) // the status line says how it failed
			}
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(l), "Start ") {
			closeHead(i)
		}
	}
	if !found {
		return run{}, false
	}
	closeHead(len(lines))
	for _, h := range heads {
		r.details = append(r.details, detail{h.name, block(lines, h.start, h.end, maxBlock)})
	}
	r.skipped = notRun
	r.passed = r.total - r.failed - r.skipped
	return r, true
}
