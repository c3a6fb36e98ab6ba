package criteria

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Criterion classes (schema enum "criterion_class").
const (
	ClassTestPass         = "test-pass"
	ClassTypeClean        = "type-clean"
	ClassRegressionGate   = "regression-gate"
	ClassCoverage         = "coverage"
	ClassLintClean        = "lint-clean"
	ClassBuildPass        = "build-pass"
	ClassImplementFeature = "implement-feature"
	ClassRefused          = "refused"
)

// Confidence levels (schema enum "confidence").
const (
	ConfidenceHigh   = "high"
	ConfidenceMedium = "medium"
	ConfidenceLow    = "low"
)

// Rationale layers (schema enum "layer").
const (
	LayerTaskVerb     = "task-verb"
	LayerContextFile  = "context-file"
	LayerManifest     = "manifest"
	LayerCIConfig     = "ci-config"
	LayerAIWGArtifact = "aiwg-artifact"
	LayerFallback     = "fallback"
)

// Proposal is an inferred completion criterion, or a refusal. Marshalled with
// JSON or YAML it validates against completion-proposal.schema.json.
type Proposal struct {
	Task      string `json:"task" yaml:"task"`
	Class     string `json:"criterion_class" yaml:"criterion_class"`
	Criterion string `json:"criterion,omitempty" yaml:"criterion,omitempty"`
	// Command is run by the harness with `sh -c` in Workdir and exits 0
	// exactly when the criterion holds. Marshalled as null when empty
	// (refused).
	Command string
	// Workdir is relative to the repository root; "." by default.
	Workdir string `json:"workdir" yaml:"workdir"`
	// Setup is run once, in Workdir, before the loop; marshalled as null
	// when empty.
	Setup        string
	Confidence   string        `json:"confidence" yaml:"confidence"`
	Rationale    []Finding     `json:"rationale" yaml:"rationale"`
	Alternatives []Alternative `json:"alternatives,omitempty" yaml:"alternatives,omitempty"`
	// RefusalReason is set only when Class is "refused"; marshalled as null
	// otherwise.
	RefusalReason string
	// Origin is where Command was found, as data (the rationale says it in
	// words); nil when refused. Not marshalled: the loop's Spec keeps it.
	Origin *Origin
	// Suites lists the independent test suites of a repository that has
	// several and no command that runs them all (a polyglot repository, a
	// monorepo without a root test target), each with its evidence:
	// Command is then the most central one, and the confidence at most
	// medium. Empty when the repository has one suite.
	Suites []Suite
	// Verification lists what running the candidates showed, when the
	// proposal was verified (Verify), in the order they ran.
	Verification []Verification
}

// Origin is where a proposed command was found: a CI workflow's File,
// Job (its id) and Step (its name as GitHub shows it); a manifest's or a
// context file's File; or Named, "task" or "hint", when the task's own
// words or the trigger's completion hint name the command.
type Origin struct {
	File, Job, Step string
	Named           string
}

// Suite is one independent test suite of a repository.
type Suite struct {
	Command string `json:"command" yaml:"command"`
	Workdir string `json:"workdir" yaml:"workdir"`
	Source  string `json:"source" yaml:"source"`
}

// Finding is one piece of evidence: which layer found what, where.
type Finding struct {
	Layer   string `json:"layer" yaml:"layer"`
	Source  string `json:"source" yaml:"source"`
	Finding string `json:"finding" yaml:"finding"`
}

// Alternative is a command that was considered and not chosen.
type Alternative struct {
	Command string `json:"command" yaml:"command"`
	Source  string `json:"source" yaml:"source"`
	WhyNot  string `json:"why_not" yaml:"why_not"`
}

