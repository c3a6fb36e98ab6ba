package shellcmd

import "strings"

// rubyTool classifies Bundler, rake, RSpec, Minitest, Rails and Ruby.
func (c *cls) rubyTool(k call) (Info, bool) {
	rest := k.rest
	switch k.tool {
	case "bundle", "bundler":
		return c.classifyBundle(rest, k.dir, k.depth), true
	case "rake":
		return c.classifyRake(rest, k.dir, k.depth), true
	case "rspec", "cucumber", "minitest", "m", "testrb":
		return Info{Kind: Test, Sig: "rspec", Runner: rubyRunner(k.tool)}, true
	case "rails":
		var kind Kind
		for _, a := range positional(rest, nil) {
			switch {
			case a == "test:system" || a == "spec:system":
				kind |= Test | E2E
			case strings.HasPrefix(a, "test") || strings.HasPrefix(a, "spec"):
				kind |= Test
			case strings.HasPrefix(a, "db:"):
				kind |= Service | Install
			}
		}
		if kind.Has(Test) {
			return Info{Kind: kind, Sig: "rails test"}, true
		}
		if kind != 0 {
			return Info{Kind: kind, Sig: "rails db"}, true
		}
		return Info{}, true
	case "ruby":
		if hasArgPrefix(rest, "-Itest", "-Ilib") || hasArgPrefix(positional(rest, nil), "test/", "spec/") {
			return Info{Kind: Test, Sig: "ruby test", Runner: "minitest"}, true
		}
		if p := positional(rest, set("-I", "-r", "-e")); len(p) > 0 {
			c.noteFile(p[0], k.dir)
		}
		return Info{}, true
	case "gem":
		p := positional(rest, nil)
		if len(p) > 0 && p[0] == "build" {
			return Info{Kind: Build, Sig: "gem build"}, true
		}
		if len(p) > 0 && p[0] == "push" {
			return Info{Kind: Deploy}, true
		}
		return Info{Kind: Toolchain}, true
	case "srb", "steep":
		return Info{Kind: Type, Sig: k.tool}, true
	case "jekyll":
		return Info{Kind: Deploy}, true
	}
	return Info{}, false
}

func rubyRunner(tool string) string {
	switch tool {
	case "rspec":
		return "rspec"
	case "cucumber":
		return "cucumber"
	}
	return "minitest"
}

func (c *cls) classifyBundle(rest []string, dir string, depth int) Info {
	p := positional(rest, set("--gemfile", "--jobs", "-j", "--retry", "--path", "--without", "--with"))
	if len(p) == 0 {
		return Info{Kind: Install, Sig: "bundle install"}
	}
	switch p[0] {
	case "install", "update", "config", "lock", "check", "binstubs", "cache", "package":
		if p[0] == "config" {
			return Info{Kind: CIOnly}
		}
		return Info{Kind: Install, Sig: "bundle install"}
	case "exec", "ex":
		return c.classifyDepth(dropRunnerFlags(after(rest, p[0]), set("--gemfile")), dir, depth+1)
	case "audit":
		return Info{Kind: Lint, Sig: "bundle audit"}
	}
	return Info{}
}

func (c *cls) classifyRake(rest []string, dir string, depth int) Info {
	p := positional(rest, set("-f", "--rakefile", "-I", "-r"))
	tasks := []string{}
	for _, a := range p {
		if IsAssignment(a) {
			continue
		}
		tasks = append(tasks, a)
	}
	if len(tasks) == 0 {
		tasks = []string{"default"}
	}
	var k Kind
	var runner string
	for _, t := range tasks {
		name := t
		if i := strings.Index(name, "["); i > 0 {
			name = name[:i]
		}
		if i := strings.LastIndex(name, ":"); i >= 0 && i < len(name)-1 {
			// spec:unit, test:system
			if nk := ClassifyName(name[:i]); nk.Has(Test) {
				k |= nk
				continue
			}
			name = name[i+1:]
		}
		if name == "default" {
			if info, ok := c.resolveScript("rake", dir, "default", depth); ok && info.Kind != 0 {
				k |= info.Kind
				runner = firstNonEmpty(runner, info.Runner)
			} else {
				k |= Test // the default rake task runs the tests in almost every gem
			}
			continue
		}
		if info, ok := c.resolveScript("rake", dir, name, depth); ok && info.Kind != 0 {
			k |= info.Kind
			runner = firstNonEmpty(runner, info.Runner)
			continue
		}
		k |= ClassifyName(name) &^ Watch
	}
	if k == 0 {
		return Info{}
	}
	return Info{Kind: k, Sig: "rake " + strings.Join(tasks, " "), ScriptTool: "rake", Script: strings.Join(tasks, " "), Runner: runner}
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
