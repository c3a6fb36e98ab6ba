package app

import (
	"fmt"

	"github.com/aiwg/agent-loop/internal/config"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/provider"
	"github.com/aiwg/agent-loop/internal/redact"
)

// agentSpec is what it takes to build an agent, from a config or a state.
type agentSpec struct {
	Provider     string
	AgentCommand string
	Model        string
	MaxTurns     int
	Args         []string
	Script       *provider.Script // the scripted provider (demo, replay)
}

// buildAgent returns the agent and the provider credentials it was given
// (to be redacted from every log).
func buildAgent(spec agentSpec, environ []string, secrets *redact.Set, stateDir string) (loop.Agent, error) {
	switch config.NormalizeProvider(spec.Provider) {
	case "command":
		return provider.NewCommand(spec.AgentCommand), nil
	case "scripted":
		if spec.Script == nil {
			return nil, fmt.Errorf("the scripted provider needs a script")
		}
		return &provider.Scripted{Script: spec.Script}, nil
	}
	name := config.NormalizeProvider(spec.Provider)
	creds := map[string]string{}
	for _, k := range provider.CredentialVars(name) {
		if v, ok := process.Lookup(environ, k); ok && v != "" {
			creds[k] = v
			secrets.Add(v)
		}
	}
	// Base URLs pass through (a proxy, a fake model server in tests).
	for _, k := range []string{"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"} {
		if v, ok := process.Lookup(environ, k); ok && v != "" {
			creds[k] = v
		}
	}
	bin := ""
	if v, ok := process.Lookup(environ, "AGENT_LOOP_"+upper(name)+"_BIN"); ok {
		bin = v
	}
	// The CLI's private home (config, sessions) lives under .aiwg/ralph,
	// which is never committed.
	return provider.New(name, provider.Config{Model: spec.Model, MaxTurns: spec.MaxTurns, Credentials: creds, Extra: spec.Args, Binary: bin, StateDir: stateDir})
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
