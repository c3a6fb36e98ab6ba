package shellcmd

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Command is one simple command of a script, as the shell would run it.
type Command struct {
	// Text is the command printed back from the syntax tree, without
	// redirections and without the pipe stages after it.
	Text string
	// Args are the words, assignments first (A=1 go test). A word that is
	// not a literal ($VAR, $(...)) is "", except that a variable mixed
	// with literal text counts as empty (${PREFIX}pytest is "pytest") and
	// a leading $GITHUB_WORKSPACE (or $PWD) is ".".
	Args []string
	// Dir is where it runs, relative to where the script starts, following
	// cd, pushd and popd; DirUnknown when a cd went somewhere not literal.
	Dir        string
	DirUnknown bool
	// OrFallback is set for `cmd || other`: the script does not fail when
	// cmd does, so cmd is no gate.
	OrFallback bool
	// PipedTo names the program at the end of a pipe (`go test | tee x`);
	// Piped holds the later stages themselves.
	PipedTo string
	Piped   []Command
	// Compound is set for an if/for/while/case statement taken whole; its
	// commands are in Inner.
	Compound bool
	Inner    []Command
	// Line is the line of the script it starts on.
	Line       int
	Negated    bool
	Background bool
}

// maxFuncCalls bounds how many calls of the script's own functions are
// expanded (a function calling itself, or many calls of big functions).
const maxFuncCalls = 64

// Parse splits a shell script (bash) into its simple commands, in order,
// with the directory each one runs in. Calls of functions the script
// defines are replaced by the functions' commands. A script that does not
// parse is an error; Parse never panics.
func Parse(script string) (cmds []Command, err error) {
	defer func() {
		if r := recover(); r != nil {
			cmds, err = nil, fmt.Errorf("shell parser failed: %v", r)
		}
	}()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil, err
	}
	w := &walker{dir: ".", funcs: map[string]*syntax.Stmt{}, calls: new(int)}
	for _, st := range f.Stmts {
		w.stmt(st)
	}
	return w.out, nil
}

type walker struct {
	dir        string
	dirUnknown bool
	stack      []string
	out        []Command
	funcs      map[string]*syntax.Stmt
	inFunc     map[string]bool
	calls      *int
}

func (w *walker) emit(c Command) { w.out = append(w.out, c) }

func (w *walker) sub() *walker {
	return &walker{dir: w.dir, dirUnknown: w.dirUnknown, funcs: w.funcs, inFunc: w.inFunc, calls: w.calls}
}

func (w *walker) stmt(st *syntax.Stmt) {
	if st == nil || st.Cmd == nil {
		return
	}
	switch cmd := st.Cmd.(type) {
	case *syntax.CallExpr:
		w.call(st, cmd)
	case *syntax.BinaryCmd:
		switch cmd.Op {
		case syntax.AndStmt:
			w.stmt(cmd.X)
			w.stmt(cmd.Y)
		case syntax.OrStmt:
			n := len(w.out)
			w.stmt(cmd.X)
			for i := n; i < len(w.out); i++ {
				w.out[i].OrFallback = true
			}
			// The right side runs only on failure: a fallback, an
			// error message or `exit 1`. Keep it out of the gate.
		case syntax.Pipe, syntax.PipeAll:
			stages := pipeStages(cmd)
			n := len(w.out)
			w.stmt(stages[0])
			if n < len(w.out) {
				last := &w.out[len(w.out)-1]
				if ce, ok := stages[len(stages)-1].Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
					last.PipedTo = path.Base(wordLit(ce.Args[0]))
				}
				for _, s := range stages[1:] {
					p := w.sub()
					p.stmt(s)
					last.Piped = append(last.Piped, p.out...)
				}
			}
		}
	case *syntax.Subshell:
		saved, savedUnknown, savedStack := w.dir, w.dirUnknown, append([]string(nil), w.stack...)
		for _, s := range cmd.Stmts {
			w.stmt(s)
		}
		w.dir, w.dirUnknown, w.stack = saved, savedUnknown, savedStack
	case *syntax.Block:
		for _, s := range cmd.Stmts {
			w.stmt(s)
		}
	case *syntax.TimeClause:
		w.stmt(cmd.Stmt)
	case *syntax.DeclClause:
		// export FOO=bar, local x: shell state, not a command.
	case *syntax.FuncDecl:
		// A function is only a definition until it is called.
		if cmd.Name != nil && cmd.Body != nil {
			w.funcs[cmd.Name.Value] = cmd.Body
		}
	case *syntax.IfClause, *syntax.ForClause, *syntax.WhileClause, *syntax.CaseClause:
		inner := w.sub()
		syntax.Walk(cmd, func(n syntax.Node) bool {
			if s, ok := n.(*syntax.Stmt); ok && s != st {
				inner.stmt(s)
				return false
			}
			return true
		})
		w.emit(Command{Text: printNode(st), Dir: w.dir, DirUnknown: w.dirUnknown, Compound: true, Inner: inner.out, Line: int(st.Pos().Line())})
	default:
		// [[ test ]], (( arithmetic )), let: conditions, not commands.
	}
}

