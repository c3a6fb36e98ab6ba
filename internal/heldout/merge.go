package heldout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Merge returns the held-out content of a Mixed or Inline file: the
// iteration's product part with the baseline's runner configuration or
// tests. base or iter is nil when the file is absent on that side; the
// result is nil when the file is absent from the held-out tree. changed
// reports whether the result differs from the iteration's file: the
// iteration touched a non-source part of it.
func Merge(p string, kind Kind, deps CriterionDeps, base, iter []byte) (out []byte, changed bool, err error) {
	if iter == nil {
		if kind == Mixed && base != nil {
			// A deleted manifest takes its runner sections with it: the
			// held-out tree keeps the baseline's whole.
			return base, true, nil
		}
		return nil, false, nil
	}
	switch kind {
	case Mixed:
		out, err = mergeMixed(p, deps, base, iter)
	case Inline:
		out = mergeInline(p, base, iter)
	default:
		return nil, false, fmt.Errorf("merging %s: kind %s is not merged", p, kind)
	}
	if err != nil {
		return nil, false, err
	}
	return out, !bytes.Equal(out, iter), nil
}

func mergeMixed(p string, deps CriterionDeps, base, iter []byte) ([]byte, error) {
	switch mixedFormat(path.Base(p)) {
	case "package.json":
		return mergeJSONKeys(p, base, iter, packageJSONRunnerKeys)
	case "composer.json":
		return mergeJSONKeys(p, base, iter, composerRunnerKeys)
	case "pyproject.toml":
		return mergeSections(base, iter, pyprojectRunnerSection, nil), nil
	case "setup.cfg":
		return mergeSections(base, iter, setupCfgRunnerSection, nil), nil
	case "Cargo.toml":
		return mergeSections(base, iter, cargoRunnerSection, cargoRunnerKeys), nil
	case "make":
		return mergeMake(base, iter, deps.Targets), nil
	case "cmake":
		return mergeDirectives(base, iter, cmakeTestRe), nil
	case "meson":
		return mergeDirectives(base, iter, mesonTestRe), nil
	}
	return nil, fmt.Errorf("merging %s: no section merge for this file", p)
}

// ---- JSON manifests ----

var packageJSONRunnerKeys = map[string]bool{
	"scripts": true, "jest": true, "mocha": true, "ava": true, "nyc": true, "c8": true, "vitest": true,
	"jest-junit": true, "babel": true, "eslintConfig": true, "prettier": true, "devDependencies": true,
	"tap": true, "xo": true, "standard": true, "uvu": true, "config": true, "husky": true, "lint-staged": true,
}

var composerRunnerKeys = map[string]bool{
	"scripts": true, "scripts-descriptions": true, "autoload-dev": true, "require-dev": true, "config": true,
}

type jsonMember struct {
	key string
	raw json.RawMessage
}

func jsonObject(data []byte) ([]jsonMember, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []jsonMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, jsonMember{key, raw})
	}
	return out, nil
}

// mergeJSONKeys keeps the iteration's members in its order, with the
// runner keys' values taken from the baseline (dropped where the baseline
// has none). An unreadable side makes the whole file the baseline's.
func mergeJSONKeys(p string, base, iter []byte, runner map[string]bool) ([]byte, error) {
	var baseMembers []jsonMember
	if base != nil {
		var err error
		if baseMembers, err = jsonObject(base); err != nil {
			return base, nil
		}
	}
	iterMembers, err := jsonObject(iter)
	if err != nil {
		if base != nil {
			return base, nil
		}
		return nil, fmt.Errorf("reading %s of the iteration: %w", p, err)
	}
	baseVal := map[string]json.RawMessage{}
	for _, m := range baseMembers {
		baseVal[m.key] = m.raw
	}
	var out []jsonMember
	seen := map[string]bool{}
	for _, m := range iterMembers {
		seen[m.key] = true
		if !runner[m.key] {
			out = append(out, m)
			continue
		}
		if raw, ok := baseVal[m.key]; ok {
			out = append(out, jsonMember{m.key, raw})
		}
	}
	for _, m := range baseMembers {
		if runner[m.key] && !seen[m.key] {
			out = append(out, m)
		}
	}
	if sameMembers(out, iterMembers) {
		return iter, nil
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, m := range out {
		k, _ := json.Marshal(m.key)
		var v bytes.Buffer
		if err := json.Indent(&v, m.raw, "  ", "  "); err != nil {
			return nil, fmt.Errorf("writing %s: %w", p, err)
		}
		fmt.Fprintf(&b, "  %s: %s", k, v.Bytes())
		if i < len(out)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

func sameMembers(a, b []jsonMember) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].key != b[i].key || !bytes.Equal(a[i].raw, b[i].raw) {
			return false
		}
	}
	return true
}

