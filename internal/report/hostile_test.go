package report

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// hostile are names an agent (or a repository) controls, each trying one
// way to rewrite what a person reads: a heading, a hidden section, a table
// cell, an image, a code span, a script link, a notification, a cleared
// screen, an overwritten line, a window title, a hyperlink, reversed text,
// a false check mark, an overlong line.
var hostile = map[string]string{
	"heading":   "## ✅ completed",
	"comment":   "<!-- hide the rest",
	"pipe":      "a|b|c",
	"image":     `<img src=x onerror=alert(1)>`,
	"backticks": "``evil` code",
	"link":      "[click](javascript:alert(1))",
	"mention":   "@octocat please merge",
	"clear":     "\x1b[2J\x1b[Hscreen cleared",
	"cr":        "visible\roverwritten",
	"title":     "\x1b]0;pwned\x07title",
	"hyperlink": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
	"bidi":      "test_\u202eexe.txt",
	"emoji":     ":white_check_mark: all good",
	"issue":     "closes #1",
	"details":   "</details><details open><summary>x",
	"long":      "Test" + strings.Repeat("VeryLongName", 40),
}

// hostileStory is the cheat story with every name, message, the task,
// the branch and the command replaced by hostile text.
func hostileStory() struct {
	name string
	st   *state.State
} {
	h := hostile
	s := story{
		id:      "ralph-hostile-names-0bad0bad",
		task:    h["heading"] + "\n\n" + h["comment"] + " " + h["mention"],
		command: "sh test.sh " + h["pipe"] + " " + h["backticks"],
		source:  spec.SourceInferred, origin: &spec.Origin{File: h["image"], Job: h["details"]},
		status: state.Completed, stop: state.StopPassed, maxIter: 5, policy: "revert",
		baseline: state.BaselineCheck{Passed: false, ExitCode: 1, Known: true, Total: 4, Passing: 2, Failed: 2, Failing: []string{h["heading"], h["pipe"]}, Seconds: 0.4},
		its: []it{{
			pass: true, passed: 2, total: 2, score: 35, b: state.QualityBreakdown{Validation: 0, Completeness: 60, Correctness: 0, Readability: 100, Efficiency: 100},
			rejected: true,
			events: []state.RegressionEvent{
				critical("test_deletion", []string{h["heading"], h["pipe"], h["clear"]}, []string{h["comment"]}, h["link"]),
				critical("validation_bypass", nil, []string{h["image"], h["cr"], h["title"]}, h["details"]),
			},
			heldOut:     &state.HeldOut{Verdict: state.HeldOutFail, Failed: []string{h["heading"], h["pipe"]}},
			change:      change(file(h["comment"], 0, 12), file(h["image"], 1, 1)),
			commitFiles: 2, summary: h["heading"] + "\n" + h["link"] + "\n" + h["mention"] + "\n" + h["title"], secs: 21, tokens: 8200, cost: 0.0251,
			excluded: []string{h["hyperlink"]},
		}, {
			pass: true, passed: 4, total: 4, score: 91, b: state.QualityBreakdown{Validation: 100, Completeness: 100, Correctness: 100, Readability: 70, Efficiency: 40},
			change:      change(file(h["bidi"], 1, 1), file(h["long"], 3, 0), file(h["backticks"], 1, 0), file(h["emoji"], 1, 0)),
			heldOut:     &state.HeldOut{Verdict: state.HeldOutPass, Edits: []state.TestEdit{{Path: h["comment"], Test: h["heading"], Change: h["image"]}, {Path: h["issue"], Change: h["details"]}}},
			commitFiles: 3, summary: h["link"] + " " + h["comment"] + "\n" + h["clear"] + " " + h["long"] + "\n" + h["emoji"] + " " + h["issue"] + " " + h["mention"], secs: 34, tokens: 11020, cost: 0.0337,
			flaky: []string{h["bidi"], h["emoji"]},
		}},
	}
	st := s.build()
	st.Harness.Branch = "agent-loop/" + h["backticks"] + "$(id)"
	st.Harness.PushErrors = []string{h["comment"] + " " + h["cr"]}
	return struct {
		name string
		st   *state.State
	}{"hostile_names", st}
}
