package shellcmd

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// TaskFile is a Makefile, justfile, Taskfile or Rakefile: recipes by name.
// A recipe's body is shell, one command a line; a prerequisite is written
// as the command that runs it (`make lint`).
type TaskFile struct {
	File    string
	Recipes map[string]string
	// First is the default target (what the runner runs with no name).
	First string
}

var (
	makeVarRe    = lazyre.New(`^([A-Za-z_][A-Za-z0-9_]*)\s*(?:\?|:|::|\+)?=\s*(.*)$`)
	makeTargetRe = lazyre.New(`^([A-Za-z0-9_.%/${}()-]+(?:\s+[A-Za-z0-9_.%/${}()-]+)*)\s*::?(?:[^=]|$)`)
	makeRefRe    = lazyre.New(`\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]`)
)

// ParseMakefile reads targets and recipes, substituting simple variables.
func ParseMakefile(file string, data []byte) *TaskFile {
	tf := &TaskFile{File: file, Recipes: map[string]string{}}
	vars := map[string]string{"MAKE": "make"}
	var current []string
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		if strings.HasPrefix(line, "\t") {
			if len(current) == 0 {
				continue
			}
			cmd := strings.TrimSpace(line)
			cmd = strings.TrimLeft(cmd, "@-+")
			cmd = strings.ReplaceAll(expandMakeVars(cmd, vars), "$$", "$")
			for _, t := range current {
				if tf.Recipes[t] == "" {
					tf.Recipes[t] = cmd
				} else {
					tf.Recipes[t] += "\n" + cmd
				}
			}
			continue
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if m := makeVarRe.FindStringSubmatch(trimmed); m != nil {
			vars[m[1]] = expandMakeVars(strings.TrimSpace(m[2]), vars)
			current = nil
			continue
		}
		if strings.HasPrefix(trimmed, "ifeq") || strings.HasPrefix(trimmed, "ifneq") || strings.HasPrefix(trimmed, "ifdef") || strings.HasPrefix(trimmed, "ifndef") || trimmed == "else" || trimmed == "endif" || strings.HasPrefix(trimmed, "include ") || strings.HasPrefix(trimmed, "-include ") || strings.HasPrefix(trimmed, "export ") || strings.HasPrefix(trimmed, "define ") || trimmed == "endef" || strings.HasPrefix(trimmed, "override ") {
			continue
		}
		if m := makeTargetRe.FindStringSubmatch(line); m != nil {
			current = nil
			rest := strings.TrimSpace(line[len(m[0])-1:])
			if strings.HasSuffix(m[0], ":") {
				rest = strings.TrimSpace(line[len(m[0]):])
			}
			if makeVarRe.MatchString(rest) || strings.HasPrefix(rest, "export ") || strings.HasPrefix(rest, "override ") {
				// A target-specific variable (test-race: ARGS=-race): it
				// configures the target, it is no prerequisite.
				continue
			}
			for _, t := range strings.Fields(expandMakeVars(m[1], vars)) {
				if strings.HasPrefix(t, ".") || strings.Contains(t, "%") || strings.Contains(t, "$") {
					continue
				}
				current = append(current, t)
				if _, ok := tf.Recipes[t]; !ok {
					tf.Recipes[t] = ""
				}
				if tf.First == "" {
					tf.First = t
				}
			}
			// Inline recipe: target: deps ; command
			if i := strings.Index(rest, ";"); i >= 0 {
				cmd := expandMakeVars(strings.TrimSpace(rest[i+1:]), vars)
				for _, t := range current {
					tf.Recipes[t] = cmd
				}
				rest = rest[:i]
			}
			// Prerequisites that are themselves phony targets run first:
			// record them as `make dep` so that `check: lint test` is both.
			if i := strings.Index(rest, "#"); i >= 0 {
				rest = rest[:i]
			}
			var deps []string
			for _, dep := range strings.Fields(rest) {
				if strings.ContainsAny(dep, "$%/.") || dep == "|" {
					continue
				}
				deps = append(deps, "make "+dep)
			}
			if len(deps) > 0 {
				for _, t := range current {
					tf.Recipes[t] = strings.TrimSuffix(strings.Join(deps, "\n")+"\n"+tf.Recipes[t], "\n")
				}
			}
		}
	}
	return tf
}

// maxExpansion bounds a line after variables are substituted: variables
// that repeat each other would otherwise grow without end.
const maxExpansion = 64 << 10

func expandMakeVars(s string, vars map[string]string) string {
	for i := 0; i < 3 && strings.Contains(s, "$"); i++ {
		size := len(s)
		s = makeRefRe.ReplaceAllStringFunc(s, func(ref string) string {
			name := ref[2 : len(ref)-1]
			if v, ok := vars[name]; ok && size+len(v) <= maxExpansion {
				size += len(v)
				return v
			}
			return ref
		})
	}
	return s
}

var justRecipeRe = lazyre.New(`^(@?)([A-Za-z_][A-Za-z0-9_-]*)((?:\s+[^:=]*?)?)\s*:(?:[^=]|$)(.*)$`)

