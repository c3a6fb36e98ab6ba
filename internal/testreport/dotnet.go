package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// dotnet test (VSTest console logger, and Microsoft.Testing.Platform).
//
//	  Failed Calc.Tests.CalcTests.Subtracts [12 ms]
//	  Error Message:
//	   Assert.Equal() Failure
//	Failed!  - Failed:     1, Passed:     4, Skipped:     0, Total:     5, Duration: 20 ms - Calc.Tests.dll (net8.0)
//
// Each test assembly prints its own summary line; they are added up.

var (
	dotnetSummaryRE = lazyre.New(`^\s*(?:Passed|Failed)!\s+-\s+Failed:\s+(\d+), Passed:\s+(\d+), Skipped:\s+(\d+), Total:\s+(\d+)`)
	dotnetOldRE     = lazyre.New(`^\s*Total tests: (\d+)\. Passed: (\d+)\. Failed: (\d+)\. Skipped: (\d+)\.`)
	dotnetTotalRE   = lazyre.New(`^\s*Total tests: (\d+)\s*$`)
	dotnetKVRE      = lazyre.New(`^\s*(Passed|Failed|Skipped|total|failed|succeeded|skipped): (\d+)\s*$`)
	dotnetMTPRE     = lazyre.New(`^\s*Test run summary: `)
	dotnetResultRE  = lazyre.New(`^\s*(Passed|Failed|Skipped) (\S.*?) \[[^\]]*\]\s*$`)
	dotnetOldNameRE = lazyre.New(`^\s*(Passed|Failed|Skipped) {2,}(\S+)\s*$`)
	dotnetMTPNameRE = lazyre.New(`^\s*(passed|failed|skipped) (\S.*?) \(\d[^)]*\)\s*$`)
)

func parseDotnet(lines []string) (run, bool) {
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
	for i, l := range lines {
		if !strings.Contains(l, "assed") && !strings.Contains(l, "ailed") && !strings.Contains(l, "kipped") &&
			!strings.Contains(l, "otal") {
			continue
		}
		if m := dotnetSummaryRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			found = true
			r.closing = append(r.closing, strings.TrimSpace(l))
			r.failed += atoi(m[1])
			r.passed += atoi(m[2])
			r.skipped += atoi(m[3])
			r.total += atoi(m[4])
			continue
		}
		if m := dotnetOldRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			found = true
			r.closing = append(r.closing, strings.TrimSpace(l))
			r.total += atoi(m[1])
			r.passed += atoi(m[2])
			r.failed += atoi(m[3])
			r.skipped += atoi(m[4])
			continue
		}
		if dotnetTotalRE.MatchString(l) || dotnetMTPRE.MatchString(l) {
			closeHead(i)
			// A block of "Key: N" lines follows.
			kv := map[string]int{}
			if m := dotnetTotalRE.FindStringSubmatch(l); m != nil {
				kv["total"] = atoi(m[1])
			}
			for j := i + 1; j < len(lines) && j <= i+8; j++ {
				m := dotnetKVRE.FindStringSubmatch(lines[j])
				if m == nil {
					continue
				}
				kv[strings.ToLower(m[1])] += atoi(m[2])
			}
			if _, ok := kv["total"]; !ok {
				continue
			}
			found = true
			r.closing = append(r.closing, strings.TrimSpace(l))
			r.total += kv["total"]
			r.passed += kv["passed"] + kv["succeeded"]
			r.failed += kv["failed"]
			r.skipped += kv["skipped"]
			continue
		}
		m := dotnetResultRE.FindStringSubmatch(l)
		if m == nil {
			m = dotnetOldNameRE.FindStringSubmatch(l)
		}
		if m == nil {
			m = dotnetMTPNameRE.FindStringSubmatch(l)
		}
		if m == nil {
			continue
		}
		closeHead(i)
		switch strings.ToLower(m[1]) {
		case "passed":
			r.passing = append(r.passing, m[2])
		case "failed":
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
