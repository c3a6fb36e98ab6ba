package cifailure

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// entry is one job of a matrix: its values and the values GitHub puts in
// the job's default name.
type entry struct {
	values map[string]any
	keys   []string // the order of values
	// nameParts are the values of the default name suffix "(a, b)": the
	// matrix's own axes for a combination, every value of an include entry
	// that extended no combination.
	nameParts []string
}

func (e entry) clone() entry {
	v := make(map[string]any, len(e.values))
	for k, x := range e.values {
		v[k] = x
	}
	return entry{values: v, keys: append([]string(nil), e.keys...), nameParts: append([]string(nil), e.nameParts...)}
}

func (e *entry) set(k string, v any) {
	for _, old := range e.keys {
		if strings.EqualFold(old, k) {
			e.values[old] = v
			return
		}
	}
	e.keys = append(e.keys, k)
	e.values[k] = v
}

func (e entry) lookup(k string) (any, bool) {
	for _, old := range e.keys {
		if strings.EqualFold(old, k) {
			return e.values[old], true
		}
	}
	return nil, false
}

// maxMatrixJobs is GitHub's limit on the jobs of one matrix.
const maxMatrixJobs = 256

// expandMatrix expands strategy.matrix as GitHub does: the cross product of
// the axes in order, minus the exclude entries, then each include entry
// added to every combination whose original values it does not change, or
// appended as a job of its own when it extends none. A matrix (or an axis)
// given by an expression is evaluated with cx.
func expandMatrix(n *yaml.Node, cx contexts) ([]entry, error) {
	if n == nil {
		return []entry{{values: map[string]any{}}}, nil
	}
	var (
		axes     []kv
		axisVals [][]any
		include  []any
		exclude  []any
		ordered  []struct {
			key string
			val any
		}
	)
	switch {
	case n.Kind == yaml.ScalarNode:
		v, err := cx.value(n.Value)
		if err != nil {
			return nil, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("strategy.matrix evaluates to %s, not an object", toString(v))
		}
		for _, k := range sortedKeys(m) {
			ordered = append(ordered, struct {
				key string
				val any
			}{k, m[k]})
		}
	case n.Kind == yaml.MappingNode:
		for _, p := range pairs(n) {
			var v any
			if p.val.Kind == yaml.ScalarNode && strings.Contains(p.val.Value, "${{") {
				ev, err := cx.value(p.val.Value)
				if err != nil {
					return nil, fmt.Errorf("strategy.matrix.%s: %w", p.key, err)
				}
				v = ev
			} else {
				v = nodeValue(p.val)
				if arr, ok := v.([]any); ok {
					for i, e := range arr {
						if s, ok := e.(string); ok && strings.Contains(s, "${{") {
							ev, err := cx.value(s)
							if err != nil {
								return nil, fmt.Errorf("strategy.matrix.%s: %w", p.key, err)
							}
							arr[i] = ev
						}
					}
				}
			}
			ordered = append(ordered, struct {
				key string
				val any
			}{p.key, v})
		}
	default:
		return nil, fmt.Errorf("strategy.matrix is not a mapping")
	}
	for _, o := range ordered {
		switch o.key {
		case "include":
			arr, ok := o.val.([]any)
			if !ok && o.val != nil {
				return nil, fmt.Errorf("strategy.matrix.include is not a list")
			}
			include = arr
		case "exclude":
			arr, ok := o.val.([]any)
			if !ok && o.val != nil {
				return nil, fmt.Errorf("strategy.matrix.exclude is not a list")
			}
			exclude = arr
		default:
			arr, ok := o.val.([]any)
			if !ok {
				return nil, fmt.Errorf("strategy.matrix.%s is not a list", o.key)
			}
			axes = append(axes, kv{key: o.key})
			axisVals = append(axisVals, arr)
		}
	}

	combos := []entry{{values: map[string]any{}}}
	for i, a := range axes {
		var next []entry
		for _, c := range combos {
			for _, v := range axisVals[i] {
				e := c.clone()
				e.set(a.key, v)
				e.nameParts = append(e.nameParts, leafStrings(v)...)
				next = append(next, e)
			}
		}
		combos = next
		if len(combos) > 4*maxMatrixJobs {
			return nil, fmt.Errorf("strategy.matrix has more than %d combinations", maxMatrixJobs)
		}
	}
	if len(axes) == 0 {
		combos = nil
	}
	// exclude: a combination is removed when every key of an exclude entry
	// matches it.
	for _, x := range exclude {
		xm, ok := x.(map[string]any)
		if !ok {
			continue
		}
		kept := combos[:0]
		for _, c := range combos {
			match := true
			for k, v := range xm {
				cv, ok := c.lookup(k)
				if !ok || !valuesEqual(cv, v) {
					match = false
					break
				}
			}
			if !match {
				kept = append(kept, c)
			}
		}
		combos = kept
	}
	original := map[string]bool{}
	for _, a := range axes {
		original[strings.ToLower(a.key)] = true
	}
	var extra []entry
	for _, in := range include {
		im, ok := in.(map[string]any)
		if !ok {
			continue
		}
		keys := includeKeys(n, im)
		matched := false
		if len(axes) > 0 {
			for ci := range combos {
				fits := true
				for _, k := range keys {
					if !original[strings.ToLower(k)] {
						continue
					}
					cv, _ := combos[ci].lookup(k)
					if !valuesEqual(cv, im[k]) {
						fits = false
						break
					}
				}
				if !fits {
					continue
				}
				matched = true
				for _, k := range keys {
					if !original[strings.ToLower(k)] {
						combos[ci].set(k, im[k])
					}
				}
			}
		}
		if !matched {
			e := entry{values: map[string]any{}}
			for _, k := range keys {
				e.set(k, im[k])
				e.nameParts = append(e.nameParts, leafStrings(im[k])...)
			}
			extra = append(extra, e)
		}
	}
	out := append(combos, extra...)
	if len(out) == 0 {
		// Every combination excluded: GitHub runs the job once, without a
		// matrix.
		out = []entry{{values: map[string]any{}}}
	}
	if len(out) > maxMatrixJobs {
		return nil, fmt.Errorf("strategy.matrix makes %d jobs, more than GitHub's %d", len(out), maxMatrixJobs)
	}
	return out, nil
}

