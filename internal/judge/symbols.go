package judge

import (
	"fmt"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/loop"
)

// symbol is a public declaration found on one hunk side.
type symbol struct {
	name    string
	idx     int
	changed bool
}

var (
	goFuncRe       = lazyre.New(`^func\s+(?:\(\s*\w*\s*\*?\s*(\w+)(?:\[[^\]]*\])?\s*\)\s*)?([A-Z]\w*)\s*[\[(]`)
	goTypeRe       = lazyre.New(`^(?:type|var|const)\s+([A-Z]\w*)\b`)
	goBlockOpenRe  = lazyre.New(`^(?:type|var|const)\s*\(\s*$`)
	goBlockItemRe  = lazyre.New(`^\t([A-Z]\w*)\b`)
	jsExportRe     = lazyre.New(`^\s*export\s+(?:default\s+)?(?:declare\s+)?(?:async\s+)?(?:function\*?|class|const|let|var|interface|type|enum|abstract\s+class|namespace)\s+([A-Za-z_$][\w$]*)`)
	jsExportListRe = lazyre.New(`^\s*export\s*\{([^}]*)\}`)
	jsCJSExportRe  = lazyre.New(`^\s*(?:module\.)?exports\.([A-Za-z_$][\w$]*)\s*=`)
	pyPublicRe     = lazyre.New(`^(?:async\s+)?(?:def|class)\s+([A-Za-z][\w]*)\b`)
	rustPubRe      = lazyre.New(`^\s*pub\s+(?:async\s+)?(?:unsafe\s+)?(?:const\s+)?(?:extern\s+"[^"]*"\s+)?(?:fn|struct|enum|trait|type|const|static|mod|union)\s+(\w+)`)
	javaPublicRe   = lazyre.New(`^\s*public\s+(?:(?:static|final|abstract|synchronized|default|sealed|non-sealed|native|strictfp|override|virtual|async|partial|readonly|extern|unsafe|new)\s+)*(?:(?:class|interface|enum|record|struct|@interface)\s+(\w+)|(?:<[^>]+>\s+)?[\w<>\[\],.?]+(?:\s*<[^>]*>)?\s+(\w+)\s*\()`)
	csPropertyRe   = lazyre.New(`^\s*public\s+(?:(?:static|virtual|override|readonly|required)\s+)*[\w<>\[\],.?]+\s+(\w+)\s*\{\s*get`)
	kotlinDeclRe   = lazyre.New(`^\s*(?:(?:public|open|abstract|override|suspend|inline|data|sealed|enum|annotation|operator|infix|tailrec|external|const|lateinit|value)\s+)*(?:fun|class|object|interface|val|var|typealias)\s+(?:<[^>]+>\s*)?(?:[\w.]+\.)?(\w+)`)
	kotlinHiddenRe = lazyre.New(`^\s*(?:[\w@]+\s+)*(?:private|internal|protected)\s`)
	rubyDefRe      = lazyre.New(`^\s*def\s+(?:self\.)?([a-z_]\w*[?!=]?)`)
	rubyPrivateRe  = lazyre.New(`^\s*(?:private|protected)\s*$`)
	rubyClassRe    = lazyre.New(`^\s*(?:class|module)\s+`)
	phpPublicRe    = lazyre.New(`^\s*(?:(?:abstract|final|static)\s+)*public\s+(?:(?:static|abstract|final)\s+)*function\s+&?(\w+)|^function\s+(\w+)\s*\(|^\s*(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s+(\w+)`)
	exDefRe        = lazyre.New(`^\s*(?:def|defmacro|defguard|defdelegate)\s+([a-z_]\w*[?!]?)|^\s*defmodule\s+([\w.]+)`)
)

