package criteria

import (
	"fmt"
	"path"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// mdCommand is a command found in a Markdown file.
type mdCommand struct {
	text    string
	line    int
	section string
	inline  bool
}

var (
	headingRe    = lazyre.New(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	fenceOpenRe  = lazyre.New("^\\s{0,3}(```+|~~~+)\\s*([A-Za-z0-9_+-]*)")
	inlineCodeRe = lazyre.New("`([^`\n]+)`")
	promptRe     = lazyre.New(`^\s*(?:\$|>|%|❯|#\s)\s*`)
	devSectionRe = lazyre.New(`(?i)\b(develop\w*|test\w*|contribut\w*|build\w*|hack\w*|local\w*|running|check\w*|lint\w*|ci|quality|setup|workflow|commands?|verif\w*)\b`)
	userSetupRe  = lazyre.New(`(?i)\b(install(ation|ing)?|usage|quick\s*start|getting\s+started|deploy\w*)\b`)
)

// shellFence reports whether a fenced block's info string holds commands.
func shellFence(info string) bool {
	switch strings.ToLower(info) {
	case "", "sh", "bash", "shell", "console", "zsh", "shell-session", "shellsession", "terminal", "cmd", "text", "sh-session", "fish", "bash-session", "nushell", "command", "commands", "makefile":
		return true
	}
	return false
}

// extractCommands reads commands from a Markdown file: lines of shell code
// blocks and inline code spans. keep decides which sections count
// (README: only development and testing sections).
func extractCommands(data []byte, keep func(section string) bool) []mdCommand {
	var out []mdCommand
	section := ""
	inFence, fenceMark, fenceShell, fencePrompt := false, "", false, false
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if inFence {
			if strings.HasPrefix(strings.TrimSpace(line), fenceMark) {
				inFence = false
				continue
			}
			if !fenceShell || !keep(section) {
				continue
			}
			t := strings.TrimSpace(line)
			if fencePrompt {
				if !promptRe.MatchString(line) {
					continue // output, not a command
				}
				t = strings.TrimSpace(promptRe.ReplaceAllString(line, ""))
			}
			for strings.HasSuffix(t, "\\") && i+1 < len(lines) {
				i++
				t = strings.TrimSpace(strings.TrimSuffix(t, "\\")) + " " + strings.TrimSpace(promptRe.ReplaceAllString(lines[i], ""))
			}
			if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") {
				continue
			}
			out = append(out, mdCommand{text: t, line: i + 1, section: section})
			continue
		}
		if m := fenceOpenRe.FindStringSubmatch(line); m != nil {
			inFence, fenceMark = true, m[1][:3]
			fenceShell = shellFence(m[2])
			// A block whose lines start with prompts mixes output in: only
			// prompted lines are commands.
			fencePrompt = false
			for j := i + 1; j < len(lines) && j < i+40; j++ {
				if strings.HasPrefix(strings.TrimSpace(lines[j]), fenceMark) {
					break
				}
				if strings.HasPrefix(strings.TrimSpace(lines[j]), "$ ") {
					fencePrompt = true
					break
				}
			}
			continue
		}
		if m := headingRe.FindStringSubmatch(line); m != nil {
			section = strings.TrimSpace(m[2])
			continue
		}
		if !keep(section) {
			continue
		}
		for _, m := range inlineCodeRe.FindAllStringSubmatch(line, -1) {
			out = append(out, mdCommand{text: strings.TrimSpace(promptRe.ReplaceAllString(m[1], "")), line: i + 1, section: section, inline: true})
		}
	}
	return out
}

// contextFiles are the files layer 2 reads, with whether every section
// counts.
var contextFiles = []struct {
	path string
	all  bool
}{
	{"AGENTS.md", true}, {"CLAUDE.md", true}, {"AIWG.md", true}, {"GEMINI.md", true},
	{".github/copilot-instructions.md", true}, {"DEVELOPMENT.md", true}, {"HACKING.md", true},
	{"CONTRIBUTING.md", false}, {".github/CONTRIBUTING.md", false}, {"docs/CONTRIBUTING.md", false},
	{"README.md", false}, {"README", false}, {"readme.md", false}, {"Readme.md", false},
}

