package criteria

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"gopkg.in/yaml.v3"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// manifests is layer 3: manifests and task runners, read per directory on
// demand (the root, CI working directories, workspace members).
type manifests struct {
	r    *repo
	dirs map[string]*dirManifests
}

// dirManifests is what one directory's manifests say.
type dirManifests struct {
	dir        string
	candidates []candidate
	facts      []Finding // what was found, for the rationale
	traps      []Finding // problems to tell whatever command is chosen here
	ecosystems []string

	pkg      *packageJSON
	pm       string // npm, pnpm, yarn, bun
	pmSource string
	make     *taskFile
	just     *taskFile
	task     *taskFile
	composer map[string]string
	deno     map[string]string
	hatch    map[string]string
	pdm      map[string]string
	poe      map[string]string
	rake     *taskFile
	pyRunner string // "uv run ", "poetry run ", ...
	setup    string
}

func newManifests(r *repo) *manifests {
	return &manifests{r: r, dirs: map[string]*dirManifests{}}
}

// at returns the manifests of dir, reading them the first time.
func (m *manifests) at(dir string) *dirManifests {
	dir = clean(dir)
	if d, ok := m.dirs[dir]; ok {
		return d
	}
	d := &dirManifests{dir: dir}
	m.dirs[dir] = d
	if !m.r.isDir(dir) {
		return d
	}
	// Task runners first: the ecosystems' candidates classify through them.
	m.readRunners(d)
	m.readNode(d)
	m.readDeno(d)
	m.readGo(d)
	m.readRust(d)
	m.readPython(d)
	m.readJVM(d)
	m.readRuby(d)
	m.readPHP(d)
	m.readElixir(d)
	m.readDotnet(d)
	m.readCMake(d)
	m.runnerCandidates(d)
	for i := range d.candidates {
		d.candidates[i].order = i
		if d.candidates[i].workdir == "" {
			d.candidates[i].workdir = dir
		}
		d.candidates[i].layer = LayerManifest
	}
	return d
}

// hasManifest reports whether dir holds a manifest of any known ecosystem.
func (d *dirManifests) hasManifest() bool { return len(d.ecosystems) > 0 }

func (d *dirManifests) fact(source, text string) {
	d.facts = append(d.facts, finding(LayerManifest, source, text))
}

func (d *dirManifests) trap(source, text string) {
	d.traps = append(d.traps, finding(LayerManifest, source, text))
}

func (d *dirManifests) add(c candidate) {
	d.candidates = append(d.candidates, c)
}

func (d *dirManifests) eco(name string) {
	for _, e := range d.ecosystems {
		if e == name {
			return
		}
	}
	d.ecosystems = append(d.ecosystems, name)
}

// script implements scriptLookup.
func (m *manifests) script(runner, dir, name string) (string, bool) {
	d := m.at(dir)
	var tf *taskFile
	switch runner {
	case "file":
		return m.scriptFile(dir, name)
	case "exists":
		f := join(dir, name)
		if strings.HasPrefix(f, "..") {
			return "", false
		}
		return "", m.r.exists(f)
	case "npm":
		if d.pkg == nil {
			return "", false
		}
		body, ok := d.pkg.Scripts[name]
		return body, ok
	case "composer":
		body, ok := d.composer[name]
		return body, ok
	case "deno":
		body, ok := d.deno[name]
		return body, ok
	case "hatch":
		body, ok := d.hatch[name]
		return body, ok
	case "pdm":
		body, ok := d.pdm[name]
		return body, ok
	case "poe":
		body, ok := d.poe[name]
		return body, ok
	case "make":
		tf = d.make
	case "just":
		tf = d.just
	case "task":
		tf = d.task
	case "rake":
		tf = d.rake
	}
	if tf == nil {
		return "", false
	}
	if name == "\x00default" {
		return tf.first, tf.first != ""
	}
	body, ok := tf.recipes[name]
	return body, ok
}

func (m *manifests) classifier() classifier { return classifier{lookup: m} }

// maxScriptFile bounds the scripts read to classify them.
const maxScriptFile = 64 << 10

// scriptFile returns the text of a shell script of the repository (run as
// ./ci/test or bash scripts/test.sh) for classification.
func (m *manifests) scriptFile(dir, p string) (string, bool) {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return "", false
	}
	f := join(dir, p)
	if strings.HasPrefix(f, "..") {
		return "", false
	}
	ext := path.Ext(f)
	if ext != "" && ext != ".sh" && ext != ".bash" {
		return "", false
	}
	data, ok := m.r.read(f)
	if !ok || len(data) > maxScriptFile || bytes.IndexByte(data, 0) >= 0 {
		return "", false
	}
	text := string(data)
	if strings.HasPrefix(text, "#!") {
		first := strings.SplitN(text, "\n", 2)[0]
		if !strings.Contains(first, "sh") {
			return "", false // a Python or Ruby script
		}
	}
	return text, true
}