// ---- TOML and INI sections ----

var (
	sectionHeaderRe = lazyre.New(`^\s*\[\[?\s*([^\]\[]+?)\s*\]\]?\s*(?:[#;].*)?$`)
	tomlKeyRe       = lazyre.New(`^\s*("[^"]+"|'[^']+'|[A-Za-z0-9_.-]+)\s*=`)
)

// section is one [header] (or the preamble before the first, name "").
type section struct {
	name  string
	lines []string
}

func splitSections(data []byte) []section {
	lines := splitKeepLines(data)
	secs := []section{{}}
	inMulti := ""
	for _, l := range lines {
		if inMulti == "" {
			if m := sectionHeaderRe.FindStringSubmatch(l); m != nil {
				secs = append(secs, section{name: strings.Trim(m[1], `"' `)})
			}
		}
		secs[len(secs)-1].lines = append(secs[len(secs)-1].lines, l)
		for _, q := range []string{`"""`, `'''`} {
			if n := strings.Count(l, q); n%2 == 1 {
				if inMulti == "" {
					inMulti = q
				} else if inMulti == q {
					inMulti = ""
				}
			}
		}
	}
	return secs
}

func splitKeepLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := string(data)
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s+"\n")
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func pyprojectRunnerSection(name string) bool {
	if name == "dependency-groups" || strings.HasPrefix(name, "dependency-groups.") {
		return true
	}
	if name == "tool" {
		return true
	}
	if !strings.HasPrefix(name, "tool.") {
		return false
	}
	rest := strings.TrimPrefix(name, "tool.")
	tool, sub, _ := strings.Cut(rest, ".")
	switch tool {
	case "setuptools", "setuptools_scm", "setuptools-scm", "flit", "flit_core", "maturin", "scikit-build", "meson-python", "pdm-backend":
		return false
	case "poetry":
		return strings.HasPrefix(sub, "group") || strings.HasPrefix(sub, "dev-dependencies")
	case "hatch":
		return strings.HasPrefix(sub, "envs")
	case "pdm":
		return strings.HasPrefix(sub, "scripts") || strings.HasPrefix(sub, "dev-dependencies")
	case "uv":
		return strings.HasPrefix(sub, "dev-dependencies")
	}
	return true
}

func setupCfgRunnerSection(name string) bool {
	switch {
	case name == "metadata", name == "options", strings.HasPrefix(name, "options."), name == "bdist_wheel", name == "sdist",
		name == "egg_info", name == "build_ext", name == "":
		return false
	}
	return true
}

func cargoRunnerSection(name string) bool {
	switch {
	case name == "dev-dependencies", name == "dev_dependencies", name == "test", name == "bench", name == "example",
		name == "profile.test", name == "profile.bench", name == "lints", strings.HasPrefix(name, "lints."),
		name == "workspace.lints", strings.HasPrefix(name, "workspace.lints."),
		strings.HasPrefix(name, "package.metadata"), strings.HasPrefix(name, "workspace.metadata"), name == "badges":
		return true
	case strings.HasPrefix(name, "target.") && (strings.HasSuffix(name, ".dev-dependencies") || strings.HasSuffix(name, ".dev_dependencies")):
		return true
	}
	return false
}

// cargoRunnerKeys are keys of product tables that switch tests off
// (autotests = false, [lib] test = false, doctest = false, harness).
func cargoRunnerKeys(section string) map[string]bool {
	switch section {
	case "package":
		return map[string]bool{"autotests": true, "autobenches": true, "autoexamples": true, "build": true}
	case "lib", "bin":
		return map[string]bool{"test": true, "doctest": true, "bench": true, "harness": true}
	}
	return nil
}

// mergeSections keeps the iteration's product sections (in its order) and
// the baseline's runner sections; within product sections, keys that
// runnerKeys names are the baseline's.
func mergeSections(base, iter []byte, runner func(string) bool, runnerKeys func(string) map[string]bool) []byte {
	bs, is := splitSections(base), splitSections(iter)
	var out []string
	baseByName := map[string][]section{}
	for _, s := range bs {
		baseByName[s.name] = append(baseByName[s.name], s)
	}
	used := map[string]int{}
	for _, s := range is {
		if s.name != "" && runner(s.name) {
			continue
		}
		if runnerKeys != nil {
			if keys := runnerKeys(s.name); keys != nil {
				var counterpart *section
				if list := baseByName[s.name]; used[s.name] < len(list) {
					counterpart = &list[used[s.name]]
				}
				used[s.name]++
				out = append(out, mergeKeys(s, counterpart, keys)...)
				continue
			}
		}
		out = append(out, s.lines...)
	}
	for _, s := range bs {
		if s.name != "" && runner(s.name) {
			if len(out) > 0 && strings.TrimSpace(out[len(out)-1]) != "" {
				out = append(out, "\n")
			}
			out = append(out, s.lines...)
		}
	}
	return []byte(strings.Join(out, ""))
}

