package shellcmd

import "strings"

// shellTool classifies shells (bash -c '...', sh scripts/test.sh), shell
// test runners and sourced files.
func (c *cls) shellTool(k call) (Info, bool) {
	switch k.tool {
	case "bash", "sh", "zsh", "dash", "ksh":
		return c.classifyShell(k.tool, k.rest, k.dir, k.depth), true
	case "source", ".":
		if len(k.rest) > 0 {
			c.noteFile(k.rest[0], k.dir)
		}
		return Info{Kind: CIOnly}, true
	case "prove", "bats", "busted", "shellspec", "roundup", "tusk", "kcov":
		return Info{Kind: Test, Sig: k.tool, Runner: k.tool}, true
	}
	return Info{}, false
}

func (c *cls) classifyShell(sh string, rest []string, dir string, depth int) Info {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if (a == "-c" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.HasSuffix(a, "c") && len(a) > 2) && i+1 < len(rest) {
			// bash -c 'script', bash -ec 'script'
			if depth >= maxScriptDepth {
				c.tr.problem("stopped following at depth " + itoa(maxScriptDepth) + ": " + sh + " -c")
				return Info{}
			}
			return c.classifyScript(rest[i+1], dir, depth+1, sh+" -c")
		}
		if a == "-o" || a == "+o" || a == "-O" || a == "+O" {
			i++ // set an option: its name follows
			continue
		}
		if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+") {
			continue
		}
		return c.classifyFile(a, dir, depth)
	}
	return Info{Kind: CIOnly}
}
