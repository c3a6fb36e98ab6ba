package criteria

import (
	"strconv"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// taskIntent is what layer 1 reads from the task (and the trigger's hint).
type taskIntent struct {
	class     string
	criterion string
	source    string // "task" or "hint"
	matched   string // the words that decided
	text      string // the text the class was read from
	threshold int    // coverage percentage, 0 when none was given
	refusal   string
	// command is a command the task names itself: "until `make check`
	// passes".
	command string
	// commandFrom says which text named it: "task" or "hint".
	commandFrom string
}

var (
	coverageRe  = lazyre.New(`(?i)\b(coverage|covered|cov)\b|\b(add|write|more|missing|increase|improve)\s+(unit\s+|integration\s+)?tests?\b|\btests?\s+for\s+(the\s+)?untested\b`)
	lintRe      = lazyre.New(`(?i)\b(lint\w*|linters?|eslint|clippy|rubocop|ruff|flake8|pylint|golangci(-lint)?|staticcheck|credo|phpcs|stylelint|biome|ktlint|detekt|checkstyle|prettier|formatting|format(ter)?\s+(errors?|issues?|violations?|check)|style\s+(errors?|issues?|violations?|warnings?)|compiler\s+warnings|warnings)\b`)
	typeRe      = lazyre.New(`(?i)\b(type[- ]?errors?|type[- ]?check(s|ing|er)?|typecheck\w*|typing\s+errors?|typescript\s+(errors?|issues?|types?)|types|tsc|mypy|pyright|type\s+safety|type\s+hints?|type\s+annotations?|dialyzer|phpstan|psalm|sorbet)\b`)
	buildRe     = lazyre.New(`(?i)(\b(fix|repair|unbreak|restore)\s+(the\s+|our\s+)?(build|compilation|compile)\b|\b(build|compilation|compile)\s+(errors?|failures?|fails?|failing|broken|breaks?|issues?)\b|\bcompiler\s+errors?\b|\b(doesn'?t|does\s+not|won'?t|can'?t|cannot|no\s+longer)\s+(build|compile)\b|\bmake\s+it\s+(build|compile)\b|\bbuild\s+(passes|succeeds|is\s+green|works)\b|\bcompiles?\b|\blink(er)?\s+errors?\b)`)
	regressRe   = lazyre.New(`(?i)\b(refactor\w*|migrat\w*|upgrad\w*|bump\w*|renam\w*|restructur\w*|reorganiz\w*|reorganis\w*|extract\w*|port(ing)?\s+to|convert\w*|simplif\w*|modernis\w*|moderniz\w*|dedup\w*|deduplicat\w*|decoupl\w*|split\s+(up\s+)?the|move\s+\S+\s+(to|into)|replace\s+\S+\s+with|without\s+breaking|keep(ing)?\s+(the\s+)?(tests?|ci|build)\s+(green|passing)|update\s+(the\s+)?dependenc\w*|clean\s+up\s+the\s+code|inline)\b`)
	testRe      = lazyre.New(`(?i)\b(tests?|specs?|failing|fails?|flaky|flakes?|green|ci|red|regressions?|bugs?|crash\w*|panics?|errors?|exceptions?|broken|failures?|suite|passes|pass|unit\s+tests?|assertions?|fix\w*|issue|defect|leak\w*|race|deadlock|wrong|incorrect)\b`)
	featureRe   = lazyre.New(`(?i)\b(add\w*|implement\w*|creat\w*|support\w*|introduc\w*|write|build\s+(a|an|the|new)|new\s+\w+|enabl\w*|allow\w*|expos\w*|handl\w*|provide|generat\w*|make\s+\S+\s+(accept|return|print|log|show|emit|handle|support|work)|let\s+users?)\b`)
	vagueRe     = lazyre.New(`(?i)\b(better|nicer|cleaner|improve\w*|polish\w*|enhanc\w*|optimi[sz]\w*|prettier\s+code|quality|awesome|perfect|good|great|tidy|tidier|beautif\w*|elegant|faster|slower|smaller|simpler|readable|modern|look\s+at|review|think\s+about|whatever|something|stuff|things|everything)\b`)
	docsRe      = lazyre.New(`(?i)^\s*(update|write|improve|fix|add|edit|proofread)\s+(the\s+)?(docs?|documentation|readme|comments?|docstrings?|changelog|typos?)\b`)
	percentRe   = lazyre.New(`(\d{1,3}(?:\.\d+)?)\s*%|(?i)(?:above|over|at\s+least|>=?|to)\s*(\d{1,3})\b`)
	backtickRe  = lazyre.New("`([^`]+)`")
	untilCmdRe  = lazyre.New(`(?i)^\s*(?:running\s+|the\s+command\s+)?(.+?)\s+(?:passes|succeeds|exits\s+0|is\s+green|returns\s+0)\s*$`)
	hintTestRe  = lazyre.New(`(?i)\b(tests?|specs?|green|suite|ci|pass(es|ing)?)\b`)
	emptyTaskRe = lazyre.New(`^[\s[:punct:]]*$`)
)

// criterionWords says the criterion in words for a class.
func criterionWords(class string, threshold int) string {
	switch class {
	case ClassTestPass:
		return "the test suite passes"
	case ClassRegressionGate:
		return "the full test suite still passes (no regression)"
	case ClassCoverage:
		if threshold > 0 {
			return "the tests pass with at least " + strconv.Itoa(threshold) + "% coverage"
		}
		return "the tests pass with coverage measured (coverage must not drop)"
	case ClassLintClean:
		return "the linter reports no problems"
	case ClassTypeClean:
		return "the type checker reports no errors"
	case ClassBuildPass:
		return "the project builds"
	case ClassImplementFeature:
		return "the feature is implemented and the test suite passes (tests for the feature included)"
	}
	return ""
}

// classifyTask is layer 1: the task verb (and the trigger's completion hint,
// which refines it) gives the criterion class, or a refusal.
func classifyTask(task, hint string) taskIntent {
	t := strings.TrimSpace(task)
	h := strings.TrimSpace(hint)
	in := taskIntent{}
	if cmd := namedCommand(t); cmd != "" {
		in.command, in.commandFrom = cmd, "task"
	} else if cmd := namedCommand(h); cmd != "" {
		in.command, in.commandFrom = cmd, "hint"
	}
	in.threshold = coverageThreshold(h)
	if in.threshold == 0 {
		in.threshold = coverageThreshold(t)
	}
	if emptyTaskRe.MatchString(t) && emptyTaskRe.MatchString(h) {
		in.class = ClassRefused
		in.refusal = "the task is empty: say what to do (\"fix the failing tests\") or give --completion CMD"
		return in
	}
	// The hint is the completion condition: it decides when it names a kind.
	if h != "" {
		if class, m := classOf(h, true); class != "" {
			in.class, in.source, in.matched, in.text = class, "hint", m, h
			if class == ClassTestPass {
				if c2, m2 := classOf(t, false); c2 == ClassRegressionGate || c2 == ClassImplementFeature {
					in.class, in.source, in.matched, in.text = c2, "task", m2, t
				}
			}
			in.criterion = criterionWords(in.class, in.threshold)
			return in
		}
	}
	if docsRe.MatchString(t) && !testRe.MatchString(strings.TrimPrefix(strings.ToLower(t), "fix")) {
		in.class = ClassRefused
		in.refusal = "a documentation change has no command that says it is done; give --completion CMD (a docs build or link check, for example)"
		return in
	}
	if class, m := classOf(t, false); class != "" {
		in.class, in.source, in.matched, in.text = class, "task", m, t
		in.criterion = criterionWords(class, in.threshold)
		return in
	}
	if m := vagueRe.FindString(t); m != "" || len(strings.Fields(t)) < 2 {
		in.class = ClassRefused
		in.refusal = "the task has no measurable criterion"
		if m != "" {
			in.refusal += " (\"" + m + "\" says what to aim for, not when it is done)"
		}
		in.refusal += ": name a check (\"fix the failing tests\", \"make the linter pass\", \"add X with tests\") or give --completion CMD"
		return in
	}
	// A concrete task with no recognised verb: treat it as a change whose
	// tests must pass.
	in.class, in.source, in.matched = ClassImplementFeature, "task", ""
	in.criterion = criterionWords(in.class, 0)
	return in
}

// classOf finds the class a text names; hint texts may also be short
// ("green", "passes").
func classOf(text string, isHint bool) (string, string) {
	if text == "" {
		return "", ""
	}
	if m := coverageRe.FindString(text); m != "" {
		return ClassCoverage, m
	}
	if m := lintRe.FindString(text); m != "" {
		return ClassLintClean, m
	}
	if m := typeRe.FindString(text); m != "" {
		return ClassTypeClean, m
	}
	if m := buildRe.FindString(text); m != "" {
		return ClassBuildPass, m
	}
	if isHint {
		if m := hintTestRe.FindString(text); m != "" {
			return ClassTestPass, m
		}
		return "", ""
	}
	if m := regressRe.FindString(text); m != "" {
		return ClassRegressionGate, m
	}
	lower := strings.ToLower(text)
	if m := featureRe.FindString(text); m != "" && !strings.HasPrefix(lower, "fix") && !strings.HasPrefix(lower, "make the test") && !strings.HasPrefix(lower, "get the test") {
		return ClassImplementFeature, m
	}
	if m := testRe.FindString(text); m != "" {
		return ClassTestPass, m
	}
	return "", ""
}

func coverageThreshold(text string) int {
	if !coverageRe.MatchString(text) && !strings.Contains(text, "%") {
		return 0
	}
	m := percentRe.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	v := m[1]
	if v == "" {
		v = m[2]
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f > 100 {
		return 0
	}
	return int(f)
}

// namedCommand returns a command the text names in backticks, or in the
// form "until make check passes".
func namedCommand(text string) string {
	if m := backtickRe.FindStringSubmatch(text); m != nil {
		cmd := strings.TrimSpace(m[1])
		if info := (classifier{}).classify(strings.Fields(cmd), "."); info.kind&gateKinds != 0 {
			return cmd
		}
	}
	if m := untilCmdRe.FindStringSubmatch(text); m != nil {
		cmd := strings.TrimSpace(m[1])
		fields := strings.Fields(cmd)
		if len(fields) >= 2 {
			if info := (classifier{}).classify(fields, "."); info.kind&gateKinds != 0 && info.sig != "" {
				return cmd
			}
		}
	}
	return ""
}

// legacyFallback is seed 001's last-resort table (Node-centric), used only
// when no layer found a command.
type legacyRow struct {
	pattern *lazyre.Regexp
	command string
	class   string
	says    string
}

var legacyTable = []legacyRow{
	{lazyre.New(`(?i)\bfix\s+(the\s+)?(failing\s+)?tests?\b`), "npm test", ClassTestPass, `"fix tests" -> "npm test passes"`},
	{lazyre.New(`(?i)\bfix\s+(the\s+)?lint(ing)?\b`), "npm run lint", ClassLintClean, `"fix lint" -> "npm run lint passes"`},
	{lazyre.New(`(?i)\bfix\s+(the\s+)?(types|typescript)\b`), "npx tsc --noEmit", ClassTypeClean, `"fix types" -> "npx tsc --noEmit passes"`},
	{lazyre.New(`(?i)\bfix\s+(the\s+)?build\b`), "npm run build", ClassBuildPass, `"fix build" -> "npm run build succeeds"`},
	{lazyre.New(`(?i)\badd\s+tests?\b`), "npm test -- --coverage", ClassCoverage, `"add tests" -> "test coverage increases"`},
	{lazyre.New(`(?i)\bmigrate\s+.*\besm\b`), "node .", ClassRegressionGate, `"migrate to ESM" -> "node runs without errors"`},
	{lazyre.New(`(?i)\brefactor\b`), "npm test", ClassRegressionGate, `"refactor X" -> "npm test passes" (preserve behavior)`},
}

// legacyFallback returns the seed table's command for the task, matched by
// pattern first and by class second.
func legacyFallback(task, class string) (legacyRow, bool) {
	for _, row := range legacyTable {
		if row.pattern.MatchString(task) {
			return row, true
		}
	}
	for _, row := range legacyTable {
		if row.class == class || (class == ClassImplementFeature || class == ClassRegressionGate) && row.command == "npm test" {
			return row, true
		}
	}
	return legacyRow{}, false
}

// taskWords lists the words of the text that point at the class, for the
// rationale.
func taskWords(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, re := range []*lazyre.Regexp{coverageRe, lintRe, typeRe, buildRe, regressRe, testRe, featureRe} {
		for _, m := range re.FindAllString(text, -1) {
			m = strings.ToLower(strings.TrimSpace(m))
			if !seen[m] {
				seen[m] = true
				out = append(out, strconv.Quote(m))
			}
		}
		if len(out) > 0 && re != testRe {
			break
		}
	}
	if len(out) > 4 {
		out = out[:4]
	}
	return out
}
