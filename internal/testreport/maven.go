package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Maven Surefire/Failsafe console output (2.x and 3.x).
//
//	[ERROR] subtracts(com.example.CalcTest)  Time elapsed: 0.007 s  <<< FAILURE!
//	[ERROR] com.example.CalcTest.subtracts -- Time elapsed: 0.011 s <<< FAILURE!
//	[ERROR] Tests run: 5, Failures: 1, Errors: 1, Skipped: 1
//
// Only the aggregate "Tests run:" lines (without "Time elapsed", one per
// module and plugin execution) are added up; errors count as failures.
// Tests are named "<class>.<method>".

var (
	mavenTotalRE = lazyre.New(`^(?:\[(?:INFO|WARNING|ERROR)\] )?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$`)
	mavenClassRE = lazyre.New(`Tests run: \d+, .*Time elapsed: .* (?:-|--) in (\S+)\s*$`)
	mavenTestRE  = lazyre.New(`^(?:\[(?:ERROR|INFO|WARNING)\] )?(\S+?)(?:\(([^)]+)\))?\s+(?:--\s+)?Time elapsed: [\d.,]+ s(?:ec)?\s+<<< (FAILURE|ERROR)!\s*$`)
	mavenOldRE   = lazyre.New(`^(?:\[ERROR\] )?(?:Failed tests|Tests in error):\s+(\w+)\(([\w.$]+)\)`)
)

func parseMaven(lines []string) (run, bool) {
	var r run
	found := false
	class := ""
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
	for i, l := range lines {
		if !strings.Contains(l, "Tests ") && !strings.Contains(l, "Time elapsed") && !strings.Contains(l, "Failed tests") {
			if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "[INFO] Running ") || strings.HasPrefix(l, "Running ") {
				closeHead(i)
			}
			continue
		}
		if m := mavenTotalRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			found = true
			r.closing = append(r.closing, l)
			total, failed, skipped := atoi(m[1]), atoi(m[2])+atoi(m[3]), atoi(m[4])
			r.total += total
			r.failed += failed
			r.skipped += skipped
			r.passed += max(total-failed-skipped, 0)
			continue
		}
		if m := mavenClassRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			class = m[1]
			continue
		}
		if m := mavenTestRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			name := m[1]
			switch {
			case m[2] != "":
				name = m[2] + "." + m[1]
			case !strings.Contains(name, ".") && class != "":
				name = class + "." + name
			}
			heads = append(heads, head{name, i + 1, -1})
			continue
		}
		if m := mavenOldRE.FindStringSubmatch(l); m != nil {
			r.failing = append(r.failing, m[2]+"."+m[1])
			continue
		}
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "[INFO] Running ") || strings.HasPrefix(l, "Running ") {
			closeHead(i)
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
