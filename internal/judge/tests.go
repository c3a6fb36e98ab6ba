package judge

import (
	"sort"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// testUnit is one test (or test suite) found on one side of a hunk.
type testUnit struct {
	name    string // the test's name as the runner knows it
	suite   bool   // describe/context/class: a group, not a test
	head    int    // index of the declaration line in the hunk side
	attr    int    // index of its test attribute/annotation, -1 when none
	end     int    // exclusive end of its span in the hunk side
	changed bool   // the declaration or the attribute line changed
}

// Direct test declarations: the line itself says it is a test.
var directTestRes = map[language][]*lazyre.Regexp{
	langGo: {lazyre.New(`^func\s+((?:Test|Fuzz)(?:[A-Z0-9_]\w*)?)\s*\(\s*\w+\s+\*testing\.[TF]\b`)},
	langPython: {
		lazyre.New(`^\s*(?:async\s+)?def\s+(test\w*)\s*\(`),
	},
	langJS: {
		lazyre.New("^\\s*(?:it|test|specify|fit|xit|xtest|Deno\\.test|t\\.test|tap\\.test)(?:\\.(?:only|skip|todo|concurrent|failing|fixme|serial))*\\s*\\(\\s*(['\"`])(.+?)['\"`]"),
	},
	langRuby: {
		lazyre.New(`^\s*(?:it|specify|scenario|example|test|xit|fit|xspecify|xscenario|xexample)\s*\(?\s*(['"])(.+?)['"]`),
		lazyre.New(`^\s*def\s+(test_\w+)`),
	},
	langPHP: {
		lazyre.New(`^\s*(?:(?:public|protected|private|static|final)\s+)*function\s+(test\w*)\s*\(`),
		lazyre.New(`^\s*(?:it|test)\s*\(\s*(['"])(.+?)['"]`),
	},
	langElixir: {
		lazyre.New(`^\s*(?:test|property)\s+"(.+?)"`),
	},
	langJava: {
		lazyre.New(`^\s*public\s+void\s+(test\w+)\s*\(\s*\)`),
	},
	langKotlin: {
		lazyre.New(`^\s*(?:test|should|it|xtest)\s*\(\s*"(.+?)"`),
	},
}

// Test suites (groups of tests).
var suiteRes = map[language][]*lazyre.Regexp{
	langPython: {lazyre.New(`^\s*class\s+(Test\w*)\b`)},
	langJS: {
		lazyre.New("^\\s*(?:describe|context|suite|fdescribe|xdescribe|xcontext)(?:\\.(?:only|skip|todo|concurrent|serial))*\\s*\\(\\s*(['\"`])(.+?)['\"`]"),
	},
	langRuby: {
		lazyre.New(`^\s*(?:RSpec\.)?(?:describe|context|feature|xdescribe|xcontext)\s*\(?\s*(['"])(.+?)['"]`),
	},
	langElixir: {lazyre.New(`^\s*describe\s+"(.+?)"`)},
	langPHP:    {lazyre.New(`^\s*describe\s*\(\s*(['"])(.+?)['"]`)},
	langKotlin: {lazyre.New(`^\s*(?:context|describe)\s*\(\s*"(.+?)"`)},
}

// Test attributes/annotations, followed by the declaration they mark.
var testAttrRes = map[language]*lazyre.Regexp{
	langRust:   lazyre.New(`^\s*#\[(?:[\w:]*::)?(?:test|rstest|test_case|quickcheck)\b`),
	langJava:   lazyre.New(`^\s*@(?:org\.junit\.(?:jupiter\.api\.)?)?(?:Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate|Property)\b`),
	langKotlin: lazyre.New(`^\s*@(?:org\.junit\.(?:jupiter\.api\.)?)?(?:Test|ParameterizedTest|RepeatedTest|TestFactory)\b`),
	langCSharp: lazyre.New(`^\s*\[\s*(?:[\w.]*\.)?(?:Fact|Theory|Test|TestMethod|TestCase|TestCaseSource|DataTestMethod|SkippableFact|SkippableTheory)\b`),
	langPHP:    lazyre.New(`^\s*(?:\*\s*@test\b|#\[\s*(?:\\?PHPUnit\\Framework\\Attributes\\)?Test\s*\])`),
}

// Declarations an attribute applies to.
var attrDeclRes = map[language]*lazyre.Regexp{
	langRust:   lazyre.New(`^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)`),
	langJava:   lazyre.New(`^\s*(?:(?:public|protected|private|static|final|synchronized)\s+)*(?:<[^>]+>\s+)?[\w<>\[\],.?]+\s+(\w+)\s*\(`),
	langKotlin: lazyre.New("^\\s*(?:(?:public|internal|private|override|suspend|open)\\s+)*fun\\s+(`[^`]+`|\\w+)\\s*\\("),
	langCSharp: lazyre.New(`^\s*(?:(?:public|private|protected|internal|static|async|override|virtual)\s+)*[\w<>\[\],.?]+\s+(\w+)\s*\(`),
	langPHP:    lazyre.New(`^\s*(?:(?:public|protected|private|static|final)\s+)*function\s+(\w+)\s*\(`),
}

// attrSkippable are lines between an attribute and its declaration.
var attrSkippable = lazyre.New(`^\s*(?:$|#\[|@|\[|//|/\*|\*|\*/)`)

// findUnits finds the tests and suites of one hunk side.
func findUnits(lang language, side []vline) []testUnit {
	var units []testUnit
	claimed := map[int]bool{}
	if attrRe, ok := testAttrRes[lang]; ok {
		declRe := attrDeclRes[lang]
		for i, l := range side {
			if !attrRe.MatchString(l.text) {
				continue
			}
			for j := i + 1; j < len(side) && j <= i+8; j++ {
				if m := declRe.FindStringSubmatch(side[j].text); m != nil {
					if !claimed[j] {
						claimed[j] = true
						units = append(units, testUnit{name: strings.Trim(m[1], "`"), head: j, attr: i, changed: side[i].changed || side[j].changed})
					}
					break
				}
				if !attrSkippable.MatchString(side[j].text) {
					break
				}
			}
		}
	}
	for i, l := range side {
		if claimed[i] {
			continue
		}
		for _, re := range directTestRes[lang] {
			if m := re.FindStringSubmatch(l.text); m != nil {
				units = append(units, testUnit{name: m[len(m)-1], head: i, attr: -1, changed: l.changed})
				claimed[i] = true
				break
			}
		}
		if claimed[i] {
			continue
		}
		for _, re := range suiteRes[lang] {
			if m := re.FindStringSubmatch(l.text); m != nil {
				units = append(units, testUnit{name: m[len(m)-1], suite: true, head: i, attr: -1, changed: l.changed})
				claimed[i] = true
				break
			}
		}
	}
	// Order by position and give each unit its span: up to the next unit.
	sortUnits(units)
	for k := range units {
		units[k].end = len(side)
		if k+1 < len(units) {
			next := units[k+1].head
			if units[k+1].attr >= 0 {
				next = units[k+1].attr
			}
			units[k].end = next
		}
	}
	return units
}

func sortUnits(u []testUnit) {
	sort.SliceStable(u, func(i, j int) bool { return u[i].head < u[j].head })
}

// start is the first line of a unit's span (its attribute when it has one).
func (u testUnit) start() int {
	if u.attr >= 0 && u.attr < u.head {
		return u.attr
	}
	return u.head
}

// bodyChanged counts the changed lines of a unit's span other than its
// declaration and attribute.
func (u testUnit) bodyChanged(side []vline) int {
	n := 0
	for i := u.start(); i < u.end && i < len(side); i++ {
		if i == u.head || i == u.attr {
			continue
		}
		if side[i].changed {
			n++
		}
	}
	return n
}

// ---- table-driven cases ----

// Rows of a table of test cases: the line names one case.
var caseRowRes = map[language][]*lazyre.Regexp{
	langGo: {
		lazyre.New(`^\s*\{?\s*(?:name|desc|description|title|testName|scenario|label)\s*:\s*"([^"]*)"`),
		lazyre.New(`^\s*\{\s*"([^"]*)"\s*,`),
		lazyre.New(`^\s*"([^"]+)"\s*:\s*\{`),
	},
	langPython: {
		lazyre.New(`^\s*pytest\.param\((.*)\)\s*,?\s*$`),
	},
	langRust:   {lazyre.New(`^\s*#\[(?:case|test_case)\s*\((.*)\)\]`)},
	langCSharp: {lazyre.New(`^\s*\[\s*(?:InlineData|TestCase|DataRow)\s*\((.*)\)\s*\]`)},
	langJava:   {lazyre.New(`^\s*@ValueSource\((.*)\)`)},
}

// Rows of a parametrize/each table, recognised only when the table opener
// is visible above them in the same hunk.
var (
	paramOpenerRe = lazyre.New(`(?:@pytest\.mark\.parametrize\s*\(|\.each\s*\(\s*\[|\.each\s*` + "`" + `|@CsvSource\s*\(|dataProvider|@dataProvider|function\s+\w*[Pp]rovider\s*\()`)
	paramRowRe    = lazyre.New(`^\s*(?:\(.*\)|\[.*\]|"[^"]*"|'[^']*'|yield\s+.*|\w+\s*=>\s*\[.*\]|'[^']*'\s*=>\s*\[.*\])\s*,?\s*$`)
)

// caseRows returns the indexes of case rows on one hunk side.
func caseRows(lang language, side []vline, section string) []int {
	var out []int
	opener := paramOpenerRe.MatchString(section)
	for i, l := range side {
		if paramOpenerRe.MatchString(l.text) {
			opener = true
		}
		matched := false
		for _, re := range caseRowRes[lang] {
			if re.MatchString(l.text) {
				matched = true
				break
			}
		}
		if !matched && (lang == langPython || lang == langJS || lang == langPHP || lang == langJava) && paramRowRe.MatchString(l.text) {
			matched = opener || closesIntoTest(side, i)
		}
		if matched {
			out = append(out, i)
		}
	}
	return out
}

var (
	closingOnlyRe = lazyre.New(`^\s*[\]\)\}]+\s*[,;]?\s*$`)
	tableUserRe   = lazyre.New("^\\s*(?:(?:async\\s+)?def\\s+test|@|[\\])]*\\)?\\s*\\(\\s*['\"`])")
)

// closesIntoTest reports a row followed, after more rows and closing
// brackets only, by the test that uses the table (a parametrized def
// test_..., another decorator, or the title call of an .each table).
func closesIntoTest(side []vline, i int) bool {
	for j := i + 1; j < len(side) && j < i+40; j++ {
		t := side[j].text
		if paramRowRe.MatchString(t) || closingOnlyRe.MatchString(t) {
			continue
		}
		return tableUserRe.MatchString(t)
	}
	return false
}

// ---- skip markers ----

var skipRes = map[language][]*lazyre.Regexp{
	langGo: {lazyre.New(`\b\w+(?:\(\))?\.Skip(?:Now|f)?\s*\(`)},
	langPython: {
		lazyre.New(`@pytest\.mark\.(?:skip|skipif|xfail)\b`),
		lazyre.New(`\bpytest\.(?:skip|xfail|importorskip)\s*\(`),
		lazyre.New(`@(?:unittest\.)?(?:skip|skipIf|skipUnless|expectedFailure)\b`),
		lazyre.New(`\.skipTest\s*\(`),
		lazyre.New(`raise\s+(?:unittest\.)?SkipTest\b`),
		lazyre.New(`^\s*pytestmark\s*=.*\b(?:skip|skipif|xfail)\b`),
		lazyre.New(`^\s*__test__\s*=\s*False`),
	},
	langJS: {
		lazyre.New(`\b(?:it|test|describe|context|suite|specify)\.(?:skip|todo|only|fixme)\b`),
		lazyre.New(`(?:^|[^\w.])(?:xit|xdescribe|xtest|xcontext|xspecify|fit|fdescribe)\s*\(`),
		lazyre.New(`\bthis\.skip\s*\(`),
		lazyre.New(`\bDeno\.test\.ignore\b`),
	},
	langRust: {lazyre.New(`#\[ignore\b`)},
	langJava: {
		lazyre.New(`^\s*@(?:org\.junit\.(?:jupiter\.api\.)?)?(?:Disabled|Ignore|DisabledIf\w*|DisabledOn\w*)\b`),
		lazyre.New(`\bAssumptions?\.assume\w*\s*\(|\bassume(?:True|False)\s*\(\s*(?:true|false)\s*\)`),
	},
	langKotlin: {
		lazyre.New(`^\s*@(?:org\.junit\.(?:jupiter\.api\.)?)?(?:Disabled|Ignore|DisabledIf\w*)\b`),
		lazyre.New(`\benabled\s*=\s*false\b|\bxtest\s*\(|\bxdescribe\s*\(|\.config\s*\(\s*enabled\s*=\s*false`),
	},
	langCSharp: {
		lazyre.New(`\[\s*(?:Fact|Theory|Test|TestMethod|SkippableFact)\s*\([^)\]]*\bSkip\s*=`),
		lazyre.New(`\[\s*(?:Ignore|Explicit|Skip)\b`),
		lazyre.New(`\bAssert\.(?:Ignore|Inconclusive)\s*\(|\bSkip\.(?:If|Unless)\w*\s*\(`),
	},
	langRuby: {
		lazyre.New(`^\s*(?:skip|pending)(?:\s|\(|$)`),
		lazyre.New(`^\s*(?:xit|xdescribe|xcontext|xspecify|xscenario|xexample)\b`),
		lazyre.New(`,\s*(?:skip|pending):\s*|,\s*:(?:skip|pending)\b`),
	},
	langPHP: {
		lazyre.New(`\bmarkTest(?:Skipped|Incomplete)\s*\(`),
		lazyre.New(`->(?:skip|todo)\s*\(`),
		lazyre.New(`#\[\s*(?:\\?PHPUnit\\Framework\\Attributes\\)?(?:Skip|Ignore)\w*`),
	},
	langElixir: {
		lazyre.New(`@(?:tag|moduletag|describetag)\s+(?::skip\b|skip:|:pending\b|pending:)`),
	},
}

// filterRes are options that run fewer tests, in test commands and test
// configuration.
var filterRes = []*lazyre.Regexp{
	lazyre.New(`--?testPathIgnorePatterns|testPathIgnorePatterns|modulePathIgnorePatterns|--testNamePattern|--test-name-pattern`),
	lazyre.New(`(?:^|\s)-k\s*=?\s*["']?\s*not\b`),
	lazyre.New(`--deselect\b|--ignore(?:-glob)?[= ]|\bcollect_ignore\b|\bnorecursedirs\b`),
	lazyre.New(`\bgo\s+test\b.*\s-(?:run|skip)[= ]|(?:^|\s)-(?:run|skip)[= ]["']?\^?\w`),
	lazyre.New(`\bcargo\s+test\b.*--\s.*--skip\b|--skip[= ]\w`),
	lazyre.New(`--exclude-group\b|--exclude[= ]|--tag\s+~|--tag\s+["']?~|--filter[= ]`),
	lazyre.New(`\bexclude\s*:\s*\[|ExUnit\.configure\(.*exclude`),
	lazyre.New(`-DskipTests|maven\.test\.skip|<skipTests>\s*true|-Dtest=`),
	lazyre.New(`--onlyChanged|--changedSince|--findRelatedTests|--lastCommit|--grep\b.*--invert|--invert\b`),
	lazyre.New(`\btestMatch\b|\btestRegex\b|\bpython_files\b|\bpython_functions\b|\btestpaths\b`),
}

// ---- assertions ----

const (
	strengthTrivial = 0
	strengthWeak    = 1
	strengthExact   = 2
)

// assertion is an assertion line found on one hunk side.
type assertion struct {
	idx      int
	text     string
	strength int
	tokens   map[string]bool
}

var (
	goReportRe   = lazyre.New(`\b(?:t|b|f|tb|tt|s\.T\(\)|suite\.T\(\))\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(`)
	goTestifyRe  = lazyre.New(`\b(?:assert|require|s|suite)\.(\w+)\s*\(`)
	goGomegaRe   = lazyre.New(`\b(?:Expect|Ω)\s*\(.*\)\.(?:To|NotTo|ToNot|Should|ShouldNot)\s*\(\s*(?:Not\(\s*)?(\w+)`)
	goHelperRe   = lazyre.New(`^\s*(?:assert|check|expect|verify|must|require|ensure|compare)[A-Z]\w*\s*\(\s*t\b`)
	goIfRe       = lazyre.New(`^\s*(?:\}\s*else\s+)?if\s+(.*)\{\s*$`)
	pyAssertRe   = lazyre.New(`^\s*assert\s+(.*)$`)
	pyMethodRe   = lazyre.New(`\bself\.(assert\w+|fail\w*)\s*\(|\bpytest\.raises\s*\(|\bnp\.testing\.assert_\w+\s*\(|\.assert_(?:called|any_call|has_calls|not_called)\w*\s*\(|^\s*(assert_\w+)\s*\(`)
	jsExpectRe   = lazyre.New(`\bexpect\s*\(`)
	jsAssertRe   = lazyre.New(`\bassert(?:\.(\w+))?\s*\(|\bt\.(is|not|deepEqual|notDeepEqual|truthy|falsy|true|false|throws|throwsAsync|regex|pass|like|snapshot)\s*\(|\.should\.|\bshould\.`)
	rustAssertRe = lazyre.New(`\b(assert|assert_eq|assert_ne|debug_assert|debug_assert_eq|debug_assert_ne|assert_matches|prop_assert|prop_assert_eq)!\s*\(`)
	javaAssertRe = lazyre.New(`\b(?:Assert\.|Assertions\.)?(assert(?:Equals|That|True|False|Null|NotNull|Same|NotSame|Throws|ArrayEquals|IterableEquals|LinesMatch|DoesNotThrow|All|NotEquals|Contains|Content|Timeout))\s*\(|\bverify\s*\(|\bexpectThat\s*\(|\s(shouldBe|shouldNotBe|shouldContain|shouldThrow|shouldHaveSize|shouldBeNull|shouldNotBeNull|shouldBeTrue)\b|\bassertThrows<`)
	csAssertRe   = lazyre.New(`\b(?:Assert|CollectionAssert|StringAssert|ClassicAssert)\.(\w+)\s*\(|\.Should\(\)\.(\w+)`)
	rbAssertRe   = lazyre.New(`\bexpect\s*[\({]|\b(assert\w*|refute\w*)(?:\s|\()|\.(?:must|wont)_\w+|\.should(?:_not)?\b`)
	phpAssertRe  = lazyre.New(`(?:\$this->|self::|static::|Assert::|\bPHPUnit::)?\b(assert\w+)\s*\(|\$this->expectException\w*\s*\(|\bexpect\s*\(.*\)->(\w+)`)
	exAssertRe   = lazyre.New(`^\s*(assert|refute|assert_raise|assert_receive|assert_received|assert_in_delta|refute_receive)\b(.*)$`)
	literalRe    = lazyre.New(`^(?:true|false|True|False|None|nil|null|undefined|NaN|-?\d+(?:\.\d+)?|"[^"]*"|'[^']*'|:\w+|\[\s*\]|\{\s*\}|\(\s*\))$`)
)

// weak matchers and assertion methods: they check that something exists or
// is truthy, not what it is.
var weakNames = map[string]bool{
	// Go testify/gomega
	"NotNil": true, "NotEmpty": true, "NotZero": true, "True": true, "Truef": true, "NotNilf": true,
	"BeTrue": true, "BeNil": false, "NotTo": false,
	// JS
	"toBeDefined": true, "toBeTruthy": true, "toBeFalsy": true, "toBeInstanceOf": true,
	"toHaveBeenCalled": true, "ok": true, "exists": true, "truthy": true, "falsy": true, "pass": true,
	// Python unittest
	"assertTrue": true, "assertFalse": true, "assertIsNotNone": true, "assertIsInstance": true,
	// Java/Kotlin/PHP
	"assertNotNull": true, "isNotNull": true, "isNotEmpty": true, "isTrue": true, "shouldNotBeNull": true,
	"shouldBeTrue": true, "assertNotEmpty": true, "assertIsArray": true, "assertIsString": true, "assertInstanceOf": true,
	"assertIsObject": true, "assertIsInt": true,
	// C#
	"NotNull": true, "IsNotNull": true, "IsTrue": true, "IsInstanceOfType": true, "NotBeNull": true,
	"BeOfType": true, "NotBeEmpty": true, "Pass": true,
	// Ruby
	"assert_not_nil": true, "refute_nil": true, "assert_predicate": true, "wont_be_nil": true,
}

var weakMatchersText = lazyre.New(`\.(?:not\.toBeNull|not\.toBeUndefined|toBeDefined|toBeTruthy|toBeFalsy|toBeInstanceOf|toHaveBeenCalled)\s*\(\s*\)|\.to\.(?:be\.ok|exist|not\.be\.(?:null|undefined|empty))\b|\bto(?:_not|_be)?\s*\(?\s*(?:be_truthy|be_present|be_a|be_an|be_kind_of|be_instance_of|be_falsey)\b|\bnot_to\s*\(?\s*be_nil\b|\.isNotNull\(\)|\.isNotEmpty\(\)|\.isTrue\(\)|\.NotBeNull\(\)|\.NotBeEmpty\(\)|\.BeTrue\(\)|\bshouldNotBeNull\b`)

// assertStop are tokens that say nothing about what an assertion checks.
var assertStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`expect to be eq eql equal not is if else assert asserts assertion self this t b tt tb require
		true false nil null none undefined and or in of the error errorf fatal fatalf fail failnow log logf
		tobe toequal tostrictequal tobedefined tobetruthy tobefalsy should must wont that equals
		assertequal assertequals asserttrue assertfalse assertthat assertnotnull assertisnotnone assertnotequal
		isequalto isnotnull istrue fact areequal got want want_ expected actual diff err ok
		return let var const new do end fn mut unwrap expect_ string int str len fmt sprintf errors
		refute assert_eq assert_ne debug_assert assert_equal raise_error to_not not_to
		verify Assertions Assert Expect pytest approx raises value result res`) {
		assertStop[strings.ToLower(w)] = true
	}
}

