package loop

import (
	"fmt"
	"strings"

	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// PromptInput is what the prompt of one iteration is built from.
type PromptInput struct {
	Task string
	// Criterion is the loop's: the command, where it runs, what it
	// depends on.
	Criterion     spec.Criterion
	Iteration     int
	MaxIterations int
	Records       []Record
	Baseline      CheckResult
	Guidance      Guidance
	FeedbackBytes int
	// Context is the Spec's first-prompt material (a failed CI run's log
	// and the commit that broke it): shown until an iteration has run.
	Context string
	// Merge is a merge of the target branch left to this iteration.
	Merge *MergeNote
}

// MergeNote tells the agent about a merge of the branch the result is for
// that it must finish: the conflicts to resolve, or the check it broke.
type MergeNote struct {
	Target    string
	Commits   int
	Conflicts []string
	// Check is the check's result on the merged tree (a clean merge that
	// broke it).
	Check *CheckResult
}

// dependsNote names what the check depends on: the files the agent must
// leave as they are for its result to count.
func dependsNote(d spec.Depends) string {
	var parts []string
	for _, t := range d.Targets {
		parts = append(parts, "`"+t+"`")
	}
	for _, f := range d.Files {
		parts = append(parts, "`"+f+"`")
	}
	var b strings.Builder
	if len(parts) > 0 {
		fmt.Fprintf(&b, "The check depends on %s: change them only if the task itself is about them.", strings.Join(capList(parts, 12), ", "))
	}
	if d.Runner != "" {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "Its tests run with %s.", d.Runner)
	}
	return b.String() + "\n\n"
}

// BuildPrompt writes the prompt of one iteration: the task, how completion is
// verified, what the last check said (trimmed to what matters), compact
// learnings from earlier iterations, regression warnings and the
// reinforcement paragraphs. The task is data in a file or an argument,
// never a shell command.
func BuildPrompt(in PromptInput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Task\n\n%s\n\n", strings.TrimSpace(in.Task))
	b.WriteString("# How completion is verified\n\n")
	fmt.Fprintf(&b, "After you stop, the harness itself runs this command in `%s` and the task is done only when it exits 0:\n\n", in.Criterion.Workdir)
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", in.Criterion.Command)
	b.WriteString("Fix the code so that the command passes. Do not delete, skip or weaken tests, do not change the command's own " +
		"configuration (test config, CI workflows, the test script), and do not suppress errors: such changes are detected and the " +
		"iteration is rejected. Do not commit; the harness commits your changes.\n\n")
	if d := in.Criterion.Depends; !d.Empty() {
		b.WriteString(dependsNote(d))
	}
	fmt.Fprintf(&b, "This is iteration %d of at most %d.\n\n", in.Iteration, in.MaxIterations)
	if c := strings.TrimSpace(in.Context); c != "" && len(in.Records) == 0 {
		fmt.Fprintf(&b, "# What is known already\n\n%s\n\n", c)
	}
	if m := in.Merge; m != nil {
		fmt.Fprintf(&b, "# The branch %s moved on\n\n", m.Target)
		fmt.Fprintf(&b, "The check passed, but %s got %d new commit(s) meanwhile, and they are merged into the work tree now. ", m.Target, m.Commits)
		if len(m.Conflicts) > 0 {
			fmt.Fprintf(&b, "Git could not merge these files: they hold conflict markers (<<<<<<<, =======, >>>>>>>). Resolve every "+
				"conflict, keeping both sides' intent, and remove the markers; a file that still holds one undoes the merge:\n\n")
			for _, c := range capList(m.Conflicts, 30) {
				fmt.Fprintf(&b, "- `%s`\n", c)
			}
			b.WriteString("\n")
		}
		if m.Check != nil {
			b.WriteString("The merge is clean, but the check fails on it: make it pass again without undoing the merged changes.\n\n")
			if fb := testreport.Feedback(m.Check.Output, m.Check.Tests, 4096); fb != "" {
				fmt.Fprintf(&b, "```text\n%s\n```\n\n", strings.TrimRight(fb, "\n"))
			}
		}
	}

	var last *Record
	if len(in.Records) > 0 {
		last = &in.Records[len(in.Records)-1]
	}
	check := in.Baseline
	label := "the starting commit"
	if last != nil {
		check = last.Check
		label = fmt.Sprintf("iteration %d", last.Iteration)
	}
	if check.Output != "" || check.ExitCode != 0 {
		fmt.Fprintf(&b, "# Result of the check on %s\n\n", label)
		fmt.Fprintf(&b, "Exit code %d%s.\n\n", check.ExitCode, testsNote(check.Tests))
		fb := testreport.Feedback(check.Output, check.Tests, max(in.FeedbackBytes-b.Len()/4, 2048))
		if fb != "" {
			fmt.Fprintf(&b, "```text\n%s\n```\n\n", strings.TrimRight(fb, "\n"))
		}
		if len(check.Flaky) > 0 {
			fmt.Fprintf(&b, "Flaky (flipped between runs, not blamed on you): %s\n\n", strings.Join(check.Flaky, ", "))
		}
	}

	if len(in.Records) > 0 {
		b.WriteString("# Learnings from earlier iterations\n\n")
		from := max(0, len(in.Records)-5)
		for _, r := range in.Records[from:] {
			fmt.Fprintf(&b, "- Iteration %d: check %s%s, %d files changed", r.Iteration, passFail(r.Check.Passed), testsNote(r.Check.Tests), r.Stat.Files)
			if len(r.Check.Tests.Failing) > 0 {
				fmt.Fprintf(&b, "; still failing: %s", strings.Join(capList(r.Check.Tests.Failing, 5), ", "))
			}
			if r.Agent.Class != ClassNone {
				fmt.Fprintf(&b, "; the agent run ended with %s", r.Agent.Class)
			}
			if msg := oneLine(r.Agent.Message, 240); msg != "" {
				fmt.Fprintf(&b, "; the agent said: %q", msg)
			}
			b.WriteString("\n")
			if r.Rejected {
				for _, g := range r.Verdict.Regressions {
					if g.Severity == "critical" {
						fmt.Fprintf(&b, "  - REJECTED for %s: %s", g.Type, oneLine(g.Summary, 200))
						if len(g.Evidence) > 0 {
							fmt.Fprintf(&b, " (%s", g.Evidence[0].Path)
							if g.Evidence[0].Line > 0 {
								fmt.Fprintf(&b, ":%d", g.Evidence[0].Line)
							}
							b.WriteString(")")
						}
						b.WriteString(". Do not do this again.\n")
					}
				}
			}
		}
		b.WriteString("\n")
	}
	if len(in.Guidance.Prompt) > 0 {
		fmt.Fprintf(&b, "# Guidance (%s)\n\n", in.Guidance.Level)
		for _, p := range in.Guidance.Prompt {
			fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(p))
		}
	}
	return b.String()
}
