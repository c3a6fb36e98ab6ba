package testreport

import (
	"strconv"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// TAP (Test Anything Protocol): mocha/tape/prove-style producers and node
// --test's TAP reporter.
//
//	1..5
//	ok 1 - x
//	not ok 2 - y
//	ok 3 - z # SKIP not yet
//	not ok 4 - w # TODO later
//
// Top-level test points are counted (# SKIP and # TODO count as skipped); the
// total is the plan when it is larger (tests that never reported). Nested
// subtests are named "parent > child"; a parent that fails only because a
// child failed is not listed as failing itself. node's test runner closes with
// "# tests 6 / # pass 2 / # fail 2 / # cancelled 0 / # skipped 1 / # todo 1":
// those counts are used as they are (runner "node-test").

var (
	tapPlanRE    = lazyre.New(`^(\s*)1\.\.(\d+)\s*(?:#.*)?$`)
	tapTestRE    = lazyre.New(`^(\s*)(not ok|ok)(?:$|\s+(?:(\d+)\b)?\s*-?\s*(.*)$)`)
	tapDirRE     = lazyre.New(`(?i)\s#\s*(skip|todo)\b.*$`)
	tapSubtestRE = lazyre.New(`^(\s*)# Subtest: (.+)$`)
	tapBailRE    = lazyre.New(`^\s*Bail out!\s*(.*)$`)
	tapNodeRE    = lazyre.New(`^# (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)\s*$`)
)

func parseTAP(lines []string) (run, bool) {
	var r run
	sawPlan := false
	minIndent := -1
	plan := 0
	topCount := 0
	node := map[string]int{}
	nodeRuns := 0
	var subtests []nameAt
	var failStack []int
	type head struct {
		name       string
		start, end int
		indent     int
	}
	var heads []head
	closeHead := func(i, indent int) {
		if n := len(heads); n > 0 && heads[n-1].end < 0 && indent <= heads[n-1].indent {
			heads[n-1].end = i
		}
	}
	for i, l := range lines {
		t := strings.TrimLeft(l, " \t")
		if !strings.HasPrefix(t, "ok") && !strings.HasPrefix(t, "not ok") && !strings.HasPrefix(t, "1..") &&
			!strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "Bail out!") {
			continue
		}
		if m := tapPlanRE.FindStringSubmatch(l); m != nil {
			d := len(m[1])
			closeHead(i, d)
			sawPlan = true
			if minIndent < 0 || d <= minIndent {
				if d < minIndent || minIndent < 0 {
					plan = 0
				}
				minIndent = d
				plan += atoi(m[2])
			}
			continue
		}
		if m := tapNodeRE.FindStringSubmatch(l); m != nil {
			if m[1] == "tests" {
				nodeRuns++
			}
			node[m[1]] += atoi(m[2])
			continue
		}
		if m := tapSubtestRE.FindStringSubmatch(l); m != nil {
			d := len(m[1])
			closeHead(i, d)
			subtests = append(popTo(subtests, d), nameAt{d, m[2]})
			continue
		}
		if m := tapBailRE.FindStringSubmatch(l); m != nil && sawPlan {
			r.failed++
			r.failing = append(r.failing, strings.TrimSpace("Bail out! "+m[1]))
			continue
		}
		m := tapTestRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		d := len(m[1])
		closeHead(i, d)
		desc := m[4]
		directive := ""
		if dm := tapDirRE.FindStringSubmatch(desc); dm != nil {
			directive = strings.ToLower(dm[1])
			desc = strings.TrimSpace(desc[:len(desc)-len(dm[0])])
		}
		// The enclosing "# Subtest:" frames; the one at this indentation is
		// this test's own announcement.
		subtests = popTo(subtests, d+1)
		if n := len(subtests); n > 0 && subtests[n-1].indent == d {
			subtests = subtests[:n-1]
		}
		name := joinNames(subtests, desc, " > ")
		if desc == "" {
			name = "test " + m[3]
		}
		childFailed := false
		for len(failStack) > 0 && failStack[len(failStack)-1] > d {
			failStack = failStack[:len(failStack)-1]
			childFailed = true
		}
		failed := m[2] == "not ok" && directive == ""
		if failed {
			failStack = append(failStack, d)
			if !childFailed {
				r.failing = append(r.failing, name)
				heads = append(heads, head{name, i + 1, -1, d})
			}
		} else if m[2] == "ok" && directive == "" {
			r.passing = append(r.passing, name)
		}
		if minIndent < 0 || d < minIndent {
			// A deeper plan came first (nested subtests); restart at this level.
			minIndent, plan, topCount = d, 0, 0
			r.passed, r.failed, r.skipped = 0, 0, 0
		}
		if d != minIndent {
			continue
		}
		topCount++
		switch {
		case directive != "":
			r.skipped++
		case failed:
			r.failed++
		default:
			r.passed++
		}
	}
	if !sawPlan {
		return run{}, false
	}
	closeHead(len(lines), -1)
	for _, h := range heads {
		end := h.end
		if end < 0 {
			end = len(lines)
		}
		r.details = append(r.details, detail{h.name, block(lines, h.start, end, maxBlock)})
	}
	r.total = max(plan, topCount)
	_, hasCancelled := node["cancelled"]
	_, hasSuites := node["suites"]
	if nodeRuns > 0 && (hasCancelled || hasSuites) {
		r.runner = "node-test"
		r.total = node["tests"]
		r.passed = node["pass"]
		r.failed = node["fail"] + node["cancelled"]
		r.skipped = node["skipped"] + node["todo"]
		r.closing = append(r.closing, "# tests "+strconv.Itoa(node["tests"]), "# pass "+strconv.Itoa(node["pass"]), "# fail "+strconv.Itoa(node["fail"]))
	} else {
		r.closing = append(r.closing, "1.."+strconv.Itoa(plan))
	}
	return r, true
}