// contributorDocNames are the names of contributor and testing docs kept
// outside the usual places (docs/_docs/contributing.md, TESTING.md).
var contributorDocNames = map[string]bool{
	"contributing.md": true, "contributing": true, "development.md": true, "developing.md": true, "hacking.md": true,
	"testing.md": true, "tests.md": true, "running-tests.md": true, "running_tests.md": true,
}

// discoverContextFiles finds contributor docs that contextFiles does not
// name: in the root, .github, docs or doc, and the directories one level
// inside docs (docs/_docs, docs/community).
func discoverContextFiles(r *repo) []struct {
	path string
	all  bool
} {
	known := map[string]bool{}
	for _, cf := range contextFiles {
		known[strings.ToLower(cf.path)] = true
	}
	dirs := []string{".", ".github", "docs", "doc"}
	for _, d := range []string{"docs", "doc"} {
		for _, sub := range r.subdirs(d) {
			dirs = append(dirs, join(d, sub))
		}
	}
	var out []struct {
		path string
		all  bool
	}
	for _, d := range dirs {
		for _, n := range r.names(d) {
			p := join(d, n)
			if !contributorDocNames[strings.ToLower(n)] || known[strings.ToLower(p)] || r.isDir(p) {
				continue
			}
			known[strings.ToLower(p)] = true
			out = append(out, struct {
				path string
				all  bool
			}{p, false})
		}
	}
	return out
}

// contextCandidates is layer 2: commands people are told to run.
func contextCandidates(r *repo, m *manifests) ([]candidate, []Finding) {
	var cands []candidate
	var facts []Finding
	cl := m.classifier()
	for _, cf := range append(contextFiles[:len(contextFiles):len(contextFiles)], discoverContextFiles(r)...) {
		data, ok := r.read(cf.path)
		if !ok {
			continue
		}
		keep := func(section string) bool {
			if cf.all {
				return true
			}
			if strings.HasPrefix(cf.path, "README") || strings.HasPrefix(cf.path, "readme") || strings.HasPrefix(cf.path, "Readme") {
				return devSectionRe.MatchString(section) && !userSetupRe.MatchString(section)
			}
			return section == "" || devSectionRe.MatchString(section) || !userSetupRe.MatchString(section)
		}
		cmds := extractCommands(data, keep)
		install, installDir := contextInstall(cl, cmds)
		n := 0
		for _, mc := range cmds {
			for _, c := range commandCandidates(cl, mc, cf.path, r) {
				c.layer = LayerContextFile
				if !cf.all {
					c.rank++
				}
				if install != "" && c.setup == "" {
					c.setup = inDir(c.workdir, installDir, install)
					c.evidence = append(c.evidence, finding(LayerContextFile, cf.path, "says to install with `"+install+"`"))
				}
				cands = append(cands, c)
				n++
			}
		}
		if n > 0 {
			facts = append(facts, finding(LayerContextFile, cf.path, fmt.Sprintf("names %d check commands", n)))
		}
	}
	for i := range cands {
		cands[i].order = i
	}
	return cands, facts
}

// contextInstall returns the first dependency-install command a context file
// gives (and where it runs).
func contextInstall(cl classifier, cmds []mdCommand) (string, string) {
	for _, mc := range cmds {
		if mc.inline {
			continue
		}
		scs, err := splitScript(mc.text)
		if err != nil {
			continue
		}
		for _, sc := range scs {
			if sc.DirUnknown || len(sc.Args) == 0 {
				continue
			}
			if info := cl.classify(sc.Args, sc.Dir); info.kind.Has(kInstall) && !info.kind.Has(kToolchain) && info.kind&gateKinds == 0 {
				return sc.Text, sc.Dir
			}
		}
	}
	return "", ""
}

// notACommand reports a documented "command" that is a single word naming
// a path, a source or data file, or a bot's slash command (/ok-to-test):
// prose in backticks, not something to run.
func notACommand(args []string) bool {
	if len(args) != 1 {
		return false
	}
	w := args[0]
	switch {
	case strings.HasPrefix(w, "./") && !strings.HasSuffix(w, "/"):
		return false // ./runtests.py: run as a program
	case strings.HasPrefix(w, "/") && !strings.Contains(w[1:], "/"):
		return true
	case strings.HasSuffix(w, "/"):
		return true
	}
	switch path.Ext(w) {
	case ".rb", ".py", ".yml", ".yaml", ".json", ".md", ".ts", ".js", ".go", ".rs", ".java", ".kt", ".php", ".ex", ".exs", ".cs", ".toml", ".xml", ".txt", ".lock":
		return true
	}
	return false
}

