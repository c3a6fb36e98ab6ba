package state

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aiwg/agent-loop/internal/safefs"
	"github.com/aiwg/agent-loop/internal/spec"
)

// legacyLoop is the single-loop file of the 1.x layout
// (.aiwg/ralph/current-loop.json). Both the snake_case names of seed 000 and
// the camelCase names of seed 002 are accepted.
type legacyLoop struct {
	LoopID             string  `json:"loop_id"`
	LoopIDCamel        string  `json:"loopId"`
	Task               string  `json:"task"`
	Objective          string  `json:"objective"`
	Completion         string  `json:"completion_criteria"`
	CompletionCamel    string  `json:"completionCriteria"`
	Status             string  `json:"status"`
	Iteration          int     `json:"iteration"`
	MaxIterations      int     `json:"max_iterations"`
	MaxIterationsCamel int     `json:"maxIterations"`
	Timeout            *int    `json:"timeout"`
	TimeoutMinutes     *int    `json:"timeout_minutes"`
	StartedAt          string  `json:"started_at"`
	StartedAtCamel     string  `json:"startedAt"`
	Provider           string  `json:"provider"`
	Branch             *string `json:"branch"`
	PID                *int    `json:"pid"`
	WorkingDirectory   string  `json:"working_directory"`
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// MigrateLegacy converts a legacy .aiwg/ralph/current-loop.json into the
// multi-loop layout (a loops/<id>/state.json and a registry entry), keeping
// the legacy file for tools that expect it. It is idempotent and returns the
// migrated loop id ("" when there was nothing to migrate).
func (s *Store) MigrateLegacy() (string, error) {
	path := filepath.Join(s.Root, LegacyFile)
	b, err := safefs.ReadFile(path, MaxStateBytes)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", &CorruptError{Path: path, Err: err}
	}
	var l legacyLoop
	if err := json.Unmarshal(b, &l); err != nil {
		return "", &CorruptError{Path: path, Err: err}
	}
	task := firstNonEmpty(l.Task, l.Objective)
	id := firstNonEmpty(l.LoopID, l.LoopIDCamel)
	if !ValidLoopID(id) {
		// Legacy ids (8 hex, or free text) become ralph-<slug>-<hash of id>.
		id = DerivedLoopID(task, "legacy:"+id+":"+task)
	}
	d := NewDir(s.Root, id)
	if d.Exists() {
		return id, nil
	}
	now := s.now()
	started, err := time.Parse(time.RFC3339, firstNonEmpty(l.StartedAt, l.StartedAtCamel))
	if err != nil {
		started = now
	}
	status := Status(l.Status)
	switch status {
	case Running, Paused, Completing, Completed, Failed, Aborted, Crashed:
	case "pending", "":
		status = Paused
	default:
		status = Crashed
	}
	sp := spec.Defaults(spec.DoorCLI).Spec
	sp.Task = task
	sp.Criterion.Command = firstNonEmpty(l.Completion, l.CompletionCamel)
	sp.Criterion.Workdir = "."
	if n := max(l.MaxIterations, l.MaxIterationsCamel); n > 0 {
		sp.Limits.MaxIterations = n
	}
	if m := cmp.Or(l.TimeoutMinutes, l.Timeout); m != nil && *m > 0 {
		sp.Limits.Timeout = time.Duration(*m) * time.Minute
	}
	if l.Provider != "" {
		sp.Agent.Provider = l.Provider
	}
	sp.Publish.Branch = spec.DefaultBranch(id)
	if l.Branch != nil {
		sp.Publish.Branch = *l.Branch
	}
	st := &State{
		Version: Version, LoopID: id, Status: status, Iteration: max(l.Iteration, 0), StartedAt: started.UTC(),
		PID: l.PID, WorkingDirectory: firstNonEmpty(l.WorkingDirectory, s.Root),
		Configuration:    Configuration{AutoTest: true, CheckpointInterval: 1, ExecutionMode: "default"},
		Progress:         Progress{CompletionChecks: []Check{}},
		IterationHistory: []IterationEntry{}, RegressionEvents: []RegressionEvent{},
		ReinforcementLevel: "MINIMAL", ReinforcementHistory: []ReinforcementChange{}, RecoveryHistory: []Recovery{},
		DetectedPatterns: []DetectedPattern{},
		Harness:          Harness{Provider: sp.Agent.Provider, MigratedFrom: LegacyFile},
	}
	st.SetSpec(sp)
	if l.Branch != nil {
		st.Harness.Branch = *l.Branch
	}
	if status == Running || status == Completing {
		// The process that ran it is not this one: let stale detection decide.
		st.Harness.Host = Hostname()
	}
	if err := d.Save(st, now); err != nil {
		return "", fmt.Errorf("migrating %s: %w", LegacyFile, err)
	}
	if status.Active() {
		if err := s.Sync(st); err != nil {
			return "", err
		}
	}
	return id, nil
}
