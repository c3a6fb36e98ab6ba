package cifailure

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// An evaluator of GitHub Actions expressions (${{ ... }}), with GitHub's
// semantics: case-insensitive property names and string comparison, loose
// equality that converts to numbers, short-circuit && and ||, and the
// functions that need nothing but their arguments. What only the runner
// knows (secrets, step outputs, needs, hashFiles, ...) is an *exprNeed
// error naming it, raised only when the expression actually reaches it.

// exprNeed says that an expression needs what only the runner has.
type exprNeed struct {
	// Need is the reference or function: "secrets.NPM_TOKEN", "hashFiles()".
	Need string
	// Why explains it, for the refusal.
	Why string
}

func (e *exprNeed) Error() string { return e.Need + ": " + e.Why }

// exprSyntax is an expression that does not parse.
type exprSyntax struct{ msg string }

func (e *exprSyntax) Error() string { return e.msg }

// contexts are the named values an expression can read. A name mapped to an
// *exprNeed is a context only the runner has.
type contexts map[string]any

// runnerOnly are the contexts that only exist on the runner, with why.
var runnerOnly = map[string]string{
	"secrets":  "the loop runs without this repository's secrets",
	"steps":    "step outputs exist only while the job runs",
	"needs":    "the outputs of other jobs exist only in the workflow run",
	"jobs":     "job outputs exist only in the workflow run",
	"job":      "the job's container and services exist only on the runner",
	"strategy": "the job's strategy context exists only on the runner",
	"vars":     "configuration variables are not given to the loop",
}

func (cx contexts) root(name string) (any, error) {
	for k, v := range cx {
		if strings.EqualFold(k, name) {
			if n, ok := v.(*exprNeed); ok {
				return nil, n
			}
			return v, nil
		}
	}
	if why, ok := runnerOnly[strings.ToLower(name)]; ok {
		return nil, &exprNeed{Need: strings.ToLower(name), Why: why}
	}
	return nil, &exprSyntax{msg: fmt.Sprintf("unknown context %q", name)}
}

// ---- syntax tree ----

type exprNode interface{}

type (
	litNode    struct{ v any }
	refNode    struct{ name string }
	memberNode struct {
		obj  exprNode
		name string
	}
	indexNode struct{ obj, idx exprNode }
	callNode  struct {
		name string
		args []exprNode
	}
	notNode    struct{ x exprNode }
	binaryNode struct {
		op   string
		l, r exprNode
	}
)

// ---- tokens ----

type token struct {
	kind string // "num", "str", "id", "op", "eof"
	text string
	num  float64
}

func tokenize(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(src) {
					return nil, &exprSyntax{msg: "unterminated string"}
				}
				if src[j] == '\'' {
					if j+1 < len(src) && src[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(src[j])
				j++
			}
			out = append(out, token{kind: "str", text: b.String()})
			i = j + 1
		case c >= '0' && c <= '9' || c == '-' && i+1 < len(src) && (src[i+1] >= '0' && src[i+1] <= '9' || src[i+1] == '.') || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '.' || (src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			n, ok := parseNumber(src[i:j])
			if !ok {
				return nil, &exprSyntax{msg: fmt.Sprintf("bad number %q", src[i:j])}
			}
			out = append(out, token{kind: "num", text: src[i:j], num: n})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '-') {
				j++
			}
			out = append(out, token{kind: "id", text: src[i:j]})
			i = j
		default:
			two := ""
			if i+1 < len(src) {
				two = src[i : i+2]
			}
			switch two {
			case "==", "!=", "<=", ">=", "&&", "||":
				out = append(out, token{kind: "op", text: two})
				i += 2
				continue
			}
			if strings.IndexByte("!<>().,[]*", c) >= 0 {
				out = append(out, token{kind: "op", text: string(c)})
				i++
				continue
			}
			return nil, &exprSyntax{msg: fmt.Sprintf("unexpected character %q", c)}
		}
	}
	return append(out, token{kind: "eof"}), nil
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentByte(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }

