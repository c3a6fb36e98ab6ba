package shellcmd

import "strings"

// nodeTool classifies the JavaScript package managers, runners and tools.
func (c *cls) nodeTool(k call) (Info, bool) {
	rest := k.rest
	switch k.tool {
	case "npm", "pnpm", "yarn", "bun":
		return c.classifyNode(k.tool, rest, k.dir, k.depth), true
	case "npx", "bunx", "pnpx":
		return c.classifyDepth(dropRunnerFlags(rest, set("-p", "--package")), k.dir, k.depth+1), true
	case "deno":
		return c.classifyDeno(rest, k.dir, k.depth), true
	case "node":
		if hasFlag(rest, "--test") {
			return Info{Kind: Test, Sig: "node --test"}, true
		}
		if p := positional(rest, set("-r", "--require", "--import", "--loader", "-e", "--eval")); len(p) > 0 {
			c.noteFile(p[0], k.dir)
			return withSig(nameKindOfPath(p[0]), "node "+p[0]), true
		}
		return Info{}, true
	case "jest", "vitest", "mocha", "ava", "tap", "tape", "uvu", "borp", "c8", "nyc", "karma", "ng", "react-scripts", "craco", "playwright", "cypress", "wdio", "testcafe", "jasmine", "lab", "qunit", "web-test-runner", "wtr", "vue-cli-service":
		return classifyJSTest(k.tool, rest), true
	case "tsc", "vue-tsc", "svelte-check", "tsgo":
		if hasFlag(rest, "--watch", "-w") {
			return Info{Kind: Type | Watch, Sig: "tsc", Note: "`tsc --watch` never exits"}, true
		}
		if k.tool == "tsc" && !hasFlag(rest, "--noEmit", "--noemit") && !hasFlag(rest, "-b", "--build") {
			return Info{Kind: Type | Build, Sig: "tsc"}, true
		}
		return Info{Kind: Type, Sig: "tsc"}, true
	case "turbo", "nx", "lerna", "ultra", "wireit", "moon":
		return classifyMonorepoRunner(k.tool, rest), true
	case "webpack", "rollup", "tsup", "esbuild", "parcel", "unbuild", "swc", "babel", "rspack", "ncc", "microbundle", "vite", "next", "nuxt", "astro", "svelte-kit", "gatsby", "electron-builder":
		p := positional(rest, nil)
		switch k.tool {
		case "vite", "next", "nuxt", "astro", "gatsby":
			if len(p) == 0 || p[0] == "dev" || p[0] == "serve" || p[0] == "start" || p[0] == "preview" {
				return Info{Kind: Watch, Sig: k.tool}, true
			}
			if p[0] == "lint" {
				return Info{Kind: Lint, Sig: k.tool + " lint"}, true
			}
		}
		if hasFlag(rest, "--watch", "-w") {
			return Info{Kind: Watch, Sig: k.tool}, true
		}
		return Info{Kind: Build, Sig: k.tool}, true
	case "prettier":
		if hasFlag(rest, "--check", "-c", "--list-different", "-l") {
			return Info{Kind: Format, Sig: "prettier"}, true
		}
		return Info{}, true
	case "biome", "@biomejs/biome":
		if hasFlag(rest, "--write", "--apply", "--fix") {
			return Info{}, true
		}
		return Info{Kind: Lint | Format, Sig: "biome"}, true
	case "semantic-release", "changeset", "changesets", "release-it", "np", "vsce", "ovsx", "gh-pages":
		return Info{Kind: Deploy}, true
	}
	return Info{}, false
}

