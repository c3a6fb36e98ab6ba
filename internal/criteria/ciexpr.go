package criteria

import (
	"strconv"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// A small evaluator for GitHub Actions expressions, enough to resolve
// ${{ matrix.os }}, ${{ env.X }} and if: conditions for one chosen matrix
// cell. Anything it cannot know (secrets, step outputs, the event) is
// unknown, never guessed.

type exprVal struct {
	known bool
	s     string
	b     bool
	isB   bool
	null  bool
}

func strVal(s string) exprVal { return exprVal{known: true, s: s} }
func boolVal(b bool) exprVal  { return exprVal{known: true, b: b, isB: true} }
func unknownVal() exprVal     { return exprVal{} }
func (v exprVal) truthy() bool {
	return v.known && (v.isB && v.b || !v.isB && !v.null && v.s != "" && v.s != "0")
}
func (v exprVal) str() string {
	if v.isB {
		return strconv.FormatBool(v.b)
	}
	return v.s
}

// unknownMatrix marks a matrix axis (or, as a key, a whole matrix) whose
// values are computed at run time.
const unknownMatrix = "\x00computed"

// exprEnv resolves context references.
type exprEnv struct {
	matrix map[string]string // flattened: "os", "config.name"
	env    map[string]string
	inputs map[string]string
}

func (e exprEnv) lookup(ref string) exprVal {
	ref = strings.TrimSpace(ref)
	lower := strings.ToLower(ref)
	switch {
	case strings.HasPrefix(lower, "matrix."):
		if _, computed := e.matrix[unknownMatrix]; computed {
			return unknownVal()
		}
		if v, ok := e.matrix[ref[len("matrix."):]]; ok {
			if v == unknownMatrix {
				return unknownVal()
			}
			return strVal(v)
		}
		return exprVal{known: true, null: true}
	case strings.HasPrefix(lower, "env."):
		if v, ok := e.env[ref[len("env."):]]; ok {
			return strVal(v)
		}
		return unknownVal()
	case strings.HasPrefix(lower, "inputs."):
		if v, ok := e.inputs[ref[len("inputs."):]]; ok {
			return strVal(v)
		}
		return unknownVal()
	case lower == "runner.os":
		return strVal("Linux")
	case lower == "runner.arch":
		return strVal("X64")
	case lower == "github.workspace" || lower == "runner.workspace":
		// runner.workspace is the parent of the checkout; a build
		// directory there is taken to be one inside the repository.
		return strVal(".")
	}
	return unknownVal()
}

var (
	exprRe            = lazyre.New(`\$\{\{(.*?)\}\}`)
	workspacePrefixRe = lazyre.New(`\$\{\{\s*(github|runner)\.workspace\s*\}\}/`)
)

// substitute replaces every ${{ }} in s; unresolved reports the expressions
// that could not be resolved (they are left as placeholders).
func (e exprEnv) substitute(s string) (out string, unresolved []string) {
	s = workspacePrefixRe.ReplaceAllString(s, "")
	out = exprRe.ReplaceAllStringFunc(s, func(m string) string {
		inner := m[3 : len(m)-2]
		v := e.eval(inner)
		if !v.known {
			unresolved = append(unresolved, strings.TrimSpace(m))
			return "__AL_EXPR_" + strconv.Itoa(len(unresolved)) + "__"
		}
		if v.null {
			return ""
		}
		return v.str()
	})
	return out, unresolved
}

// condition evaluates an if: condition; unknown conditions count as true
// (the step may run), failure()/cancelled() as false.
func (e exprEnv) condition(cond string) bool {
	cond = strings.TrimSpace(cond)
	if cond == "" {
		return true
	}
	if m := exprRe.FindStringSubmatch(cond); m != nil && strings.TrimSpace(cond) == m[0] {
		cond = m[1]
	}
	v := e.eval(cond)
	if !v.known {
		return true
	}
	return v.truthy()
}

// eval parses and evaluates one expression.
func (e exprEnv) eval(src string) (v exprVal) {
	defer func() {
		if recover() != nil {
			v = unknownVal()
		}
	}()
	p := &exprParser{toks: tokenizeExpr(src), env: e}
	v = p.or()
	if p.pos != len(p.toks) {
		return unknownVal()
	}
	return v
}

type exprParser struct {
	toks []string
	pos  int
	env  exprEnv
}

var exprTokRe = lazyre.New(`\s*('(?:[^']|'')*'|&&|\|\||==|!=|<=|>=|[()!,<>]|[A-Za-z_][A-Za-z0-9_.\-*]*(?:\[[^\]]*\])*|-?[0-9][0-9.]*)`)

func tokenizeExpr(s string) []string {
	var out []string
	for len(strings.TrimSpace(s)) > 0 {
		m := exprTokRe.FindStringSubmatchIndex(s)
		if m == nil || m[0] != 0 {
			return append(out, "\x00") // an unknown character: unparseable
		}
		out = append(out, s[m[2]:m[3]])
		s = s[m[1]:]
	}
	return out
}

func (p *exprParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *exprParser) next() string {
	t := p.peek()
	p.pos++
	return t
}

func (p *exprParser) or() exprVal {
	l := p.and()
	for p.peek() == "||" {
		p.next()
		r := p.and()
		switch {
		case l.known && l.truthy():
		case l.known:
			l = r
		case r.known && r.truthy():
			l = unknownVal()
		default:
			l = unknownVal()
		}
	}
	return l
}

func (p *exprParser) and() exprVal {
	l := p.cmp()
	for p.peek() == "&&" {
		p.next()
		r := p.cmp()
		switch {
		case l.known && !l.truthy():
		case !r.known && l.known:
			l = unknownVal()
		case !l.known && r.known && !r.truthy():
			l = boolVal(false)
		case !l.known:
		default:
			l = r
		}
	}
	return l
}

func (p *exprParser) cmp() exprVal {
	l := p.unary()
	for {
		op := p.peek()
		if op != "==" && op != "!=" && op != "<" && op != ">" && op != "<=" && op != ">=" {
			return l
		}
		p.next()
		r := p.unary()
		if !l.known || !r.known {
			l = unknownVal()
			continue
		}
		eq := strings.EqualFold(l.str(), r.str()) || l.null && r.null
		switch op {
		case "==":
			l = boolVal(eq)
		case "!=":
			l = boolVal(!eq)
		default:
			a, err1 := strconv.ParseFloat(l.str(), 64)
			b, err2 := strconv.ParseFloat(r.str(), 64)
			if err1 != nil || err2 != nil {
				l = unknownVal()
				continue
			}
			l = boolVal(op == "<" && a < b || op == ">" && a > b || op == "<=" && a <= b || op == ">=" && a >= b)
		}
	}
}

func (p *exprParser) unary() exprVal {
	if p.peek() == "!" {
		p.next()
		v := p.unary()
		if !v.known {
			return v
		}
		return boolVal(!v.truthy())
	}
	return p.primary()
}

func (p *exprParser) primary() exprVal {
	t := p.next()
	switch {
	case t == "(":
		v := p.or()
		if p.next() != ")" {
			panic("unbalanced")
		}
		return v
	case strings.HasPrefix(t, "'"):
		return strVal(strings.ReplaceAll(t[1:len(t)-1], "''", "'"))
	case t == "true" || t == "false":
		return boolVal(t == "true")
	case t == "null":
		return exprVal{known: true, null: true}
	case t != "" && (t[0] >= '0' && t[0] <= '9' || t[0] == '-'):
		return strVal(t)
	case t == "" || t == "\x00":
		panic("unexpected end")
	}
	if p.peek() == "(" {
		p.next()
		var args []exprVal
		for p.peek() != ")" {
			args = append(args, p.or())
			if p.peek() == "," {
				p.next()
			} else if p.peek() != ")" {
				panic("bad call")
			}
			if p.pos >= len(p.toks) {
				panic("unterminated call")
			}
		}
		p.next()
		return callExpr(strings.ToLower(t), args)
	}
	return p.env.lookup(t)
}

func callExpr(name string, args []exprVal) exprVal {
	allKnown := true
	for _, a := range args {
		allKnown = allKnown && a.known
	}
	switch name {
	case "always", "success":
		return boolVal(true)
	case "failure", "cancelled":
		return boolVal(false)
	case "contains", "startswith", "endswith":
		if len(args) != 2 || !allKnown {
			return unknownVal()
		}
		a, b := strings.ToLower(args[0].str()), strings.ToLower(args[1].str())
		switch name {
		case "contains":
			return boolVal(strings.Contains(a, b))
		case "startswith":
			return boolVal(strings.HasPrefix(a, b))
		default:
			return boolVal(strings.HasSuffix(a, b))
		}
	case "format":
		if len(args) == 0 || !allKnown {
			return unknownVal()
		}
		out := args[0].str()
		for i, a := range args[1:] {
			out = strings.ReplaceAll(out, "{"+strconv.Itoa(i)+"}", a.str())
		}
		return strVal(out)
	}
	return unknownVal()
}
