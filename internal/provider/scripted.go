package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/aiwg/agent-loop/internal/loop"
)

// Script is a recorded agent: what it changes in each iteration. The
// scripted provider replays it for real (files are written in the work tree,
// the harness judges and commits them like any agent's), which is how the
// demo runs without an API key and how a recorded loop is replayed.
type Script struct {
	Iterations []ScriptStep `yaml:"iterations" json:"iterations"`
}

// ScriptStep is one iteration of a Script.
type ScriptStep struct {
	Message string       `yaml:"message" json:"message"`
	Files   []ScriptFile `yaml:"files" json:"files"`
	// Tokens and CostUSD are reported as the iteration's usage.
	InputTokens  int64   `yaml:"input_tokens" json:"input_tokens"`
	OutputTokens int64   `yaml:"output_tokens" json:"output_tokens"`
	CostUSD      float64 `yaml:"cost_usd" json:"cost_usd"`
	// Delay makes the step take time (to exercise timeouts and signals).
	Delay time.Duration `yaml:"delay" json:"delay"`
}

// ScriptFile writes or deletes one file, relative to the repository root.
type ScriptFile struct {
	Path    string `yaml:"path" json:"path"`
	Content string `yaml:"content" json:"content"`
	Delete  bool   `yaml:"delete" json:"delete"`
}

// ParseScript reads a YAML (or JSON) script.
func ParseScript(data []byte) (*Script, error) {
	var s Script
	if err := yaml.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("parsing agent script: %w", err)
	}
	for i, st := range s.Iterations {
		for _, f := range st.Files {
			if f.Path == "" || filepath.IsAbs(f.Path) || strings.HasPrefix(filepath.Clean(f.Path), "..") {
				return nil, fmt.Errorf("agent script, iteration %d: path %q must be relative and inside the repository", i+1, f.Path)
			}
		}
	}
	return &s, nil
}

// Scripted replays a Script.
type Scripted struct {
	Script *Script
}

var _ loop.Agent = (*Scripted)(nil)

// Name is "scripted".
func (s *Scripted) Name() string { return "scripted" }

// Run applies the step of req.Iteration; past the end of the script the
// agent changes nothing.
func (s *Scripted) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	start := time.Now()
	ar := loop.AgentResult{}
	if req.Iteration < 1 || req.Iteration > len(s.Script.Iterations) {
		ar.Message = "nothing left to replay"
		ar.Duration = time.Since(start)
		return ar, nil
	}
	st := s.Script.Iterations[req.Iteration-1]
	if st.Delay > 0 {
		select {
		case <-ctx.Done():
			return loop.AgentResult{Class: loop.ClassCancelled, Detail: "stopped: the loop was interrupted", Duration: time.Since(start), ExitCode: -1}, nil
		case <-time.After(st.Delay):
		}
	}
	for _, f := range st.Files {
		p := filepath.Join(req.Dir, filepath.FromSlash(f.Path))
		if f.Delete {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return ar, fmt.Errorf("scripted agent: deleting %s: %w", f.Path, err)
			}
			if req.Output != nil {
				fmt.Fprintf(req.Output, "scripted agent: deleted %s\n", f.Path)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return ar, fmt.Errorf("scripted agent: %w", err)
		}
		if err := os.WriteFile(p, []byte(f.Content), 0o644); err != nil {
			return ar, fmt.Errorf("scripted agent: writing %s: %w", f.Path, err)
		}
		if req.Output != nil {
			fmt.Fprintf(req.Output, "scripted agent: wrote %s (%d bytes)\n", f.Path, len(f.Content))
		}
	}
	if req.Output != nil && st.Message != "" {
		fmt.Fprintf(req.Output, "scripted agent: %s\n", st.Message)
	}
	ar.Message = st.Message
	ar.InputTokens, ar.OutputTokens, ar.CostUSD = st.InputTokens, st.OutputTokens, st.CostUSD
	ar.Turns = 1
	ar.Duration = time.Since(start)
	return ar, nil
}