func classifyJSTest(tool string, rest []string) Info {
	switch tool {
	case "c8", "nyc":
		if len(rest) > 0 && (rest[0] == "report" || rest[0] == "check-coverage") {
			return Info{Kind: Coverage | Report, Sig: tool + " " + rest[0]}
		}
		return Info{Kind: Test | Coverage, Sig: tool}
	case "vitest":
		p := positional(rest, nil)
		k := Test
		if hasFlag(rest, "--coverage") || hasArgPrefix(rest, "--coverage.") {
			k |= Coverage
		}
		if len(p) > 0 && (p[0] == "bench") {
			return Info{Kind: Bench}
		}
		if hasFlag(rest, "--watch", "-w") || len(p) > 0 && (p[0] == "watch" || p[0] == "dev") {
			return Info{Kind: k | Watch, Sig: "vitest", Note: "`vitest --watch` never exits", Fix: "vitest run"}
		}
		if !(len(p) > 0 && p[0] == "run") && !hasFlag(rest, "--run") {
			return Info{Kind: k, Sig: "vitest", Note: "plain `vitest` watches when it has a terminal; without one (as in the loop) it runs once"}
		}
		return Info{Kind: k, Sig: "vitest"}
	case "jest":
		k := Test
		if hasFlag(rest, "--coverage") {
			k |= Coverage
		}
		if hasFlag(rest, "--watch", "--watchAll") && !hasFlag(rest, "--watchAll=false", "--watch=false") {
			return Info{Kind: k | Watch, Sig: "jest", Note: "`jest --watch` never exits", Fix: "jest"}
		}
		return Info{Kind: k, Sig: "jest"}
	case "mocha", "ava", "tap", "tape", "uvu", "borp", "jasmine", "lab", "qunit", "web-test-runner", "wtr":
		if hasFlag(rest, "--watch", "-w") {
			return Info{Kind: Test | Watch, Sig: tool, Note: "`" + tool + " --watch` never exits"}
		}
		return Info{Kind: Test, Sig: tool}
	case "karma":
		if hasFlag(rest, "--single-run") && !hasFlag(rest, "--single-run=false") {
			return Info{Kind: Test | E2E, Sig: "karma"}
		}
		return Info{Kind: Test | E2E | Watch, Sig: "karma", Note: "`karma start` watches unless given --single-run", Fix: "karma start --single-run"}
	case "ng":
		p := positional(rest, nil)
		if len(p) > 0 && (p[0] == "test" || p[0] == "t") {
			if hasFlag(rest, "--watch=false", "--no-watch") || hasAny(rest, "--watch=false") {
				return Info{Kind: Test, Sig: "ng test"}
			}
			return Info{Kind: Test | Watch, Sig: "ng test", Note: "`ng test` watches by default", Fix: "ng test --watch=false"}
		}
		if len(p) > 0 && p[0] == "lint" {
			return Info{Kind: Lint, Sig: "ng lint"}
		}
		if len(p) > 0 && (p[0] == "build" || p[0] == "b") {
			return Info{Kind: Build, Sig: "ng build"}
		}
		if len(p) > 0 && p[0] == "e2e" {
			return Info{Kind: Test | E2E, Sig: "ng e2e"}
		}
		return Info{Kind: Watch, Sig: "ng"}
	case "react-scripts", "craco":
		p := positional(rest, nil)
		if len(p) > 0 && p[0] == "test" {
			if hasFlag(rest, "--watchAll=false") || hasAny(rest, "--watchAll=false") {
				return Info{Kind: Test, Sig: "react-scripts test"}
			}
			return Info{Kind: Test | Watch, Sig: "react-scripts test", Note: "`react-scripts test` watches unless CI=true"}
		}
		if len(p) > 0 && p[0] == "build" {
			return Info{Kind: Build, Sig: "react-scripts build"}
		}
		return Info{Kind: Watch, Sig: "react-scripts"}
	case "vue-cli-service":
		p := positional(rest, nil)
		if len(p) > 0 && strings.HasPrefix(p[0], "test") {
			return Info{Kind: Test, Sig: "vue-cli-service " + p[0]}
		}
		if len(p) > 0 && p[0] == "lint" {
			return Info{Kind: Lint, Sig: "vue-cli-service lint"}
		}
		if len(p) > 0 && p[0] == "build" {
			return Info{Kind: Build, Sig: "vue-cli-service build"}
		}
		return Info{Kind: Watch}
	case "playwright", "cypress", "wdio", "testcafe":
		p := positional(rest, nil)
		if tool == "playwright" && len(p) > 0 && p[0] == "install" {
			return Info{Kind: Toolchain}
		}
		if tool == "playwright" && len(p) > 0 && (p[0] == "merge-reports" || p[0] == "show-report") {
			return Info{Kind: CIOnly | Report, Sig: "playwright " + p[0]}
		}
		if tool == "cypress" && len(p) > 0 && (p[0] == "open" || p[0] == "install" || p[0] == "verify") {
			return Info{Kind: Toolchain}
		}
		return Info{Kind: Test | E2E, Sig: tool}
	}
	return Info{Kind: Test, Sig: tool}
}

