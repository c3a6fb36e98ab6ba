package shellcmd

import "strings"

// frame is one level of what is being followed: a command being
// classified (raw/args), a line of a script (line), or a script's body
// (via).
type frame struct {
	raw, args []string
	wrapped   Wrapped
	dir       string

	via string
	// inFile marks the body of a script file: what it runs is what the
	// tests run (the code under test, often), not the criterion's own
	// machinery.
	inFile bool

	line                                     string
	fallback, background, conditional, piped bool
	dirUnknown                               bool
}

func (f frame) isCall() bool { return f.args != nil }

// trace records what an analysis reaches. Every method is safe on a nil
// trace (plain classification records nothing).
type trace struct {
	frames    []frame
	steps     []Step
	files     []string
	fileSet   map[string]bool
	targets   []string
	targetSet map[string]bool
	problems  []string
	seen      map[string]bool
	following map[string]bool
	tools     []toolAt
}

// toolAt is a program a step runs, and where: its configuration files
// are dependencies.
type toolAt struct {
	tool, dir string
}

func newTrace() *trace {
	return &trace{fileSet: map[string]bool{}, targetSet: map[string]bool{}, seen: map[string]bool{}, following: map[string]bool{}}
}

// push adds a frame; it returns the number of steps so far, for leafAt.
func (t *trace) push(f frame) int {
	if t == nil {
		return 0
	}
	t.frames = append(t.frames, f)
	return len(t.steps)
}

func (t *trace) pop() {
	if t == nil || len(t.frames) == 0 {
		return
	}
	t.frames = t.frames[:len(t.frames)-1]
}

// leafAt reports whether no step was recorded since push returned n.
func (t *trace) leafAt(n int) bool { return t != nil && len(t.steps) == n }

// mark and rollback discard the steps of a classification whose result is
// not used (probing whether a word is a known command).
func (t *trace) mark() int {
	if t == nil {
		return 0
	}
	return len(t.steps)
}

func (t *trace) rollback(n int) {
	if t == nil || n > len(t.steps) {
		return
	}
	t.steps = t.steps[:n]
}

func (t *trace) file(p string) {
	if t == nil || p == "" || t.fileSet[p] {
		return
	}
	t.fileSet[p] = true
	t.files = append(t.files, p)
}

// script records a script file the criterion runs, unless a script file
// runs it: then it is what the tests exercise (a shell project's code under
// test, sourced or run by its test script), not the criterion's machinery.
func (t *trace) script(p string) {
	if t == nil {
		return
	}
	for _, f := range t.frames {
		if f.inFile {
			return
		}
	}
	t.file(p)
}

func (t *trace) target(file, name string) {
	if t == nil || file == "" {
		return
	}
	t.file(file)
	key := file + ":" + name
	if file == "" || t.targetSet[key] {
		return
	}
	t.targetSet[key] = true
	t.targets = append(t.targets, key)
}

func (t *trace) problem(p string) {
	if t == nil || t.seen[p] {
		return
	}
	t.seen[p] = true
	t.problems = append(t.problems, p)
}

func (t *trace) active(key string) bool { return t != nil && t.following[key] }

func (t *trace) enter(key string) {
	if t != nil {
		t.following[key] = true
	}
}

func (t *trace) leave(key string) {
	if t != nil {
		delete(t.following, key)
	}
}

// leaf records the command of the top frame as a step.
func (t *trace) leaf(info Info) {
	if t == nil || len(t.frames) == 0 {
		return
	}
	top := t.frames[len(t.frames)-1]
	if len(top.args) > 0 && shellState[top.args[0]] {
		return
	}
	s := Step{Args: append([]string(nil), top.args...), Dir: top.dir, Kind: info.Kind, Sig: info.Sig, Runner: info.Runner, Note: info.Note}
	var names []string
	boundary := -1
	for i, f := range t.frames {
		if f.via != "" {
			s.Via = append(s.Via, f.via)
			if j := strings.LastIndex(f.via, ":"); j >= 0 {
				names = append(names, f.via[j+1:])
			}
			boundary = i
		}
		if f.line != "" || f.isCall() {
			s.Fallback = s.Fallback || f.fallback
			s.Background = s.Background || f.background
			s.Conditional = s.Conditional || f.conditional
			s.DirUnknown = s.DirUnknown || f.dirUnknown
		}
	}
	if info.Script != "" {
		names = append(names, info.Script)
	}
	for i := boundary + 1; i < len(t.frames); i++ {
		f := t.frames[i]
		if f.line != "" {
			s.Text = f.line
			s.Piped = s.Piped || f.piped
			continue
		}
		if !f.isCall() {
			continue
		}
		s.Wrappers = append(s.Wrappers, f.wrapped.Wrappers...)
		s.Env = append(s.Env, f.wrapped.Env...)
		s.Unset = append(s.Unset, f.wrapped.Unset...)
		if i == len(t.frames)-1 {
			break
		}
		// What this command adds around the next one: `uv run`, `npx`.
		next := -1
		for j := i + 1; j < len(t.frames); j++ {
			if t.frames[j].isCall() {
				next = j
				break
			}
		}
		if next < 0 {
			continue
		}
		if p := prefixOf(f.args, t.frames[next].raw); len(p) > 0 {
			s.Wrappers = append(s.Wrappers, strings.Join(p, " "))
		} else {
			s.Wrappers = append(s.Wrappers, f.args[0])
		}
	}
	if s.Text == "" {
		s.Text = strings.Join(s.Args, " ")
	}
	s.Role = roleOf(s.Kind, names)
	if s.Runner != "" {
		s.Selection, s.Decoration, s.Plain = splitArgs(s.Runner, s.Args)
	} else {
		s.Plain = append([]string(nil), s.Args...)
	}
	t.steps = append(t.steps, s)
	if len(s.Args) > 0 {
		t.tools = append(t.tools, toolAt{tool: ToolName(s.Args[0]), dir: s.Dir})
	}
	for i := 0; i < len(t.frames)-1; i++ {
		if f := t.frames[i]; f.isCall() {
			t.tools = append(t.tools, toolAt{tool: ToolName(f.args[0]), dir: f.dir})
		}
	}
}

// shellState are builtins that change the shell's state and run nothing:
// they are not steps.
var shellState = map[string]bool{
	"set": true, "shopt": true, "trap": true, "export": true, "unset": true, "exit": true, "return": true,
	"true": true, ":": true, "local": true, "declare": true, "typeset": true, "readonly": true, "source": true,
	".": true, "umask": true, "ulimit": true, "alias": true, "hash": true, "[": true, "[[": true, "test": true,
	"cd": true, "pushd": true, "popd": true, "shift": true, "wait": true, "read": true,
}

// prefixOf returns the words of outer before inner, when inner is a suffix
// of outer (uv run --frozen pytest -x: "uv run --frozen").
func prefixOf(outer, inner []string) []string {
	if len(inner) == 0 || len(inner) >= len(outer) {
		return nil
	}
	off := len(outer) - len(inner)
	for i, w := range inner {
		if outer[off+i] != w {
			return nil
		}
	}
	return outer[:off]
}
