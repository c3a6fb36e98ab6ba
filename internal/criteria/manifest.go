package criteria

import (
	"fmt"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// manifests is layer 3: manifests and task runners, read per directory on
// demand (the root, CI working directories, workspace members).
type manifests struct {
	r    *repo
	dirs map[string]*dirManifests
	// tree reads the named scripts of the task runners (shellcmd's model,
	// shared with the judge) through the repository's cache.
	tree *shellcmd.Tree
	// host is the machine the check will run on (which programs it has).
	host Host
	// ciLinux: some job of the workflow file runs on Linux (so a macOS or
	// Windows job of that workflow is a variant).
	ciLinux map[string]bool
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
	make     *shellcmd.TaskFile
	just     *shellcmd.TaskFile
	task     *shellcmd.TaskFile
	composer map[string]string
	deno     map[string]string
	hatch    map[string]string
	pdm      map[string]string
	poe      map[string]string
	rake     *shellcmd.TaskFile
	pyRunner string // "uv run ", "poetry run ", ...
	setup    string
}

func newManifests(r *repo) *manifests {
	return &manifests{r: r, dirs: map[string]*dirManifests{}, tree: shellcmd.NewTree(repoFS{r}), host: defaultHost}
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
	scripts := m.tree.Dir(dir)
	d.make, d.just, d.task = scripts.Make, scripts.Just, scripts.Task
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
	for _, e := range scripts.Errors {
		m.r.unreadable(LayerManifest, e.Path, e.Err)
	}
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

func (m *manifests) classifier() classifier { return classifier{lookup: m.tree} }

// script returns the body of a named script of a runner in dir.
func (m *manifests) script(runner, dir, name string) (string, bool) {
	body, _, ok := m.tree.Script(runner, dir, name)
	return body, ok
}

// parse helpers: every parser failure (and a panic inside a third-party
// parser) becomes an error that names the file; the layer goes on.

func parseJSON(data []byte, v any) error { return shellcmd.ParseJSON(data, v) }

func parseTOML(data []byte, v any) error { return shellcmd.ParseTOML(data, v) }

func parseYAML(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("YAML parser failed: %v", r)
		}
	}()
	return yaml.Unmarshal(data, v)
}

// tomlTable walks nested tables: tomlTable(doc, "tool", "poetry").
func tomlTable(doc map[string]any, keys ...string) (map[string]any, bool) {
	return shellcmd.TOMLTable(doc, keys...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