// classifyMonorepoRunner handles turbo run test lint, nx run-many -t test,
// lerna run test: the kinds are the union of the task names.
func classifyMonorepoRunner(tool string, rest []string) Info {
	var tasks []string
	valued := set("--filter", "-F", "--scope", "--concurrency", "--projects", "-p", "--cache-dir", "--team", "--token", "--base", "--head", "--parallel", "--output-logs", "--log-order", "--exclude", "--configuration", "-c", "--env-mode", "--cache", "--graph", "--summarize", "--ignore", "--since", "--nx-bail")
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "-t" || a == "--target" || a == "--targets":
			if i+1 < len(rest) {
				tasks = append(tasks, strings.Split(rest[i+1], ",")...)
				i++
			}
		case strings.HasPrefix(a, "--target=") || strings.HasPrefix(a, "--targets=") || strings.HasPrefix(a, "-t="):
			tasks = append(tasks, strings.Split(a[strings.Index(a, "=")+1:], ",")...)
		case strings.HasPrefix(a, "-"):
			if valued[a] {
				i++
			}
		default:
			tasks = append(tasks, a)
		}
	}
	var k Kind
	var names []string
	for _, t := range tasks {
		switch t {
		case "run", "run-many", "affected", "exec", "--":
			continue // the runner's own subcommands
		}
		if tool == "nx" && strings.Contains(t, ":") {
			t = t[strings.LastIndex(t, ":")+1:] // nx run project:test
		}
		if tool == "lerna" && (t == "bootstrap" || t == "publish" || t == "version") {
			if t == "bootstrap" {
				return Info{Kind: Install, Sig: "lerna bootstrap"}
			}
			return Info{Kind: Deploy}
		}
		nk := ClassifyName(t)
		if nk.Has(Watch) || nk.Has(Deploy) {
			continue
		}
		if nk != 0 {
			names = append(names, t)
		}
		k |= nk
	}
	if k == 0 {
		return Info{}
	}
	return Info{Kind: k, Sig: tool + " " + strings.Join(names, " ")}
}

