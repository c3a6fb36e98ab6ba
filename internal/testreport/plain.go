package testreport

import "github.com/aiwg/agent-loop/internal/lazyre"

// The plain closing line any harness may print, alone on a line, with at most
// one word and a colon before it:
//
//	12 passed, 1 failed
//	Result: 12 passed, 1 failed, 2 skipped
//
// It is read only when no runner above recognised the output, so a wrapper
// that prints it after running, say, go test does not count tests twice.

var plainRE = lazyre.New(`^\s*(?:[\w-]+:\s*)?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$`)

func parsePlain(lines []string) (run, bool) {
	r := run{runner: "plain"}
	found := false
	for _, l := range lines {
		m := plainRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		found = true
		r.closing = append(r.closing, l)
		r.passed += atoi(m[1])
		r.failed += atoi(m[2])
		r.skipped += atoi(m[3])
	}
	r.total = r.passed + r.failed + r.skipped
	return r, found
}
