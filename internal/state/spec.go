package state

import (
	"encoding/json"
	"time"

	"github.com/aiwg/agent-loop/internal/spec"
)

// SetSpec makes sp the loop's specification, and writes the seed fields
// that repeat parts of it (task, completion_criteria, configuration): they
// are copies for the schema's readers, never read back.
func (st *State) SetSpec(sp spec.Spec) {
	st.Harness.Spec = sp.Clone()
	st.Task = sp.Task
	st.CompletionCriteria = sp.Criterion.Command
	st.Configuration.MaxIterations = sp.Limits.MaxIterations
	tm := int(sp.Limits.Timeout / time.Minute)
	st.Configuration.TimeoutMinutes = &tm
}

// UnmarshalJSON reads a state.json. A state written before the Spec was
// saved whole (agent_loop has no spec) gets one rebuilt from the fields it
// has; what it never saved takes the parameters' defaults.
func (st *State) UnmarshalJSON(b []byte) error {
	type plain State
	if err := json.Unmarshal(b, (*plain)(st)); err != nil {
		return err
	}
	if st.Harness.Spec.Limits.MaxIterations > 0 {
		return nil // a saved Spec: validated, so at least one iteration
	}
	var old struct {
		Harness legacyHarness `json:"agent_loop"`
	}
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	st.Harness.Spec = old.Harness.spec(st)
	return nil
}

// legacyHarness is what agent_loop held before the Spec: the settings a
// resume could rebuild (idle and check timeouts, turns and agent
// arguments were lost).
type legacyHarness struct {
	Provider                string   `json:"provider"`
	Model                   string   `json:"model"`
	AgentCommand            string   `json:"agent_command"`
	Branch                  string   `json:"branch"`
	Commit                  *bool    `json:"commit"`
	Push                    bool     `json:"push"`
	Workdir                 string   `json:"workdir"`
	Setup                   string   `json:"setup"`
	CriterionSource         string   `json:"criterion_source"`
	Confidence              string   `json:"criterion_confidence"`
	Evidence                []string `json:"criterion_evidence"`
	BudgetUSD               float64  `json:"budget_usd"`
	MaxTokens               int64    `json:"max_tokens"`
	IterationTimeoutMinutes int      `json:"iteration_timeout_minutes"`
	RegressionPolicy        string   `json:"regression_policy"`
	ConfirmRuns             *int     `json:"confirm_runs"`
}

// spec rebuilds the Spec of an old state from its fields and the defaults.
func (h legacyHarness) spec(st *State) spec.Spec {
	sp := spec.Defaults(spec.DoorCLI).Spec
	sp.Task = st.Task
	sp.Criterion.Command = st.CompletionCriteria
	sp.Criterion.Workdir = h.Workdir
	if sp.Criterion.Workdir == "" {
		sp.Criterion.Workdir = "."
	}
	sp.Criterion.Setup = h.Setup
	sp.Criterion.Source = spec.Source(h.CriterionSource)
	sp.Criterion.Confidence = h.Confidence
	sp.Criterion.Evidence = h.Evidence
	if n := st.Configuration.MaxIterations; n > 0 {
		sp.Limits.MaxIterations = n
	}
	if m := st.Configuration.TimeoutMinutes; m != nil && *m > 0 {
		sp.Limits.Timeout = time.Duration(*m) * time.Minute
	}
	sp.Limits.IterationTimeout = time.Duration(h.IterationTimeoutMinutes) * time.Minute
	sp.Limits.BudgetUSD, sp.Limits.MaxTokens = h.BudgetUSD, h.MaxTokens
	if h.Provider != "" {
		sp.Agent.Provider = h.Provider
	}
	sp.Agent.Command, sp.Agent.Model = h.AgentCommand, h.Model
	sp.Publish.Branch = h.Branch
	if sp.Publish.Branch == "" {
		sp.Publish.Branch = spec.DefaultBranch(st.LoopID)
	}
	if h.Commit != nil {
		sp.Publish.Commit = *h.Commit
	}
	sp.Publish.Push = h.Push
	if h.RegressionPolicy != "" {
		sp.Policy.Regression = h.RegressionPolicy
	}
	if h.ConfirmRuns != nil {
		sp.Policy.ConfirmRuns = *h.ConfirmRuns
	}
	return sp
}