// findAssertions finds the assertion lines of one hunk side of test code.
func findAssertions(lang language, side []vline) []assertion {
	var out []assertion
	for i, l := range side {
		if isCommentLine(lang, l.text) {
			continue
		}
		ok, strength := classifyAssertion(lang, side, i)
		if !ok {
			continue
		}
		out = append(out, assertion{idx: i, text: l.text, strength: strength, tokens: tokenSet(stripAssertNoise(l.text), assertStop)})
	}
	return out
}

// stripAssertNoise drops format verbs and the like from an assertion line
// before tokenising it.
func stripAssertNoise(s string) string {
	return assertNoise.Replace(s)
}

var assertNoise = strings.NewReplacer("%v", " ", "%d", " ", "%s", " ", "%q", " ", "%+v", " ", "%#v", " ", `\n`, " ")

// classifyAssertion reports whether side[i] is an assertion and how strong.
func classifyAssertion(lang language, side []vline, i int) (bool, int) {
	text := side[i].text
	switch lang {
	case langGo:
		if m := goIfRe.FindStringSubmatch(text); m != nil {
			// A condition is an assertion when the next line reports a failure.
			if i+1 < len(side) && goReportRe.MatchString(side[i+1].text) {
				return true, goConditionStrength(m[1])
			}
			return false, 0
		}
		if goReportRe.MatchString(text) {
			// Strength of the condition guarding it, when visible.
			for j := i - 1; j >= 0 && j >= i-2; j-- {
				if m := goIfRe.FindStringSubmatch(side[j].text); m != nil {
					return true, goConditionStrength(m[1])
				}
			}
			return true, strengthExact
		}
		if m := goTestifyRe.FindStringSubmatch(text); m != nil && isTestifyName(m[1]) {
			args := callArgs(text, strings.Index(text, m[0])+len(m[0])-1)
			if len(args) > 0 {
				args = args[1:] // t
			}
			if trivialArgs(args) {
				return true, strengthTrivial
			}
			if weakNames[m[1]] && !hasComparison(strings.Join(args, ",")) {
				return true, strengthWeak
			}
			return true, strengthExact
		}
		if m := goGomegaRe.FindStringSubmatch(text); m != nil {
			if weakNames[m[1]] || strings.Contains(text, "Not(BeNil") || strings.Contains(text, "NotTo(BeNil") || strings.Contains(text, "Not(BeEmpty") {
				return true, strengthWeak
			}
			return true, strengthExact
		}
		if goHelperRe.MatchString(text) {
			return true, strengthExact
		}
	case langPython:
		if m := pyAssertRe.FindStringSubmatch(text); m != nil {
			return true, exprStrength(trimAssertMessage(m[1]))
		}
		if m := pyMethodRe.FindStringSubmatch(text); m != nil {
			name := m[1]
			if name == "" {
				name = m[2]
			}
			return true, namedStrength(text, name)
		}
	case langJS:
		if jsExpectRe.MatchString(text) {
			return true, expectStrength(text)
		}
		if m := jsAssertRe.FindStringSubmatch(text); m != nil {
			name := m[1]
			if name == "" {
				name = m[2]
			}
			if name == "" {
				name = "ok"
				if strings.Contains(text, ".should.") || strings.Contains(text, "should.") {
					name = "should"
				}
			}
			return true, namedStrength(text, name)
		}
	case langRust:
		if m := rustAssertRe.FindStringSubmatch(text); m != nil {
			args := callArgs(text, strings.Index(text, m[0])+len(m[0])-1)
			switch m[1] {
			case "assert", "debug_assert", "prop_assert":
				if len(args) == 0 {
					return true, strengthExact
				}
				return true, exprStrength(args[0])
			default:
				if trivialArgs(firstN(args, 2)) {
					return true, strengthTrivial
				}
				return true, strengthExact
			}
		}
	case langJava, langKotlin:
		if m := javaAssertRe.FindStringSubmatch(text); m != nil {
			name := m[1]
			if name == "" {
				name = m[2]
			}
			if strings.Contains(text, "assertThat") {
				return true, expectStrength(text)
			}
			return true, namedStrength(text, name)
		}
	case langCSharp:
		if m := csAssertRe.FindStringSubmatch(text); m != nil {
			name := m[1]
			if name == "" {
				name = m[2]
			}
			if m[2] != "" {
				return true, expectStrength(text)
			}
			return true, namedStrength(text, name)
		}
	case langRuby:
		if m := rbAssertRe.FindStringSubmatch(text); m != nil {
			if strings.Contains(text, "expect") || strings.Contains(text, ".should") {
				return true, expectStrength(text)
			}
			name := m[1]
			if name == "assert" {
				rest := strings.TrimSpace(text[strings.Index(text, "assert")+len("assert"):])
				rest = strings.TrimPrefix(rest, "(")
				rest = strings.TrimSuffix(rest, ")")
				return true, exprStrength(trimAssertMessage(rest))
			}
			return true, namedStrength(text, name)
		}
	case langPHP:
		if m := phpAssertRe.FindStringSubmatch(text); m != nil {
			if m[2] != "" {
				return true, expectStrength(text)
			}
			name := m[1]
			if name == "" {
				name = "expectException"
			}
			return true, namedStrength(text, name)
		}
	case langElixir:
		if m := exAssertRe.FindStringSubmatch(text); m != nil {
			switch m[1] {
			case "assert":
				return true, exprStrength(trimAssertMessage(m[2]))
			case "refute":
				s := exprStrength(trimAssertMessage(m[2]))
				if s == strengthExact && !hasComparison(m[2]) {
					s = strengthWeak
				}
				return true, s
			}
			return true, strengthExact
		}
	}
	return false, 0
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func isTestifyName(name string) bool {
	if name == "" || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	switch name {
	case "T", "Run", "SetupTest", "Require", "Assert":
		return false
	}
	return true
}

// goConditionStrength grades the condition of `if COND { t.Error... }`.
func goConditionStrength(cond string) int {
	c := strings.TrimSpace(cond)
	if strings.Contains(c, "false &&") || strings.Contains(c, "&& false") || strings.Contains(c, "true ||") || c == "false" {
		return strengthTrivial
	}
	if l, r, ok := splitComparison(c); ok {
		if literalRe.MatchString(l) && literalRe.MatchString(r) || norm(l) == norm(r) {
			return strengthTrivial
		}
		if (r == "nil" || l == "nil") && !strings.Contains(c, "err") {
			return strengthWeak
		}
	}
	return strengthExact
}

// exprStrength grades a boolean expression asserted to hold.
func exprStrength(expr string) int {
	e := strings.TrimSpace(expr)
	e = strings.TrimSuffix(e, ";")
	if e == "" {
		return strengthExact
	}
	if literalRe.MatchString(e) {
		return strengthTrivial
	}
	if l, r, ok := splitComparison(e); ok {
		if (literalRe.MatchString(l) && literalRe.MatchString(r)) || norm(l) == norm(r) {
			return strengthTrivial
		}
		if r == "None" || r == "nil" || r == "null" {
			if strings.Contains(e, " is not ") || strings.Contains(e, "!=") {
				return strengthWeak
			}
		}
		return strengthExact
	}
	for _, w := range []string{" is not None", "isinstance(", "is_some()", "is_ok()", "is_err()", "is_none()", ".present?", "!is_nil(", "len(", "length"} {
		if strings.Contains(e, w) {
			return strengthWeak
		}
	}
	if strings.Contains(e, " in ") || strings.Contains(e, "=~") || strings.Contains(e, "match?") || strings.Contains(e, "matches!") || strings.Contains(e, "contains(") {
		return strengthExact
	}
	if strings.HasPrefix(e, "%") || strings.HasPrefix(e, "{") || strings.Contains(e, " = ") {
		// Elixir pattern match: assert %{a: 1} = value
		return strengthExact
	}
	return strengthWeak
}

// scanCode walks s from index from, skipping quoted strings (with backslash
// escapes) and tracking bracket depth. visit sees every byte outside quotes
// with the depth after it (an opening bracket counts itself, a closing one
// is already closed); it returns false to stop. Linear time: assertion lines
// can be long.
func scanCode(s string, from int, visit func(i int, c byte, depth int) bool) {
	depth := 0
	var quote byte
	for i := from; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'', '`':
			quote = c
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		}
		if !visit(i, c, depth) {
			return
		}
	}
}

