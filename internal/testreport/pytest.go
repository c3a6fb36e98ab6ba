package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// pytest, default, -q and -v output.
//
//	FAILED tests/test_py.py::test_sub - assert 3 == 2
//	ERROR tests/test_py.py::test_uses_broken - RuntimeError: fixture exploded
//	==== 5 failed, 2 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.03s =====
//
// Errors count as failures, xpassed as passed, xfailed as skipped.

var (
	pytestSummaryRE = lazyre.New(`^=*\s*((?:\d+ [a-z]+(?:, )?)+|no tests ran) in [\d.]+ ?s(?:econds)?(?: \([\d:.]+\))?\s*=*$`)
	pytestCountRE   = lazyre.New(`(\d+) ([a-z]+)`)
	pytestShortRE   = lazyre.New(`^(FAILED|ERROR) (\S+)(?: - .*)?$`)
	pytestVerbRE    = lazyre.New(`^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b`)
	pytestXdistRE   = lazyre.New(`^\[gw\d+\] \[\s*\d+%\] (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+::\S+)`)
	pytestSectionRE = lazyre.New(`^_{3,} (.+?) _{3,}$`)
	pytestHeaderRE  = lazyre.New(`^={3,} .+ ={3,}$`)
)

func parsePytest(lines []string) (run, bool) {
	var r run
	found := false
	type section struct {
		name       string
		start, end int
	}
	var sections []section
	inFailures := false
	for i, l := range lines {
		if strings.HasPrefix(l, "===") && pytestHeaderRE.MatchString(l) {
			if n := len(sections); n > 0 && sections[n-1].end < 0 {
				sections[n-1].end = i
			}
			inFailures = strings.Contains(l, " FAILURES ") || strings.Contains(l, " ERRORS ")
		}
		if !strings.Contains(l, " in ") && !strings.Contains(l, "::") && !strings.HasPrefix(l, "___") &&
			!strings.HasPrefix(l, "[gw") && !strings.HasPrefix(l, "FAILED ") && !strings.HasPrefix(l, "ERROR ") {
			continue
		}
		if m := pytestSummaryRE.FindStringSubmatch(l); m != nil {
			found = true
			r.closing = append(r.closing, l)
			for _, c := range pytestCountRE.FindAllStringSubmatch(m[1], -1) {
				n := atoi(c[1])
				switch c[2] {
				case "passed", "xpassed":
					r.passed += n
				case "failed", "error", "errors":
					r.failed += n
				case "skipped", "xfailed":
					r.skipped += n
				}
			}
			continue
		}
		if inFailures {
			if m := pytestSectionRE.FindStringSubmatch(l); m != nil {
				if n := len(sections); n > 0 && sections[n-1].end < 0 {
					sections[n-1].end = i
				}
				sections = append(sections, section{m[1], i + 1, -1})
				continue
			}
		}
		if m := pytestShortRE.FindStringSubmatch(l); m != nil {
			r.failing = append(r.failing, m[2])
			continue
		}
		if m := pytestVerbRE.FindStringSubmatch(l); m != nil {
			pytestVerdict(&r, m[1], m[2])
			continue
		}
		if m := pytestXdistRE.FindStringSubmatch(l); m != nil {
			pytestVerdict(&r, m[2], m[1])
		}
	}
	if !found {
		return run{}, false
	}
	if n := len(sections); n > 0 && sections[n-1].end < 0 {
		sections[n-1].end = len(lines)
	}
	// Section titles are short names ("TestDiv.test_div_zero", "ERROR at
	// setup of test_x", "ERROR collecting path"); map them to node ids.
	byShort := map[string]string{}
	for _, id := range r.failing {
		if _, rest, ok := strings.Cut(id, "::"); ok {
			byShort[strings.ReplaceAll(rest, "::", ".")] = id
		} else {
			byShort[id] = id
		}
	}
	for _, s := range sections {
		short := s.name
		for _, p := range []string{"ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting "} {
			short = strings.TrimPrefix(short, p)
		}
		name := byShort[short]
		if name == "" {
			name = short
		}
		r.details = append(r.details, detail{name, block(lines, s.start, s.end, maxBlock)})
	}
	return r, true
}

func pytestVerdict(r *run, id, verdict string) {
	switch verdict {
	case "PASSED", "XPASS":
		r.passing = append(r.passing, id)
	case "FAILED", "ERROR":
		r.failing = append(r.failing, id)
	}
}
