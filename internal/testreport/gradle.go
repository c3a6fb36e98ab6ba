package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Gradle's console test logging.
//
//	CalcTest > subtracts() FAILED
//	    org.opentest4j.AssertionFailedError at CalcTest.java:18
//	7 tests completed, 2 failed, 1 skipped
//
// Gradle prints the "tests completed" line only when a test failed; a green
// Gradle run is read from its JUnit XML reports (ScanReports) instead.

var (
	gradleSummaryRE = lazyre.New(`^(\d+) tests? completed, (\d+) failed(?:, (\d+) skipped)?\s*$`)
	gradleTestRE    = lazyre.New(`^(\S.*? > .+?) (FAILED|PASSED|SKIPPED)\s*$`)
)

func parseGradle(lines []string) (run, bool) {
	var r run
	found := false
	for i, l := range lines {
		if !strings.HasSuffix(l, "ED") && !strings.Contains(l, " completed, ") {
			continue
		}
		if m := gradleSummaryRE.FindStringSubmatch(l); m != nil {
			found = true
			r.closing = append(r.closing, l)
			total, failed, skipped := atoi(m[1]), atoi(m[2]), atoi(m[3])
			r.total += total
			r.failed += failed
			r.skipped += skipped
			r.passed += max(total-failed-skipped, 0)
			continue
		}
		m := gradleTestRE.FindStringSubmatch(l)
		if m == nil || strings.HasPrefix(l, "> Task") {
			continue
		}
		switch m[2] {
		case "PASSED":
			r.passing = append(r.passing, m[1])
		case "FAILED":
			end := i + 1
			for end < len(lines) && indentOf(lines[end]) > 0 && end-i <= maxBlock {
				end++
			}
			r.failing = append(r.failing, m[1])
			r.details = append(r.details, detail{m[1], lines[i+1 : end]})
		}
	}
	if !found {
		return run{}, false
	}
	return r, true
}