func parseNumber(s string) (float64, bool) {
	neg := strings.HasPrefix(s, "-")
	t := strings.TrimPrefix(s, "-")
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X") {
		n, err := strconv.ParseInt(t[2:], 16, 64)
		if err != nil {
			return 0, false
		}
		if neg {
			n = -n
		}
		return float64(n), true
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// ---- parser ----

type parser struct {
	toks []token
	pos  int
}

func parseExpr(src string) (exprNode, error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != "eof" {
		return nil, &exprSyntax{msg: fmt.Sprintf("unexpected %q", p.peek().text)}
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != "eof" {
		p.pos++
	}
	return t
}
func (p *parser) isOp(s string) bool { t := p.peek(); return t.kind == "op" && t.text == s }

func (p *parser) or() (exprNode, error) {
	return p.binary([]string{"||"}, p.and)
}

func (p *parser) and() (exprNode, error) {
	return p.binary([]string{"&&"}, p.equality)
}

func (p *parser) equality() (exprNode, error) {
	return p.binary([]string{"==", "!="}, p.comparison)
}

func (p *parser) comparison() (exprNode, error) {
	return p.binary([]string{"<", ">", "<=", ">="}, p.unary)
}

func (p *parser) binary(ops []string, sub func() (exprNode, error)) (exprNode, error) {
	l, err := sub()
	if err != nil {
		return nil, err
	}
	for {
		matched := ""
		for _, op := range ops {
			if p.isOp(op) {
				matched = op
			}
		}
		if matched == "" {
			return l, nil
		}
		p.next()
		r, err := sub()
		if err != nil {
			return nil, err
		}
		l = binaryNode{op: matched, l: l, r: r}
	}
}

func (p *parser) unary() (exprNode, error) {
	if p.isOp("!") {
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return notNode{x: x}, nil
	}
	return p.postfix()
}

func (p *parser) postfix() (exprNode, error) {
	n, err := p.primary()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.isOp("."):
			p.next()
			t := p.next()
			if t.kind == "op" && t.text == "*" {
				return nil, &exprSyntax{msg: "object filters (.*) are not supported"}
			}
			if t.kind != "id" && t.kind != "num" {
				return nil, &exprSyntax{msg: "a property name must follow '.'"}
			}
			n = memberNode{obj: n, name: t.text}
		case p.isOp("["):
			p.next()
			if p.isOp("*") {
				return nil, &exprSyntax{msg: "object filters ([*]) are not supported"}
			}
			idx, err := p.or()
			if err != nil {
				return nil, err
			}
			if !p.isOp("]") {
				return nil, &exprSyntax{msg: "missing ']'"}
			}
			p.next()
			n = indexNode{obj: n, idx: idx}
		default:
			return n, nil
		}
	}
}

func (p *parser) primary() (exprNode, error) {
	t := p.next()
	switch t.kind {
	case "num":
		return litNode{v: t.num}, nil
	case "str":
		return litNode{v: t.text}, nil
	case "id":
		switch t.text {
		case "true":
			return litNode{v: true}, nil
		case "false":
			return litNode{v: false}, nil
		case "null":
			return litNode{v: nil}, nil
		case "NaN":
			return litNode{v: math.NaN()}, nil
		case "Infinity":
			return litNode{v: math.Inf(1)}, nil
		}
		if p.isOp("(") {
			p.next()
			var args []exprNode
			for !p.isOp(")") {
				a, err := p.or()
				if err != nil {
					return nil, err
				}
				args = append(args, a)
				if p.isOp(",") {
					p.next()
					continue
				}
				if !p.isOp(")") {
					return nil, &exprSyntax{msg: fmt.Sprintf("missing ')' after the arguments of %s", t.text)}
				}
			}
			p.next()
			return callNode{name: t.text, args: args}, nil
		}
		return refNode{name: t.text}, nil
	case "op":
		if t.text == "(" {
			n, err := p.or()
			if err != nil {
				return nil, err
			}
			if !p.isOp(")") {
				return nil, &exprSyntax{msg: "missing ')'"}
			}
			p.next()
			return n, nil
		}
	}
	if t.kind == "eof" {
		return nil, &exprSyntax{msg: "unexpected end of the expression"}
	}
	return nil, &exprSyntax{msg: fmt.Sprintf("unexpected %q", t.text)}
}

