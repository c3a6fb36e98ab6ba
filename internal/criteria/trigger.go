package criteria

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Trigger is a loop request found in a comment: the task, the completion
// hint (what "done" means, in the user's words, to refine inference) and the
// canonical trigger phrase that matched.
type Trigger struct {
	Task, Hint string
	// Phrase is the canonical phrase: "ralph this:", "ralph:", "al:",
	// "keep trying until", "loop until", "iterate until", "fix until green",
	// "keep fixing until", "run until passes", "ralph it", or "/agent-loop"
	// when only the command prefix matched. Task is empty for "ralph it":
	// the caller takes the task from the context (the issue or PR).
	Phrase string
}

type triggerPattern struct {
	phrase string
	re     *lazyre.Regexp
	// build returns the trigger from the text after the phrase.
	build func(rest string) (task, hint string)
}

var triggerPatterns = []triggerPattern{
	{"ralph this:", lazyre.New(`(?i)^ralph\s+this\s*:\s*`), taskOnly},
	{"ralph it", lazyre.New(`(?i)^ralph\s+it\s*[.!]?\s*$`), func(string) (string, string) { return "", "" }},
	{"ralph:", lazyre.New(`(?i)^ralph\s*:\s*`), taskOnly},
	{"al:", lazyre.New(`(?i)^al\s*:\s*`), taskOnly},
	{"fix until green", lazyre.New(`(?i)^fix\s+until\s+green\b[\s.!]*`), func(string) (string, string) { return "fix the failing tests", "tests pass" }},
	{"run until passes", lazyre.New(`(?i)^run\s+until\s+(it\s+)?pass(es)?\b[\s.!]*`), func(string) (string, string) { return "make the tests pass", "tests pass" }},
	{"keep fixing until", lazyre.New(`(?i)^keep\s+fixing\s+until\s+`), func(rest string) (string, string) {
		return "fix " + subjectOf(rest), rest
	}},
	{"keep trying until", lazyre.New(`(?i)^keep\s+trying\s+until\s+`), conditionOnly},
	{"loop until", lazyre.New(`(?i)^loop\s+until\s+`), conditionOnly},
	{"iterate until", lazyre.New(`(?i)^iterate\s+until\s+`), conditionOnly},
}

var (
	agentLoopPrefix = lazyre.New(`(?i)^/agent-loop(\s+|$)`)
	fenceRe         = lazyre.New("^\\s*(```|~~~)")
	untilRe         = lazyre.New(`(?i)\s+until\s+`)
)

func taskOnly(rest string) (string, string) { return rest, "" }

// conditionOnly builds a trigger whose text is the completion condition: the
// task follows from it ("loop until coverage is above 80%" -> "add tests to
// improve coverage").
func conditionOnly(cond string) (string, string) {
	return taskFromCondition(cond), cond
}

func taskFromCondition(cond string) string {
	switch class, _ := classOf(cond, true); class {
	case ClassCoverage:
		return "add tests to improve coverage"
	case ClassLintClean:
		return "fix the lint errors"
	case ClassTypeClean:
		return "fix the type errors"
	case ClassBuildPass:
		return "fix the build"
	case ClassTestPass:
		return "fix the failing tests"
	}
	if noErrorsRe.MatchString(cond) {
		return "fix the errors"
	}
	return "work until " + cond
}

// subjectOf turns "lint is clean" into "lint", "the tests are green" into
// "the failing tests".
func subjectOf(cond string) string {
	switch class, _ := classOf(cond, true); class {
	case ClassLintClean:
		return "the lint errors"
	case ClassTypeClean:
		return "the type errors"
	case ClassBuildPass:
		return "the build"
	case ClassTestPass:
		return "the failing tests"
	case ClassCoverage:
		return "the coverage gaps"
	}
	words := conditionVerbRe.ReplaceAllString(cond, "")
	return strings.TrimSpace(words)
}

