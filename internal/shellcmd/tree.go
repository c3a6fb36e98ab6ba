package shellcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Tree reads the named scripts of a repository's task runners and its
// script files through an fs.FS, directory by directory on demand, and
// implements Lookup. It is not safe for concurrent use.
//
// When the FS also has a method Exists(name string) bool, Tree uses it to
// test paths (a caching reader); otherwise it stats them.
type Tree struct {
	fsys  fs.FS
	dirs  map[string]*Scripts
	files map[string]readResult
}

type readResult struct {
	data []byte
	err  error
}

// MaxFile bounds every file Tree reads; MaxScript bounds a script file
// read to be followed.
const (
	MaxFile   = 1 << 20
	MaxScript = 64 << 10
)

var _ Lookup = (*Tree)(nil)

// NewTree returns a Tree over fsys, whose root is the repository's root.
func NewTree(fsys fs.FS) *Tree {
	return &Tree{fsys: fsys, dirs: map[string]*Scripts{}, files: map[string]readResult{}}
}

// Scripts are the named scripts one directory's files define.
type Scripts struct {
	Dir string
	// Make, Just, Task and Rake are the task files (nil when absent).
	Make, Just, Task, Rake *TaskFile
	// NPM are package.json's scripts, Composer composer.json's, Deno
	// deno.json's tasks; Hatch, PDM and Poe the scripts of pyproject.toml
	// (Hatch: "env:name", and plain names for the default env).
	NPM, Composer, Deno, Hatch, PDM, Poe map[string]string
	// Tox are the commands of each tox environment ("" is [testenv]);
	// ToxEnvs the environments tox.ini lists.
	Tox     map[string]string
	ToxEnvs []string
	// Nox are the commands of each nox session (session.run and
	// session.install calls), NoxSessions the sessions in order.
	Nox         map[string]string
	NoxSessions []string
	// Mix are the aliases of mix.exs.
	Mix map[string]string
	// Files names the file each runner's scripts come from.
	Files map[string]string
	// Errors are files that exist but could not be read or parsed.
	Errors []FileError
}

// FileError is a file that exists but could not be read or parsed.
type FileError struct {
	Path string
	Err  error
}

func (e FileError) Error() string { return e.Path + ": " + e.Err.Error() }

// Dir returns the scripts of dir (repository-relative), reading its files
// the first time.
func (t *Tree) Dir(dir string) *Scripts {
	dir = Clean(dir)
	if s, ok := t.dirs[dir]; ok {
		return s
	}
	s := &Scripts{Dir: dir, Files: map[string]string{}}
	t.dirs[dir] = s
	if strings.HasPrefix(dir, "..") {
		return s
	}
	t.readTaskFiles(s)
	t.readNode(s)
	t.readPHP(s)
	t.readDeno(s)
	t.readPython(s)
	t.readMix(s)
	return s
}

// TaskFile returns the task file of runner (make, just, task, rake), nil
// when the directory has none.
func (s *Scripts) TaskFile(runner string) *TaskFile {
	switch runner {
	case "make":
		return s.Make
	case "just":
		return s.Just
	case "task":
		return s.Task
	case "rake":
		return s.Rake
	}
	return nil
}

// Script implements Lookup.
func (t *Tree) Script(runner, dir, name string) (body, file string, ok bool) {
	s := t.Dir(dir)
	var m map[string]string
	tf := s.TaskFile(runner)
	switch runner {
	case "npm":
		m = s.NPM
	case "composer":
		m = s.Composer
	case "deno":
		m = s.Deno
	case "hatch":
		m = s.Hatch
	case "pdm":
		m = s.PDM
	case "poe":
		m = s.Poe
	case "tox":
		m = s.Tox
		if _, named := m[name]; !named && name != "" {
			name = "" // any other env runs [testenv]'s commands
		}
	case "nox":
		m = s.Nox
	case "mix":
		m = s.Mix
	}
	if tf != nil {
		body, ok = tf.Recipes[name]
		return body, tf.File, ok
	}
	body, ok = m[name]
	file = s.Files[runner]
	if file == "" {
		file = ConventionalFile(runner, s.Dir)
	}
	return body, file, ok
}