// ---- evaluation ----

func (cx contexts) eval(n exprNode) (any, error) {
	switch x := n.(type) {
	case litNode:
		return x.v, nil
	case refNode:
		return cx.root(x.name)
	case memberNode:
		// Name the full reference when a runner-only context is reached.
		if path, ok := refPath(x); ok {
			root := strings.SplitN(path, ".", 2)[0]
			if _, err := cx.root(root); err != nil {
				var need *exprNeed
				if asNeed(err, &need) {
					return nil, &exprNeed{Need: path, Why: need.Why}
				}
				return nil, err
			}
		}
		obj, err := cx.eval(x.obj)
		if err != nil {
			return nil, err
		}
		return member(obj, x.name)
	case indexNode:
		obj, err := cx.eval(x.obj)
		if err != nil {
			return nil, err
		}
		idx, err := cx.eval(x.idx)
		if err != nil {
			return nil, err
		}
		if arr, ok := obj.([]any); ok {
			f := toNumber(idx)
			if f != math.Trunc(f) || f < 0 || int(f) >= len(arr) {
				return nil, nil
			}
			return arr[int(f)], nil
		}
		return member(obj, toString(idx))
	case notNode:
		v, err := cx.eval(x.x)
		if err != nil {
			return nil, err
		}
		return !truthy(v), nil
	case binaryNode:
		l, err := cx.eval(x.l)
		if err != nil {
			return nil, err
		}
		switch x.op {
		case "&&":
			if !truthy(l) {
				return l, nil
			}
			return cx.eval(x.r)
		case "||":
			if truthy(l) {
				return l, nil
			}
			return cx.eval(x.r)
		}
		r, err := cx.eval(x.r)
		if err != nil {
			return nil, err
		}
		return compare(x.op, l, r), nil
	case callNode:
		return cx.call(x)
	}
	return nil, &exprSyntax{msg: "unknown expression node"}
}

func asNeed(err error, target **exprNeed) bool {
	n, ok := err.(*exprNeed)
	if ok {
		*target = n
	}
	return ok
}

// refPath is "secrets.NPM_TOKEN" for a chain of member accesses on a
// context.
func refPath(n exprNode) (string, bool) {
	switch x := n.(type) {
	case refNode:
		return x.name, true
	case memberNode:
		p, ok := refPath(x.obj)
		return p + "." + x.name, ok
	}
	return "", false
}

func member(obj any, name string) (any, error) {
	m, ok := obj.(map[string]any)
	if !ok {
		return nil, nil
	}
	if v, ok := m[name]; ok {
		return unwrapNeed(v)
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return unwrapNeed(v)
		}
	}
	return nil, nil
}

func unwrapNeed(v any) (any, error) {
	if n, ok := v.(*exprNeed); ok {
		return nil, n
	}
	return v, nil
}

