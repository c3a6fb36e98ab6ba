package testreport

import (
	"encoding/json"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// go test: plain, -v and -json output.
//
//	--- FAIL: TestTable (0.00s)
//	    --- FAIL: TestTable/negative (0.00s)
//	        calc_test.go:29: Add(-1, -2) = -3, want -4
//	FAIL	example.com/sample/calc	0.004s
//	ok  	example.com/sample/clean	0.003s	coverage: 33.3% of statements
//	FAIL	example.com/sample/broken [build failed]
//
// Tests are named "<import path>.<TestName>" once their package line is seen
// (go test prints it after the package's tests).

var (
	goStatusRE  = lazyre.New(`^(\s*)--- (PASS|FAIL|SKIP): (\S+) \(`)
	goMarkRE    = lazyre.New(`^=== (RUN|CONT|PAUSE|NAME)\s+(\S+)`)
	goPkgRE     = lazyre.New(`^(ok|FAIL|\?)([ \t]+)(\S+)[ \t]*(.*)$`)
	goBuildRE   = lazyre.New(`^# (\S+)`)
	goCompileRE = lazyre.New(`^(?:\./)?\S+\.go:\d+(?::\d+)?: \S`)
)

type goTestResult struct {
	name   string
	status string // PASS, FAIL, SKIP
}

type goParser struct {
	r        run
	testMode bool
	found    bool

	pending []goTestResult      // results since the last package line
	out     map[string][]string // output lines per test name (current package)
	order   []string            // failing test names in order of failure

	cur        string // test whose output lines are being read (-v)
	after      string // test whose --- FAIL header we are under
	afterDepth int
	panicking  string // test a panic belongs to
	timedOut   bool

	build    map[string][]string // build output per import path
	buildPkg string              // import path of the current "# pkg" block

	pkgLines int // package result lines seen
}

func parseGoTest(lines []string) (run, bool) {
	p := &goParser{out: map[string][]string{}, build: map[string][]string{}}
	for _, l := range lines {
		if strings.HasPrefix(l, "=== RUN") || strings.HasPrefix(l, "--- PASS") ||
			strings.HasPrefix(l, `{"`) && strings.Contains(l, `"Action":"`) {
			p.testMode = true
			break
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, `{"`) && strings.Contains(l, `"Action":"`) {
			if p.event(l) {
				continue
			}
		}
		p.line(l)
	}
	p.flushUnassigned()
	if !p.found {
		return run{}, false
	}
	if !p.testMode {
		p.r.runner = "go-packages"
	} else {
		p.r.runner = "go"
	}
	return p.r, true
}

// line handles one line of plain or -v output.
func (p *goParser) line(l string) {
	if m := matchIf(strings.Contains(l, "--- "), goStatusRE, l); m != nil {
		p.found = true
		p.buildPkg = ""
		name, status := m[3], m[2]
		p.pending = append(p.pending, goTestResult{name, status})
		if status == "FAIL" {
			p.order = append(p.order, name)
			p.after, p.afterDepth = name, len(m[1])
		} else {
			p.after = ""
		}
		p.cur = ""
		return
	}
	if m := matchIf(strings.HasPrefix(l, "=== "), goMarkRE, l); m != nil {
		p.after, p.buildPkg = "", ""
		if m[1] != "PAUSE" {
			p.cur = m[2]
		}
		return
	}
	if m := matchIf(l != "" && (l[0] == 'o' || l[0] == 'F' || l[0] == '?'), goPkgRE, l); m != nil && goPkgLine(m) {
		p.pkg(m[1], m[3], m[4], l)
		return
	}
	if m := matchIf(strings.HasPrefix(l, "# "), goBuildRE, l); m != nil {
		p.buildPkg = m[1]
		p.after, p.cur = "", ""
		return
	}
	if p.buildPkg != "" {
		if goCompileRE.MatchString(l) || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "  ") {
			p.build[p.buildPkg] = appendBounded(p.build[p.buildPkg], l)
			return
		}
		p.buildPkg = ""
	}
	if strings.HasPrefix(l, "panic: ") {
		p.panicking = p.lastFailed()
		if strings.HasPrefix(l, "panic: test timed out") {
			p.timedOut = true
		}
		p.after, p.cur = "", ""
		p.out[p.panicking] = appendBounded(p.out[p.panicking], l)
		return
	}
	if p.timedOut && strings.HasPrefix(l, "\t\t") && strings.HasSuffix(l, ")") {
		// "running tests:" list of a timeout panic: "\t\tTestSlow (1s)".
		name := strings.TrimSpace(l)
		if i := strings.LastIndex(name, " ("); i > 0 {
			name = name[:i]
			p.pending = append(p.pending, goTestResult{name, "FAIL"})
			p.order = append(p.order, name)
			p.out[name] = append(p.out[name], p.out[""]...)
			p.found = true
		}
		return
	}
	switch {
	case p.panicking != "" || p.timedOut:
		p.out[p.panicking] = appendBounded(p.out[p.panicking], l)
	case p.after != "" && indentOf(l) > p.afterDepth:
		p.out[p.after] = appendBounded(p.out[p.after], l)
	case p.cur != "" && l != "PASS" && l != "FAIL":
		p.after = ""
		p.out[p.cur] = appendBounded(p.out[p.cur], l)
	default:
		p.after = ""
	}
}

// goPkgLine tells a go test package line from look-alikes such as Jest's
// "FAIL path/x.test.js": go separates the fields with a tab, or the rest
// holds a duration or a bracketed note.
func goPkgLine(m []string) bool {
	if strings.Contains(m[2], "\t") {
		return true
	}
	rest := m[4]
	if m[1] == "?" {
		return strings.HasPrefix(rest, "[no test files]")
	}
	return rest != "" && (rest[0] >= '0' && rest[0] <= '9' && strings.Contains(rest, "s") ||
		strings.HasPrefix(rest, "(cached)") || strings.HasPrefix(rest, "["))
}

