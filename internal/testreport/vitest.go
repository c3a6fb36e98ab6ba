package testreport

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Vitest, default and verbose reporters.
//
//	 FAIL  vitests/calc.test.js > calc > subtracts numbers
//	 Test Files  1 failed | 1 passed (2)
//	      Tests  2 failed | 3 passed | 1 skipped | 1 todo (7)
//
// Todo tests count as skipped. A file that fails to load (" FAIL  x.test.ts [
// x.test.ts ]") with no failed test in the counts is counted as one failure.

var (
	vitestTestsRE = lazyre.New(`^\s*Tests\s{2,}(.+?)\s*\((\d+)\)\s*$`)
	vitestNoneRE  = lazyre.New(`^\s*Tests\s{2,}no tests\s*$`)
	vitestFilesRE = lazyre.New(`^\s*Test Files\s{2,}(.+?)\s*\((\d+)\)\s*$`)
	vitestPartRE  = lazyre.New(`(\d+) ([a-z]+)`)
	vitestFailRE  = lazyre.New(`^ FAIL  (.+?)\s*$`)
	vitestMarkRE  = lazyre.New(`^\s*(✓|×|↓|✗) (\S.* > .+?)(?: \d+(?:\.\d+)?m?s)?$`)
)

func parseVitest(lines []string) (run, bool) {
	var r run
	found := false
	filesFailed := 0
	var fileFailures []string
	type head struct {
		name  string
		start int
	}
	var heads []head
	for i, l := range lines {
		if !strings.Contains(l, "Test") && !strings.HasPrefix(l, " FAIL  ") && !strings.Contains(l, " > ") {
			continue
		}
		if m := vitestTestsRE.FindStringSubmatch(l); m != nil {
			found = true
			r.closing = append(r.closing, l)
			r.total += atoi(m[2])
			for _, c := range vitestPartRE.FindAllStringSubmatch(m[1], -1) {
				n := atoi(c[1])
				switch c[2] {
				case "failed":
					r.failed += n
				case "passed":
					r.passed += n
				case "skipped", "todo":
					r.skipped += n
				}
			}
			continue
		}
		if vitestNoneRE.MatchString(l) {
			found = true
			r.closing = append(r.closing, l)
			continue
		}
		if m := vitestFilesRE.FindStringSubmatch(l); m != nil {
			r.closing = append(r.closing, l)
			for _, c := range vitestPartRE.FindAllStringSubmatch(m[1], -1) {
				if c[2] == "failed" {
					filesFailed += atoi(c[1])
				}
			}
			continue
		}
		if m := vitestFailRE.FindStringSubmatch(l); m != nil {
			name := m[1]
			if file, _, ok := strings.Cut(name, " [ "); ok && strings.HasSuffix(name, " ]") {
				name = file
				fileFailures = append(fileFailures, name)
			}
			heads = append(heads, head{name, i + 1})
			continue
		}
		if m := vitestMarkRE.FindStringSubmatch(l); m != nil {
			switch m[1] {
			case "✓":
				r.passing = append(r.passing, m[2])
			case "×", "✗":
				r.failing = append(r.failing, m[2])
			}
		}
	}
	if !found {
		return run{}, false
	}
	for _, h := range heads {
		end := len(lines)
		for j := h.start; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "⎯") || vitestFailRE.MatchString(lines[j]) || vitestFilesRE.MatchString(lines[j]) {
				end = j
				break
			}
		}
		r.failing = append(r.failing, h.name)
		r.details = append(r.details, detail{h.name, block(lines, h.start, end, maxBlock)})
	}
	if r.failed == 0 && filesFailed > 0 {
		r.failed = max(filesFailed, len(sortedUnique(fileFailures)))
		r.total += r.failed
	}
	return r, true
}