// DefaultTarget implements Lookup. For nox it lists every session, one a
// line (nox runs them all when none is named).
func (t *Tree) DefaultTarget(runner, dir string) (name, file string) {
	s := t.Dir(dir)
	if runner == "nox" {
		return strings.Join(s.NoxSessions, "\n"), s.Files["nox"]
	}
	tf := s.TaskFile(runner)
	if tf == nil {
		return "", ""
	}
	return tf.First, tf.File
}

// ScriptFile implements Lookup: the text of a shell script (no extension,
// .sh or .bash; a shebang naming a shell), at most MaxScript bytes.
func (t *Tree) ScriptFile(p string) (string, bool) {
	p = Clean(p)
	if strings.HasPrefix(p, "..") {
		return "", false
	}
	ext := path.Ext(p)
	if ext != "" && ext != ".sh" && ext != ".bash" {
		return "", false
	}
	data, ok := t.read(p)
	if !ok || len(data) > MaxScript || bytes.IndexByte(data, 0) >= 0 {
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

// Exists implements Lookup.
func (t *Tree) Exists(p string) bool {
	p = Clean(p)
	if strings.HasPrefix(p, "..") || !fs.ValidPath(p) {
		return false
	}
	if e, ok := t.fsys.(interface{ Exists(string) bool }); ok {
		return e.Exists(p)
	}
	_, err := fs.Stat(t.fsys, p)
	return err == nil
}

// read returns a file's content; ok is false when it does not exist or
// cannot be read (the latter is recorded in the directory's Errors).
func (t *Tree) read(p string) ([]byte, bool) {
	if r, ok := t.files[p]; ok {
		return r.data, r.err == nil
	}
	data, err := t.readFile(p)
	t.files[p] = readResult{data: data, err: err}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s := t.Dir(parentDir(p))
			s.Errors = append(s.Errors, FileError{Path: p, Err: err})
		}
		return nil, false
	}
	return data, true
}

func (t *Tree) readFile(p string) ([]byte, error) {
	if !fs.ValidPath(p) {
		return nil, fs.ErrNotExist
	}
	if rf, ok := t.fsys.(fs.ReadFileFS); ok {
		data, err := rf.ReadFile(p)
		if err == nil && len(data) > MaxFile {
			return nil, fmt.Errorf("%w (%d bytes, the limit is %d)", ErrTooLarge, len(data), MaxFile)
		}
		return data, err
	}
	return ReadBounded(t.fsys, p, MaxFile)
}

// ErrTooLarge is the error of a file over the limit of a bounded read.
var ErrTooLarge = errors.New("file too large")

// ReadBounded reads a regular file of fsys of at most limit bytes.
func ReadBounded(fsys fs.FS, p string, limit int64) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("is a directory")
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%w (%d bytes, the limit is %d)", ErrTooLarge, st.Size(), limit)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// first returns the first of names that exists in dir.
func (t *Tree) first(dir string, names ...string) string {
	for _, n := range names {
		if p := Join(dir, n); t.Exists(p) {
			return p
		}
	}
	return ""
}

func (s *Scripts) fail(p string, err error) {
	s.Errors = append(s.Errors, FileError{Path: p, Err: err})
}

func (t *Tree) readTaskFiles(s *Scripts) {
	if f := t.first(s.Dir, "GNUmakefile", "Makefile", "makefile"); f != "" {
		if data, ok := t.read(f); ok {
			s.Make = ParseMakefile(f, data)
		}
	}
	if f := t.first(s.Dir, "justfile", "Justfile", ".justfile"); f != "" {
		if data, ok := t.read(f); ok {
			s.Just = ParseJustfile(f, data)
		}
	}
	if f := t.first(s.Dir, "Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "taskfile.yaml", "Taskfile.dist.yml"); f != "" {
		if data, ok := t.read(f); ok {
			tf, err := ParseTaskfile(f, data)
			if err != nil {
				s.fail(f, err)
			} else {
				s.Task = tf
			}
		}
	}
	if f := t.first(s.Dir, "Rakefile", "rakefile", "Rakefile.rb"); f != "" {
		if data, ok := t.read(f); ok {
			s.Rake = ParseRakefile(f, data)
		}
	}
}

