package testreport

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ParseJUnitXML reads a JUnit XML report (Maven Surefire/Failsafe, Gradle,
// the JUnit Platform, pytest --junitxml, jest-junit, PHPUnit --log-junit,
// go-junit-report, ...): a <testsuites> or <testsuite> root with <testcase>
// elements, each passed, or holding <failure>, <error> or <skipped>.
// Errors count as failures. Tests are named "<classname>.<name>" (just the
// name when the classname is empty or already part of it, as jest-junit
// writes). A report with suites but no <testcase> elements is counted from
// the suites' tests/failures/errors/skipped attributes.
//
// It returns an error naming the problem when the input is not JUnit XML or
// is cut short; the counts read up to that point are returned with it.
func ParseJUnitXML(r io.Reader) (Summary, error) {
	var s Summary
	d := newXMLDecoder(r)
	depth := 0
	root := ""
	var cur *junitCase
	caseDepth := 0
	cases := 0
	var attrTotal, attrFailed, attrSkipped int
	// Suites nest (PHPUnit, the JUnit Platform): only the innermost ones'
	// attributes are added, so nothing counts twice.
	type suite struct {
		total, failed, skipped int
		nested                 bool
	}
	var suites []suite
	var failing, passing []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if root == "" {
				return Summary{}, fmt.Errorf("reading JUnit XML: %w", err)
			}
			s = junitSummary(cases, attrTotal, attrFailed, attrSkipped, s, failing, passing)
			return s, fmt.Errorf("reading JUnit XML (cut short after %d test cases?): %w", cases, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			name := t.Name.Local
			if depth == 1 {
				root = name
				if name != "testsuites" && name != "testsuite" {
					return Summary{}, fmt.Errorf("not a JUnit XML report: the root element is <%s>, want <testsuites> or <testsuite>", name)
				}
			}
			switch {
			case name == "testsuite":
				if n := len(suites); n > 0 {
					suites[n-1].nested = true
				}
				suites = append(suites, suite{
					total:   atoi(attr(t.Attr, "tests")),
					failed:  atoi(attr(t.Attr, "failures")) + atoi(attr(t.Attr, "errors")),
					skipped: atoi(attr(t.Attr, "skipped")) + atoi(attr(t.Attr, "disabled")),
				})
			case name == "testcase" && cur == nil:
				cur = &junitCase{name: junitName(attr(t.Attr, "classname"), attr(t.Attr, "name"))}
				caseDepth = depth
			case cur != nil && depth == caseDepth+1:
				switch name {
				case "failure", "error":
					cur.failed = true
				case "skipped":
					cur.skipped = true
				}
			}
		case xml.EndElement:
			if n := len(suites); n > 0 && t.Name.Local == "testsuite" && cur == nil {
				if st := suites[n-1]; !st.nested {
					attrTotal += st.total
					attrFailed += st.failed
					attrSkipped += st.skipped
				}
				suites = suites[:n-1]
			}
			if cur != nil && depth == caseDepth && t.Name.Local == "testcase" {
				cases++
				s.Total++
				switch {
				case cur.failed:
					s.Failed++
					failing = append(failing, cur.name)
				case cur.skipped:
					s.Skipped++
				default:
					s.Passed++
					passing = append(passing, cur.name)
				}
				cur = nil
			}
			depth--
		}
	}
	if root == "" {
		return Summary{}, errors.New("not a JUnit XML report: no XML element found")
	}
	return junitSummary(cases, attrTotal, attrFailed, attrSkipped, s, failing, passing), nil
}

type junitCase struct {
	name            string
	failed, skipped bool
}

// junitSummary finishes a Summary: from the test cases when there were any,
// else from the suites' attributes.
func junitSummary(cases, attrTotal, attrFailed, attrSkipped int, s Summary, failing, passing []string) Summary {
	s.Known = true
	s.Runner = "junit-xml"
	if cases == 0 {
		s.Failed = min(attrFailed, attrTotal)
		s.Skipped = min(attrSkipped, attrTotal-s.Failed)
		s.Total = attrTotal
		s.Passed = attrTotal - s.Failed - s.Skipped
	}
	s.Failing = sortedUnique(failing)
	s.Passing = sortedUnique(passing)
	if len(s.Failing) > 0 && len(s.Passing) > 0 {
		s.Passing = slices.DeleteFunc(s.Passing, func(n string) bool {
			_, found := slices.BinarySearch(s.Failing, n)
			return found
		})
		if len(s.Passing) == 0 {
			s.Passing = nil
		}
	}
	return s
}

// junitName joins classname and name, unless the name already carries the
// class (jest-junit writes the same text in both).
func junitName(class, name string) string {
	class, name = strings.TrimSpace(class), strings.TrimSpace(name)
	switch {
	case class == "" || class == name || strings.HasPrefix(name, class+"."):
		return name
	case name == "":
		return class
	}
	return class + "." + name
}
