package criteria

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// packageJSON is the part of package.json inference reads.
type packageJSON struct {
	file           string
	Name           string
	Scripts        map[string]string
	Workspaces     []string
	PackageManager string
	Deps           map[string]bool // dependencies and devDependencies
}

// maxMembers bounds how many workspace members are read.
const maxMembers = 200

// parsePackageJSON reads package.json leniently: a field of the wrong type
// is ignored, only invalid JSON is an error.
func parsePackageJSON(data []byte) (*packageJSON, error) {
	var raw map[string]json.RawMessage
	if err := parseJSON(data, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	p := &packageJSON{Scripts: map[string]string{}, Deps: map[string]bool{}}
	_ = json.Unmarshal(raw["name"], &p.Name)
	_ = json.Unmarshal(raw["packageManager"], &p.PackageManager)
	var scripts map[string]json.RawMessage
	_ = json.Unmarshal(raw["scripts"], &scripts)
	for k, v := range scripts {
		var s string
		if json.Unmarshal(v, &s) == nil {
			p.Scripts[k] = s
		}
	}
	var ws []string
	if json.Unmarshal(raw["workspaces"], &ws) == nil {
		p.Workspaces = ws
	} else {
		var obj struct {
			Packages []string `json:"packages"`
		}
		if json.Unmarshal(raw["workspaces"], &obj) == nil {
			p.Workspaces = obj.Packages
		}
	}
	for _, key := range []string{"dependencies", "devDependencies", "peerDependencies", "optionalDependencies"} {
		var deps map[string]json.RawMessage
		if json.Unmarshal(raw[key], &deps) == nil {
			for k := range deps {
				p.Deps[k] = true
			}
		}
	}
	return p, nil
}

func (m *manifests) loadPackageJSON(dir string) *packageJSON {
	file := join(dir, "package.json")
	data, ok := m.r.read(file)
	if !ok {
		return nil
	}
	p, err := parsePackageJSON(data)
	if err != nil {
		m.r.unreadable(LayerManifest, file, err)
		return nil
	}
	p.file = file
	return p
}

// detectPM finds the package manager of dir: the packageManager field, then
// the lockfile here or in a parent (a workspace member uses the root's).
func (m *manifests) detectPM(dir string, pkg *packageJSON) (pm, source, lockDir string, berry bool) {
	if pkg != nil && pkg.PackageManager != "" {
		name, version, _ := strings.Cut(pkg.PackageManager, "@")
		switch name {
		case "npm", "pnpm", "yarn", "bun":
			berry = name == "yarn" && version != "" && !strings.HasPrefix(version, "1.")
			return name, pkg.file + " packageManager " + pkg.PackageManager, m.lockDir(dir, name), berry
		}
	}
	for d := dir; ; d = parentDir(d) {
		locks := []struct{ file, pm string }{
			{"pnpm-lock.yaml", "pnpm"}, {"bun.lock", "bun"}, {"bun.lockb", "bun"}, {"yarn.lock", "yarn"},
			{"package-lock.json", "npm"}, {"npm-shrinkwrap.json", "npm"},
		}
		for _, l := range locks {
			if m.r.exists(join(d, l.file)) {
				berry = l.pm == "yarn" && m.r.exists(join(d, ".yarnrc.yml"))
				return l.pm, join(d, l.file), d, berry
			}
		}
		if d == "." {
			break
		}
	}
	return "npm", "", "", false
}

func (m *manifests) lockDir(dir, pm string) string {
	files := map[string][]string{"pnpm": {"pnpm-lock.yaml"}, "bun": {"bun.lock", "bun.lockb"}, "yarn": {"yarn.lock"}, "npm": {"package-lock.json", "npm-shrinkwrap.json"}}[pm]
	for d := dir; ; d = parentDir(d) {
		for _, f := range files {
			if m.r.exists(join(d, f)) {
				return d
			}
		}
		if d == "." {
			return ""
		}
	}
}

func parentDir(d string) string {
	if d == "." || d == "" {
		return "."
	}
	p := path.Dir(d)
	if p == "" {
		return "."
	}
	return p
}

// relPath returns the path from dir a to dir b (both relative to the root).
func relPath(a, b string) string {
	a, b = clean(a), clean(b)
	if a == b {
		return "."
	}
	var as, bs []string
	if a != "." {
		as = strings.Split(a, "/")
	}
	if b != "." {
		bs = strings.Split(b, "/")
	}
	i := 0
	for i < len(as) && i < len(bs) && as[i] == bs[i] {
		i++
	}
	var parts []string
	for range as[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, bs[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// inDir prefixes a command with a cd when it must run elsewhere.
func inDir(from, to, cmd string) string {
	if rel := relPath(from, to); rel != "." {
		return "cd " + shellcmd.Quote(rel) + " && " + cmd
	}
	return cmd
}

func nodeInstall(pm string, hasLock, berry bool) string {
	switch pm {
	case "pnpm":
		if hasLock {
			return "pnpm install --frozen-lockfile"
		}
		return "pnpm install"
	case "yarn":
		if berry {
			return "yarn install --immutable"
		}
		if hasLock {
			return "yarn install --frozen-lockfile"
		}
		return "yarn install"
	case "bun":
		if hasLock {
			return "bun install --frozen-lockfile"
		}
		return "bun install"
	}
	if hasLock {
		return "npm ci"
	}
	return "npm install"
}

func pmExec(pm string) string {
	switch pm {
	case "pnpm":
		return "pnpm exec "
	case "yarn":
		return "yarn "
	case "bun":
		return "bunx "
	}
	return "npx "
}

// scriptRank orders scripts of one kind: the plain name first.
func scriptRank(name string) int {
	switch name {
	case "test", "lint", "typecheck", "type-check", "build", "coverage", "test:ci", "ci":
		if name == "ci" {
			return 3
		}
		return 0
	case "test:unit", "unit", "tsc", "types", "check-types", "lint:ci", "test:coverage", "test:cov", "check":
		return 1
	}
	return 2 + strings.Count(name, ":")
}

func (m *manifests) readNode(d *dirManifests) {
	pkg := m.loadPackageJSON(d.dir)
	if pkg == nil {
		return
	}
	d.pkg = pkg
	d.eco("node")
	pm, pmSource, lockDir, berry := m.detectPM(d.dir, pkg)
	d.pm, d.pmSource = pm, pmSource
	setup := nodeInstall(pm, lockDir != "", berry)
	if lockDir != "" && lockDir != d.dir {
		setup = inDir(d.dir, lockDir, setup)
	}
	d.setup = setup
	if pmSource != "" {
		d.fact(pmSource, "package manager "+pm+"; install with `"+setup+"`")
	} else {
		d.fact(pkg.file, "no lockfile or packageManager field: package manager npm assumed")
	}
	cl := m.classifier()
	for _, name := range sortedKeys(pkg.Scripts) {
		body := pkg.Scripts[name]
		if strings.HasPrefix(name, "pre") && pkg.Scripts[strings.TrimPrefix(name, "pre")] != "" || strings.HasPrefix(name, "post") && pkg.Scripts[strings.TrimPrefix(name, "post")] != "" {
			continue // lifecycle hooks run with their script
		}
		if shellcmd.ClassifyName(name).Has(kWatch) {
			continue // test:watch, dev: watchers by name
		}
		var cmd string
		if pm == "bun" {
			cmd = "bun run " + name
		} else {
			cmd = pm + " " + shellcmd.RunWord(pm, name)
		}
		args := strings.Fields(cmd)
		info := cl.classify(args, d.dir)
		if info.kind&gateKinds == 0 {
			if info.note != "" && shellcmd.ClassifyName(name).Has(kTest) {
				d.trap(pkg.file+" scripts."+name, info.note)
			}
			continue
		}
		if info.kind.Has(kDeploy) {
			continue
		}
		c := candidate{command: cmd, kind: info.kind &^ kWatch, sig: info.sig, source: pkg.file + " scripts." + name, setup: setup,
			rank: scriptRank(name), runner: "npm", script: name, inner: info.inner, strong: true,
			evidence: []Finding{finding(LayerManifest, pkg.file+" scripts."+name, fmt.Sprintf("script %q runs `%s`", name, body))}}
		if info.kind.Has(kWatch) {
			if info.fix != "" {
				c.command = info.fix
				c.problems = append(c.problems, fmt.Sprintf("the %s script starts a watcher that never exits (%s); the command runs it once", name, info.note))
			} else {
				c.unusable = fmt.Sprintf("the %s script starts a watcher that never exits (`%s`)", name, body)
			}
		}
		if info.kind.Has(kE2E) {
			c.problems = append(c.problems, "an end-to-end suite: it needs a browser or a running app")
		}
		if info.note != "" && !info.kind.Has(kWatch) && !strings.Contains(info.note, "terminal") {
			c.problems = append(c.problems, info.note)
		}
		d.add(c)
	}
	hasTest := false
	for _, c := range d.candidates {
		if c.runner == "npm" && c.kind.Has(kTest) && c.unusable == "" {
			hasTest = true
		}
	}
	if !hasTest {
		m.nodeWorkspaceTests(d, pkg, pm, berry, setup)
	}
	m.nodeFallbacks(d, pkg, pm, setup)
}

// workspacePatterns returns the member globs of a JS monorepo.
func (m *manifests) workspacePatterns(d *dirManifests, pkg *packageJSON) ([]string, string) {
	if len(pkg.Workspaces) > 0 {
		return pkg.Workspaces, pkg.file + " workspaces"
	}
	file := join(d.dir, "pnpm-workspace.yaml")
	if data, ok := m.r.read(file); ok {
		var doc struct {
			Packages []string `yaml:"packages"`
		}
		if err := parseYAML(data, &doc); err != nil {
			m.r.unreadable(LayerManifest, file, err)
			return nil, ""
		}
		return doc.Packages, file + " packages"
	}
	return nil, ""
}

// expandMembers expands workspace globs (dir/*, dir/**, literal paths) into
// candidate member directories with bounded listings, never a walk; whether
// a member has its marker file is left to the caller's read.
func (m *manifests) expandMembers(base string, patterns []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] && len(out) < maxMembers {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, pat := range patterns {
		if strings.HasPrefix(pat, "!") {
			continue
		}
		pat = strings.TrimSuffix(strings.TrimPrefix(pat, "./"), "/")
		switch {
		case strings.HasSuffix(pat, "/**") || strings.HasSuffix(pat, "/**/*"):
			root := join(base, strings.TrimSuffix(strings.TrimSuffix(pat, "/*"), "/**"))
			for _, s := range m.r.subdirs(root) {
				add(join(root, s))
				for _, s2 := range m.r.subdirs(join(root, s)) {
					add(join(join(root, s), s2))
				}
			}
		case strings.HasSuffix(pat, "/*") && !strings.Contains(strings.TrimSuffix(pat, "/*"), "*"):
			root := join(base, strings.TrimSuffix(pat, "/*"))
			for _, s := range m.r.subdirs(root) {
				add(join(root, s))
			}
		case strings.Contains(pat, "*"):
			dir, glob := path.Split(pat)
			if strings.Contains(dir, "*") {
				continue
			}
			root := join(base, dir)
			for _, s := range m.r.subdirs(root) {
				if ok, _ := path.Match(glob, s); ok {
					add(join(root, s))
				}
			}
		default:
			if m.r.isDir(join(base, pat)) {
				add(join(base, pat))
			}
		}
	}
	return out
}

// memberPackage reads a workspace member's package.json directly.
func (m *manifests) memberPackage(dir string) *packageJSON {
	file := join(dir, "package.json")
	data, ok := m.r.readDirect(file)
	if !ok {
		return nil
	}
	p, err := parsePackageJSON(data)
	if err != nil {
		m.r.unreadable(LayerManifest, file, err)
		return nil
	}
	p.file = file
	return p
}

func (m *manifests) nodeWorkspaceTests(d *dirManifests, pkg *packageJSON, pm string, berry bool, setup string) {
	patterns, source := m.workspacePatterns(d, pkg)
	if len(patterns) == 0 {
		if body, ok := pkg.Scripts["test"]; ok && strings.Contains(body, "no test specified") {
			d.trap(pkg.file+" scripts.test", "the test script is npm init's placeholder (`"+body+"`): it always fails, it is no test suite")
		}
		return
	}
	dirs := m.expandMembers(d.dir, patterns)
	var withTests, members []string
	for _, mem := range dirs {
		mp := m.memberPackage(mem)
		if mp == nil {
			continue
		}
		members = append(members, mem)
		if body, ok := mp.Scripts["test"]; ok && !strings.Contains(body, "no test specified") {
			withTests = append(withTests, mem)
		}
	}
	if len(withTests) == 0 {
		return
	}
	var cmd string
	switch {
	case pkg.Deps["turbo"] || m.r.exists(join(d.dir, "turbo.json")):
		cmd = pmExec(pm) + "turbo run test"
		if pm == "pnpm" || pm == "yarn" {
			cmd = pm + " turbo run test"
		}
	case pkg.Deps["nx"] || m.r.exists(join(d.dir, "nx.json")):
		cmd = pmExec(pm) + "nx run-many -t test"
	case pm == "pnpm":
		cmd = "pnpm -r test"
	case pm == "yarn" && berry:
		cmd = "yarn workspaces foreach -A run test"
	case pm == "yarn":
		cmd = "yarn workspaces run test"
	case pm == "bun":
		cmd = "bun run --filter '*' test"
	default:
		cmd = "npm test --workspaces --if-present"
	}
	list := strings.Join(withTests, ", ")
	if len(withTests) > 5 {
		list = strings.Join(withTests[:5], ", ") + fmt.Sprintf(" and %d more", len(withTests)-5)
	}
	trap := fmt.Sprintf("workspace root: its own package.json has no test script, so `%s test` at the root tests nothing; %d of %d members (%s) have one", pm, len(withTests), len(members), list)
	if len(dirs) == maxMembers {
		trap += fmt.Sprintf(" (only the first %d members were read)", maxMembers)
	}
	d.trap(pkg.file, trap)
	d.add(candidate{command: cmd, kind: kTest, sig: strings.Fields(cmd)[0] + " -r test", source: source, setup: setup, rank: 1, strong: true,
		evidence: []Finding{finding(LayerManifest, source, "runs the workspace members' tests with `"+cmd+"`")}})
}

var (
	eslintConfigs = []string{"eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts", ".eslintrc", ".eslintrc.js", ".eslintrc.cjs", ".eslintrc.json", ".eslintrc.yml", ".eslintrc.yaml"}
	jestConfigs   = []string{"jest.config.js", "jest.config.ts", "jest.config.mjs", "jest.config.cjs", "jest.config.json"}
	vitestConfigs = []string{"vitest.config.ts", "vitest.config.js", "vitest.config.mts", "vitest.config.mjs", "vitest.workspace.ts"}
)

func (m *manifests) firstExisting(dir string, names []string) string {
	for _, n := range names {
		if m.r.exists(join(dir, n)) {
			return join(dir, n)
		}
	}
	return ""
}

// nodeFallbacks proposes the tools' own commands where no script names them.
func (m *manifests) nodeFallbacks(d *dirManifests, pkg *packageJSON, pm, setup string) {
	has := func(k kind) bool {
		for _, c := range d.candidates {
			if c.kind.Has(k) && c.unusable == "" {
				return true
			}
		}
		return false
	}
	x := pmExec(pm)
	if !has(kType) && m.r.exists(join(d.dir, "tsconfig.json")) && (pkg.Deps["typescript"] || m.r.exists("node_modules")) {
		d.add(candidate{command: x + "tsc --noEmit", kind: kType, sig: "tsc", source: join(d.dir, "tsconfig.json"), setup: setup, rank: 5,
			evidence: []Finding{finding(LayerManifest, join(d.dir, "tsconfig.json"), "TypeScript project without a typecheck script: `tsc --noEmit` type-checks it")}})
	}
	if !has(kLint) {
		if f := m.firstExisting(d.dir, eslintConfigs); f != "" {
			d.add(candidate{command: x + "eslint .", kind: kLint, sig: "eslint", source: f, setup: setup, rank: 5,
				evidence: []Finding{finding(LayerManifest, f, "ESLint is configured but no lint script runs it")}})
		} else if f := m.firstExisting(d.dir, []string{"biome.json", "biome.jsonc"}); f != "" {
			d.add(candidate{command: x + "biome check .", kind: kLint | kFormat, sig: "biome", source: f, setup: setup, rank: 5,
				evidence: []Finding{finding(LayerManifest, f, "Biome is configured but no lint script runs it")}})
		}
	}
	if !has(kTest) {
		if f := m.firstExisting(d.dir, vitestConfigs); f != "" || pkg.Deps["vitest"] {
			if f == "" {
				f = pkg.file
			}
			d.add(candidate{command: x + "vitest run", kind: kTest, sig: "vitest", source: f, setup: setup, rank: 5,
				evidence: []Finding{finding(LayerManifest, f, "Vitest is set up but no test script runs it")}})
		} else if f := m.firstExisting(d.dir, jestConfigs); f != "" || pkg.Deps["jest"] {
			if f == "" {
				f = pkg.file
			}
			d.add(candidate{command: x + "jest", kind: kTest, sig: "jest", source: f, setup: setup, rank: 5,
				evidence: []Finding{finding(LayerManifest, f, "Jest is set up but no test script runs it")}})
		} else if pm == "bun" && (m.r.exists(join(d.dir, "bunfig.toml")) || pkg.Deps["@types/bun"] || pkg.Deps["bun-types"]) {
			d.add(candidate{command: "bun test", kind: kTest, sig: "bun test", source: pkg.file, setup: setup, rank: 5,
				evidence: []Finding{finding(LayerManifest, pkg.file, "a Bun project without a test script: `bun test` runs Bun's built-in runner")}})
		}
	}
}
