package criteria

import (
	"fmt"
	"strings"

	"github.com/aiwg/agent-loop/internal/escape"
)

// InputNames are the names of the inputs that set a completion check (the
// Action's completion, workdir and setup inputs).
type InputNames struct {
	Completion, Workdir, Setup string
}

// maxCommentEvidence bounds the evidence a comment lists.
const maxCommentEvidence = 8

// AdoptionComment is the comment the Action posts instead of starting a
// loop when the inferred check is not adopted (its confidence is below
// high, or verification refused it): what was proposed, why it is not
// adopted, the evidence, what running it showed, and the exact inputs to
// set to run with it (or another command). Every piece that comes from the
// repository is escaped for GitHub Markdown: it is not ours, and may try
// to mention people, link, or close a code block.
func (p Proposal) AdoptionComment(in InputNames) string {
	var b strings.Builder
	if p.Command == "" || p.Class == ClassRefused {
		b.WriteString("**agent-loop did not start: it found no completion check it can run for this task.**\n\n")
		if p.RefusalReason != "" {
			fmt.Fprintf(&b, "%s\n\n", escape.Text(p.RefusalReason))
		}
	} else {
		fmt.Fprintf(&b, "**agent-loop did not start: the completion check it inferred has %s confidence, and only a high-confidence check is adopted on its own.**\n\n", escape.Text(p.Confidence))
		fmt.Fprintf(&b, "- Proposed check: %s\n", escape.Code(p.Command))
		if wd := nonEmptyDir(p.Workdir); wd != "." {
			fmt.Fprintf(&b, "- In: %s\n", escape.Code(wd))
		}
		if p.Setup != "" {
			fmt.Fprintf(&b, "- Setup: %s\n", escape.Code(p.Setup))
		}
		b.WriteString("\n")
		var why []string
		for _, f := range p.Rationale {
			if w, ok := strings.CutPrefix(f.Finding, "below high: "); ok {
				why = append(why, w)
			}
		}
		if len(why) > 0 {
			b.WriteString("Why not high:\n\n")
			for _, w := range why {
				fmt.Fprintf(&b, "- %s\n", escape.Text(w))
			}
			b.WriteString("\n")
		}
		if len(p.Suites) > 1 {
			b.WriteString("The repository has several test suites and no command that runs them all:\n\n")
			for _, s := range p.Suites {
				fmt.Fprintf(&b, "- %s in %s (%s)\n", escape.Code(s.Command), escape.Code(nonEmptyDir(s.Workdir)), escape.Text(s.Source))
			}
			b.WriteString("\n")
		}
	}
	if len(p.Verification) > 0 {
		b.WriteString("What running the candidates showed:\n\n")
		for _, v := range p.Verification {
			fmt.Fprintf(&b, "- %s in %s: %s (%s)\n", escape.Code(v.Command), escape.Code(v.Workdir), escape.Text(v.Result), escape.Text(v.Verdict))
		}
		b.WriteString("\n")
	}
	var ev []Finding
	for _, f := range p.Rationale {
		if f.Layer == LayerTaskVerb || strings.HasPrefix(f.Finding, "below high: ") || strings.HasPrefix(f.Finding, "ignored ") {
			continue
		}
		ev = append(ev, f)
	}
	if len(ev) > 0 {
		b.WriteString("<details><summary>Evidence</summary>\n\n")
		for i, f := range ev {
			if i == maxCommentEvidence {
				fmt.Fprintf(&b, "- … and %d more (`agent-loop infer` shows them all)\n", len(ev)-maxCommentEvidence)
				break
			}
			fmt.Fprintf(&b, "- %s %s: %s\n", escape.Code(f.Layer), escape.Text(f.Source), escape.Text(f.Finding))
		}
		b.WriteString("\n</details>\n\n")
	}
	if p.Command != "" && p.Class != ClassRefused {
		b.WriteString("If this check is right, set it in the workflow and run again:\n\n")
	} else {
		b.WriteString("Give the check in the workflow and run again:\n\n")
	}
	b.WriteString(inputsBlock(p, in))
	return b.String()
}

// inputsBlock is the YAML of the `with:` inputs that set the proposal's
// check, in a fenced block no value can close.
func inputsBlock(p Proposal, in InputNames) string {
	var y strings.Builder
	y.WriteString("with:\n")
	cmd := p.Command
	if cmd == "" || p.Class == ClassRefused {
		cmd = "<command that exits 0 when the task is done>"
	}
	fmt.Fprintf(&y, "  %s: %s\n", in.Completion, yamlString(cmd))
	if wd := nonEmptyDir(p.Workdir); wd != "." && p.Command != "" && in.Workdir != "" {
		fmt.Fprintf(&y, "  %s: %s\n", in.Workdir, yamlString(wd))
	}
	if p.Setup != "" && p.Command != "" && in.Setup != "" {
		fmt.Fprintf(&y, "  %s: %s\n", in.Setup, yamlString(p.Setup))
	}
	body := y.String()
	fence := "```"
	for strings.Contains(body, fence) {
		fence += "`"
	}
	return fence + "yaml\n" + body + fence + "\n"
}

// yamlString quotes s as a YAML double-quoted scalar: one line, the
// backslash, the quote and control characters escaped.
func yamlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