// ParseTrigger finds a loop request in a comment. A trigger must start a
// line (not inside a quote or a code block, so quoting a request does not
// start a loop again); the task runs to the end of its paragraph. It also
// accepts a leading "/agent-loop " prefix: "/agent-loop fix until green",
// "/agent-loop fix the flaky parser test".
func ParseTrigger(text string) (Trigger, bool) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	inFence := false
	var para []string // the trimmed lines of the current paragraph
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		fence := fenceRe.MatchString(line)
		if fence || inFence || trimmed == "" || strings.HasPrefix(trimmed, ">") {
			if t, ok := matchParagraph(para); ok {
				return t, true
			}
			para = para[:0]
			if fence {
				inFence = !inFence
			}
			continue
		}
		para = append(para, trimmed)
	}
	return matchParagraph(para)
}

// matchParagraph tries each line of a paragraph as the start of a trigger
// whose task runs to the end of the paragraph. The paragraph is joined once
// and each attempt looks at a suffix of it, so a comment of many lines costs
// linear time, not quadratic (a 64 KiB comment is the GitHub maximum).
func matchParagraph(para []string) (Trigger, bool) {
	if len(para) == 0 {
		return Trigger{}, false
	}
	joined := strings.Join(para, " ")
	off := 0
	for _, l := range para {
		if mayStartTrigger(l) {
			if t, ok := matchTrigger(joined[off:]); ok {
				return t, true
			}
		}
		off += len(l) + 1
	}
	return Trigger{}, false
}

// triggerStarts are the first words of every phrase and the /agent-loop
// prefix; mayStartTrigger tests them before any regexp runs.
var triggerStarts = []string{"ralph", "al", "fix", "run", "keep", "loop", "iterate", "/agent-loop"}

func mayStartTrigger(line string) bool {
	for _, w := range triggerStarts {
		if len(line) >= len(w) && strings.EqualFold(line[:len(w)], w) {
			return true
		}
	}
	return false
}

func matchTrigger(s string) (Trigger, bool) {
	prefixed := false
	if loc := agentLoopPrefix.FindStringIndex(s); loc != nil {
		prefixed = true
		s = strings.TrimSpace(s[loc[1]:])
	}
	for _, p := range triggerPatterns {
		loc := p.re.FindStringIndex(s)
		if loc == nil {
			continue
		}
		rest := cleanTask(s[loc[1]:])
		if rest == "" && p.phrase != "ralph it" && p.phrase != "fix until green" && p.phrase != "run until passes" {
			continue // "ralph:" with nothing after it
		}
		task, hint := p.build(rest)
		return Trigger{Task: task, Hint: hint, Phrase: p.phrase}, true
	}
	if prefixed {
		task := cleanTask(s)
		if task == "" {
			return Trigger{}, false
		}
		// "/agent-loop fix X until Y": a completion hint inside the task.
		if loc := untilRe.FindStringIndex(task); loc != nil && loc[0] > 0 && loc[1] < len(task) {
			return Trigger{Task: strings.TrimSpace(task[:loc[0]]), Hint: strings.TrimSpace(task[loc[1]:]), Phrase: "/agent-loop"}, true
		}
		return Trigger{Task: task, Phrase: "/agent-loop"}, true
	}
	return Trigger{}, false
}

// cleanTask trims quotes, trailing punctuation and a @mention.
func cleanTask(s string) string {
	s = strings.TrimSpace(s)
	s = strings.Trim(s, "\"'`“”")
	s = strings.TrimRight(s, " .!")
	return strings.TrimSpace(s)
}

var (
	// noErrorsRe is a condition that asks for no errors of any kind.
	noErrorsRe = lazyre.New(`(?i)\b(no|zero|0)\s+errors?\b`)
	// conditionVerbRe is the verb phrase that ends a condition's subject.
	conditionVerbRe = lazyre.New(`(?i)\s+(is|are|passes|pass|works?|succeeds?)\b.*$`)
)
