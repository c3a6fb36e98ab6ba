package criteria

import (
	"fmt"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/shellcmd"
)

var (
	goModuleRe = lazyre.New(`(?m)^module\s+(\S+)`)
	goVersion  = lazyre.New(`(?m)^go\s+(\S+)`)
	goUseRe    = lazyre.New(`(?m)^\s*use\s+(?:\(([^)]*)\)|(\S+))`)
)

// maxTestSearch bounds the directories looked at to tell whether a Go module
// has any test at all.
const maxTestSearch = 300

// parseGoWork returns the module directories a go.work uses.
func parseGoWork(data []byte) []string {
	var out []string
	for _, m := range goUseRe.FindAllStringSubmatch(string(data), -1) {
		if m[2] != "" {
			out = append(out, clean(strings.Trim(m[2], `"`)))
			continue
		}
		for _, line := range strings.Split(m[1], "\n") {
			line = strings.TrimSpace(line)
			if i := strings.Index(line, "//"); i >= 0 {
				line = strings.TrimSpace(line[:i])
			}
			if line != "" {
				out = append(out, clean(strings.Trim(line, `"`)))
			}
		}
	}
	return out
}

// goHasTests looks for a _test.go file in the module rooted at dir, not
// descending into nested modules or build output, within a bounded number of
// directories. It returns unknown when the bound was reached first.
func (m *manifests) goHasTests(dir string) (found, unknown bool) {
	queue := []string{dir}
	for n := 0; len(queue) > 0; n++ {
		if n >= maxTestSearch {
			return false, true
		}
		d := queue[0]
		queue = queue[1:]
		ents, _ := m.r.list(d)
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), "_test.go") {
				return true, false
			}
		}
		for _, s := range m.r.subdirs(d) {
			if s == "testdata" {
				continue
			}
			sub := join(d, s)
			if m.r.exists(join(sub, "go.mod")) {
				continue
			}
			queue = append(queue, sub)
		}
	}
	return false, false
}

// nestedGoModules lists go.mod files up to two levels below dir.
func (m *manifests) nestedGoModules(dir string) []string {
	var out []string
	for _, s := range m.r.subdirs(dir) {
		sub := join(dir, s)
		if m.r.exists(join(sub, "go.mod")) {
			out = append(out, sub)
			continue
		}
		for _, s2 := range m.r.subdirs(sub) {
			if m.r.exists(join(join(sub, s2), "go.mod")) {
				out = append(out, join(sub, s2))
			}
		}
	}
	return out
}

func (m *manifests) readGo(d *dirManifests) {
	modFile, workFile := join(d.dir, "go.mod"), join(d.dir, "go.work")
	modData, hasMod := m.r.read(modFile)
	workData, hasWork := m.r.read(workFile)
	if !hasMod && !hasWork {
		return
	}
	d.eco("go")
	setup := "go mod download"
	if hasMod {
		mod := goModuleRe.FindSubmatch(modData)
		if mod == nil {
			m.r.unreadable(LayerManifest, modFile, fmt.Errorf("no module directive"))
		} else {
			v := ""
			if gv := goVersion.FindSubmatch(modData); gv != nil {
				v = " (go " + string(gv[1]) + ")"
			}
			d.fact(modFile, "Go module "+string(mod[1])+v)
		}
	}
	var members []string
	if hasWork {
		members = parseGoWork(workData)
		d.fact(workFile, "Go workspace of "+fmt.Sprint(len(members))+" modules: "+strings.Join(members, ", "))
		setup = ""
	}
	rootIsModule := hasMod
	if hasWork {
		for _, mem := range members {
			if mem == "." {
				rootIsModule = true
			}
		}
	}
	pattern := "./..."
	if !rootIsModule && len(members) > 0 {
		var pats []string
		for _, mem := range members {
			pats = append(pats, "./"+mem+"/...")
		}
		pattern = strings.Join(pats, " ")
		d.trap(workFile, "the workspace root is not a module: `go test ./...` there fails (\"directory prefix . does not contain modules listed in go.work\"); name the modules: `go test "+pattern+"`")
	}
	if rootIsModule {
		nested := m.nestedGoModules(d.dir)
		var outside []string
		for _, n := range nested {
			inWork := false
			for _, mem := range members {
				if mem == n {
					inWork = true
				}
			}
			if !inWork {
				outside = append(outside, n)
			}
		}
		found, unknown := m.goHasTests(d.dir)
		if !found && !unknown {
			nestedWithTests := []string{}
			for _, n := range nested {
				if f, _ := m.goHasTests(n); f {
					nestedWithTests = append(nestedWithTests, n)
				}
			}
			if len(nestedWithTests) > 0 {
				d.trap(modFile, "the root module has no _test.go file: `go test ./...` there passes without testing anything; the tests are in nested modules ("+strings.Join(nestedWithTests, ", ")+")")
				var parts []string
				for _, n := range nestedWithTests {
					parts = append(parts, "(cd "+shellcmd.Quote(relPath(d.dir, n))+" && go test ./...)")
				}
				cmd := strings.Join(parts, " && ")
				if len(nestedWithTests) == 1 {
					d.add(candidate{command: "go test ./...", workdir: nestedWithTests[0], kind: kTest, sig: "go test", source: join(nestedWithTests[0], "go.mod"), setup: setup, rank: 1, strong: true,
						evidence: []Finding{finding(LayerManifest, join(nestedWithTests[0], "go.mod"), "the Go tests live in this nested module")}})
				} else {
					d.add(candidate{command: cmd, kind: kTest, sig: "go test", source: modFile, setup: setup, rank: 1, strong: true,
						evidence: []Finding{finding(LayerManifest, modFile, "runs the tests of each nested module in its own directory")}})
				}
				return
			}
			d.trap(modFile, "no _test.go file in the module: `go test ./...` passes without testing anything")
		} else if len(outside) > 0 {
			d.trap(modFile, "nested modules ("+strings.Join(outside, ", ")+") are not covered by `go test ./...` at the root")
		}
	}
	d.add(candidate{command: "go test " + pattern, kind: kTest, sig: "go test", source: firstOf(hasMod, modFile, workFile), setup: setup, rank: 3,
		evidence: []Finding{finding(LayerManifest, firstOf(hasMod, modFile, workFile), "`go test "+pattern+"` runs every package's tests")}})
	d.add(candidate{command: "go test -cover " + pattern, kind: kTest | kCoverage, sig: "go test", source: firstOf(hasMod, modFile, workFile), setup: setup, rank: 4})
	d.add(candidate{command: "go build " + pattern, kind: kBuild, sig: "go build", source: firstOf(hasMod, modFile, workFile), setup: setup, rank: 3})
	d.add(candidate{command: "go vet " + pattern, kind: kType | kLint, sig: "go vet", source: firstOf(hasMod, modFile, workFile), setup: setup, rank: 4,
		evidence: []Finding{finding(LayerManifest, firstOf(hasMod, modFile, workFile), "`go vet` type-checks every package, tests included, and reports suspicious code")}})
	if f := m.firstExisting(d.dir, []string{".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"}); f != "" {
		d.add(candidate{command: "golangci-lint run", kind: kLint, sig: "golangci-lint", source: f, setup: setup, rank: 2, strong: true,
			evidence: []Finding{finding(LayerManifest, f, "golangci-lint is configured")}})
	}
}

func firstOf(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}