func (c *cls) classifyNode(pm string, rest []string, dir string, depth int) Info {
	valued := set("--filter", "-F", "--prefix", "-C", "--dir", "--cwd", "-w", "--workspace", "--scope")
	if pm == "yarn" && len(rest) > 0 && rest[0] == "workspace" && len(rest) > 2 {
		return c.classifyNode(pm, rest[2:], dir, depth)
	}
	// npm --prefix web test, pnpm -C web test, yarn --cwd web test: the
	// scripts are those of the named directory.
	for i := 0; i < len(rest)-1; i++ {
		if rest[i] == "--prefix" || rest[i] == "-C" || rest[i] == "--dir" || rest[i] == "--cwd" {
			dir = Join(dir, rest[i+1])
		}
	}
	p := positional(rest, valued)
	recursive := hasFlag(rest, "-r", "--recursive", "--workspaces", "-ws", "--filter", "-F", "--workspace", "-w")
	if len(p) == 0 {
		if pm == "yarn" || pm == "bun" {
			return Info{Kind: Install, Sig: pm + " install"}
		}
		return Info{}
	}
	sub := p[0]
	if (sub == "install" || sub == "i") && len(p) > 1 || sub == "add" || sub == "remove" || sub == "rm" || sub == "uninstall" || sub == "un" {
		if !hasFlag(rest, "-g", "--global") {
			// npm install --save-dev pkg@1, yarn add: changes the manifest
			// for one CI cell, not an install of the project's dependencies.
			return Info{Kind: CIOnly, Note: "changes the manifest"}
		}
	}
	switch sub {
	case "install", "i", "ci", "add", "rebuild", "link":
		if hasFlag(rest, "-g", "--global") {
			return Info{Kind: Toolchain}
		}
		return Info{Kind: Install, Sig: pm + " install"}
	case "global":
		return Info{Kind: Toolchain}
	case "publish", "pack", "version", "release", "deploy":
		if sub == "pack" {
			return Info{Kind: Build, Sig: pm + " pack"}
		}
		return Info{Kind: Deploy}
	case "audit", "outdated", "ls", "list", "config", "cache", "store", "why", "info", "view", "whoami", "--version", "-v", "set", "prune", "dedupe", "licenses", "doctor", "fetch":
		if sub == "fetch" {
			return Info{Kind: Install, Sig: pm + " fetch"}
		}
		return Info{Kind: CIOnly}
	case "exec", "dlx", "x":
		return c.classifyDepth(dropRunnerFlags(after(rest, sub), valued), dir, depth+1)
	case "workspaces":
		if pm == "yarn" {
			// yarn workspaces run test | yarn workspaces foreach -A run test
			q := p[1:]
			for len(q) > 0 && (q[0] == "foreach" || q[0] == "run") {
				q = q[1:]
			}
			if len(q) > 0 {
				k := ClassifyName(q[0])
				return Info{Kind: k &^ Watch, Sig: "yarn " + q[0], ScriptTool: "npm", Script: q[0]}
			}
		}
		return Info{}
	case "test", "t", "tst":
		if pm == "bun" && sub == "test" {
			k := Test
			if hasFlag(rest, "--coverage") {
				k |= Coverage
			}
			if hasFlag(rest, "--watch") {
				k |= Watch
			}
			return Info{Kind: k, Sig: "bun test", Note: "`bun test` runs Bun's built-in test runner, not the package.json test script (that is `bun run test`)"}
		}
		info := c.npmScript(pm, pm+" test", dir, "test", depth)
		if recursive {
			info.Sig = pm + " -r test"
		}
		return c.nodeScriptTraps(info, pm, dir, "test")
	case "run", "run-script", "rum", "urn":
		if len(p) < 2 {
			return Info{Kind: CIOnly}
		}
		name := p[1]
		sig := pm + " " + name
		if pm == "bun" {
			sig = "bun run " + name
		}
		if name == "test" && pm != "bun" {
			sig = pm + " test"
		}
		info := c.npmScript(pm, sig, dir, name, depth)
		if recursive {
			info.Sig = pm + " -r " + name
		}
		return c.nodeScriptTraps(info, pm, dir, name)
	}
	if pm == "npm" {
		switch sub {
		case "start", "restart", "stop":
			return Info{Kind: Watch, Sig: "npm " + sub}
		}
		return Info{}
	}
	if pm == "bun" {
		// bun x.ts runs a file; bun <script> runs a script when one exists.
		if strings.Contains(sub, ".") || strings.Contains(sub, "/") {
			c.noteFile(sub, dir)
			return withSig(nameKindOfPath(sub), "bun "+sub)
		}
	}
	// pnpm/yarn/bun shorthand: `pnpm lint` runs the lint script, or a binary.
	if c.hasScript("npm", dir, sub) {
		sig := pm + " " + sub
		if pm == "bun" {
			sig = "bun run " + sub
		}
		info := c.npmScript(pm, sig, dir, sub, depth)
		if recursive {
			info.Sig = pm + " -r " + sub
		}
		return c.nodeScriptTraps(info, pm, dir, sub)
	}
	// A binary from node_modules/.bin (pnpm vitest, yarn eslint .).
	m := c.tr.mark()
	inner := c.classifyDepth(append([]string{sub}, after(rest, sub)...), dir, depth+1)
	if inner.Kind != 0 {
		return inner
	}
	c.tr.rollback(m)
	info := Info{Kind: ClassifyName(sub), Sig: pm + " " + sub, ScriptTool: "npm", Script: sub}
	if recursive {
		info.Sig = pm + " -r " + sub
	}
	return info
}

// after returns the words after the first w.
func after(args []string, w string) []string {
	for i, a := range args {
		if a == w {
			return args[i+1:]
		}
	}
	return nil
}

