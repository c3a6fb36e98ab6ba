package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// cargo test (libtest's output, one block per test binary).
//
//	test tests::subtracts ... FAILED
//	---- tests::subtracts stdout ----
//	thread 'tests::subtracts' (17873) panicked at src/lib.rs:29:9:
//	test result: FAILED. 1 passed; 2 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.22s
//
// The "test result:" lines of every binary are added up; ignored tests count
// as skipped. A target that does not compile ("error: could not compile
// `calc` (lib test) due to 1 previous error") is one failed unit named
// "calc (lib test) [build failed]".

var (
	cargoResultRE  = lazyre.New(`^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; (\d+) filtered out`)
	cargoTestRE    = lazyre.New(`^test (.+?) \.\.\. (ok|FAILED|ignored|bench)\b`)
	cargoOutRE     = lazyre.New(`^---- (.+?) (stdout|stderr) ----$`)
	cargoCompileRE = lazyre.New("^error: could not compile `([^`]+)`(?: \\(([^)]+)\\))?")
)

func parseCargo(lines []string) (run, bool) {
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
	units := map[string]bool{}
	for i, l := range lines {
		if !strings.HasPrefix(l, "test") && !strings.HasPrefix(l, "----") && !strings.HasPrefix(l, "error: could not") &&
			l != "failures:" && !strings.HasPrefix(l, "running ") {
			continue
		}
		if m := cargoResultRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			found = true
			r.closing = append(r.closing, l)
			r.passed += atoi(m[2])
			r.failed += atoi(m[3])
			r.skipped += atoi(m[4])
			continue
		}
		if m := cargoTestRE.FindStringSubmatch(l); m != nil {
			switch m[2] {
			case "ok":
				r.passing = append(r.passing, m[1])
			case "FAILED":
				r.failing = append(r.failing, m[1])
			}
			continue
		}
		if m := cargoOutRE.FindStringSubmatch(l); m != nil {
			closeHead(i)
			heads = append(heads, head{m[1], i + 1, -1})
			continue
		}
		if l == "failures:" || strings.HasPrefix(l, "running ") {
			closeHead(i)
			continue
		}
		if m := cargoCompileRE.FindStringSubmatch(l); m != nil {
			found = true
			unit := m[1]
			if m[2] != "" {
				unit += " (" + m[2] + ")"
			}
			unit += " [build failed]"
			if !units[unit] {
				units[unit] = true
				r.failed++
				r.failing = append(r.failing, unit)
				r.closing = append(r.closing, l)
			}
		}
	}
	if !found {
		return run{}, false
	}
	closeHead(len(lines))
	for _, h := range heads {
		r.details = append(r.details, detail{h.name, block(lines, h.start, h.end, maxBlock)})
	}
	return r, true
}
