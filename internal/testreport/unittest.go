package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Python's unittest (python -m unittest, Django's runner, ...).
//
//	FAIL: test_sub (tests.test_calc.CalcTest.test_sub)
//	----------------------------------------------------------------------
//	Ran 7 tests in 0.001s
//
//	FAILED (failures=3, errors=1, skipped=1, expected failures=1)
//
// A test whose subtests fail is one failing test. Expected failures count as
// skipped, unexpected successes as failures.

var (
	unittestRanRE    = lazyre.New(`^Ran (\d+) tests? in [\d.]+s`)
	unittestResultRE = lazyre.New(`^(OK|FAILED|PASSED|NO TESTS RAN)(?: \((.*)\))?\s*$`)
	unittestKVRE     = lazyre.New(`([a-z ]+)=(\d+)`)
	unittestHeadRE   = lazyre.New(`^(FAIL|ERROR|UNEXPECTED SUCCESS): (\S+) \(([^)]+)\)`)
	unittestVerbRE   = lazyre.New(`^(\S+) \(([^)]+)\)(?: \([^)]*\))? \.\.\. (ok|FAIL|ERROR|skipped|expected failure|unexpected success)`)
)

func parseUnittest(lines []string) (run, bool) {
	var r run
	found := false
	counted := 0 // failures+errors+unexpected successes from the result lines
	type head struct {
		name  string
		start int
	}
	var heads []head
	for i, l := range lines {
		if !strings.HasPrefix(l, "Ran ") && !strings.HasPrefix(l, "FAIL: ") && !strings.HasPrefix(l, "ERROR: ") &&
			!strings.HasPrefix(l, "UNEXPECTED SUCCESS: ") && !strings.Contains(l, " ... ") {
			continue
		}
		if m := unittestRanRE.FindStringSubmatch(l); m != nil {
			// The verdict follows on the next non-blank line.
			for j := i + 1; j < len(lines) && j <= i+3; j++ {
				v := unittestResultRE.FindStringSubmatch(lines[j])
				if v == nil {
					continue
				}
				found = true
				r.total += atoi(m[1])
				r.closing = append(r.closing, l, lines[j])
				for _, kv := range unittestKVRE.FindAllStringSubmatch(v[2], -1) {
					n := atoi(kv[2])
					switch strings.TrimSpace(kv[1]) {
					case "failures", "errors", "unexpected successes":
						counted += n
					case "skipped", "expected failures":
						r.skipped += n
					}
				}
				break
			}
			continue
		}
		if m := unittestHeadRE.FindStringSubmatch(l); m != nil {
			heads = append(heads, head{unittestName(m[2], m[3]), i + 1})
			continue
		}
		if m := unittestVerbRE.FindStringSubmatch(l); m != nil && m[3] == "ok" {
			r.passing = append(r.passing, unittestName(m[1], m[2]))
		}
	}
	if !found {
		return run{}, false
	}
	for _, h := range heads {
		end := len(lines)
		for j := h.start; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "======") || unittestRanRE.MatchString(lines[j]) {
				end = j
				break
			}
		}
		r.failing = append(r.failing, h.name)
		r.details = append(r.details, detail{h.name, block(lines, h.start, end, maxBlock)})
	}
	distinct := len(sortedUnique(r.failing))
	switch {
	case distinct > 0:
		r.failed = distinct
	default:
		r.failed = min(counted, r.total)
	}
	r.skipped = min(r.skipped, r.total-r.failed)
	r.passed = r.total - r.failed - r.skipped
	return r, true
}

// unittestName builds a dotted test id from "test_x (mod.Class.test_x)"
// (Python 3.11+) or "test_x (mod.Class)" (older).
func unittestName(method, inner string) string {
	if inner == method || strings.HasSuffix(inner, "."+method) {
		return inner
	}
	return inner + "." + method
}
