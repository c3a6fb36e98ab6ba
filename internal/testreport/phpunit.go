package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// PHPUnit (9 and 10).
//
//	There were 2 failures:
//
//	1) CalcTest::testSub
//	Failed asserting that 3 is identical to 2.
//
//	/tmp/php/tests/CalcTest.php:13
//
//	Tests: 9, Assertions: 6, Errors: 1, Failures: 2, Skipped: 1, Incomplete: 1.
//	OK (2 tests, 2 assertions)
//
// Errors count as failures, incomplete tests as skipped.

var (
	phpunitOKRE      = lazyre.New(`^OK \((\d+) tests?, (\d+) assertions?\)\s*$`)
	phpunitTestsRE   = lazyre.New(`^Tests: (\d+), Assertions: \d+(.*)$`)
	phpunitKVRE      = lazyre.New(`([A-Za-z ]+): (\d+)`)
	phpunitSectionRE = lazyre.New(`^There (?:was|were) \d+ ([a-z ]+?):\s*$`)
	phpunitDoxRE     = lazyre.New(`^ ([✔✘↩∅☢]) (.+)$`)
	phpunitHeadRE    = lazyre.New(`^(\d+)\) (\S+::\S+?(?: with data set (?:"[^"]*"|#\d+))?)(?: \(.*\))?\s*$`)
)

func parsePHPUnit(lines []string) (run, bool) {
	var r run
	found := false
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
	failSection := false
	class := "" // --testdox: the class heading above its tests
	dox := false
	for i, l := range lines {
		if l == "" || l[0] == ' ' && !strings.HasPrefix(l, " ✔") && !strings.HasPrefix(l, " ✘") &&
			!strings.HasPrefix(l, " ↩") && !strings.HasPrefix(l, " ∅") && !strings.HasPrefix(l, " ☢") {
			if dox && strings.TrimSpace(l) == "" {
				closeHead(i)
				dox = false
			}
			continue
		}
		if dox && strings.TrimSpace(l) == "" {
			closeHead(i)
			dox = false
		}
		if m := phpunitDoxRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			name := joinNames([]nameAt{{0, class}}, m[2], " > ")
			switch m[1] {
			case "✔":
				r.passing = append(r.passing, name)
			case "✘":
				heads = append(heads, head{name, i + 1, -1})
				dox = true
			}
			continue
		}
		if l != "" && l[0] != ' ' && !strings.Contains(l, ":") && !strings.Contains(l, " ") {
			class = l
		}
		if m := phpunitOKRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			found = true
			r.closing = append(r.closing, l)
			r.total += atoi(m[1])
			r.passed += atoi(m[1])
			continue
		}
		if m := phpunitTestsRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			found = true
			r.closing = append(r.closing, l)
			total := atoi(m[1])
			failed, skipped := 0, 0
			for _, kv := range phpunitKVRE.FindAllStringSubmatch(m[2], -1) {
				n := atoi(kv[2])
				switch strings.TrimSpace(kv[1]) {
				case "Errors", "Failures":
					failed += n
				case "Skipped", "Incomplete":
					skipped += n
				}
			}
			r.total += total
			r.failed += failed
			r.skipped += skipped
			r.passed += max(total-failed-skipped, 0)
			continue
		}
		if m := phpunitSectionRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			kind := m[1]
			failSection = strings.HasPrefix(kind, "error") || strings.HasPrefix(kind, "failure")
			continue
		}
		if l == "--" || l == "FAILURES!" || l == "ERRORS!" {
			closeHead(i)
			continue
		}
		if !failSection {
			continue
		}
		if m := phpunitHeadRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			heads = append(heads, head{m[2], i + 1, -1})
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
	return r, true
}
