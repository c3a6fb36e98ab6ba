package testreport

import (
	"slices"
	"strings"
)

// run is what one runner's parser found in the output. Parsers fill the
// counts the way their runner reports them; normalise makes them consistent.
type run struct {
	runner                         string
	total, passed, failed, skipped int
	failing, passing               []string
	// details are failure excerpts, keyed by the same names as failing, in
	// the order the output shows them.
	details []detail
	// closing holds the runner's own closing/summary lines as printed.
	closing []string
}

// detail is the block of output that belongs to one failing test.
type detail struct {
	name  string
	block []string
}

// A parser recognises one runner's output. It returns ok=false when the
// output holds nothing of that runner.
type parser struct {
	name  string
	parse func(lines []string) (run, bool)
}

// parsers is every runner parser, in the order their results are joined.
// The plain closing line is not here: it only counts when nothing else does.
var parsers = []parser{
	{"go", parseGoTest},
	{"pytest", parsePytest},
	{"unittest", parseUnittest},
	{"jest", parseJest},
	{"vitest", parseVitest},
	{"mocha", parseMocha},
	{"node-test", parseNodeSpec},
	{"nextest", parseNextest},
	{"cargo", parseCargo},
	{"rspec", parseRSpec},
	{"minitest", parseMinitest},
	{"phpunit", parsePHPUnit},
	{"exunit", parseExUnit},
	{"dotnet", parseDotnet},
	{"ctest", parseCTest},
	{"maven", parseMaven},
	{"gradle", parseGradle},
	{"tap", parseTAP},
}

// Parse reads the combined stdout/stderr of a completion command and returns
// what the test runners in it reported. Every known runner is tried; several
// runners in one output (say `go test` then `npm test`) add up and their names
// are joined with "+". The plain closing line "N passed, N failed[, N
// skipped]" counts only when no runner is recognised. When nothing is
// recognised the Summary has Known=false.
//
// For `go test` without -v or -json the output names no passing test, so the
// counts are per package (Runner "go-packages"): a package is one unit that
// passed or failed, while Failing still lists the failing tests by name.
func Parse(output string) Summary {
	lines := prepare(output)
	s := summarise(parseRuns(lines))
	s.Coverage = outputCoverage(lines)
	return s
}

// parseRuns runs every parser over the lines.
func parseRuns(lines []string) []run {
	var runs []run
	for _, p := range parsers {
		r, ok := p.parse(lines)
		if !ok {
			continue
		}
		if r.runner == "" {
			r.runner = p.name
		}
		runs = append(runs, r)
	}
	runs = dropShadowed(runs)
	if len(runs) == 0 {
		if r, ok := parsePlain(lines); ok {
			runs = append(runs, r)
		}
	}
	for i := range runs {
		runs[i].normalise()
	}
	return runs
}

// dropShadowed removes runs that another run already accounts for: nextest
// prints each failing test's libtest output (with its own "test result:"
// line), so cargo's reading of the same lines would count tests twice.
func dropShadowed(runs []run) []run {
	has := func(name string) bool {
		return slices.ContainsFunc(runs, func(r run) bool { return r.runner == name })
	}
	if has("nextest") {
		runs = slices.DeleteFunc(runs, func(r run) bool { return r.runner == "cargo" })
	}
	return runs
}

// normalise makes a run self-consistent: no negative counts, Total at least
// the sum of the parts, names sorted and unique, a test that failed is not
// also listed as passing.
func (r *run) normalise() {
	r.passed, r.failed, r.skipped = max(r.passed, 0), max(r.failed, 0), max(r.skipped, 0)
	r.total = max(r.total, r.passed+r.failed+r.skipped)
	r.failing = sortedUnique(r.failing)
	r.passing = sortedUnique(r.passing)
	if len(r.failing) > 0 && len(r.passing) > 0 {
		r.passing = slices.DeleteFunc(r.passing, func(n string) bool {
			_, found := slices.BinarySearch(r.failing, n)
			return found
		})
		if len(r.passing) == 0 {
			r.passing = nil
		}
	}
}

// summarise adds up runs into one Summary.
func summarise(runs []run) Summary {
	var s Summary
	if len(runs) == 0 {
		return s
	}
	s.Known = true
	var names []string
	for _, r := range runs {
		if !slices.Contains(names, r.runner) {
			names = append(names, r.runner)
		}
		s.Total += r.total
		s.Passed += r.passed
		s.Failed += r.failed
		s.Skipped += r.skipped
		s.Failing = append(s.Failing, r.failing...)
		s.Passing = append(s.Passing, r.passing...)
	}
	s.Runner = strings.Join(names, "+")
	s.Failing = sortedUnique(s.Failing)
	s.Passing = sortedUnique(s.Passing)
	if len(s.Failing) > 0 && len(s.Passing) > 0 {
		s.Passing = slices.DeleteFunc(s.Passing, func(n string) bool {
			_, found := slices.BinarySearch(s.Failing, n)
			return found
		})
		if len(s.Passing) == 0 {
			s.Passing = nil
		}
	}
	return s
}

// block returns lines[start:end] clipped to the slice and to at most limit
// lines, for failure excerpts.
func block(lines []string, start, end, limit int) []string {
	start = min(max0(start), len(lines))
	end = min(max0(end), len(lines))
	if end < start {
		return nil
	}
	if end-start > limit {
		end = start + limit
	}
	return lines[start:end]
}

func max0(n int) int { return max(n, 0) }

// maxBlock bounds how many lines one failure excerpt keeps.
const maxBlock = 60
