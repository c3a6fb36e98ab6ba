package shellcmd

import "strings"

// runnerTool classifies the task runners whose targets are followed: make,
// just, task and their kin.
func (c *cls) runnerTool(k call) (Info, bool) {
	switch k.tool {
	case "make", "gmake", "mingw32-make":
		return c.classifyMake(k.rest, k.dir, k.depth), true
	case "just", "task", "go-task", "mage", "invoke", "inv", "cake", "nake", "doit", "poe", "xc", "earthly", "dagger":
		return c.classifyRunner(k.tool, k.rest, k.dir, k.depth), true
	}
	return Info{}, false
}

func (c *cls) classifyMake(rest []string, dir string, depth int) Info {
	valued := set("-C", "-f", "--file", "-j", "--jobs", "-l", "-o", "-W", "-I", "--directory")
	d := dir
	for i := 0; i < len(rest)-1; i++ {
		if rest[i] == "-C" || rest[i] == "--directory" {
			d = Join(d, rest[i+1])
		}
	}
	for _, a := range rest {
		if strings.HasPrefix(a, "--directory=") {
			d = Join(d, strings.TrimPrefix(a, "--directory="))
		} else if strings.HasPrefix(a, "-C") && len(a) > 2 {
			d = Join(d, a[2:])
		}
	}
	var targets []string
	for _, a := range positional(rest, valued) {
		if !IsAssignment(a) {
			targets = append(targets, a)
		}
	}
	if len(targets) == 0 {
		targets = []string{""}
	}
	var k Kind
	var note, runner string
	for _, t := range targets {
		name := t
		if name == "" {
			// Plain `make` runs the default goal, which by convention
			// builds; it tests only when the goal is named for it.
			name = c.defaultTarget("make", d)
			if nk := ClassifyName(name); nk&GateKinds == 0 || nk.Has(Build) {
				k |= Build
				if name != "" {
					c.resolveScript("make", d, name, depth)
				} else {
					// No default goal known: whatever the Makefile's
					// first target becomes is what runs.
					c.tr.file(ConventionalFile("make", d))
				}
				continue
			}
		}
		if name == "" {
			k |= Build
			continue
		}
		info := c.scriptInfo("make", "make "+t, d, name, depth)
		if t == "" && info.Kind == 0 {
			info.Kind = Build
		}
		if name == "check" && info.Kind == 0 {
			info.Kind = Test
		}
		k |= info.Kind
		runner = firstNonEmpty(runner, info.Runner)
		if note == "" {
			note = info.Note
		}
	}
	sig := strings.TrimSpace("make " + strings.Join(targets, " "))
	return Info{Kind: k, Sig: sig, ScriptTool: "make", Script: strings.Join(targets, " "), Note: note, Runner: runner}
}

func (c *cls) classifyRunner(tool string, rest []string, dir string, depth int) Info {
	runner := tool
	if tool == "go-task" {
		runner = "task"
	}
	for i := 0; i < len(rest)-1; i++ {
		if (rest[i] == "-d" || rest[i] == "--dir" || rest[i] == "--working-directory") && (runner == "task" || runner == "just") {
			dir = Join(dir, rest[i+1])
		}
	}
	p := positional(rest, set("-d", "--dir", "-t", "--taskfile", "-f", "--justfile", "--working-directory", "--set", "-c", "--collection"))
	var names []string
	for _, a := range p {
		if !IsAssignment(a) {
			names = append(names, a)
		}
	}
	if len(names) == 0 {
		names = []string{c.defaultTarget(runner, dir)}
		if names[0] == "" {
			names[0] = "default"
		}
	}
	name := names[0]
	if tool == "just" || tool == "task" || tool == "go-task" || tool == "mage" {
		// The first name is the recipe; the rest are its arguments.
		names = names[:1]
	}
	var k Kind
	var note, testRunner string
	for _, n := range names {
		info := c.scriptInfo(runner, tool+" "+n, dir, n, depth)
		k |= info.Kind
		testRunner = firstNonEmpty(testRunner, info.Runner)
		if note == "" {
			note = info.Note
		}
	}
	return Info{Kind: k &^ Watch, Sig: tool + " " + name, ScriptTool: runner, Script: name, Note: note, Runner: testRunner}
}