func isBracket(c byte) bool { return strings.IndexByte("()[]{}", c) >= 0 }

// splitComparison splits "a == b" at its first top-level comparison
// operator.
func splitComparison(e string) (string, string, bool) {
	var left, right string
	found := false
	scanCode(e, 0, func(i int, c byte, depth int) bool {
		if depth != 0 || isBracket(c) {
			return true
		}
		if op := comparisonAt(e, i); op != "" {
			left, right, found = strings.TrimSpace(e[:i]), strings.TrimSpace(e[i+len(op):]), true
			return false
		}
		return true
	})
	return left, right, found
}

// comparisonAt returns the comparison operator starting at e[i], or "".
func comparisonAt(e string, i int) string {
	rest := e[i:]
	for _, op := range []string{"===", "!==", "==", "!=", "<=", ">="} {
		if strings.HasPrefix(rest, op) {
			if op == ">=" && i > 0 && e[i-1] == '=' {
				return ""
			}
			return op
		}
	}
	switch e[i] {
	case '<', '>':
		prev, next := byte(' '), byte(' ')
		if i > 0 {
			prev = e[i-1]
		}
		if i+1 < len(e) {
			next = e[i+1]
		}
		// Not arrows (->, =>, <-), shifts or generics (List<String>).
		if prev == '-' || prev == '=' || prev == '<' || prev == '>' || next == '<' || next == '>' || next == '-' {
			return ""
		}
		if prev != ' ' || next != ' ' {
			return ""
		}
		return e[i : i+1]
	case 'i':
		if i == 0 || e[i-1] != ' ' {
			return ""
		}
		if strings.HasPrefix(rest, "is not ") {
			return "is not"
		}
		if strings.HasPrefix(rest, "is ") {
			return "is"
		}
	}
	return ""
}

