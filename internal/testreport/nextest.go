package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// cargo-nextest.
//
//	        FAIL [   0.007s] workspace_crate2::workspace_integration test_fail
//	--- STDERR:              workspace_crate2::workspace_integration test_fail ---
//	     Summary [   0.015s] 2 tests run: 1 passed, 1 failed, 0 skipped
//
// "exec failed" and "timed out" count as failed; a FLAKY test passed on a
// retry and counts as passed. nextest shows each failing test's libtest
// output, so when nextest is recognised cargo's reader is not used.

var (
	nextestSummaryRE = lazyre.New(`^\s*Summary \[\s*[\d.]+s\] (?:(\d+)/)?(\d+) tests? run: (.*)$`)
	nextestStatusRE  = lazyre.New(`^\s*(PASS|FAIL|SIG[A-Z]+|ABORT|TIMEOUT|LEAK-FAIL|LEAK|FLAKY \d+/\d+|TRY \d+ [A-Z-]+|RETRY \d+/\d+|SKIP) \[\s*[\d.]+s\] (?:\(\s*\d+/\s*\d+\) )?(?:\[[\d/ ]+\] )?(.+?)\s*$`)
	nextestOutRE     = lazyre.New(`^--- (?:TRY \d+ )?(STDOUT|STDERR):\s+(.+?) ---$`)
	nextestParenRE   = lazyre.New(`\([^)]*\)`)
	nextestPartRE    = lazyre.New(`(\d+) (passed|failed|exec failed|timed out|skipped)`)
)

func parseNextest(lines []string) (run, bool) {
	var r run
	found := false
	type head struct {
		name       string
		start, end int
		stderr     bool
	}
	var heads []head
	closeHead := func(i int) {
		if n := len(heads); n > 0 && heads[n-1].end < 0 {
			heads[n-1].end = i
		}
	}
	for i, l := range lines {
		if !strings.Contains(l, "s] ") && !strings.HasPrefix(l, "--- ") {
			continue
		}
		if m := nextestSummaryRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			found = true
			r.closing = append(r.closing, strings.TrimSpace(l))
			var passed, failed, skipped int
			for _, p := range nextestPartRE.FindAllStringSubmatch(nextestParenRE.ReplaceAllString(m[3], ""), -1) {
				n := atoi(p[1])
				switch p[2] {
				case "passed":
					passed += n
				case "failed", "exec failed", "timed out":
					failed += n
				case "skipped":
					skipped += n
				}
			}
			toRun := atoi(m[2])
			r.passed += passed
			r.failed += failed
			r.skipped += skipped
			r.total += max(toRun, passed+failed) + skipped
			continue
		}
		if m := nextestStatusRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			status, name := m[1], m[2]
			switch {
			case status == "PASS" || status == "LEAK" || strings.HasPrefix(status, "FLAKY"):
				r.passing = append(r.passing, name)
			case status == "FAIL" || status == "ABORT" || status == "TIMEOUT" || status == "LEAK-FAIL" ||
				strings.HasPrefix(status, "SIG"):
				r.failing = append(r.failing, name)
			}
			continue
		}
		if m := nextestOutRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			heads = append(heads, head{m[2], i + 1, -1, m[1] == "STDERR"})
		}
	}
	if !found {
		return run{}, false
	}
	closeHead(len(lines))
	// A test's STDERR (the panic message) comes after its STDOUT (libtest's
	// chatter); put it first.
	blocks := map[string][]string{}
	var order []string
	for _, h := range heads {
		b := block(lines, h.start, h.end, maxBlock)
		if _, seen := blocks[h.name]; !seen {
			order = append(order, h.name)
		}
		if h.stderr {
			blocks[h.name] = append(append([]string(nil), b...), blocks[h.name]...)
		} else {
			blocks[h.name] = append(blocks[h.name], b...)
		}
	}
	for _, n := range order {
		r.details = append(r.details, detail{n, blocks[n]})
	}
	return r, true
}