// findSymbols finds public declarations on one hunk side.
func findSymbols(lang language, side []vline, section string, p string) []symbol {
	var out []symbol
	add := func(name string, i int) {
		if name != "" {
			out = append(out, symbol{name: name, idx: i, changed: side[i].changed})
		}
	}
	switch lang {
	case langGo:
		inBlock := goBlockOpenRe.MatchString(section)
		for i, l := range side {
			switch {
			case goBlockOpenRe.MatchString(l.text):
				inBlock = true
			case strings.HasPrefix(l.text, ")"):
				inBlock = false
			case inBlock:
				if m := goBlockItemRe.FindStringSubmatch(l.text); m != nil {
					add(m[1], i)
				}
			default:
				if m := goFuncRe.FindStringSubmatch(l.text); m != nil {
					if m[1] != "" && !isExportedGo(m[1]) {
						continue // method of an unexported type
					}
					name := m[2]
					if m[1] != "" {
						name = m[1] + "." + m[2]
					}
					add(name, i)
				} else if m := goTypeRe.FindStringSubmatch(l.text); m != nil {
					add(m[1], i)
				}
			}
		}
	case langJS:
		for i, l := range side {
			if m := jsExportRe.FindStringSubmatch(l.text); m != nil {
				add(m[1], i)
			} else if m := jsExportListRe.FindStringSubmatch(l.text); m != nil {
				for _, n := range strings.Split(m[1], ",") {
					f := strings.Fields(n)
					if len(f) > 0 {
						add(f[len(f)-1], i)
					}
				}
			} else if m := jsCJSExportRe.FindStringSubmatch(l.text); m != nil {
				add(m[1], i)
			}
		}
	case langPython:
		for i, l := range side {
			if m := pyPublicRe.FindStringSubmatch(l.text); m != nil && !strings.HasPrefix(m[1], "_") {
				add(m[1], i)
			}
		}
	case langRust:
		for i, l := range side {
			if m := rustPubRe.FindStringSubmatch(l.text); m != nil {
				add(m[1], i)
			}
		}
	case langJava, langCSharp:
		for i, l := range side {
			if m := javaPublicRe.FindStringSubmatch(l.text); m != nil {
				name := m[1]
				if name == "" {
					name = m[2]
				}
				add(name, i)
			} else if lang == langCSharp {
				if m := csPropertyRe.FindStringSubmatch(l.text); m != nil {
					add(m[1], i)
				}
			}
		}
	case langKotlin:
		for i, l := range side {
			if kotlinHiddenRe.MatchString(l.text) {
				continue
			}
			// Only declarations at the top level or one level in.
			if leadingSpace(l.text) > 4 {
				continue
			}
			if m := kotlinDeclRe.FindStringSubmatch(l.text); m != nil {
				add(m[1], i)
			}
		}
	case langRuby:
		if !strings.HasPrefix(p, "lib/") && !strings.Contains(p, "/lib/") && !strings.HasPrefix(p, "app/") {
			return nil
		}
		private := false
		for i, l := range side {
			switch {
			case rubyClassRe.MatchString(l.text):
				private = false
			case rubyPrivateRe.MatchString(l.text):
				private = true
			case strings.HasPrefix(strings.TrimSpace(l.text), "private def"), strings.HasPrefix(strings.TrimSpace(l.text), "protected def"):
			default:
				if m := rubyDefRe.FindStringSubmatch(l.text); m != nil && !private && m[1] != "initialize" {
					add(m[1], i)
				}
			}
		}
	case langPHP:
		for i, l := range side {
			if m := phpPublicRe.FindStringSubmatch(l.text); m != nil {
				add(m[1]+m[2]+m[3], i)
			}
		}
	case langElixir:
		for i, l := range side {
			if m := exDefRe.FindStringSubmatch(l.text); m != nil {
				add(m[1]+m[2], i)
			}
		}
	}
	return out
}

func isExportedGo(name string) bool {
	return name != "" && name[0] >= 'A' && name[0] <= 'Z'
}

type symRef struct {
	v     *fileView
	hunk  int
	sym   symbol
	decl  string          // the declaration line without the name
	body  map[string]bool // tokens of the lines after it, up to the next symbol
	bodyN int             // changed lines in its body
}

