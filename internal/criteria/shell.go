package criteria

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// shellCmd is one simple command of a script, as the harness would run it.
type shellCmd struct {
	// text is the command printed back from the syntax tree, without a
	// trailing pipe into a reporter and without redirections.
	text string
	// args are the words; a word that is not a literal (a $VAR, a $(...))
	// is "" except for a leading $GITHUB_WORKSPACE, which becomes ".".
	args []string
	// dir is where it runs, relative to where the script starts, following
	// cd, pushd and popd; dirUnknown when a cd went somewhere not literal.
	dir        string
	dirUnknown bool
	// orFallback is set for `cmd || other`: the script does not fail when
	// cmd does, so cmd is no gate.
	orFallback bool
	// pipedTo names the program at the end of a pipe (`go test | tee x`).
	pipedTo string
	// compound is set for an if/for/while/case statement taken whole; its
	// commands are in inner.
	compound bool
	inner    []shellCmd
	line     int
	negated  bool
	bg       bool
}

// splitScript parses a shell script (bash) into its simple commands, in
// order, with the directory each one runs in.
func splitScript(script string) (cmds []shellCmd, err error) {
	defer func() {
		if r := recover(); r != nil {
			cmds, err = nil, fmt.Errorf("shell parser failed: %v", r)
		}
	}()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil, err
	}
	w := &scriptWalker{dir: "."}
	for _, st := range f.Stmts {
		w.stmt(st)
	}
	return w.out, nil
}

type scriptWalker struct {
	dir        string
	dirUnknown bool
	stack      []string
	out        []shellCmd
}

func (w *scriptWalker) emit(c shellCmd) {
	w.out = append(w.out, c)
}

func (w *scriptWalker) stmt(st *syntax.Stmt) {
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
				w.out[i].orFallback = true
			}
			// The right side runs only on failure: a fallback, an
			// error message or `exit 1`. Keep it out of the gate.
		case syntax.Pipe, syntax.PipeAll:
			left := leftmost(cmd)
			right := rightmost(cmd)
			n := len(w.out)
			w.stmt(left)
			if n < len(w.out) {
				prog := ""
				if ce, ok := right.Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
					prog = path.Base(wordLit(ce.Args[0]))
				}
				w.out[len(w.out)-1].pipedTo = prog
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
	case *syntax.IfClause, *syntax.ForClause, *syntax.WhileClause, *syntax.CaseClause:
		inner := &scriptWalker{dir: w.dir, dirUnknown: w.dirUnknown}
		syntax.Walk(cmd, func(n syntax.Node) bool {
			if s, ok := n.(*syntax.Stmt); ok && s != st {
				inner.stmt(s)
				return false
			}
			return true
		})
		w.emit(shellCmd{text: printNode(st), dir: w.dir, dirUnknown: w.dirUnknown, compound: true, inner: inner.out, line: int(st.Pos().Line())})
	default:
		// [[ test ]], (( arithmetic )), let: conditions, not commands.
	}
}

func leftmost(b *syntax.BinaryCmd) *syntax.Stmt {
	x := b.X
	for {
		if inner, ok := x.Cmd.(*syntax.BinaryCmd); ok && (inner.Op == syntax.Pipe || inner.Op == syntax.PipeAll) {
			x = inner.X
			continue
		}
		return x
	}
}

func rightmost(b *syntax.BinaryCmd) *syntax.Stmt {
	return b.Y
}

func (w *scriptWalker) call(st *syntax.Stmt, ce *syntax.CallExpr) {
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
	var assigns []string
	for _, as := range ce.Assigns {
		assigns = append(assigns, printNode(as))
	}
	printed := *st
	printed.Redirs = nil
	printed.Comments = nil
	printed.Semicolon = syntax.Pos{}
	printed.Background = false
	w.emit(shellCmd{
		text:       printNode(&printed),
		args:       append(assigns, args...),
		dir:        w.dir,
		dirUnknown: w.dirUnknown,
		line:       int(st.Pos().Line()),
		negated:    st.Negated,
		bg:         st.Background,
	})
}

