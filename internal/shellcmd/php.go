package shellcmd

import "strings"

// phpTool classifies Composer, PHPUnit and the PHP tools.
func (c *cls) phpTool(k call) (Info, bool) {
	rest := k.rest
	switch k.tool {
	case "composer":
		return c.classifyComposer(rest, k.dir, k.depth), true
	case "phpunit", "pest", "paratest", "codecept", "phpspec", "infection", "atoum", "kahlan", "simple-phpunit":
		kind := Test
		if hasArgPrefix(rest, "--coverage") {
			kind |= Coverage
		}
		runner := "phpunit"
		if k.tool == "pest" {
			runner = "pest"
		}
		return Info{Kind: kind, Sig: "phpunit", Runner: runner}, true
	case "php-cs-fixer", "pint", "php-cs", "ecs", "rector":
		if hasFlag(rest, "--dry-run", "--test") || k.tool == "ecs" && !hasFlag(rest, "--fix") {
			return Info{Kind: Format | Lint, Sig: k.tool}, true
		}
		return Info{}, true
	case "phpstan", "psalm":
		return Info{Kind: Type, Sig: k.tool}, true
	case "php":
		p := positional(rest, set("-d", "-c", "-f"))
		if len(p) > 0 && (strings.HasSuffix(p[0], "phpunit") || strings.HasSuffix(p[0], "pest")) {
			c.noteFile(p[0], k.dir)
			return Info{Kind: Test, Sig: "phpunit", Runner: "phpunit"}, true
		}
		if len(p) > 1 && p[0] == "artisan" && p[1] == "test" {
			return Info{Kind: Test, Sig: "artisan test", Runner: "phpunit"}, true
		}
		if len(p) > 0 {
			c.noteFile(p[0], k.dir)
			return c.classifyDepth(append([]string{p[0]}, after(rest, p[0])...), k.dir, k.depth+1), true
		}
		return Info{Kind: CIOnly}, true
	}
	return Info{}, false
}

func (c *cls) classifyComposer(rest []string, dir string, depth int) Info {
	p := positional(rest, set("-d", "--working-dir", "--timeout"))
	for i := 0; i < len(rest)-1; i++ {
		if rest[i] == "-d" || rest[i] == "--working-dir" {
			dir = Join(dir, rest[i+1])
		}
	}
	if len(p) == 0 {
		return Info{}
	}
	switch p[0] {
	case "require", "remove", "config":
		if hasFlag(rest, "--global", "-g") || p[0] == "config" {
			return Info{Kind: CIOnly}
		}
		return Info{Kind: CIOnly, Note: "changes composer.json"}
	case "install", "update", "i", "u", "dump-autoload", "dumpautoload":
		return Info{Kind: Install, Sig: "composer install"}
	case "validate", "audit", "normalize", "check-platform-reqs", "outdated", "diagnose", "self-update", "global", "show":
		if p[0] == "validate" || p[0] == "normalize" {
			return Info{Kind: Lint, Sig: "composer " + p[0]}
		}
		if p[0] == "global" {
			return Info{Kind: Toolchain}
		}
		return Info{Kind: CIOnly}
	case "run-script", "run", "exec":
		if len(p) < 2 {
			return Info{}
		}
		if p[0] == "exec" {
			return c.classifyDepth(dropRunnerFlags(after(rest, "exec"), nil), dir, depth+1)
		}
		return c.scriptInfo("composer", "composer "+p[1], dir, p[1], depth)
	}
	return c.scriptInfo("composer", "composer "+p[0], dir, p[0], depth)
}
