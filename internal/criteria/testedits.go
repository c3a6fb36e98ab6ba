package criteria

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

var (
	// testEditRe finds a task that asks for edits to tests or their
	// machinery ("update the snapshots", "rewrite the tests in pytest",
	// "add tests for X"); "fix the failing tests" asks for the opposite.
	testEditRe = lazyre.New(`(?i)\b(?:update|change|rewrite|adjust|edit|modify|correct|regenerate|refresh|re-?record|rebaseline|add|write|create|remove|delete|drop|rename|move|split|merge|consolidate|migrate|port|convert|refactor|parametri[sz]e|reorgani[sz]e|restructure|clean\s+up|deflake|quarantine|disable|skip)\w*\s+(?:(?:the|our|all|some|a|an|new|more|missing|unit|integration|e2e|end-to-end|existing|old|broken|flaky|outdated|parser|\w+'s)\s+)*(?:tests?|specs?|test\s+suites?|test\s+cases?|test\s+files?|fixtures?|snapshots?|golden\s+files?|goldens|expectations?|expected\s+(?:values?|outputs?)|assertions?|test\s+config\w*|ci(?:\s+workflows?)?|workflows?|pipelines?)\b`)
	// testsToRe finds "tests to match / so they use ...".
	testsToRe = lazyre.New(`(?i)\b(?:tests?|specs?|snapshots?|fixtures?)\s+(?:to|so\s+(?:that\s+)?they)\s+(?:match|reflect|use|cover|follow|accept|expect)\b`)
	// apiChangeRe finds refactors that change what tests call: the tests
	// have to follow.
	apiChangeRe = lazyre.New(`(?i)\b(?:renam\w*|mov(?:e|ing)\s+\S+\s+(?:to|into)|migrat\w*|port(?:ing)?\s+to|convert\w*|replac\w*\s+\S+\s+with|split\w*|extract\w*|upgrad\w*|refactor\w*|restructur\w*|reorgani[sz]\w*)\b`)
)

// TaskEditsTests reports whether the task (or the trigger's completion
// hint) itself asks for changes to tests or their machinery, and the words
// that say so. The held-out check then reports a failure of the original
// tests as a warning for a person instead of a veto: the task wanted the
// tests to change.
func TaskEditsTests(task, hint string) (bool, string) {
	for _, text := range []string{task, hint} {
		t := strings.TrimSpace(text)
		if t == "" {
			continue
		}
		if m := testEditRe.FindString(t); m != "" {
			return true, m
		}
		if m := testsToRe.FindString(t); m != "" {
			return true, m
		}
	}
	intent := classifyTask(task, hint)
	switch intent.class {
	case ClassCoverage:
		return true, intent.matched
	case ClassRegressionGate:
		if m := apiChangeRe.FindString(task); m != "" {
			return true, m
		}
	}
	return false, ""
}
