package judge

import (
	"fmt"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/loop"
)

// Lint and type-checker suppressions: comments or attributes that silence
// a tool. Found in non-test code; medium severity.
var lintSuppressRes = map[language][]*lazyre.Regexp{
	langGo:     {lazyre.New(`//\s*nolint\b|//\s*lint:ignore\b|//\s*#nosec\b`)},
	langPython: {lazyre.New(`#\s*type:\s*ignore\b|#\s*noqa\b|#\s*pylint:\s*disable\b|#\s*pyright:\s*ignore\b|#\s*mypy:\s*ignore`)},
	langJS:     {lazyre.New(`//\s*@ts-(?:ignore|nocheck|expect-error)\b|/\*\s*@ts-(?:ignore|nocheck)|eslint-disable|//\s*biome-ignore|//\s*prettier-ignore\b.*err`)},
	langRust:   {lazyre.New(`^\s*#!?\[allow\(`)},
	langJava:   {lazyre.New(`@SuppressWarnings\b|//\s*NOSONAR|@SuppressFBWarnings`)},
	langKotlin: {lazyre.New(`@Suppress(?:Warnings)?\s*\(|@file:Suppress\b`)},
	langCSharp: {lazyre.New(`#pragma\s+warning\s+disable\b|\[\s*(?:assembly:\s*)?SuppressMessage\b|//\s*ReSharper\s+disable\b`)},
	langRuby:   {lazyre.New(`#\s*rubocop:disable\b|#\s*steep:ignore|#\s*standard:disable`)},
	langPHP:    {lazyre.New(`@phpstan-ignore|@psalm-suppress|phpcs:ignore|phpcs:disable|@codingStandardsIgnore`)},
	langElixir: {lazyre.New(`#\s*credo:disable|@dialyzer\s+\{?:nowarn`)},
}

// Errors swallowed on one line.
var swallowRes = map[language][]*lazyre.Regexp{
	langGo: {
		lazyre.New(`^\s*_\s*=\s*err\b\s*$`),
		lazyre.New(`\bif\s+(?:.*;\s*)?\w*[eE]rr\w*\s*!=\s*nil\s*\{\s*\}`),
		lazyre.New(`^\s*(?:defer\s+func\(\)\s*\{\s*)?recover\(\)\s*(?:\}\(\))?\s*$`),
	},
	langPython: {
		lazyre.New(`^\s*except\s*(?:\(?\s*(?:Exception|BaseException)(?:\s*,\s*\w+)*\s*\)?)?\s*(?:as\s+\w+)?\s*:\s*(?:pass|\.\.\.)\s*(?:#.*)?$`),
		lazyre.New(`\bcontextlib\.suppress\s*\(\s*(?:Exception|BaseException)\b|^\s*with\s+suppress\s*\(\s*(?:Exception|BaseException)\b`),
	},
	langJS: {
		lazyre.New(`\bcatch\s*(?:\(\s*[\w${}\s,:]*\))?\s*\{\s*\}`),
		lazyre.New(`\.catch\s*\(\s*(?:\(\s*\w*\s*\)|\w+)\s*=>\s*(?:\{\s*\}|null|undefined|void 0|\[\]|\{\s*\})\s*\)|\.catch\s*\(\s*(?:noop|\(\)\s*=>\s*\{\s*\}|function\s*\(\w*\)\s*\{\s*\})\s*\)`),
	},
	langJava:   {lazyre.New(`\bcatch\s*\([^)]*\)\s*\{\s*\}`)},
	langKotlin: {lazyre.New(`\bcatch\s*\([^)]*\)\s*\{\s*\}|\brunCatching\s*\{.*\}\s*\.getOrNull\(\)|\.getOrDefault\(`)},
	langCSharp: {lazyre.New(`\bcatch\s*(?:\([^)]*\))?\s*\{\s*\}`)},
	langPHP:    {lazyre.New(`\bcatch\s*\([^)]*\)\s*\{\s*\}`), lazyre.New(`(?:^|[=(\s,])@\$?\w+\s*\(`)},
	langRuby: {
		lazyre.New(`\brescue\s+nil\b|\brescue\s*(?:=>\s*\w+\s*)?;\s*(?:nil\s*;?\s*)?end\b|\brescue\s+(?:StandardError|Exception)\s*(?:=>\s*\w+)?\s*;\s*(?:nil\s*;?\s*)?end\b`),
	},
	langElixir: {
		lazyre.New(`\brescue\s+_\s*->\s*(?:nil|:ok|:error|\{:ok,.*\})\s*(?:end)?\s*$|\bcatch\s+_\s*(?:,\s*_)?\s*->\s*(?:nil|:ok)\b`),
	},
	langRust: {
		lazyre.New(`^\s*(?:let\s+_\s*=\s*)?.*\.ok\(\)\s*;\s*$`),
	},
}

