package spec

import "maps"

// Settings is what the parameters fill: the Spec of the loop to start, and
// the choices of this start and of the Action door that are not part of
// the loop (they are not saved with it).
type Settings struct {
	Spec   Spec
	Start  Start
	Action ActionSettings

	given    map[string]bool
	problems []error
}

// Start holds the choices of one start of a loop.
type Start struct {
	// Dir is any directory inside the repository (-C).
	Dir string
	// LoopID is the loop's id when the user chose one.
	LoopID string
	// Infer allows inferring the completion command when none is given.
	Infer bool
	// AutoCriteria adopts an inferred command without asking (high
	// confidence only).
	AutoCriteria bool
	// AllowDirty starts from a work tree with uncommitted changes.
	AllowDirty bool
	// Force starts beside an active loop with the same task.
	Force bool
	// Quiet prints only the final report.
	Quiet bool
}

// ActionSettings are read only by the GitHub Action.
type ActionSettings struct {
	// Token pushes the branch and talks to GitHub; never shown to the agent.
	Token            string
	TriggerPhrase    string
	AllowForks       bool
	FailOnIncomplete bool
	// FixCI, MaxAttempts and AllowOwnRuns are the workflow_run trigger's
	// (a failed CI run): where the fix of a pull request's run goes (pr or
	// push), the most loops one failed commit gets, and whether runs that
	// agent-loop itself caused start loops.
	FixCI        string
	MaxAttempts  int
	AllowOwnRuns bool
	// Credentials maps the agent CLIs' credential variables to the values
	// of the credential inputs.
	Credentials map[string]string
}

// Door is how the user came in: it decides which parameters exist and how
// a problem names one (the flag --max-iterations or the input
// max-iterations).
type Door int

// The doors.
const (
	DoorCLI Door = iota + 1
	DoorAction
)

func (d Door) String() string {
	if d == DoorAction {
		return "the GitHub Action"
	}
	return "the command line"
}

// Has reports whether p can be given at this door.
func (d Door) Has(p *Param) bool {
	if d == DoorAction {
		return p.Input != ""
	}
	return p.Flag != "" || p.Positional
}

// Ref names parameter name as the user of this door knows it: "--branch",
// "TASK" (the argument), "input branch". An unknown name is returned as it is.
func (d Door) Ref(name string) string {
	p := Lookup(name)
	if p == nil {
		return name
	}
	return d.ref(p)
}

func (d Door) ref(p *Param) string {
	switch {
	case d == DoorAction && p.Input != "":
		return "input " + p.Input
	case d == DoorAction:
		return p.Name
	case p.Positional:
		return p.Arg
	case p.Flag != "":
		return "--" + p.Flag
	}
	return p.Name
}

// Defaults returns the settings with the default of every parameter, but
// for the Action's own ones at the CLI (they stay zero: a CLI loop has no
// pull request). The Action takes the CLI's defaults of what it has no
// input for (a commit per iteration).
func Defaults(door Door) Settings {
	var s Settings
	for _, p := range Params() {
		if door == DoorCLI && !door.Has(p) {
			continue
		}
		def := p.Default
		if door == DoorAction && p.InputDefault != "" && !p.expression() {
			def = p.InputDefault
		}
		if err := p.apply(&s, def); err != nil {
			// The table's own defaults parse: TestDefaultsParse.
			s.problems = append(s.problems, err)
		}
	}
	return s
}

// Given reports whether the user gave parameter name (a flag set, an
// input not empty).
func (s *Settings) Given(name string) bool { return s.given[name] }

// Clone returns a deep copy of s.
func (s Settings) Clone() Settings {
	c := s
	c.Spec = s.Spec.Clone()
	c.Action.Credentials = maps.Clone(s.Action.Credentials)
	c.given = maps.Clone(s.given)
	c.problems = append([]error(nil), s.problems...)
	return c
}

// Clone returns a deep copy of sp (its slices are not shared).
func (sp Spec) Clone() Spec {
	c := sp
	c.Criterion.Evidence = append([]string(nil), sp.Criterion.Evidence...)
	c.Criterion.Depends.Files = append([]string(nil), sp.Criterion.Depends.Files...)
	c.Criterion.Depends.Targets = append([]string(nil), sp.Criterion.Depends.Targets...)
	if sp.Criterion.Origin != nil {
		o := *sp.Criterion.Origin
		c.Criterion.Origin = &o
	}
	c.Agent.Args = append([]string(nil), sp.Agent.Args...)
	c.Publish.Protected = append([]string(nil), sp.Publish.Protected...)
	return c
}
