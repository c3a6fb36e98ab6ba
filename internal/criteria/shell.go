package criteria

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// The shell model (parsing, classification, wrappers, scripts) is
// internal/shellcmd; what is left here is about CI only: the variables a
// workflow sets for its steps.

// expandKnownVars expands, in a one-command text, the words that refer only
// to variables CI defines (job and step env:), since they are not set when
// the loop runs the command: `tox -e py${PY//./}` with PY=3.12 becomes
// `tox -e py312`. Other words are left as they are. It reports whether
// anything was expanded.
func expandKnownVars(text string, env map[string]string) (out string, changed bool) {
	if len(env) == 0 || !strings.Contains(text, "$") {
		return text, false
	}
	defer func() {
		if recover() != nil {
			out, changed = text, false
		}
	}()
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
			args = append(args, &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: shellcmd.Quote(v)}}})
		}
		changed = true
	}
	ce.Args = args
	if !changed {
		return text, false
	}
	return shellcmd.PrintNode(f.Stmts[0]), true
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
			if r.Word != nil && strings.Contains(shellcmd.PrintNode(r.Word), "GITHUB_ENV") {
				toEnv = true
			}
		}
		ce, ok := st.Cmd.(*syntax.CallExpr)
		if !toEnv || !ok || len(ce.Args) < 2 {
			return true
		}
		if name := shellcmd.WordValue(ce.Args[0]); name != "echo" && name != "printf" {
			return true
		}
		for _, a := range ce.Args[1:] {
			v := shellcmd.WordValue(a)
			if k, val, found := strings.Cut(v, "="); found && shellcmd.IsAssignment(k+"=") {
				out[k] = val
			}
		}
		return true
	})
	return out
}