// detectFeatureRemoval finds public declarations deleted from non-test code
// and not added back elsewhere (a move) nor renamed with a similar body.
func detectFeatureRemoval(views []*fileView) []loop.Regression {
	oldNames := map[string]bool{}
	newNames := map[string]bool{}
	var removed, added []symRef
	for _, v := range views {
		if v.ignored || v.test || !v.lang.isCode() {
			continue
		}
		for h := range v.oldSide {
			olds := findSymbols(v.lang, v.oldSide[h], v.sections[h], pathFor(v, true))
			for k, s := range olds {
				oldNames[symKey(v.lang, s.name)] = true
				if s.changed {
					removed = append(removed, newSymRef(v, h, s, olds, k, true))
				}
			}
			news := findSymbols(v.lang, v.newSide[h], v.sections[h], pathFor(v, false))
			for k, s := range news {
				newNames[symKey(v.lang, s.name)] = true
				if s.changed {
					added = append(added, newSymRef(v, h, s, news, k, false))
				}
			}
		}
	}
	var fresh []symRef
	for _, a := range added {
		if !oldNames[symKey(a.v.lang, a.sym.name)] {
			fresh = append(fresh, a)
		}
	}
	used := make([]bool, len(fresh))
	budget := maxPairings
	var high, medium []loop.Evidence
	var names []string
	for _, r := range removed {
		if newNames[symKey(r.v.lang, r.sym.name)] {
			continue // still declared (modified or moved)
		}
		renamed := false
		for i, a := range fresh {
			if used[i] || a.v.lang.family() != r.v.lang.family() {
				continue
			}
			if budget--; budget < 0 {
				break
			}
			sameDecl := r.bodyN == 0 && a.bodyN == 0 && a.v == r.v && norm(a.decl) == norm(r.decl)
			if sameDecl || (len(r.body) >= 3 && jaccard(r.body, a.body) >= 0.6) {
				used[i], renamed = true, true
				break
			}
		}
		if renamed {
			continue
		}
		l := r.v.oldSide[r.hunk][r.sym.idx]
		e := loop.Evidence{Path: pathFor(r.v, true), Line: l.num, Text: evidenceText(l.text)}
		names = append(names, r.sym.name)
		if isPeripheral(e.Path) {
			medium = append(medium, e)
		} else {
			high = append(high, e)
		}
	}
	var regs []loop.Regression
	if len(high) > 0 {
		regs = append(regs, loop.Regression{
			Type: FeatureRemoval, Severity: SeverityHigh,
			Summary:  fmt.Sprintf("%s deleted: %s", plural(len(high), "public symbol"), listNames(names, 5)),
			Evidence: capEvidence(high), Baseline: names, Current: nil,
		})
	}
	if len(medium) > 0 {
		regs = append(regs, loop.Regression{
			Type: FeatureRemoval, Severity: SeverityMedium,
			Summary:  fmt.Sprintf("%s deleted from examples, scripts or tools", plural(len(medium), "public symbol")),
			Evidence: capEvidence(medium), Baseline: len(medium), Current: 0,
		})
	}
	return regs
}

func pathFor(v *fileView, old bool) string {
	if old && v.fd.OldPath != "" {
		return v.fd.OldPath
	}
	return v.path
}

func symKey(l language, name string) string {
	return string(l.family()) + "\x00" + name
}

func newSymRef(v *fileView, h int, s symbol, all []symbol, k int, old bool) symRef {
	side := v.newSide[h]
	if old {
		side = v.oldSide[h]
	}
	end := len(side)
	if k+1 < len(all) {
		end = all[k+1].idx
	}
	r := symRef{v: v, hunk: h, sym: s}
	short := s.name
	if i := strings.LastIndexByte(short, '.'); i >= 0 {
		short = short[i+1:]
	}
	r.decl = strings.Replace(side[s.idx].text, short, "", 1)
	var body strings.Builder
	for i := s.idx + 1; i < end; i++ {
		body.WriteString(side[i].text)
		body.WriteByte('\n')
		if side[i].changed {
			r.bodyN++
		}
	}
	r.body = tokenSet(body.String(), nil)
	return r
}

// isPeripheral reports code outside the product: examples, docs, scripts.
func isPeripheral(p string) bool {
	segs := dirSegments(p)
	if len(segs) == 0 {
		return false
	}
	switch segs[0] {
	case "examples", "example", "_examples", "docs", "doc", "scripts", "tools", "hack", "benchmarks", "contrib":
		return true
	}
	return false
}