// includeKeys are the keys of an include entry in the order written (from
// the YAML when the matrix is written out, sorted otherwise).
func includeKeys(matrix *yaml.Node, im map[string]any) []string {
	if matrix != nil && matrix.Kind == yaml.MappingNode {
		for _, in := range items(get(matrix, "include")) {
			ps := pairs(in)
			if len(ps) != len(im) {
				continue
			}
			same := true
			for _, p := range ps {
				if !valuesEqual(nodeValue(p.val), im[p.key]) {
					same = false
					break
				}
			}
			if same {
				keys := make([]string, len(ps))
				for i, p := range ps {
					keys[i] = p.key
				}
				return keys
			}
		}
	}
	return sortedKeys(im)
}

// leafStrings are the scalar values of v as a job name shows them.
func leafStrings(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case map[string]any:
		var out []string
		for _, k := range sortedKeys(x) {
			out = append(out, leafStrings(x[k])...)
		}
		return out
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, leafStrings(e)...)
		}
		return out
	}
	s := toString(v)
	if s == "" {
		return nil
	}
	return []string{s}
}

// valuesEqual compares matrix values as GitHub does: deeply, strings
// without regard to case.
func valuesEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !valuesEqual(v, y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valuesEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if _, ok := b.(map[string]any); ok {
		return false
	}
	if _, ok := b.([]any); ok {
		return false
	}
	return compare("==", a, b) == true
}

// matrixStrings is the entry's values for the report.
func (e entry) matrixStrings() map[string]string {
	if len(e.values) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, k := range e.keys {
		v := e.values[k]
		switch v.(type) {
		case map[string]any, []any:
			out[k] = strings.Join(leafStrings(v), " ")
		default:
			out[k] = toString(v)
		}
	}
	return out
}

// displayName renders a job's name as GitHub shows it in the API: an
// expression name evaluated for the entry, or the name (or the job id)
// followed by "(a, b)" for a matrix entry. It also returns a regular
// expression (unanchored source) of the name, in which the parts that
// cannot be evaluated here match anything.
func displayName(template, id string, e entry, cx contexts) (string, string) {
	if strings.Contains(template, "${{") {
		return renderPattern(template, cx)
	}
	name := template
	if name == "" {
		name = id
	}
	if len(e.nameParts) > 0 {
		name += " (" + strings.Join(e.nameParts, ", ") + ")"
	}
	return name, regexp.QuoteMeta(name)
}

// renderPattern evaluates a template; what cannot be evaluated is kept as
// written in the text and becomes a wildcard of the pattern.
func renderPattern(template string, cx contexts) (string, string) {
	spans, err := findExprs(template)
	if err != nil {
		return template, regexp.QuoteMeta(template)
	}
	var text, pat strings.Builder
	last := 0
	for _, sp := range spans {
		lit := template[last:sp.start]
		text.WriteString(lit)
		pat.WriteString(regexp.QuoteMeta(lit))
		v, err := cx.evalExpr(sp.inner)
		if err != nil {
			text.WriteString(template[sp.start:sp.end])
			pat.WriteString(".*")
		} else {
			text.WriteString(toString(v))
			pat.WriteString(regexp.QuoteMeta(toString(v)))
		}
		last = sp.end
	}
	text.WriteString(template[last:])
	pat.WriteString(regexp.QuoteMeta(template[last:]))
	return text.String(), pat.String()
}

// matchesPattern reports whether shown is the whole of pattern.
func matchesPattern(shown, pattern string) bool {
	re, err := regexp.Compile("^(?:" + pattern + ")$")
	return err == nil && re.MatchString(shown)
}