func (w *scriptWalker) cd(args []string) {
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
		w.dir = join(w.dir, target)
	}
}

// wordValue returns a word's value when it is literal (quotes removed);
// $GITHUB_WORKSPACE and ${{ github.workspace }} (already replaced) become ".".
func wordValue(w *syntax.Word) string {
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

// looseValue is wordValue for classification: in a word that mixes a
// variable with literal text (${PREFIX}pytest), the variable counts as
// empty. A word that is only a variable stays "".
func looseValue(w *syntax.Word) string {
	if v := wordValue(w); v != "" {
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

// wordLit is wordValue for a word printed in a message.
func wordLit(w *syntax.Word) string {
	if v := wordValue(w); v != "" {
		return v
	}
	return printNode(w)
}

func printNode(n syntax.Node) string {
	var buf bytes.Buffer
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&buf, n); err != nil {
		return ""
	}
	return strings.TrimSpace(buf.String())
}

// shellQuote quotes a word for sh when it needs it.
func shellQuote(s string) string {
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

// expandKnownVars expands, in a one-command text, the words that refer only
// to variables CI defines (job and step env:), since they are not set when
// the loop runs the command: `tox -e py${PY//./}` with PY=3.12 becomes
// `tox -e py312`. Other words are left as they are. It reports whether
// anything was expanded.
func expandKnownVars(text string, env map[string]string) (string, bool) {
	if len(env) == 0 || !strings.Contains(text, "$") {
		return text, false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil || len(f.Stmts) != 1 {
		return text, false
	}
	ce, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return text, false
	}
	pairs := make([]string, 0, len(env))
	for _, k := range sortedKeys(env) {
		pairs = append(pairs, k+"="+env[k])
	}
	cfg := &expand.Config{Env: expand.ListEnviron(pairs...)}
	changed := false
	var args []*syntax.Word
	for _, w := range ce.Args {
		if !onlyKnownParams(w, env) {
			args = append(args, w)
			continue
		}
		fields, err := expand.Fields(cfg, w)
		if err != nil {
			args = append(args, w)
			continue
		}
		for _, v := range fields {
			args = append(args, &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: shellQuote(v)}}})
		}
		changed = true
	}
	ce.Args = args
	if !changed {
		return text, false
	}
	return printNode(f.Stmts[0]), true
}

// onlyKnownParams reports whether a word uses parameters, all of them
// defined in env, and nothing else that expands (no $(...), no arithmetic).
func onlyKnownParams(w *syntax.Word, env map[string]string) bool {
	uses := false
	ok := true
	syntax.Walk(w, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ParamExp:
			if x.Param == nil {
				ok = false
				return false
			}
			if _, known := env[x.Param.Value]; !known {
				ok = false
				return false
			}
			uses = true
		case *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst, *syntax.ExtGlob:
			ok = false
			return false
		}
		return true
	})
	return ok && uses
}

// githubEnvWrites finds the variables a step script sets for the steps
// after it: echo "NAME=value" >> $GITHUB_ENV (literal values only).
func githubEnvWrites(script string) (out map[string]string) {
	out = map[string]string{}
	defer func() {
		if recover() != nil {
			out = map[string]string{}
		}
	}()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return out
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		toEnv := false
		for _, r := range st.Redirs {
			if r.Word != nil && strings.Contains(printNode(r.Word), "GITHUB_ENV") {
				toEnv = true
			}
		}
		ce, ok := st.Cmd.(*syntax.CallExpr)
		if !toEnv || !ok || len(ce.Args) < 2 {
			return true
		}
		if name := wordValue(ce.Args[0]); name != "echo" && name != "printf" {
			return true
		}
		for _, a := range ce.Args[1:] {
			v := wordValue(a)
			if k, val, found := strings.Cut(v, "="); found && isAssignment(k+"=") {
				out[k] = val
			}
		}
		return true
	})
	return out
}
