package study

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// Verdicts of one repository.
const (
	VerdictRight      = "right"      // the proposal is the label's command
	VerdictEquivalent = "equivalent" // the proposal is one of the label's equivalents
	VerdictWrong      = "wrong"      // a command that is neither
	VerdictRefused    = "refused"    // inference proposed no command
	VerdictError      = "error"      // infer failed, timed out or printed no proposal
	VerdictMissing    = "missing"    // no checkout to run in; not scored
)

// Confidence levels of a proposal, in report order.
var Levels = []string{"high", "medium", "low"}

// Target is a command in a working directory, normalised for comparison.
type Target struct {
	Command string `json:"command"`
	Workdir string `json:"workdir"`
}

// NewTarget normalises a command run in workdir: runs of white space become
// one space, and leading "cd DIR &&" steps move into the working directory,
// so "cd web && npm test" in "." equals "npm test" in "web". Nothing else is
// rewritten: flags, quoting and order are kept, because they can change which
// tests run.
func NewTarget(command, workdir string) Target {
	cmd := oneSpace(command)
	wd := cleanWorkdir(workdir)
	for {
		rest, ok := strings.CutPrefix(cmd, "cd ")
		if !ok {
			break
		}
		dir, tail, ok := strings.Cut(rest, " && ")
		if !ok || strings.ContainsAny(dir, " ;|&$`\"'") {
			break
		}
		wd = cleanWorkdir(path.Join(wd, dir))
		cmd = tail
	}
	return Target{Command: cmd, Workdir: wd}
}

func cleanWorkdir(w string) string {
	w = strings.TrimSpace(w)
	if w == "" {
		return "."
	}
	return path.Clean(w)
}

// String renders the target the way the report shows it.
func (t Target) String() string {
	if t.Command == "" {
		return ""
	}
	if t.Workdir == "." || t.Workdir == "" {
		return t.Command
	}
	return "(" + t.Workdir + ") " + t.Command
}

// Proposal is the part of `agent-loop infer --format json` the study
// scores. Suites is read when a proposal lists several independent suites
// (infer's suites field, an extra field the schema allows).
type Proposal struct {
	Class      string   `json:"criterion_class"`
	Command    *string  `json:"command"`
	Workdir    string   `json:"workdir"`
	Setup      *string  `json:"setup"`
	Confidence string   `json:"confidence"`
	Suites     []Target `json:"suites,omitempty"`
}

// ParseProposal decodes infer's JSON output.
func ParseProposal(out []byte) (Proposal, error) {
	var p Proposal
	if err := json.Unmarshal(out, &p); err != nil {
		return p, fmt.Errorf("infer printed no JSON proposal: %w", err)
	}
	if p.Class == "" {
		return p, fmt.Errorf("infer's JSON has no criterion_class")
	}
	return p, nil
}

// Target is the proposed command, normalised; empty when none.
func (p Proposal) Target() Target {
	if p.Command == nil || strings.TrimSpace(*p.Command) == "" {
		return Target{}
	}
	return NewTarget(*p.Command, p.Workdir)
}

// SetupLine is the proposal's setup with runs of white space made one.
func (p Proposal) SetupLine() string {
	if p.Setup == nil {
		return ""
	}
	return oneSpace(*p.Setup)
}

func oneSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// Score judges one proposal against its label: the command alone, in its
// workdir, against the label's command and equivalents; failing that, the
// proposal's setup and command together against the label's with_setup
// pairs. A proposal that lists several suites is right for a label marked
// "several" when the label's command (or an equivalent) is among them.
func Score(l Label, p Proposal) string {
	accepted := acceptedTargets(l)
	if l.Several && len(p.Suites) >= 2 {
		for _, s := range p.Suites {
			if v, ok := accepted[NewTarget(s.Command, s.Workdir)]; ok {
				return v
			}
		}
	}
	t := p.Target()
	if p.Class == "refused" || t.Command == "" {
		return VerdictRefused
	}
	if v, ok := accepted[t]; ok {
		return v
	}
	if setup := p.SetupLine(); setup != "" {
		for _, w := range l.WithSetup {
			if NewTarget(w.Command, l.Workdir) == t && oneSpace(w.Setup) == setup {
				return VerdictEquivalent
			}
		}
	}
	return VerdictWrong
}

// acceptedTargets maps each acceptable target to its verdict.
func acceptedTargets(l Label) map[Target]string {
	m := map[Target]string{}
	for _, e := range l.Equivalents {
		m[NewTarget(e, l.Workdir)] = VerdictEquivalent
	}
	if l.Command != nil {
		m[NewTarget(*l.Command, l.Workdir)] = VerdictRight
	}
	return m
}

// Expected is the label's answer as the report shows it.
func (l Label) Expected() Target {
	if l.Command == nil {
		return Target{Command: "(several suites)", Workdir: "."}
	}
	return NewTarget(*l.Command, l.Workdir)
}