// Block openers whose body, when empty (or only comments/pass), swallows the
// error.
var emptyBlockOpeners = map[language]*lazyre.Regexp{
	langGo:     lazyre.New(`\bif\s+(?:.*;\s*)?\w*[eE]rr\w*\s*!=\s*nil\s*\{\s*$`),
	langJS:     lazyre.New(`\bcatch\s*(?:\(\s*[\w${}\s,:]*\))?\s*\{?\s*$`),
	langJava:   lazyre.New(`\bcatch\s*\([^)]*\)\s*\{?\s*$`),
	langKotlin: lazyre.New(`\bcatch\s*\([^)]*\)\s*\{?\s*$`),
	langCSharp: lazyre.New(`\bcatch\s*(?:\([^)]*\))?\s*\{?\s*$`),
	langPHP:    lazyre.New(`\bcatch\s*\([^)]*\)\s*\{?\s*$`),
	langPython: lazyre.New(`^\s*except\b[^:]*:\s*(?:#.*)?$`),
	langRuby:   lazyre.New(`^\s*rescue\b.*$`),
	langElixir: lazyre.New(`^\s*rescue\s*$|^\s*catch\s*$`),
}

var (
	rustOkStatementRe    = lazyre.New(`^\s*[\w.:()&*]+\.ok\(\)\s*;\s*$`)
	rubyNarrowRescueRe   = lazyre.New(`rescue\s+[A-Z]\w*(?:::\w+)*Error\b`)
	elixirIgnoreClauseRe = lazyre.New(`^_\s*(?:,\s*_\s*)?->\s*(?:nil|:ok)\s*$`)
	pyNarrowExceptRe     = lazyre.New(`^\s*except\s+\(?\s*([A-Za-z_][\w.]*)`)
	goReturnErrRe        = lazyre.New(`^\s*return\b.*\berr\b`)
	goReturnNilRe        = lazyre.New(`^\s*return\s+(?:nil|(?:[^,]+,\s*)*nil)\s*$`)
	rustQuestionRe       = lazyre.New(`\?\s*[;).]|\?\s*$`)
	rustSwallowRe        = lazyre.New(`\.unwrap_or_default\(\)|\.unwrap_or\(|\.unwrap_or_else\(\s*\|_\|`)
	scriptSwallowRes     = []*lazyre.Regexp{
		lazyre.New(`\|\|\s*(?:true|:)(?:\s|;|$|\))`),
		lazyre.New(`(?:;|&&|\|\|)\s*exit\s+0\b`),
		lazyre.New(`^\s*exit\s+0\s*$`),
		lazyre.New(`^\s*set\s+\+e\b|^\s*set\s+\+o\s+(?:errexit|pipefail)\b`),
		lazyre.New(`^\s*(?:-\s*)?continue-on-error\s*:\s*(?:true|\$\{\{\s*true\s*\}\})`),
		lazyre.New(`^\s*allow_failure\s*:\s*true\b`),
		lazyre.New(`^\t-\S`),
		lazyre.New(`^\s*ignore_errors\s*:\s*(?:true|yes)\b|^\s*ignore_outcome\s*=\s*true\b`),
		lazyre.New(`"[^"]*"\s*:\s*"[^"]*\|\|\s*(?:true|exit 0)`),
	}
)