// npmScript is scriptInfo for a package.json script; npm (and yarn 1) also
// run its pre and post scripts, which the analysis follows.
func (c *cls) npmScript(pm, sig, dir, name string, depth int) Info {
	if c.tr != nil && (pm == "npm" || pm == "yarn") && c.hasScript("npm", dir, "pre"+name) {
		c.resolveScript("npm", dir, "pre"+name, depth)
	}
	info := c.scriptInfo("npm", sig, dir, name, depth)
	if c.tr != nil && (pm == "npm" || pm == "yarn") && c.hasScript("npm", dir, "post"+name) {
		c.resolveScript("npm", dir, "post"+name, depth)
	}
	return info
}

// defaultNpmTest is the test script `npm init` writes: it always fails.
const defaultNpmTest = `echo "Error: no test specified" && exit 1`

func (c *cls) nodeScriptTraps(info Info, pm, dir, name string) Info {
	if c.lookup == nil {
		return info
	}
	body, _, ok := c.lookup.Script("npm", dir, name)
	if !ok {
		return info
	}
	if strings.Contains(body, "no test specified") && strings.Contains(body, "exit 1") {
		info.Kind = 0
		info.Note = "the " + name + " script is npm init's placeholder (`" + defaultNpmTest + "`): it always fails"
		return info
	}
	if info.Kind.Has(Watch) && info.Fix == "" {
		switch {
		case strings.Contains(body, "react-scripts test") || strings.Contains(body, "craco test"):
			info.Fix = "CI=true " + pm + " " + RunWord(pm, name)
		case strings.Contains(body, "jest"):
			info.Fix = pm + " " + RunWord(pm, name) + " -- --watchAll=false"
		case strings.Contains(body, "vitest"):
			info.Fix = pm + " " + RunWord(pm, name) + " -- --run"
		case strings.Contains(body, "ng test"):
			info.Fix = pm + " " + RunWord(pm, name) + " -- --watch=false"
		case strings.Contains(body, "karma"):
			info.Fix = pm + " " + RunWord(pm, name) + " -- --single-run"
		}
	} else if info.Fix != "" {
		info.Fix = "" // the fix of an inner command does not apply to the script
	}
	return info
}

// RunWord is how a package manager runs a script: npm test, npm run lint,
// pnpm lint, bun run test.
func RunWord(pm, name string) string {
	if name == "test" && pm != "bun" {
		return "test"
	}
	if pm == "npm" || pm == "bun" {
		return "run " + name
	}
	return name
}

func (c *cls) classifyDeno(rest []string, dir string, depth int) Info {
	p := positional(rest, set("--config", "-c", "--import-map", "--lock", "--reporter", "--filter"))
	if len(p) == 0 {
		return Info{}
	}
	switch p[0] {
	case "test":
		k := Test
		if hasArgPrefix(rest, "--coverage") {
			k |= Coverage
		}
		if hasFlag(rest, "--watch") {
			k |= Watch
		}
		return Info{Kind: k, Sig: "deno test"}
	case "lint":
		return Info{Kind: Lint, Sig: "deno lint"}
	case "fmt":
		if hasFlag(rest, "--check") {
			return Info{Kind: Format, Sig: "deno fmt"}
		}
		return Info{}
	case "check":
		return Info{Kind: Type, Sig: "deno check"}
	case "task":
		if len(p) > 1 {
			return c.scriptInfo("deno", "deno task "+p[1], dir, p[1], depth)
		}
	case "install", "cache":
		return Info{Kind: Install, Sig: "deno install"}
	case "compile", "bundle":
		return Info{Kind: Build, Sig: "deno " + p[0]}
	case "publish":
		return Info{Kind: Deploy}
	case "coverage":
		return Info{Kind: Coverage | Report, Sig: "deno coverage"}
	case "run":
		if len(p) > 1 {
			c.noteFile(p[1], dir)
		}
	}
	return Info{}
}

// noteFile records a file of the repository a command runs (node x.js,
// python run_tests.py) as a dependency, when it exists.
func (c *cls) noteFile(p, dir string) {
	if c.tr == nil || p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "-") {
		return
	}
	f := Join(dir, p)
	if strings.HasPrefix(f, "..") || c.lookup != nil && !c.lookup.Exists(f) {
		return
	}
	c.tr.script(f)
}