// wireProposal is the marshalled form, in schema order, with the nullable
// fields as pointers.
type wireProposal struct {
	Task          string         `json:"task" yaml:"task"`
	Class         string         `json:"criterion_class" yaml:"criterion_class"`
	Criterion     string         `json:"criterion,omitempty" yaml:"criterion,omitempty"`
	Command       *string        `json:"command" yaml:"command"`
	Workdir       string         `json:"workdir" yaml:"workdir"`
	Setup         *string        `json:"setup" yaml:"setup"`
	Confidence    string         `json:"confidence" yaml:"confidence"`
	Rationale     []Finding      `json:"rationale" yaml:"rationale"`
	Alternatives  []Alternative  `json:"alternatives,omitempty" yaml:"alternatives,omitempty"`
	RefusalReason *string        `json:"refusal_reason" yaml:"refusal_reason"`
	Suites        []Suite        `json:"suites,omitempty" yaml:"suites,omitempty"`
	Verification  []Verification `json:"verification,omitempty" yaml:"verification,omitempty"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (p Proposal) wire() wireProposal {
	w := wireProposal{
		Task:          p.Task,
		Class:         p.Class,
		Criterion:     p.Criterion,
		Command:       nullable(p.Command),
		Workdir:       p.Workdir,
		Setup:         nullable(p.Setup),
		Confidence:    p.Confidence,
		Rationale:     p.Rationale,
		Alternatives:  p.Alternatives,
		RefusalReason: nullable(p.RefusalReason),
		Suites:        p.Suites,
		Verification:  p.Verification,
	}
	if w.Workdir == "" {
		w.Workdir = "."
	}
	if w.Rationale == nil {
		w.Rationale = []Finding{}
	}
	return w
}

func (p *Proposal) fromWire(w wireProposal) {
	*p = Proposal{
		Task:         w.Task,
		Class:        w.Class,
		Criterion:    w.Criterion,
		Workdir:      w.Workdir,
		Confidence:   w.Confidence,
		Rationale:    w.Rationale,
		Alternatives: w.Alternatives,
		Suites:       w.Suites,
		Verification: w.Verification,
	}
	if w.Command != nil {
		p.Command = *w.Command
	}
	if w.Setup != nil {
		p.Setup = *w.Setup
	}
	if w.RefusalReason != nil {
		p.RefusalReason = *w.RefusalReason
	}
}

// MarshalJSON writes the schema form: command, setup and refusal_reason are
// null when empty.
func (p Proposal) MarshalJSON() ([]byte, error) {
	return json.Marshal(p.wire())
}

// UnmarshalJSON reads the schema form.
func (p *Proposal) UnmarshalJSON(data []byte) error {
	var w wireProposal
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	p.fromWire(w)
	return nil
}

// MarshalYAML writes the schema form (see MarshalJSON).
func (p Proposal) MarshalYAML() (any, error) {
	return p.wire(), nil
}

// UnmarshalYAML reads the schema form.
func (p *Proposal) UnmarshalYAML(node *yaml.Node) error {
	var w wireProposal
	if err := node.Decode(&w); err != nil {
		return err
	}
	p.fromWire(w)
	return nil
}

// YAML returns the proposal as YAML, the form of inferred-completion.yaml.
func (p Proposal) YAML() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("encoding completion proposal as YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding completion proposal as YAML: %w", err)
	}
	return buf.Bytes(), nil
}

// JSON returns the proposal as indented JSON, the form of
// `agent-loop infer --format json`.
func (p Proposal) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("encoding completion proposal as JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// Summary returns a few lines for a terminal or a PR comment: the command,
// workdir, setup, confidence and the evidence.
func (p Proposal) Summary() string {
	var b strings.Builder
	if p.Class == ClassRefused || p.Command == "" {
		fmt.Fprintf(&b, "No completion criterion inferred for %q.\n", p.Task)
		if p.RefusalReason != "" {
			fmt.Fprintf(&b, "Reason: %s\n", p.RefusalReason)
		}
		for _, v := range p.Verification {
			fmt.Fprintf(&b, "Verified:   `%s` in %s: %s (%s)\n", v.Command, v.Workdir, v.Result, v.Verdict)
		}
		b.WriteString("Give one with --completion CMD (a command that exits 0 when the task is done).\n")
	} else {
		workdir := p.Workdir
		if workdir == "" {
			workdir = "."
		}
		fmt.Fprintf(&b, "Completion: %s\n", p.Command)
		fmt.Fprintf(&b, "Workdir:    %s\n", workdir)
		if p.Setup != "" {
			fmt.Fprintf(&b, "Setup:      %s\n", p.Setup)
		}
		crit := p.Class
		if p.Criterion != "" {
			crit = p.Class + " (" + p.Criterion + ")"
		}
		fmt.Fprintf(&b, "Criterion:  %s\n", crit)
		fmt.Fprintf(&b, "Confidence: %s\n", p.Confidence)
		for _, v := range p.Verification {
			fmt.Fprintf(&b, "Verified:   `%s` in %s: %s (%s)\n", v.Command, v.Workdir, v.Result, v.Verdict)
		}
		if len(p.Suites) > 1 {
			fmt.Fprintf(&b, "Several test suites and no command that runs them all:\n")
			for _, s := range p.Suites {
				fmt.Fprintf(&b, "  - %s (in %s; %s)\n", s.Command, s.Workdir, s.Source)
			}
		}
	}
	if len(p.Rationale) > 0 {
		// Traps and unreadable files are always shown; the other findings
		// fill the rest of a short list, in order.
		const maxEvidence = 6
		important := func(f Finding) bool {
			return strings.HasPrefix(f.Finding, "trap:") || strings.HasPrefix(f.Finding, "unreadable")
		}
		room := maxEvidence
		for _, f := range p.Rationale {
			if important(f) {
				room--
			}
		}
		b.WriteString("Evidence:\n")
		shown := 0
		for _, f := range p.Rationale {
			if !important(f) {
				if room <= 0 {
					continue
				}
				room--
			}
			shown++
			fmt.Fprintf(&b, "  - [%s] %s: %s\n", f.Layer, f.Source, f.Finding)
		}
		if left := len(p.Rationale) - shown; left > 0 {
			fmt.Fprintf(&b, "  ... and %d more in the full proposal\n", left)
		}
	}
	return b.String()
}