func detectSuppression(views []*fileView) []loop.Regression {
	removed := removedBag(views)
	var code, lint, scripts []loop.Evidence
	for _, v := range views {
		if v.ignored {
			continue
		}
		switch {
		case v.lang.isCode() && !v.test:
			for h := range v.newSide {
				code = append(code, swallowedInHunk(v, h, removed)...)
				for _, l := range v.newSide[h] {
					if !l.changed {
						continue
					}
					for _, re := range lintSuppressRes[v.lang] {
						if re.MatchString(l.text) && !removed.take(l.text) {
							lint = append(lint, loop.Evidence{Path: v.path, Line: l.num, Text: evidenceText(l.text)})
							break
						}
					}
				}
			}
		case isScriptPath(v.path) || isScriptLike(v.path):
			for _, l := range changedLines(v.newSide) {
				if v.lang != langMake && isCommentLine(v.lang, l.text) {
					continue
				}
				for _, re := range scriptSwallowRes {
					if re.MatchString(l.text) {
						if re.String() == `^\t-\S` && v.lang != langMake {
							continue
						}
						if !removed.take(l.text) {
							scripts = append(scripts, loop.Evidence{Path: v.path, Line: l.num, Text: evidenceText(l.text)})
						}
						break
					}
				}
			}
		}
	}
	var regs []loop.Regression
	if len(code) > 0 {
		regs = append(regs, loop.Regression{
			Type: ErrorSuppression, Severity: SeverityHigh,
			Summary:  fmt.Sprintf("%s swallowed in non-test code", plural(len(code), "error")),
			Evidence: capEvidence(code), Baseline: 0, Current: len(code),
		})
	}
	if len(scripts) > 0 {
		regs = append(regs, loop.Regression{
			Type: ErrorSuppression, Severity: SeverityMedium,
			Summary:  fmt.Sprintf("%s made to ignore failures in scripts, Makefiles or CI", plural(len(scripts), "command")),
			Evidence: capEvidence(scripts), Baseline: 0, Current: len(scripts),
		})
	}
	if len(lint) > 0 {
		regs = append(regs, loop.Regression{
			Type: ErrorSuppression, Severity: SeverityMedium,
			Summary:  fmt.Sprintf("%s added to non-test code", plural(len(lint), "lint or type-check suppression")),
			Evidence: capEvidence(lint), Baseline: 0, Current: len(lint),
		})
	}
	return regs
}

// isScriptLike reports package.json (its scripts) and tox.ini (commands).
func isScriptLike(p string) bool {
	switch p[strings.LastIndex(p, "/")+1:] {
	case "package.json", "tox.ini", "Taskfile.yml", "Taskfile.yaml":
		return true
	}
	return false
}

