package cifailure

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// MaxPromptLog bounds the log text of the first prompt, as the check's
// own feedback is bounded.
const MaxPromptLog = 8 << 10

var (
	timestampRe = regexp.MustCompile(`^\x{FEFF}?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?`)
	ansiRe      = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)
)

// cleanLogLines splits a job log into lines without the runner's
// timestamps and colour codes.
func cleanLogLines(log string) []string {
	lines := strings.Split(strings.ReplaceAll(log, "\r\n", "\n"), "\n")
	for i, l := range lines {
		l = timestampRe.ReplaceAllString(l, "")
		lines[i] = ansiRe.ReplaceAllString(l, "")
	}
	return lines
}

// StepLog is what one step printed in a job log: from the runner's
// "##[group]Run <first line of the script>" header of the step (the ord-th
// one with that header) to the next step, without the header's group (the
// script, shell and env echoed back), the timestamps, the colour codes and
// the ##[group]/##[endgroup] markers of the step's own groups. When the
// header is not found, the whole log, cleaned, is returned.
func StepLog(log string, header string, ord int) string {
	lines := cleanLogLines(log)
	start := -1
	n := 0
	for i, l := range lines {
		if l == "##[group]"+header || strings.HasPrefix(header, "Run ") && strings.HasPrefix(l, "##[group]"+header) && len(header) > 60 {
			if n == ord {
				start = i
				break
			}
			n++
		}
	}
	var out []string
	if start < 0 {
		for _, l := range lines {
			if !strings.HasPrefix(l, "##[group]") && l != "##[endgroup]" {
				out = append(out, l)
			}
		}
		return strings.TrimSpace(strings.Join(out, "\n"))
	}
	i := start + 1
	// Skip the header's group: the script, shell: and env: lines.
	for ; i < len(lines); i++ {
		if lines[i] == "##[endgroup]" {
			i++
			break
		}
	}
	if i > len(lines) {
		i = len(lines)
	}
	for ; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "##[group]Run ") || l == "Post job cleanup." || strings.HasPrefix(l, "##[group]Post ") ||
			strings.HasPrefix(l, "Cleaning up orphan processes") {
			break
		}
		if strings.HasPrefix(l, "##[group]") || l == "##[endgroup]" {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// stepHeader is the group title the runner prints for a run: step.
func stepHeader(s Step) string { return "Run " + firstLineOf(s.Run) }

// LogExcerpt is the trimmed output of one failed step.
type LogExcerpt struct {
	Job, Step string
	Text      string
}

// Excerpts cuts, from each failed job's log, what its failed steps printed,
// trimmed as the check's own output is (failing tests, first errors): all
// of them together in at most max bytes (0: MaxPromptLog). logs maps a job's
// name (Step.Job) to its log text.
func Excerpts(c *Criterion, logs map[string]string, max int) []LogExcerpt {
	if max <= 0 {
		max = MaxPromptLog
	}
	type part struct {
		job, step, text string
	}
	var parts []part
	ords := map[string]int{}
	for _, s := range c.Steps {
		log, ok := logs[s.Job]
		if !ok {
			continue
		}
		h := s.Job + "\x00" + stepHeader(s)
		text := StepLog(log, stepHeader(s), ords[h])
		ords[h]++
		parts = append(parts, part{s.Job, s.Name, text})
	}
	for _, f := range c.Fallbacks {
		log, ok := logs[f.Job]
		if !ok {
			continue
		}
		header := f.Step
		if f.Uses != "" {
			header = "Run " + f.Uses
		}
		parts = append(parts, part{f.Job, f.Step, StepLog(log, header, 0)})
	}
	if len(parts) == 0 {
		return nil
	}
	share := max / len(parts)
	out := make([]LogExcerpt, 0, len(parts))
	for _, p := range parts {
		out = append(out, LogExcerpt{Job: p.job, Step: p.step, Text: testreport.Feedback(p.text, testreport.Parse(p.text), share)})
	}
	return out
}

// Culprit is what changed since the last successful run of the workflow on
// the same branch.
type Culprit struct {
	// LastGreen is that run (nil when none is known).
	LastGreen *github.WorkflowRun
	// Comparison is LastGreen's head compared with the failed run's.
	Comparison github.Comparison
	HeadSHA    string
}

// maxCulpritCommits bounds the commits listed.
const maxCulpritCommits = 10

// Text names the commit that broke the build: one commit by its SHA and
// subject, several as a range with the first ones listed. "" when nothing
// is known. Subjects are the commits' own text: the caller escapes them for
// where it shows them.
func (c Culprit) Text() string {
	if c.LastGreen == nil {
		return ""
	}
	g := c.LastGreen
	var b strings.Builder
	fmt.Fprintf(&b, "The last successful run of %q on %s was for commit %s (%s).", g.Name, g.HeadBranch, short7(g.HeadSHA), g.HTMLURL)
	cmp := c.Comparison
	switch {
	case cmp.Status == "ahead" && len(cmp.Commits) == 1:
		cm := cmp.Commits[0]
		fmt.Fprintf(&b, " One commit came after it, so it is the one that broke the build: %s %q%s.", short7(cm.SHA), cm.Subject(), by(cm))
	case cmp.Status == "ahead" && len(cmp.Commits) > 1:
		fmt.Fprintf(&b, " %d commits came after it (%s..%s); one of them broke the build:", cmp.Total, short7(g.HeadSHA), short7(c.HeadSHA))
		for i, cm := range cmp.Commits {
			if i == maxCulpritCommits {
				fmt.Fprintf(&b, "\n- ... and %d more", len(cmp.Commits)-i)
				break
			}
			fmt.Fprintf(&b, "\n- %s %q%s", short7(cm.SHA), cm.Subject(), by(cm))
		}
	case cmp.Status == "diverged" || cmp.Status == "behind":
		fmt.Fprintf(&b, " The branch's history was rewritten since then (%s is %s it), so no single commit can be named.", short7(c.HeadSHA), cmp.Status)
	}
	return b.String()
}

func by(c github.Commit) string {
	if c.Author == "" {
		return ""
	}
	return " by " + c.Author
}

func short7(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// Prompt is the first prompt's material: what failed (workflow, job, step,
// run), the trimmed log of each failed step and the commit that broke it.
// The log and the commit subjects are untrusted text: they are fenced, and
// a fence longer than any backtick run in them is used.
func Prompt(c *Criterion, excerpts []LogExcerpt, culprit Culprit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CI failed: the workflow %q (%s) failed in %s.\n", c.Workflow, c.WorkflowPath, c.RunURL)
	if len(c.Steps) > 0 {
		b.WriteString("The loop is done when these failed steps pass again, run by the harness as CI ran them:\n")
		for _, s := range c.Steps {
			fmt.Fprintf(&b, "- job %q, step %q", s.Job, s.Name)
			if s.WorkingDirectory != "." && s.WorkingDirectory != "" {
				fmt.Fprintf(&b, " (in %s)", s.WorkingDirectory)
			}
			b.WriteString("\n")
		}
	}
	for _, f := range c.Fallbacks {
		fmt.Fprintf(&b, "- job %q", f.Job)
		if f.Step != "" {
			fmt.Fprintf(&b, ", step %q", f.Step)
		}
		fmt.Fprintf(&b, " also failed; %s, so its criterion is inferred\n", f.Reason)
	}
	if t := culprit.Text(); t != "" {
		b.WriteString("\n" + Fence(t) + "\n")
	}
	for _, e := range excerpts {
		fmt.Fprintf(&b, "\nThe output of job %q, step %q (trimmed):\n%s\n", e.Job, e.Step, Fence(e.Text))
	}
	b.WriteString("\nDo not change the workflow files or weaken the failing checks: fix the code (or the tests, if they are wrong) so that the steps pass.\n")
	return b.String()
}

// Fence wraps untrusted text in a Markdown code fence longer than any run
// of backticks in it.
func Fence(text string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + "text\n" + strings.TrimRight(text, "\n") + "\n" + f
}