// pipeStages returns the statements of a pipe, left to right.
func pipeStages(b *syntax.BinaryCmd) []*syntax.Stmt {
	var out []*syntax.Stmt
	var add func(s *syntax.Stmt)
	add = func(s *syntax.Stmt) {
		if inner, ok := s.Cmd.(*syntax.BinaryCmd); ok && (inner.Op == syntax.Pipe || inner.Op == syntax.PipeAll) {
			add(inner.X)
			add(inner.Y)
			return
		}
		out = append(out, s)
	}
	add(b.X)
	add(b.Y)
	return out
}

func (w *walker) call(st *syntax.Stmt, ce *syntax.CallExpr) {
	if len(ce.Args) == 0 {
		return // FOO=bar: a variable assignment
	}
	args := make([]string, len(ce.Args))
	for i, a := range ce.Args {
		args[i] = looseValue(a)
	}
	name := args[0]
	switch name {
	case "cd":
		w.cd(args[1:])
		return
	case "pushd":
		w.stack = append(w.stack, w.dir)
		w.cd(args[1:])
		return
	case "popd":
		if n := len(w.stack); n > 0 {
			w.dir, w.stack = w.stack[n-1], w.stack[:n-1]
		}
		return
	}
	if body, ok := w.funcs[name]; ok && !w.inFunc[name] && *w.calls < maxFuncCalls {
		// A call of the script's own function runs its body here.
		*w.calls++
		inFunc := map[string]bool{name: true}
		for k := range w.inFunc {
			inFunc[k] = true
		}
		saved := w.inFunc
		w.inFunc = inFunc
		n := len(w.out)
		w.stmt(body)
		w.inFunc = saved
		for i := n; i < len(w.out); i++ {
			w.out[i].Negated = w.out[i].Negated || st.Negated
			w.out[i].Background = w.out[i].Background || st.Background
		}
		return
	}
	var assigns []string
	for _, as := range ce.Assigns {
		assigns = append(assigns, printNode(as))
	}
	printed := *st
	printed.Redirs = nil
	printed.Comments = nil
	printed.Semicolon = syntax.Pos{}
	printed.Background = false
	w.emit(Command{
		Text:       printNode(&printed),
		Args:       append(assigns, args...),
		Dir:        w.dir,
		DirUnknown: w.dirUnknown,
		Line:       int(st.Pos().Line()),
		Negated:    st.Negated,
		Background: st.Background,
	})
}

func (w *walker) cd(args []string) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		args = args[1:]
	}
	if len(args) == 0 {
		w.dir = "." // cd with no argument goes home; treat as the root
		return
	}
	target := args[0]
	switch {
	case target == "" || target == "-" || strings.HasPrefix(target, "~"):
		w.dirUnknown = true
	case strings.HasPrefix(target, "/"):
		w.dirUnknown = true
	default:
		w.dir = Join(w.dir, target)
	}
}

// WordValue returns a word's value when it is literal (quotes removed);
// $GITHUB_WORKSPACE, $CI_PROJECT_DIR and $PWD at its start become ".".
func WordValue(w *syntax.Word) string {
	var b strings.Builder
	for i, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				switch y := q.(type) {
				case *syntax.Lit:
					b.WriteString(y.Value)
				case *syntax.ParamExp:
					if i == 0 && y.Param != nil && isWorkspaceVar(y.Param.Value) && b.Len() == 0 {
						b.WriteString(".")
						continue
					}
					return ""
				default:
					return ""
				}
			}
		case *syntax.ParamExp:
			if i == 0 && x.Param != nil && isWorkspaceVar(x.Param.Value) {
				b.WriteString(".")
				continue
			}
			return ""
		default:
			return ""
		}
	}
	return b.String()
}

// looseValue is WordValue for classification: in a word that mixes a
// variable with literal text (${PREFIX}pytest), the variable counts as
// empty. A word that is only a variable stays "".
func looseValue(w *syntax.Word) string {
	if v := WordValue(w); v != "" {
		return v
	}
	var b strings.Builder
	lit := false
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(x.Value)
			lit = true
		case *syntax.SglQuoted:
			b.WriteString(x.Value)
			lit = true
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
					lit = true
				}
			}
		case *syntax.ParamExp:
		default:
			return ""
		}
	}
	if !lit {
		return ""
	}
	return b.String()
}

func isWorkspaceVar(name string) bool {
	return name == "GITHUB_WORKSPACE" || name == "CI_PROJECT_DIR" || name == "PWD"
}

// wordLit is WordValue for a word printed in a message.
func wordLit(w *syntax.Word) string {
	if v := WordValue(w); v != "" {
		return v
	}
	return PrintNode(w)
}

// PrintNode prints a syntax node on one line ("" when it cannot be printed).
func PrintNode(n syntax.Node) string {
	var buf bytes.Buffer
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&buf, n); err != nil {
		return ""
	}
	return strings.TrimSpace(buf.String())
}

func printNode(n syntax.Node) string { return PrintNode(n) }

// Quote quotes a word for sh when it needs it.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%^", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Clean normalises a repository-relative path: "./a/../b" is "b", the
// root is ".".
func Clean(p string) string {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	if p == "" || p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}

// Join joins a directory and a name relative to the repository root.
func Join(dir, name string) string {
	if dir == "" || dir == "." {
		return Clean(name)
	}
	return Clean(dir + "/" + name)
}