// ParseJustfile reads recipes: a header line, then indented commands.
func ParseJustfile(file string, data []byte) *TaskFile {
	tf := &TaskFile{File: file, Recipes: map[string]string{}}
	var current string
	for _, line := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		if line == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if current == "" {
				continue
			}
			cmd := strings.TrimLeft(strings.TrimSpace(line), "@-")
			if tf.Recipes[current] == "" {
				tf.Recipes[current] = cmd
			} else {
				tf.Recipes[current] += "\n" + cmd
			}
			continue
		}
		current = ""
		if strings.HasPrefix(line, "set ") || strings.HasPrefix(line, "alias ") || strings.HasPrefix(line, "export ") || strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "mod ") || strings.HasPrefix(line, "[") {
			if strings.HasPrefix(line, "alias ") {
				parts := strings.SplitN(strings.TrimPrefix(line, "alias "), ":=", 2)
				if len(parts) == 2 {
					tf.Recipes[strings.TrimSpace(parts[0])] = "just " + strings.TrimSpace(parts[1])
				}
			}
			continue
		}
		if m := justRecipeRe.FindStringSubmatch(line); m != nil {
			current = m[2]
			tf.Recipes[current] = ""
			if tf.First == "" {
				tf.First = current
			}
			for _, dep := range strings.Fields(m[4]) {
				if strings.ContainsAny(dep, "()'\"") {
					continue
				}
				tf.Recipes[current] = strings.TrimPrefix(tf.Recipes[current]+"\njust "+dep, "\n")
			}
		}
	}
	return tf
}

// ParseTaskfile reads a Taskfile.yml (go-task): tasks with cmds and deps.
func ParseTaskfile(file string, data []byte) (tf *TaskFile, err error) {
	defer func() {
		if r := recover(); r != nil {
			tf, err = nil, fmt.Errorf("YAML parser failed: %v", r)
		}
	}()
	var doc struct {
		Tasks any `yaml:"tasks"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	tf = &TaskFile{File: file, Recipes: map[string]string{}}
	tasks, _ := doc.Tasks.(map[string]any)
	for name, task := range tasks {
		var cmds []string
		body, _ := task.(map[string]any)
		for _, dep := range asList(body["deps"]) {
			switch d := dep.(type) {
			case string:
				cmds = append(cmds, "task "+d)
			case map[string]any:
				if t, ok := d["task"].(string); ok && t != "" {
					cmds = append(cmds, "task "+t)
				}
			}
		}
		items := asList(body["cmds"])
		switch t := task.(type) {
		case []any:
			items = t
		case string:
			items = []any{t}
		}
		if c, ok := body["cmd"].(string); ok && c != "" {
			cmds = append(cmds, c)
		}
		for _, it := range items {
			switch x := it.(type) {
			case string:
				cmds = append(cmds, x)
			case map[string]any:
				if c, ok := x["cmd"].(string); ok && c != "" {
					cmds = append(cmds, c)
				} else if t, ok := x["task"].(string); ok && t != "" {
					cmds = append(cmds, "task "+t)
				}
			}
		}
		tf.Recipes[name] = strings.Join(cmds, "\n")
		if name == "default" {
			tf.First = "default"
		}
	}
	return tf, nil
}

func asList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case nil:
		return nil
	}
	return []any{v}
}

var (
	rakeTaskRe     = lazyre.New(`(?m)^\s*task\s*\(?\s*[:"']?([A-Za-z_][A-Za-z0-9_:]*)["']?\s*(?:=>|,|\)|\s+do|$|:)\s*(.*)$`)
	rakeDefaultRe  = lazyre.New(`(?m)^\s*task\s*\(?\s*(?:default:|:default\s*=>|"default"\s*=>|'default'\s*=>)\s*(.*)$`)
	rakeTestTask   = lazyre.New(`(?m)(RSpec::Core::RakeTask|Rake::TestTask|Minitest::TestTask|Cucumber::Rake::Task)\.(?:new|create)(?:\(\s*:?["']?([A-Za-z_:]*)["']?\s*\))?`)
	rakeLintTask   = lazyre.New(`(?m)(RuboCop::RakeTask|StandardRB)\.new(?:\(\s*:?["']?([A-Za-z_:]*)["']?\s*\))?`)
	rubySymbolRe   = lazyre.New(`[:"']([A-Za-z_][A-Za-z0-9_:]*)`)
	rubyWordListRe = lazyre.New(`%[iwIW][\[(]([^\])]*)[\])]`)
)

// ParseRakefile finds the tasks that matter: test tasks defined by the
// standard task libraries, and what the default task depends on.
func ParseRakefile(file string, data []byte) *TaskFile {
	tf := &TaskFile{File: file, Recipes: map[string]string{}}
	src := string(data)
	for _, m := range rakeTestTask.FindAllStringSubmatch(src, -1) {
		name := m[2]
		if name == "" {
			switch {
			case m[1] == "RSpec::Core::RakeTask":
				name = "spec"
			case strings.HasPrefix(m[1], "Cucumber"):
				name = "features"
			default:
				name = "test"
			}
		}
		tf.Recipes[name] = "rspec"
		if m[1] != "RSpec::Core::RakeTask" && !strings.HasPrefix(m[1], "Cucumber") {
			tf.Recipes[name] = "minitest"
		}
	}
	for _, m := range rakeLintTask.FindAllStringSubmatch(src, -1) {
		name := m[2]
		if name == "" {
			name = "rubocop"
			if m[1] == "StandardRB" {
				name = "standard"
			}
		}
		tf.Recipes[name] = "rubocop"
	}
	for _, m := range rakeTaskRe.FindAllStringSubmatch(src, -1) {
		if _, ok := tf.Recipes[m[1]]; !ok && m[1] != "default" {
			tf.Recipes[m[1]] = ""
		}
	}
	if m := rakeDefaultRe.FindStringSubmatch(src); m != nil {
		var deps []string
		for _, s := range rubySymbolRe.FindAllStringSubmatch(m[1], -1) {
			deps = append(deps, "rake "+s[1])
		}
		if l := rubyWordListRe.FindStringSubmatch(m[1]); l != nil {
			for _, w := range strings.Fields(l[1]) {
				deps = append(deps, "rake "+w)
			}
		}
		tf.Recipes["default"] = strings.Join(deps, "\n")
		tf.First = "default"
	}
	return tf
}