func hasComparison(s string) bool {
	_, _, ok := splitComparison(s)
	return ok
}

// trimAssertMessage drops the message of "assert x == y, 'msg'".
func trimAssertMessage(s string) string {
	parts := splitArgs(s)
	if len(parts) == 0 {
		return s
	}
	return parts[0]
}

// namedStrength grades an assertion method call by its name and arguments.
func namedStrength(text, name string) int {
	open := strings.Index(text, name)
	var args []string
	if open >= 0 {
		if p := strings.IndexByte(text[open:], '('); p >= 0 {
			args = callArgs(text, open+p)
		}
	}
	switch name {
	case "pass", "Pass":
		return strengthTrivial
	}
	if trivialArgs(firstN(args, 2)) {
		return strengthTrivial
	}
	if weakNames[name] {
		if len(args) > 0 && hasComparison(args[0]) && !strings.Contains(args[0], "None") && !strings.Contains(args[0], "null") {
			return strengthExact
		}
		return strengthWeak
	}
	if name == "ok" || name == "assert" || name == "should" {
		if len(args) > 0 {
			return exprStrength(args[0])
		}
	}
	return strengthExact
}

// expectStrength grades expect(x).matcher(y) style assertions.
func expectStrength(text string) int {
	// Subject: the first call's arguments.
	open := strings.IndexByte(text, '(')
	var subject []string
	if open >= 0 {
		subject = callArgs(text, open)
	}
	close := closingParen(text, open)
	rest := ""
	if close >= 0 && close+1 < len(text) {
		rest = text[close+1:]
	}
	var expected []string
	if p := strings.IndexByte(rest, '('); p >= 0 {
		expected = callArgs(rest, p)
	} else if fs := strings.Fields(rest); len(fs) >= 2 {
		// Ruby: expect(x).to eq 1
		expected = []string{fs[len(fs)-1]}
	}
	if len(subject) == 1 && literalRe.MatchString(strings.TrimSpace(subject[0])) {
		if len(expected) == 0 || literalRe.MatchString(strings.TrimSpace(lastArg(expected))) || weakMatchersText.MatchString(text) {
			return strengthTrivial
		}
		if strings.Contains(rest, "be true") || strings.Contains(rest, "be_truthy") {
			return strengthTrivial
		}
	}
	if len(subject) == 1 && len(expected) >= 1 && norm(subject[0]) == norm(lastArg(expected)) {
		return strengthTrivial
	}
	if weakMatchersText.MatchString(text) {
		return strengthWeak
	}
	return strengthExact
}