// swallowedInHunk finds errors swallowed by the added lines of one hunk.
func swallowedInHunk(v *fileView, h int, removed lineBag) []loop.Evidence {
	side := v.newSide[h]
	oldSide := v.oldSide[h]
	var ev []loop.Evidence
	hit := func(l vline) {
		ev = append(ev, loop.Evidence{Path: v.path, Line: l.num, Text: evidenceText(l.text)})
	}
	memo := map[*lazyre.Regexp]bool{}
	removedText := func(re *lazyre.Regexp) bool {
		if found, ok := memo[re]; ok {
			return found
		}
		found := false
		for _, o := range oldSide {
			if o.changed && re.MatchString(o.text) {
				found = true
				break
			}
		}
		memo[re] = found
		return found
	}
	ctxOld := contextIndex(oldSide)
	ctxNew := contextOrdinals(side)
	seen := map[int]bool{} // lines already reported
	for i, l := range side {
		if !l.changed || isCommentLine(v.lang, l.text) {
			continue
		}
		matched := false
		for _, re := range swallowRes[v.lang] {
			if re.MatchString(l.text) {
				matched = true
				break
			}
		}
		if matched && v.lang == langRust && !removedText(rustQuestionRe) && !strings.Contains(l.text, "let _") {
			// `.ok();` alone discards a Result; as part of an expression it
			// is a conversion.
			matched = rustOkStatementRe.MatchString(l.text)
		}
		if matched {
			if !removed.take(l.text) {
				hit(l)
				seen[i] = true
			}
			continue
		}
		// Rust: ? replaced by a default.
		if v.lang == langRust && rustSwallowRe.MatchString(l.text) && removedText(rustQuestionRe) {
			if !removed.take(l.text) {
				hit(l)
				seen[i] = true
			}
			continue
		}
		// Go: `return err` replaced by `return nil` under `if err != nil`.
		if v.lang == langGo && goReturnNilRe.MatchString(l.text) && i > 0 && strings.Contains(side[i-1].text, "err != nil") && removedText(goReturnErrRe) {
			hit(l)
			seen[i] = true
			continue
		}
	}
	// Empty handler blocks over several lines: the opener is added, or it
	// stayed while its body was emptied.
	for i, l := range side {
		if seen[i] || isCommentLine(v.lang, l.text) {
			continue
		}
		opener := emptyBlockOpeners[v.lang]
		if opener == nil || !opener.MatchString(l.text) {
			continue
		}
		if !l.changed && !bodyEmptied(side, oldSide, i, ctxNew, ctxOld) {
			continue
		}
		if v.lang == langPython {
			if m := pyNarrowExceptRe.FindStringSubmatch(l.text); m != nil && m[1] != "Exception" && m[1] != "BaseException" {
				continue // a narrow except with pass is a decision, not a swallow
			}
		}
		if v.lang == langRuby && strings.Contains(l.text, "rescue") && rubyNarrowRescueRe.MatchString(l.text) && !strings.Contains(l.text, "StandardError") {
			continue
		}
		if emptyBody(v.lang, side, i) && (!l.changed || !removed.take(l.text)) {
			hit(l)
		}
	}
	return ev
}

// bodyEmptied reports whether the block opened by the context line
// newSide[i] lost lines: in the old side, a removed line follows it, or in
// the new side an added line (a comment) does.
func bodyEmptied(newSide, oldSide []vline, i int, ordNew []int, idxOld []int) bool {
	if i+1 < len(newSide) && newSide[i+1].changed {
		return true
	}
	// The k-th context line of one side is the k-th of the other.
	k := ordNew[i]
	if k < 0 || k >= len(idxOld) {
		return false
	}
	j := idxOld[k]
	return j+1 < len(oldSide) && oldSide[j+1].changed
}

// contextOrdinals gives each context line of a side its rank among the
// context lines (-1 for changed lines).
func contextOrdinals(side []vline) []int {
	out := make([]int, len(side))
	k := 0
	for i, l := range side {
		if l.changed {
			out[i] = -1
			continue
		}
		out[i] = k
		k++
	}
	return out
}

// contextIndex lists the indexes of a side's context lines in order.
func contextIndex(side []vline) []int {
	var out []int
	for i, l := range side {
		if !l.changed {
			out = append(out, i)
		}
	}
	return out
}

// emptyBody reports whether the block opened at side[i] has no statement
// before it closes (comments and pass/nil do not count).
func emptyBody(lang language, side []vline, i int) bool {
	indent := leadingSpace(side[i].text)
	start := i + 1
	if !strings.HasSuffix(strings.TrimSpace(side[i].text), "{") && lang != langPython && lang != langRuby && lang != langElixir {
		// Allman style: the brace opens on the next line.
		if start >= len(side) || strings.TrimSpace(side[start].text) != "{" {
			return false
		}
		start++
	}
	for j := start; j < len(side); j++ {
		t := strings.TrimSpace(side[j].text)
		if t == "" || isCommentLine(lang, side[j].text) {
			continue
		}
		switch lang {
		case langPython:
			if t == "pass" || t == "..." {
				// pass, then the block must end.
				for k := j + 1; k < len(side); k++ {
					t2 := strings.TrimSpace(side[k].text)
					if t2 == "" || isCommentLine(lang, side[k].text) {
						continue
					}
					return leadingSpace(side[k].text) <= indent
				}
				return true
			}
			return false
		case langRuby:
			return t == "end" || t == "nil"
		case langElixir:
			return elixirIgnoreClauseRe.MatchString(t)
		default:
			return strings.HasPrefix(t, "}")
		}
	}
	return false
}

func leadingSpace(s string) int {
	n := 0
	for _, c := range s {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}