// mergeKeys returns the iteration's section without the named keys, plus
// the baseline section's entries for them.
func mergeKeys(iter section, base *section, keys map[string]bool) []string {
	entries := func(s section) (head []string, list [][]string, names []string) {
		if len(s.lines) == 0 {
			return nil, nil, nil
		}
		start := 0
		if s.name != "" {
			head, start = s.lines[:1], 1
		}
		for _, l := range s.lines[start:] {
			m := tomlKeyRe.FindStringSubmatch(l)
			blank := strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#")
			if m != nil && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t") || blank || len(list) == 0 {
				name := ""
				if m != nil && !blank {
					name = strings.Trim(m[1], `"'`)
				}
				list = append(list, []string{l})
				names = append(names, name)
				continue
			}
			list[len(list)-1] = append(list[len(list)-1], l)
		}
		return head, list, names
	}
	head, list, names := entries(iter)
	out := slices.Clone(head)
	for i, e := range list {
		if !keys[names[i]] {
			out = append(out, e...)
		}
	}
	if base != nil {
		_, blist, bnames := entries(*base)
		var restored []string
		for i, e := range blist {
			if keys[bnames[i]] {
				restored = append(restored, e...)
			}
		}
		if len(restored) > 0 {
			// After the header, before the iteration's keys.
			out = append(slices.Clone(head), append(restored, out[len(head):]...)...)
		}
	}
	return out
}

// ---- make targets ----

var (
	makeRuleRe   = lazyre.New(`^([A-Za-z0-9_.%/$(){}\-][^:=#]*?)\s*::?(?:[^=]|$)`)
	makeAssignRe = lazyre.New(`^\s*(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:[:?+!]?=)`)
	makeVarRefRe = lazyre.New(`\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]`)
)

// makeBlock is a rule (target line and recipe) or a variable assignment.
type makeBlock struct {
	targets []string
	prereqs []string
	assign  string
	lines   []string
}

func parseMake(data []byte) []makeBlock {
	var out []makeBlock
	cur := -1
	cont := false
	for _, l := range splitKeepLines(data) {
		trimmed := strings.TrimRight(l, "\r\n")
		switch {
		case cont && cur >= 0:
			out[cur].lines = append(out[cur].lines, l)
		case strings.HasPrefix(l, "\t") && cur >= 0 && len(out[cur].targets) > 0:
			out[cur].lines = append(out[cur].lines, l)
		case makeAssignRe.MatchString(l) && !strings.HasPrefix(l, "\t"):
			m := makeAssignRe.FindStringSubmatch(l)
			out = append(out, makeBlock{assign: m[1], lines: []string{l}})
			cur = len(out) - 1
		case makeRuleRe.MatchString(l) && !strings.HasPrefix(l, "\t") && !strings.HasPrefix(strings.TrimSpace(l), "#"):
			m := makeRuleRe.FindStringSubmatch(l)
			_, after, _ := strings.Cut(trimmed, ":")
			after = strings.TrimPrefix(after, ":")
			after, _, _ = strings.Cut(after, ";")
			after, _, _ = strings.Cut(after, "#")
			out = append(out, makeBlock{targets: strings.Fields(m[1]), prereqs: strings.Fields(after), lines: []string{l}})
			cur = len(out) - 1
		default:
			out = append(out, makeBlock{lines: []string{l}})
			cur = len(out) - 1
		}
		cont = strings.HasSuffix(trimmed, "\\")
	}
	return out
}