// ParseJSON decodes JSON leniently (comments and trailing commas, as in
// deno.jsonc or a hand-edited package.json); it never panics.
func ParseJSON(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("JSON parser failed: %v", r)
		}
	}()
	return json.Unmarshal(StripJSONC(data), v)
}

// StripJSONC removes // and /* */ comments and trailing commas outside
// strings; plain JSON passes unchanged.
func StripJSONC(data []byte) []byte {
	if !bytes.ContainsAny(data, "/,") {
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

func (t *Tree) readJSON(s *Scripts, p string) map[string]json.RawMessage {
	data, ok := t.read(p)
	if !ok {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := ParseJSON(data, &raw); err != nil {
		s.fail(p, err)
		return nil
	}
	if raw == nil {
		s.fail(p, fmt.Errorf("not a JSON object"))
	}
	return raw
}

func (t *Tree) readNode(s *Scripts) {
	p := Join(s.Dir, "package.json")
	raw := t.readJSON(s, p)
	if raw == nil {
		return
	}
	var scripts map[string]json.RawMessage
	_ = json.Unmarshal(raw["scripts"], &scripts)
	s.NPM = map[string]string{}
	for k, v := range scripts {
		var body string
		if json.Unmarshal(v, &body) == nil {
			s.NPM[k] = body
		}
	}
	s.Files["npm"] = p
}

func (t *Tree) readPHP(s *Scripts) {
	p := Join(s.Dir, "composer.json")
	raw := t.readJSON(s, p)
	if raw == nil {
		return
	}
	var scripts map[string]json.RawMessage
	_ = json.Unmarshal(raw["scripts"], &scripts)
	s.Composer = map[string]string{}
	for name, v := range scripts {
		var lines []string
		var one string
		if json.Unmarshal(v, &one) == nil {
			lines = []string{one}
		} else {
			_ = json.Unmarshal(v, &lines)
		}
		for i, l := range lines {
			switch {
			case strings.HasPrefix(l, "@php "):
				lines[i] = "php " + strings.TrimPrefix(l, "@php ")
			case strings.HasPrefix(l, "@composer "):
				lines[i] = "composer " + strings.TrimPrefix(l, "@composer ")
			case strings.HasPrefix(l, "@putenv "):
				lines[i] = "export " + strings.TrimPrefix(l, "@putenv ")
			case strings.HasPrefix(l, "@"):
				lines[i] = "composer " + strings.TrimPrefix(l, "@")
			}
			if strings.Contains(l, `\`) && strings.Contains(l, "::") {
				lines[i] = "" // a PHP callback: nothing to run from the shell
			}
		}
		s.Composer[name] = strings.Join(lines, "\n")
	}
	s.Files["composer"] = p
}

func (t *Tree) readDeno(s *Scripts) {
	p := t.first(s.Dir, "deno.json", "deno.jsonc")
	if p == "" {
		return
	}
	raw := t.readJSON(s, p)
	if raw == nil {
		return
	}
	var tasks map[string]json.RawMessage
	_ = json.Unmarshal(raw["tasks"], &tasks)
	s.Deno = map[string]string{}
	for name, v := range tasks {
		var body string
		if json.Unmarshal(v, &body) != nil {
			var obj struct {
				Command string `json:"command"`
			}
			_ = json.Unmarshal(v, &obj)
			body = obj.Command
		}
		s.Deno[name] = body
	}
	s.Files["deno"] = p
}

// ParseTOML decodes TOML; it never panics.
func ParseTOML(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("TOML parser failed: %v", r)
		}
	}()
	return toml.Unmarshal(data, v)
}

// TOMLTable walks nested tables of a decoded TOML document:
// TOMLTable(doc, "tool", "poetry").
func TOMLTable(doc map[string]any, keys ...string) (map[string]any, bool) {
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

// ScriptBody is the command a pdm, poe or hatch script runs: a string, a
// list of commands, or a table with cmd/shell/call/composite.
func ScriptBody(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, p := range x {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	case map[string]any:
		for _, k := range []string{"cmd", "shell", "call", "composite", "command"} {
			if s := ScriptBody(x[k]); s != "" {
				return s
			}
		}
	}
	return ""
}

func (t *Tree) readPython(s *Scripts) {
	var doc map[string]any
	p := Join(s.Dir, "pyproject.toml")
	if data, ok := t.read(p); ok {
		if err := ParseTOML(data, &doc); err != nil {
			s.fail(p, err)
			doc = nil
		}
	}
	envs, hasEnvs := TOMLTable(doc, "tool", "hatch", "envs")
	hatchFile := p
	if hp := Join(s.Dir, "hatch.toml"); t.Exists(hp) {
		// hatch.toml holds the same tables without the tool.hatch prefix,
		// and wins over pyproject.toml.
		var hdoc map[string]any
		if data, ok := t.read(hp); ok {
			if err := ParseTOML(data, &hdoc); err != nil {
				s.fail(hp, err)
			} else if e, ok := TOMLTable(hdoc, "envs"); ok {
				envs, hasEnvs, hatchFile = e, true, hp
			}
		}
	}
	if hasEnvs || t.Exists(Join(s.Dir, "hatch.toml")) {
		s.Hatch = map[string]string{}
		s.Files["hatch"] = hatchFile
		for _, env := range slices.Sorted(maps.Keys(envs)) {
			scripts, ok := TOMLTable(envs, env, "scripts")
			if !ok {
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(scripts)) {
				body := ScriptBody(scripts[name])
				key := name
				if env != "default" {
					key = env + ":" + name
				}
				s.Hatch[key] = body
				if env == "default" {
					s.Hatch[name] = body
				}
			}
		}
	}
	if scripts, ok := TOMLTable(doc, "tool", "pdm", "scripts"); ok {
		s.PDM = map[string]string{}
		s.Files["pdm"] = p
		for _, k := range slices.Sorted(maps.Keys(scripts)) {
			if k != "_" {
				s.PDM[k] = ScriptBody(scripts[k])
			}
		}
	}
	if tasks, ok := TOMLTable(doc, "tool", "poe", "tasks"); ok {
		s.Poe = map[string]string{}
		s.Files["poe"] = p
		for _, k := range slices.Sorted(maps.Keys(tasks)) {
			s.Poe[k] = ScriptBody(tasks[k])
		}
	}
	t.readTox(s, doc)
	t.readNox(s)
}

var (
	iniSectionRe = lazyre.New(`^\s*\[([^\]]+)\]\s*$`)
	braceRe      = lazyre.New(`\{([^{}]*)\}`)
	toxSubstRe   = lazyre.New(`\{([^{}]*)\}`)
)

// ParseINI reads an INI file into sections of keys; continuation lines are
// joined to the previous key's value with newlines.
func ParseINI(data []byte) map[string]map[string]string {
	out := map[string]map[string]string{}
	section, key := "", ""
	for _, line := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, ";") {
			continue
		}
		if m := iniSectionRe.FindStringSubmatch(line); m != nil {
			section, key = strings.TrimSpace(m[1]), ""
			if out[section] == nil {
				out[section] = map[string]string{}
			}
			continue
		}
		if section == "" {
			continue
		}
		if (line[0] == ' ' || line[0] == '\t') && key != "" {
			out[section][key] += "\n" + trimmed
			continue
		}
		k, v, ok := strings.Cut(trimmed, "=")
		if !ok {
			k, v, ok = strings.Cut(trimmed, ":")
			if !ok {
				continue
			}
		}
		key = strings.TrimSpace(k)
		out[section][key] = strings.TrimSpace(v)
	}
	return out
}

// ExpandEnvList expands tox's envlist: py3{9,10}-django{42,50}, lint.
func ExpandEnvList(s string) []string {
	var out []string
	for _, item := range splitTopLevel(s) {
		item = strings.TrimSpace(item)
		if item == "" || strings.HasPrefix(item, "#") {
			continue
		}
		out = append(out, expandBraces(item)...)
	}
	return out
}

func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '{':
			depth++
		case '}':
			depth--
		case ',', '\n':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func expandBraces(s string) []string {
	m := braceRe.FindStringSubmatchIndex(s)
	if m == nil {
		return []string{s}
	}
	var out []string
	for _, alt := range strings.Split(s[m[2]:m[3]], ",") {
		for _, rest := range expandBraces(s[m[1]:]) {
			out = append(out, s[:m[0]]+strings.TrimSpace(alt)+rest)
			if len(out) > 200 {
				return out
			}
		}
	}
	return out
}

// toxCommands turns a tox commands value into shell lines: substitutions
// ({posargs:tests}, {envpython}, {toxinidir}) resolved, a leading "-"
// (ignore the exit status) dropped.
func toxCommands(v string) string {
	var lines []string
	for _, l := range strings.Split(v, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		l = strings.TrimPrefix(l, "- ")
		l = strings.TrimPrefix(l, "-")
		l = toxSubstRe.ReplaceAllStringFunc(l, func(m string) string {
			inner := m[1 : len(m)-1]
			name, def, _ := strings.Cut(inner, ":")
			switch name {
			case "posargs":
				return def
			case "envpython":
				return "python"
			case "toxinidir", "toxworkdir", "tox_root":
				return "."
			case "envbindir", "env_bin_dir":
				return "bin"
			}
			return ""
		})
		lines = append(lines, strings.TrimSpace(l))
	}
	return strings.Join(lines, "\n")
}

func (t *Tree) readTox(s *Scripts, pyproject map[string]any) {
	p := Join(s.Dir, "tox.ini")
	var ini map[string]map[string]string
	if data, ok := t.read(p); ok {
		ini = ParseINI(data)
	} else if tox, ok := TOMLTable(pyproject, "tool", "tox"); ok {
		if legacy, ok := tox["legacy_tox_ini"].(string); ok {
			ini = ParseINI([]byte(legacy))
			p = Join(s.Dir, "pyproject.toml")
		}
	}
	if ini == nil || ini["tox"] == nil && ini["testenv"] == nil {
		return // a tox.ini holding only [flake8] or [pytest]
	}
	s.Tox = map[string]string{}
	s.Files["tox"] = p
	s.ToxEnvs = ExpandEnvList(ini["tox"]["envlist"] + "\n" + ini["tox"]["env_list"])
	if base, ok := ini["testenv"]; ok {
		s.Tox[""] = toxCommands(strings.TrimSpace(base["commands_pre"] + "\n" + base["commands"]))
	}
	for _, sec := range slices.Sorted(maps.Keys(ini)) {
		if env, ok := strings.CutPrefix(sec, "testenv:"); ok {
			cmds, has := ini[sec]["commands"]
			if !has {
				cmds = ini["testenv"]["commands"]
			}
			s.Tox[env] = toxCommands(strings.TrimSpace(ini[sec]["commands_pre"] + "\n" + cmds))
		}
	}
}

var (
	noxSessionRe = lazyre.New(`(?m)^@(?:nox\.)?session\s*(\(([^)]*)\))?\s*\n(?:@.*\n)*\s*def\s+([A-Za-z_][A-Za-z0-9_]*)`)
	noxNameRe    = lazyre.New(`name\s*=\s*["']([^"']+)["']`)
	noxCallRe    = lazyre.New(`session\.(run|run_always|install)\s*\(`)
	pyStringRe   = lazyre.New(`"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'`)
)

// NoxSessions lists the sessions a noxfile defines, read as text.
func NoxSessions(src string) []string {
	var out []string
	for _, m := range noxSessionRe.FindAllStringSubmatch(src, -1) {
		name := m[3]
		if n := noxNameRe.FindStringSubmatch(m[2]); n != nil {
			name = n[1]
		}
		out = append(out, name)
	}
	return out
}

func (t *Tree) readNox(s *Scripts) {
	p := Join(s.Dir, "noxfile.py")
	data, ok := t.read(p)
	if !ok {
		return
	}
	src := string(data)
	s.Nox = map[string]string{}
	s.Files["nox"] = p
	locs := noxSessionRe.FindAllStringSubmatchIndex(src, -1)
	for i, m := range locs {
		name := src[m[6]:m[7]]
		if m[4] >= 0 {
			if n := noxNameRe.FindStringSubmatch(src[m[4]:m[5]]); n != nil {
				name = n[1]
			}
		}
		end := len(src)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		s.NoxSessions = append(s.NoxSessions, name)
		s.Nox[name] = noxCommands(src[m[1]:end])
	}
}

// noxCommands turns the session.run/install calls of a session's body into
// shell lines, keeping their string arguments.
func noxCommands(body string) string {
	var lines []string
	for _, loc := range noxCallRe.FindAllStringSubmatchIndex(body, -1) {
		kind := body[loc[2]:loc[3]]
		args := callArgs(body[loc[1]:])
		var words []string
		for _, m := range pyStringRe.FindAllStringSubmatch(args, -1) {
			words = append(words, Quote(m[1]+m[2]))
		}
		if len(words) == 0 {
			continue
		}
		if kind == "install" {
			words = append([]string{"pip", "install"}, words...)
		}
		lines = append(lines, strings.Join(words, " "))
	}
	return strings.Join(lines, "\n")
}

// callArgs returns the text of a call's arguments up to its closing
// parenthesis, keyword arguments left out.
func callArgs(s string) string {
	depth := 1
	var quote byte
	var b strings.Builder
	for i := 0; i < len(s) && depth > 0; i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && i+1 < len(s) {
				b.WriteByte(c)
				i++
				c = s[i]
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
			if depth == 0 {
				return keepPositional(b.String())
			}
		}
		b.WriteByte(c)
	}
	return keepPositional(b.String())
}

var pyKeywordArgRe = lazyre.New(`(?s),?\s*[A-Za-z_][A-Za-z0-9_]*\s*=[^=].*$`)

// keepPositional drops keyword arguments (env={...}, external=True).
func keepPositional(args string) string {
	return pyKeywordArgRe.ReplaceAllString(args, "")
}

var (
	mixAliasesRe = lazyre.New(`(?s)defp?\s+aliases\b.*?\bdo\b(.*?)\n\s*end\b`)
	mixAliasRe   = lazyre.New(`(?m)(?:^|[\[,])\s*"?([a-z_][A-Za-z0-9_.]*)"?:\s*(\[[^\]]*\]|"[^"]*"|&[A-Za-z_][A-Za-z0-9_]*/\d)`)
)

func (t *Tree) readMix(s *Scripts) {
	p := Join(s.Dir, "mix.exs")
	data, ok := t.read(p)
	if !ok {
		return
	}
	s.Mix = map[string]string{}
	s.Files["mix"] = p
	m := mixAliasesRe.FindStringSubmatch(string(data))
	if m == nil {
		return
	}
	for _, a := range mixAliasRe.FindAllStringSubmatch(m[1], -1) {
		var lines []string
		for _, str := range pyStringRe.FindAllStringSubmatch(a[2], -1) {
			task := strings.TrimSpace(str[1] + str[2])
			if task != "" {
				lines = append(lines, "mix "+task)
			}
		}
		s.Mix[a[1]] = strings.Join(lines, "\n")
	}
}