// buildChain is the text of the commands before a test in one documented
// line when they configure or build what it tests ("" otherwise: a line
// of separate commands, or a cd).
func buildChain(cl classifier, before []shellcmd.Command) string {
	if len(before) == 0 {
		return ""
	}
	var parts []string
	for _, sc := range before {
		if sc.Compound || sc.DirUnknown || sc.Dir != "" && sc.Dir != "." || len(sc.Args) == 0 {
			return ""
		}
		info := cl.classify(sc.Args, ".")
		tool := shellcmd.ToolName(shellcmd.StripWrappers(sc.Args).Args[0])
		if !info.kind.Has(kBuild) && !info.kind.Has(kInstall) && tool != "cmake" && tool != "meson" && tool != "mkdir" && !strings.HasSuffix(sc.Args[0], "configure") {
			return ""
		}
		parts = append(parts, sc.Text)
	}
	return strings.Join(parts, " && ")
}

// commandCandidates turns one documented command line into gate candidates.
func commandCandidates(cl classifier, mc mdCommand, file string, r *repo) []candidate {
	text := mc.text
	if mc.inline && strings.ContainsAny(text, "{}<>") {
		return nil
	}
	cmds, err := splitScript(text)
	if err != nil {
		return nil
	}
	var out []candidate
	for i, sc := range cmds {
		if sc.Compound || sc.OrFallback || len(sc.Args) == 0 || sc.DirUnknown {
			continue
		}
		if notACommand(sc.Args) {
			continue // a path, a file or a bot's /command named in prose
		}
		info := cl.classify(sc.Args, sc.Dir)
		if chain := buildChain(cl, cmds[:i]); chain != "" && info.kind.Has(kTest) && i == len(cmds)-1 && !mc.inline {
			// `cmake -S . -B build && cmake --build build && ctest ...`:
			// the test runs what the line builds before it, so the line
			// is the command.
			c := candidate{command: chain + " && " + sc.Text, workdir: ".", kind: info.kind &^ kWatch, sig: info.sig, source: fmt.Sprintf("%s:%d", file, mc.line), strong: true,
				evidence: []Finding{finding(LayerContextFile, fmt.Sprintf("%s:%d", file, mc.line), "says to run `"+text+"` (the test runs what the line builds first)")}}
			if mc.section != "" {
				c.source += fmt.Sprintf(" (section %q)", mc.section)
			}
			out = append(out, c)
			continue
		}
		if info.kind&gateKinds == 0 || info.kind.Has(kDeploy) || info.kind.Has(kBench) {
			continue
		}
		if mc.inline && info.sig == "" {
			continue
		}
		workdir := sc.Dir
		if !r.isDir(workdir) {
			continue
		}
		src := fmt.Sprintf("%s:%d", file, mc.line)
		if mc.section != "" {
			src += fmt.Sprintf(" (section %q)", mc.section)
		}
		c := candidate{command: sc.Text, workdir: workdir, kind: info.kind &^ kWatch, sig: info.sig, source: src, runner: info.runner, script: info.script, inner: info.inner, strong: true,
			evidence: []Finding{finding(LayerContextFile, src, "says to run `"+sc.Text+"`")}}
		if mc.inline {
			c.rank = 1
		}
		if info.kind.Has(kWatch) {
			if info.fix != "" {
				c.command = info.fix
				c.problems = append(c.problems, info.note)
			} else {
				c.unusable = "it starts a watcher that never exits"
			}
		}
		if info.note != "" && !info.kind.Has(kWatch) {
			c.evidence = append(c.evidence, finding(LayerContextFile, src, info.note))
		}
		if info.sig == "bun test" && cl.lookup != nil {
			if body, ok := cl.script("npm", workdir, "test"); ok && !strings.Contains(body, "bun test") {
				c.problems = append(c.problems, "`bun test` runs Bun's built-in runner, but the test script runs `"+body+"` (`bun run test`)")
			}
		}
		out = append(out, c)
	}
	return out
}
