package testreport

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Bounds of ScanReports: a repository the agent controls must not make the
// harness walk or read without end.
const (
	scanMaxDepth   = 6
	scanMaxEntries = 2000
	maxReportBytes = 256 << 20
	// mtimeSlack accepts a report whose modification time is slightly before
	// since: file systems stamp files from a coarse clock (and FAT/HFS+ round
	// to seconds), so a report written just after since can look older.
	mtimeSlack = 2 * time.Second
)

// scanSkipDirs are never entered: dependencies, VCS data, virtualenvs and
// caches, where no report of this run lives and which can be huge.
var scanSkipDirs = map[string]bool{
	"node_modules": true, ".git": true, "vendor": true, ".venv": true,
	".tox": true, "__pycache__": true, ".gradle": true, ".aiwg": true,
}

// junitDirs are directories whose XML files are JUnit reports by convention.
var junitDirs = map[string]bool{
	"surefire-reports": true, "failsafe-reports": true, "test-results": true,
	"test-reports": true, "junit": true, "junit-reports": true,
}

// coverageNames are coverage report file names, most preferred first: when
// one directory holds several reports of the same run (jest writes lcov.info
// and clover.xml), only the first kind found is used.
var coverageNames = []string{
	"lcov.info", "coverage.xml", "cobertura.xml", "cobertura-coverage.xml", "jacoco.xml",
	"jacocotestreport.xml", "clover.xml", "coverage-summary.json", "coverage.json",
	"coverage.out", "cover.out", "coverage.txt", "coverprofile",
}

// ScanReports looks under dir for JUnit XML and coverage reports modified at
// or after since (less a 2 s allowance for coarse file-system clocks), in the
// usual places: target/surefire-reports and failsafe-reports, build/test-results/**,
// test-results/, junit*.xml and TEST-*.xml anywhere, coverage/lcov.info,
// coverage.xml, cobertura XML, target/site/jacoco/jacoco.xml,
// build/reports/jacoco/**.xml, clover.xml, coverage-summary.json and Go's
// coverage.out/cover.out/coverage.txt. The walk is breadth first and bounded:
// node_modules, .git, vendor, .venv (and a few caches) are never entered,
// symbolic links are not followed, it goes at most 6 directories deep and
// looks at no more than 2000 entries.
//
// JUnit reports add up into one Summary (Runner "junit-xml"); files that are
// not JUnit XML or are cut short are left out. Coverage is the covered share
// of all reported lines (or statements) across the reports found. Nothing
// found gives Known=false and a nil Coverage. The error is non-nil only when
// dir itself cannot be read.
func ScanReports(dir string, since time.Time) (Summary, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return Summary{}, fmt.Errorf("scanning %s for test reports: %w", dir, err)
	}
	if !info.IsDir() {
		return Summary{}, fmt.Errorf("scanning %s for test reports: not a directory", dir)
	}
	junits, coverages := findReports(dir, since.Add(-mtimeSlack))

	var s Summary
	var failing, passing []string
	for _, p := range junits {
		js, ok := readJUnitFile(p)
		if !ok {
			continue
		}
		s.Known = true
		s.Total += js.Total
		s.Passed += js.Passed
		s.Failed += js.Failed
		s.Skipped += js.Skipped
		failing = append(failing, js.Failing...)
		passing = append(passing, js.Passing...)
	}
	if s.Known {
		s.Runner = "junit-xml"
		s = junitSummary(1, 0, 0, 0, s, failing, passing)
	}
	s.Coverage = combineCoverage(coverages)
	return s, nil
}

// findReports walks dir breadth first within the bounds and returns the
// JUnit candidates and the coverage candidates modified at or after notBefore.
func findReports(dir string, notBefore time.Time) (junits, coverages []string) {
	type entry struct {
		path  string
		depth int
	}
	queue := []entry{{dir, 0}}
	seen := 0
	for len(queue) > 0 && seen < scanMaxEntries {
		cur := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(cur.path)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if seen++; seen > scanMaxEntries {
				break
			}
			p := filepath.Join(cur.path, e.Name())
			if e.IsDir() {
				if !scanSkipDirs[e.Name()] && cur.depth+1 <= scanMaxDepth {
					queue = append(queue, entry{p, cur.depth + 1})
				}
				continue
			}
			if !e.Type().IsRegular() {
				continue // symbolic links, pipes, devices
			}
			rel, _ := filepath.Rel(dir, p)
			kind := reportKind(rel)
			if kind == "" {
				continue
			}
			fi, err := e.Info()
			if err != nil || fi.ModTime().Before(notBefore) || fi.Size() > maxReportBytes {
				continue
			}
			if kind == "junit" {
				junits = append(junits, p)
			} else {
				coverages = append(coverages, p)
			}
		}
	}
	slices.Sort(junits)
	slices.Sort(coverages)
	return junits, coverages
}

// reportKind classifies a path relative to the scanned directory: "junit",
// "coverage" or "".
func reportKind(rel string) string {
	slash := filepath.ToSlash(rel)
	base := strings.ToLower(filepath.Base(rel))
	parts := strings.Split(strings.ToLower(slash), "/")
	dirs := parts[:len(parts)-1]
	if slices.Contains(coverageNames, base) || strings.HasSuffix(base, ".coverprofile") || strings.HasSuffix(base, ".lcov") {
		return "coverage"
	}
	if !strings.HasSuffix(base, ".xml") {
		return ""
	}
	for _, d := range dirs {
		if strings.Contains(d, "jacoco") {
			return "coverage"
		}
	}
	if strings.HasPrefix(base, "test-") || strings.Contains(base, "junit") {
		return "junit"
	}
	for _, d := range dirs {
		if junitDirs[d] {
			return "junit"
		}
	}
	return ""
}

func readJUnitFile(path string) (Summary, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, false
	}
	defer f.Close()
	s, err := ParseJUnitXML(io.LimitReader(f, maxReportBytes))
	if err != nil {
		return Summary{}, false
	}
	return s, true
}

// combineCoverage reads the coverage candidates, keeps one report per
// directory (the most preferred kind) and returns the covered share of all
// their lines, or nil when none could be read.
func combineCoverage(paths []string) *float64 {
	type pick struct {
		rank int
		c    cov
	}
	rank := func(p string) int {
		base := strings.ToLower(filepath.Base(p))
		if i := slices.Index(coverageNames, base); i >= 0 {
			return i
		}
		return len(coverageNames)
	}
	best := map[string]pick{} // directory -> chosen report
	for _, p := range paths {
		d, r := filepath.Dir(p), rank(p)
		if prev, dup := best[d]; dup && prev.rank <= r {
			continue
		}
		data, err := readBounded(p)
		if err != nil {
			continue
		}
		if c, ok := coverageOf(data); ok {
			best[d] = pick{r, c}
		}
	}
	if len(best) == 0 {
		return nil
	}
	var sum cov
	var rates []float64
	for _, b := range best {
		if b.c.weighted {
			sum.covered += b.c.covered
			sum.total += b.c.total
		} else {
			rates = append(rates, b.c.percent())
		}
	}
	if sum.total > 0 {
		rates = append(rates, sum.percent())
	}
	if len(rates) == 0 {
		return nil
	}
	slices.Sort(rates) // map order must not change the floating-point sum
	var p float64
	if len(rates) == 1 {
		p = rates[0]
	} else {
		// Some reports only gave a rate: average them with the weighted share.
		for _, r := range rates {
			p += r
		}
		p = roundCoverage(p / float64(len(rates)))
	}
	return &p
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxReportBytes))
}
