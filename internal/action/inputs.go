package action

import (
	"github.com/aiwg/agent-loop/internal/spec"
)

// settingsFromInputs reads the Action's inputs through the parameter table
// (spec.FromInputs: INPUT_<NAME>, hyphens kept; a value that does not parse
// is a problem spec.Validate reports with the others) and adds what the
// Action always does: run in the workspace, push every iteration, give the
// agent CLIs private configurations, and start
// beside an active loop of the same trigger (a re-run resumes it instead).
func settingsFromInputs(getenv func(string) string, workspace string) spec.Settings {
	s := spec.FromInputs(getenv)
	s.Start.Dir = workspace
	s.Start.Force = true
	s.Spec.Publish.Push = true
	// A runner has no configuration of the user's: the agent CLIs get
	// private ones, with the credentials of the inputs.
	s.Spec.Agent.Config = spec.AgentConfigPrivate
	return s
}