func (cx contexts) call(c callNode) (any, error) {
	name := strings.ToLower(c.name)
	switch name {
	case "hashfiles":
		return nil, &exprNeed{Need: "hashFiles()", Why: "it hashes files on the runner after earlier steps ran"}
	case "success", "always":
		return true, nil
	case "failure", "cancelled":
		return false, nil
	}
	args := make([]any, len(c.args))
	for i, a := range c.args {
		v, err := cx.eval(a)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	arity := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			return &exprSyntax{msg: fmt.Sprintf("%s takes %d to %d arguments, not %d", c.name, lo, hi, len(args))}
		}
		return nil
	}
	switch name {
	case "contains":
		if err := arity(2, 2); err != nil {
			return nil, err
		}
		if arr, ok := args[0].([]any); ok {
			for _, e := range arr {
				if compare("==", e, args[1]) == true {
					return true, nil
				}
			}
			return false, nil
		}
		return strings.Contains(strings.ToLower(toString(args[0])), strings.ToLower(toString(args[1]))), nil
	case "startswith":
		if err := arity(2, 2); err != nil {
			return nil, err
		}
		return strings.HasPrefix(strings.ToLower(toString(args[0])), strings.ToLower(toString(args[1]))), nil
	case "endswith":
		if err := arity(2, 2); err != nil {
			return nil, err
		}
		return strings.HasSuffix(strings.ToLower(toString(args[0])), strings.ToLower(toString(args[1]))), nil
	case "format":
		if len(args) == 0 {
			return nil, &exprSyntax{msg: "format needs a format string"}
		}
		return format(toString(args[0]), args[1:])
	case "join":
		if err := arity(1, 2); err != nil {
			return nil, err
		}
		sep := ","
		if len(args) == 2 {
			sep = toString(args[1])
		}
		arr, ok := args[0].([]any)
		if !ok {
			return toString(args[0]), nil
		}
		parts := make([]string, len(arr))
		for i, e := range arr {
			parts[i] = toString(e)
		}
		return strings.Join(parts, sep), nil
	case "tojson":
		if err := arity(1, 1); err != nil {
			return nil, err
		}
		data, err := json.MarshalIndent(jsonable(args[0]), "", "  ")
		if err != nil {
			return nil, &exprSyntax{msg: "toJSON: " + err.Error()}
		}
		return string(data), nil
	case "fromjson":
		if err := arity(1, 1); err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal([]byte(toString(args[0])), &v); err != nil {
			return nil, &exprSyntax{msg: "fromJSON: " + err.Error()}
		}
		return v, nil
	}
	return nil, &exprSyntax{msg: fmt.Sprintf("unknown function %s()", c.name)}
}

func format(f string, args []any) (any, error) {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		switch {
		case strings.HasPrefix(f[i:], "{{"):
			b.WriteByte('{')
			i++
		case strings.HasPrefix(f[i:], "}}"):
			b.WriteByte('}')
			i++
		case f[i] == '{':
			j := strings.IndexByte(f[i:], '}')
			if j < 0 {
				return nil, &exprSyntax{msg: "format: unclosed '{'"}
			}
			k, err := strconv.Atoi(f[i+1 : i+j])
			if err != nil || k < 0 || k >= len(args) {
				return nil, &exprSyntax{msg: fmt.Sprintf("format: bad placeholder %q", f[i:i+j+1])}
			}
			b.WriteString(toString(args[k]))
			i += j
		default:
			b.WriteByte(f[i])
		}
	}
	return b.String(), nil
}

func jsonable(v any) any {
	if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return toString(f)
	}
	return v
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

func toNumber(v any) float64 {
	switch x := v.(type) {
	case nil:
		return 0
	case bool:
		if x {
			return 1
		}
		return 0
	case float64:
		return x
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return 0
		}
		if f, ok := parseNumber(s); ok {
			return f
		}
		return math.NaN()
	}
	return math.NaN()
}

// toString converts a value as GitHub does when it puts it in a string.
func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		case x == math.Trunc(x) && math.Abs(x) < 1e15:
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	case []any:
		return "Array"
	case map[string]any:
		return "Object"
	}
	return fmt.Sprint(v)
}