// parse helpers: every parser failure (and a panic inside a third-party
// parser) becomes an error that names the file; the layer goes on.

func parseJSON(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("JSON parser failed: %v", r)
		}
	}()
	return json.Unmarshal(stripJSONC(data), v)
}

func parseTOML(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("TOML parser failed: %v", r)
		}
	}()
	return toml.Unmarshal(data, v)
}

func parseYAML(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("YAML parser failed: %v", r)
		}
	}()
	return yaml.Unmarshal(data, v)
}

// stripJSONC removes // and /* */ comments and trailing commas outside
// strings (deno.jsonc, tsconfig.json); plain JSON passes unchanged.
func stripJSONC(data []byte) []byte {
	if !strings.Contains(string(data), "/") && !strings.Contains(string(data), ",") {
		return data
	}
	out := make([]byte, 0, len(data))
	inStr := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			out = append(out, c)
			if c == '\\' && i+1 < len(data) {
				out = append(out, data[i+1])
				i++
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			if i < len(data) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			i += 2
			for i+1 < len(data) && !(data[i] == '*' && data[i+1] == '/') {
				i++
			}
			i++
		case c == ',':
			j := i + 1
			for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
				j++
			}
			if j < len(data) && (data[j] == '}' || data[j] == ']') {
				continue
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// tomlTable walks nested tables: tomlTable(doc, "tool", "poetry").
func tomlTable(doc map[string]any, keys ...string) (map[string]any, bool) {
	cur := doc
	for _, k := range keys {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// taskFile is a Makefile, justfile, Taskfile or Rakefile: recipes by name.
type taskFile struct {
	file    string
	recipes map[string]string
	first   string // the default target
}

var (
	makeVarRe    = lazyre.New(`^([A-Za-z_][A-Za-z0-9_]*)\s*(?:\?|:|::|\+)?=\s*(.*)$`)
	makeTargetRe = lazyre.New(`^([A-Za-z0-9_.%/${}()-]+(?:\s+[A-Za-z0-9_.%/${}()-]+)*)\s*::?(?:[^=]|$)`)
	makeRefRe    = lazyre.New(`\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]`)
)

// parseMakefile reads targets and recipes, substituting simple variables.
func parseMakefile(file string, data []byte) *taskFile {
	tf := &taskFile{file: file, recipes: map[string]string{}}
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
			cmd = expandMakeVars(cmd, vars)
			for _, t := range current {
				if tf.recipes[t] == "" {
					tf.recipes[t] = cmd
				} else {
					tf.recipes[t] += "\n" + cmd
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
			for _, t := range strings.Fields(m[1]) {
				if strings.HasPrefix(t, ".") || strings.Contains(t, "%") || strings.Contains(t, "$") {
					continue
				}
				current = append(current, t)
				if _, ok := tf.recipes[t]; !ok {
					tf.recipes[t] = ""
				}
				if tf.first == "" {
					tf.first = t
				}
			}
			// Inline recipe: target: deps ; command
			if i := strings.Index(rest, ";"); i >= 0 {
				cmd := expandMakeVars(strings.TrimSpace(rest[i+1:]), vars)
				for _, t := range current {
					tf.recipes[t] = cmd
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
					tf.recipes[t] = strings.TrimSuffix(strings.Join(deps, "\n")+"\n"+tf.recipes[t], "\n")
				}
			}
		}
	}
	return tf
}

func expandMakeVars(s string, vars map[string]string) string {
	for i := 0; i < 3 && strings.Contains(s, "$"); i++ {
		s = makeRefRe.ReplaceAllStringFunc(s, func(ref string) string {
			name := ref[2 : len(ref)-1]
			if v, ok := vars[name]; ok {
				return v
			}
			return ref
		})
	}
	return s
}

var justRecipeRe = lazyre.New(`^(@?)([A-Za-z_][A-Za-z0-9_-]*)((?:\s+[^:=]*?)?)\s*:(?:[^=]|$)(.*)$`)

// parseJustfile reads recipes: a header line, then indented commands.
func parseJustfile(file string, data []byte) *taskFile {
	tf := &taskFile{file: file, recipes: map[string]string{}}
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
			if tf.recipes[current] == "" {
				tf.recipes[current] = cmd
			} else {
				tf.recipes[current] += "\n" + cmd
			}
			continue
		}
		current = ""
		if strings.HasPrefix(line, "set ") || strings.HasPrefix(line, "alias ") || strings.HasPrefix(line, "export ") || strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "mod ") || strings.HasPrefix(line, "[") {
			if strings.HasPrefix(line, "alias ") {
				parts := strings.SplitN(strings.TrimPrefix(line, "alias "), ":=", 2)
				if len(parts) == 2 {
					tf.recipes[strings.TrimSpace(parts[0])] = "just " + strings.TrimSpace(parts[1])
				}
			}
			continue
		}
		if m := justRecipeRe.FindStringSubmatch(line); m != nil {
			current = m[2]
			tf.recipes[current] = ""
			if tf.first == "" {
				tf.first = current
			}
			for _, dep := range strings.Fields(m[4]) {
				if strings.ContainsAny(dep, "()'\"") {
					continue
				}
				tf.recipes[current] = strings.TrimPrefix(tf.recipes[current]+"\njust "+dep, "\n")
			}
		}
	}
	return tf
}

// parseTaskfile reads a Taskfile.yml (go-task): tasks with cmds and deps.
func parseTaskfile(file string, data []byte) (*taskFile, error) {
	var doc struct {
		Tasks yaml.Node `yaml:"tasks"`
	}
	if err := parseYAML(data, &doc); err != nil {
		return nil, err
	}
	tf := &taskFile{file: file, recipes: map[string]string{}}
	for _, kv := range mapPairs(&doc.Tasks) {
		name := kv[0].Value
		var cmds []string
		for _, dep := range seqItems(mapGet(kv[1], "deps")) {
			if dep.Kind == yaml.ScalarNode {
				cmds = append(cmds, "task "+dep.Value)
			} else if t := scalar(mapGet(dep, "task")); t != "" {
				cmds = append(cmds, "task "+t)
			}
		}
		items := seqItems(mapGet(kv[1], "cmds"))
		if kv[1].Kind == yaml.SequenceNode {
			items = seqItems(kv[1])
		}
		if c := scalar(mapGet(kv[1], "cmd")); c != "" {
			cmds = append(cmds, c)
		}
		for _, it := range items {
			switch {
			case it.Kind == yaml.ScalarNode:
				cmds = append(cmds, it.Value)
			case scalar(mapGet(it, "cmd")) != "":
				cmds = append(cmds, scalar(mapGet(it, "cmd")))
			case scalar(mapGet(it, "task")) != "":
				cmds = append(cmds, "task "+scalar(mapGet(it, "task")))
			}
		}
		tf.recipes[name] = strings.Join(cmds, "\n")
		if name == "default" {
			tf.first = "default"
		}
	}
	return tf, nil
}

var (
	rakeTaskRe     = lazyre.New(`(?m)^\s*task\s*\(?\s*[:"']?([A-Za-z_][A-Za-z0-9_:]*)["']?\s*(?:=>|,|\)|\s+do|$|:)\s*(.*)$`)
	rakeDefaultRe  = lazyre.New(`(?m)^\s*task\s*\(?\s*(?:default:|:default\s*=>|"default"\s*=>|'default'\s*=>)\s*(.*)$`)
	rakeTestTask   = lazyre.New(`(?m)(RSpec::Core::RakeTask|Rake::TestTask|Minitest::TestTask|Cucumber::Rake::Task)\.(?:new|create)(?:\(\s*:?["']?([A-Za-z_:]*)["']?\s*\))?`)
	rakeLintTask   = lazyre.New(`(?m)(RuboCop::RakeTask|StandardRB)\.new(?:\(\s*:?["']?([A-Za-z_:]*)["']?\s*\))?`)
	rubySymbolRe   = lazyre.New(`[:"']([A-Za-z_][A-Za-z0-9_:]*)`)
	rubyWordListRe = lazyre.New(`%[iwIW][\[(]([^\])]*)[\])]`)
)

// parseRakefile finds the tasks that matter: test tasks defined by the
// standard task libraries, and what the default task depends on.
func parseRakefile(file string, data []byte) *taskFile {
	tf := &taskFile{file: file, recipes: map[string]string{}}
	src := string(data)
	for _, m := range rakeTestTask.FindAllStringSubmatch(src, -1) {
		name := m[2]
		if name == "" {
			if m[1] == "RSpec::Core::RakeTask" {
				name = "spec"
			} else if strings.HasPrefix(m[1], "Cucumber") {
				name = "features"
			} else {
				name = "test"
			}
		}
		tf.recipes[name] = "rspec"
	}
	for _, m := range rakeLintTask.FindAllStringSubmatch(src, -1) {
		name := m[2]
		if name == "" {
			name = "rubocop"
			if m[1] == "StandardRB" {
				name = "standard"
			}
		}
		tf.recipes[name] = "rubocop"
	}
	for _, m := range rakeTaskRe.FindAllStringSubmatch(src, -1) {
		if _, ok := tf.recipes[m[1]]; !ok && m[1] != "default" {
			tf.recipes[m[1]] = ""
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
		tf.recipes["default"] = strings.Join(deps, "\n")
		tf.first = "default"
	}
	return tf
}