// mergeMake restores the criterion's targets (the default goal when none
// is named), the phony targets they depend on and the variables about
// tests they use, in place, from the baseline.
func mergeMake(base, iter []byte, targets []string) []byte {
	bb, ib := parseMake(base), parseMake(iter)
	phony := map[string]bool{}
	rules := map[string]makeBlock{}
	firstTarget := ""
	for _, b := range bb {
		for _, t := range b.targets {
			if t == ".PHONY" {
				for _, p := range b.prereqs {
					phony[p] = true
				}
				continue
			}
			if firstTarget == "" && !strings.HasPrefix(t, ".") {
				firstTarget = t
			}
			if _, ok := rules[t]; !ok {
				rules[t] = b
			}
		}
	}
	want := map[string]bool{}
	queue := slices.Clone(targets)
	if len(queue) == 0 && firstTarget != "" {
		queue = []string{firstTarget}
	}
	vars := map[string]bool{}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		if want[t] {
			continue
		}
		want[t] = true
		r, ok := rules[t]
		if !ok {
			continue
		}
		for _, p := range r.prereqs {
			if phony[p] {
				queue = append(queue, p)
			}
		}
		for _, l := range r.lines {
			for _, m := range makeVarRefRe.FindAllStringSubmatch(l, -1) {
				vars[m[1]] = true
			}
		}
	}
	testVar := func(name string) bool {
		u := strings.ToUpper(name)
		return vars[name] && (strings.Contains(u, "TEST") || strings.Contains(u, "CHECK") || strings.Contains(u, "SPEC") || strings.Contains(u, "COVER"))
	}
	restoredRule := func(b makeBlock) bool {
		for _, t := range b.targets {
			if want[t] {
				return true
			}
		}
		return false
	}
	baseRule := map[string]makeBlock{}
	baseVar := map[string]makeBlock{}
	for _, b := range bb {
		if restoredRule(b) {
			if _, ok := baseRule[b.targets[0]]; !ok {
				baseRule[b.targets[0]] = b
			}
		}
		if b.assign != "" && testVar(b.assign) {
			if _, ok := baseVar[b.assign]; !ok {
				baseVar[b.assign] = b
			}
		}
	}
	var out []string
	placed := map[string]bool{}
	for _, b := range ib {
		switch {
		case len(b.targets) > 0 && restoredRule(b):
			for _, t := range b.targets {
				if r, ok := baseRule[t]; ok && !placed["rule:"+t] {
					placed["rule:"+t] = true
					out = append(out, r.lines...)
				}
			}
		case b.assign != "" && testVar(b.assign):
			if v, ok := baseVar[b.assign]; ok && !placed["var:"+b.assign] {
				placed["var:"+b.assign] = true
				out = append(out, v.lines...)
			}
		default:
			out = append(out, b.lines...)
		}
	}
	var tail []string
	for _, b := range bb {
		if b.assign != "" && testVar(b.assign) && !placed["var:"+b.assign] {
			placed["var:"+b.assign] = true
			tail = append(tail, b.lines...)
		}
		if len(b.targets) > 0 && restoredRule(b) && !placed["rule:"+b.targets[0]] {
			placed["rule:"+b.targets[0]] = true
			tail = append(tail, b.lines...)
		}
	}
	if len(tail) > 0 {
		if len(out) > 0 && !strings.HasSuffix(out[len(out)-1], "\n") {
			out = append(out, "\n")
		}
		out = append(out, tail...)
	}
	if len(targets) == 0 && firstTarget != "" {
		// The default goal is the baseline's, wherever its rule now sits.
		out = append(out, ".DEFAULT_GOAL := "+firstTarget+"\n")
	}
	return []byte(strings.Join(out, ""))
}

// ---- CMake and Meson test directives ----

var (
	cmakeTestRe = lazyre.New(`(?i)^\s*(?:enable_testing|add_test|include\s*\(\s*(?:CTest|GoogleTest|Catch)|gtest_discover_tests|gtest_add_tests|catch_discover_tests|doctest_discover_tests|set_tests_properties|set_property\s*\(\s*TEST|add_subdirectory\s*\(\s*["']?(?:tests?|unittests?|testing)\b)`)
	mesonTestRe = lazyre.New(`^\s*(?:test|benchmark)\s*\(|^\s*subdir\s*\(\s*['"](?:tests?|unittests?)['"]`)
)

// mergeDirectives drops the iteration's test statements and appends the
// baseline's (a statement runs until its parentheses balance).
func mergeDirectives(base, iter []byte, re *lazyre.Regexp) []byte {
	split := func(data []byte) (keep, tests []string) {
		depth := 0
		inTest := false
		for _, l := range splitKeepLines(data) {
			if depth == 0 {
				inTest = re.MatchString(l)
			}
			if inTest {
				tests = append(tests, l)
			} else {
				keep = append(keep, l)
			}
			depth += strings.Count(l, "(") - strings.Count(l, ")")
			if depth < 0 {
				depth = 0
			}
		}
		return keep, tests
	}
	keep, iterTests := split(iter)
	_, baseTests := split(base)
	if slices.Equal(iterTests, baseTests) {
		return iter
	}
	out := keep
	if len(baseTests) > 0 {
		if len(out) > 0 && !strings.HasSuffix(out[len(out)-1], "\n") {
			out = append(out, "\n")
		}
		out = append(out, baseTests...)
	}
	return []byte(strings.Join(out, ""))
}