// compare applies ==, !=, <, >, <=, >= with GitHub's loose semantics.
func compare(op string, l, r any) any {
	ls, lok := l.(string)
	rs, rok := r.(string)
	var c int
	switch {
	case lok && rok:
		c = strings.Compare(strings.ToUpper(ls), strings.ToUpper(rs))
	case l == nil && r == nil:
		c = 0
	default:
		_, lobj := l.(map[string]any)
		_, larr := l.([]any)
		_, robj := r.(map[string]any)
		_, rarr := r.([]any)
		if lobj || larr || robj || rarr {
			// Objects and arrays are equal only to themselves (by identity).
			same := fmt.Sprintf("%p", l) == fmt.Sprintf("%p", r)
			switch op {
			case "==":
				return same
			case "!=":
				return !same
			}
			return false
		}
		a, b := toNumber(l), toNumber(r)
		if math.IsNaN(a) || math.IsNaN(b) {
			return op == "!="
		}
		switch {
		case a < b:
			c = -1
		case a > b:
			c = 1
		}
	}
	switch op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case ">":
		return c > 0
	case "<=":
		return c <= 0
	case ">=":
		return c >= 0
	}
	return false
}

// ---- templates ----

// evalExpr evaluates the inside of one ${{ }}.
func (cx contexts) evalExpr(src string) (any, error) {
	n, err := parseExpr(src)
	if err != nil {
		return nil, err
	}
	return cx.eval(n)
}

// exprSpan is one ${{ }} in a template.
type exprSpan struct {
	start, end int // of the whole ${{ ... }}
	inner      string
}

// findExprs finds the ${{ }} of a template; a '}}' inside a string literal
// does not end one.
func findExprs(s string) ([]exprSpan, error) {
	var out []exprSpan
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "${{")
		if j < 0 {
			break
		}
		start := i + j
		k := start + 3
		inStr := false
		end := -1
		for k < len(s) {
			switch {
			case s[k] == '\'':
				inStr = !inStr
			case !inStr && strings.HasPrefix(s[k:], "}}"):
				end = k + 2
			}
			if end >= 0 {
				break
			}
			k++
		}
		if end < 0 {
			return nil, &exprSyntax{msg: "a '${{' is not closed by '}}'"}
		}
		out = append(out, exprSpan{start: start, end: end, inner: s[start+3 : end-2]})
		i = end
	}
	return out, nil
}

// expand replaces every ${{ }} of a template by its value as a string.
func (cx contexts) expand(s string) (string, error) {
	spans, err := findExprs(s)
	if err != nil || len(spans) == 0 {
		return s, err
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		v, err := cx.evalExpr(sp.inner)
		if err != nil {
			return "", &templateError{expr: s[sp.start:sp.end], err: err}
		}
		b.WriteString(toString(v))
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// value evaluates a template whose whole text is one ${{ }} to its typed
// value (as GitHub does for if:, continue-on-error: and matrix values), and
// any other template to a string.
func (cx contexts) value(s string) (any, error) {
	spans, err := findExprs(s)
	if err != nil {
		return nil, err
	}
	if len(spans) == 1 && strings.TrimSpace(s[:spans[0].start]) == "" && strings.TrimSpace(s[spans[0].end:]) == "" {
		v, err := cx.evalExpr(spans[0].inner)
		if err != nil {
			return nil, &templateError{expr: strings.TrimSpace(s), err: err}
		}
		return v, nil
	}
	return cx.expand(s)
}

// condition evaluates an if: condition, which may omit the ${{ }}.
func (cx contexts) condition(s string) (bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return true, nil
	}
	if !strings.Contains(s, "${{") {
		s = "${{ " + s + " }}"
	}
	v, err := cx.value(s)
	if err != nil {
		return false, err
	}
	return truthy(v), nil
}

// templateError is an expression of a template that could not be
// evaluated.
type templateError struct {
	expr string // the whole ${{ ... }}
	err  error
}

func (e *templateError) Error() string { return e.expr + ": " + e.err.Error() }
func (e *templateError) Unwrap() error { return e.err }

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