func lastArg(a []string) string {
	if len(a) == 0 {
		return ""
	}
	s := strings.TrimSpace(a[len(a)-1])
	// Ruby "eq(1)" as the last word.
	if i := strings.IndexByte(s, '('); i > 0 && strings.HasSuffix(s, ")") {
		return s[i+1 : len(s)-1]
	}
	return s
}

// trivialArgs reports assertion arguments that cannot fail: all literals, or
// two identical expressions.
func trivialArgs(args []string) bool {
	if len(args) == 0 {
		return false
	}
	all := true
	for _, a := range args {
		if !literalRe.MatchString(strings.TrimSpace(a)) {
			all = false
			break
		}
	}
	if all {
		return true
	}
	if len(args) == 2 && norm(args[0]) == norm(args[1]) && args[0] != "" {
		return true
	}
	return false
}

// callArgs returns the top-level arguments of the call whose "(" is at
// text[open].
func callArgs(text string, open int) []string {
	if open < 0 || open >= len(text) || text[open] != '(' {
		return nil
	}
	close := closingParen(text, open)
	end := close
	if end < 0 {
		end = len(text)
	}
	return splitArgs(text[open+1 : end])
}

// closingParen returns the index of the parenthesis closing text[open], or
// -1 when it is not on this line.
func closingParen(text string, open int) int {
	if open < 0 || open >= len(text) {
		return -1
	}
	closing := -1
	scanCode(text, open, func(i int, c byte, depth int) bool {
		if depth == 0 && strings.IndexByte(")]}", c) >= 0 {
			closing = i
			return false
		}
		return true
	})
	return closing
}

// splitArgs splits at top-level commas.
func splitArgs(s string) []string {
	var out []string
	start := 0
	scanCode(s, 0, func(i int, c byte, depth int) bool {
		if c == ',' && depth == 0 {
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
		return true
	})
	if last := strings.TrimSpace(s[start:]); last != "" || len(out) > 0 {
		out = append(out, last)
	}
	return out
}