func (p *goParser) lastFailed() string {
	if len(p.order) == 0 {
		return ""
	}
	return p.order[len(p.order)-1]
}

// pkg closes one package: its pending test results get the package name.
func (p *goParser) pkg(verdict, path, rest, line string) {
	p.found = true
	p.pkgLines++
	p.buildPkg = ""
	defer func() {
		p.pending, p.order = nil, nil
		p.out = map[string][]string{}
		p.cur, p.after, p.panicking, p.timedOut = "", "", "", false
	}()
	if verdict == "?" || strings.Contains(rest, "[no tests to run]") {
		return
	}
	if verdict == "FAIL" {
		p.r.closing = appendBounded(p.r.closing, line)
	}
	p.assign(path)
	failedTests := 0
	for _, t := range p.pending {
		if t.status == "FAIL" {
			failedTests++
		}
	}
	if !p.testMode {
		if verdict == "ok" {
			p.r.passed++
			p.r.passing = append(p.r.passing, path)
		} else {
			p.r.failed++
		}
	}
	if verdict != "FAIL" || failedTests > 0 {
		return
	}
	// The package failed with no failing test: a build or setup failure, a
	// panic outside a test, TestMain exiting non-zero.
	unit := path
	var blk []string
	switch {
	case strings.Contains(rest, "[build failed]"):
		unit += " [build failed]"
		blk = p.build[path]
	case strings.Contains(rest, "[setup failed]"):
		unit += " [setup failed]"
		blk = p.build[path]
	default:
		blk = p.out[""]
	}
	p.r.failing = append(p.r.failing, unit)
	p.r.details = append(p.r.details, detail{unit, blk})
	if p.testMode {
		p.r.failed++
	}
}

// assign names pending results "<pkg>.<Test>" and counts them.
func (p *goParser) assign(pkg string) {
	qualify := func(name string) string {
		if pkg == "" {
			return name
		}
		return pkg + "." + name
	}
	for _, t := range p.pending {
		name := qualify(t.name)
		switch t.status {
		case "PASS":
			p.r.passing = append(p.r.passing, name)
			if p.testMode {
				p.r.passed++
			}
		case "SKIP":
			if p.testMode {
				p.r.skipped++
			}
		case "FAIL":
			p.r.failing = append(p.r.failing, name)
			if p.testMode {
				p.r.failed++
			}
		}
	}
	for _, n := range p.order {
		p.r.details = append(p.r.details, detail{qualify(n), p.out[n]})
	}
}

// flushUnassigned counts results whose package line never came: output cut
// short, or a test binary run directly (no package lines at all, so the
// failing tests themselves are the units).
func (p *goParser) flushUnassigned() {
	if len(p.pending) == 0 {
		return
	}
	if !p.testMode && p.pkgLines == 0 {
		p.testMode = true
	}
	p.assign("")
	if !p.testMode {
		for _, t := range p.pending {
			if t.status == "FAIL" {
				p.r.failed++ // the unfinished package, as one unit
				break
			}
		}
	}
}

// goEvent is one line of `go test -json` (test2json) output.
type goEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
}

// event handles one -json line; false when it is not a test2json event.
func (p *goParser) event(l string) bool {
	var e goEvent
	if err := json.Unmarshal([]byte(l), &e); err != nil || e.Action == "" {
		return false
	}
	p.found = true
	out := strings.TrimRight(e.Output, "\n")
	switch e.Action {
	case "build-output":
		path, _, _ := strings.Cut(e.ImportPath, " ")
		p.build[path] = appendBounded(p.build[path], out)
	case "output":
		key := e.Package + "\x00" + e.Test
		if strings.HasPrefix(out, "=== ") || goStatusRE.MatchString(out) {
			return true
		}
		if e.Test == "" && (strings.HasPrefix(out, "FAIL\t") || strings.HasPrefix(out, "ok  \t")) {
			if strings.HasPrefix(out, "FAIL") {
				p.r.closing = appendBounded(p.r.closing, out)
			}
			return true
		}
		p.out[key] = appendBounded(p.out[key], out)
	case "pass", "fail", "skip":
		if e.Test != "" {
			name := e.Test
			if e.Package != "" {
				name = e.Package + "." + e.Test
			}
			switch e.Action {
			case "pass":
				p.r.passed++
				p.r.passing = append(p.r.passing, name)
			case "skip":
				p.r.skipped++
			case "fail":
				p.r.failed++
				p.r.failing = append(p.r.failing, name)
				p.r.details = append(p.r.details, detail{name, p.out[e.Package+"\x00"+e.Test]})
				p.order = append(p.order, e.Package+"\x00"+e.Test)
			}
			return true
		}
		if e.Action == "fail" && !p.pkgHasFailure(e.Package) {
			unit := e.Package
			blk := p.out[e.Package+"\x00"]
			if e.FailedBuild != "" {
				unit += " [build failed]"
				path, _, _ := strings.Cut(e.FailedBuild, " ")
				blk = p.build[path]
			}
			p.r.failed++
			p.r.failing = append(p.r.failing, unit)
			p.r.details = append(p.r.details, detail{unit, blk})
		}
	}
	return true
}

func (p *goParser) pkgHasFailure(pkg string) bool {
	prefix := pkg + "\x00"
	for _, k := range p.order {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// appendBounded appends l unless the slice already holds maxBlock lines.
func appendBounded(s []string, l string) []string {
	if len(s) >= maxBlock {
		return s
	}
	return append(s, l)
}
