package app

import (
	"fmt"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/provider"
	"github.com/aiwg/agent-loop/internal/redact"
	"github.com/aiwg/agent-loop/internal/spec"
)

// buildAgent returns the agent a Spec names (the scripted one when script
// is given: the demo, replays), and adds the provider credentials it was
// given to secrets (redacted from every log).
func buildAgent(a spec.Agent, script *provider.Script, environ []string, secrets *redact.Set, stateDir string) (loop.Agent, error) {
	if script != nil {
		return &provider.Scripted{Script: script}, nil
	}
	if a.Provider == "command" {
		return provider.NewCommand(a.Command), nil
	}
	creds := map[string]string{}
	for _, k := range provider.CredentialVarsFor(a.Provider, a.Config, environ) {
		if v, ok := process.Lookup(environ, k); ok && v != "" {
			creds[k] = v
			secrets.Add(v)
		}
	}
	bin := ""
	if v, ok := process.Lookup(environ, "AGENT_LOOP_"+upper(a.Provider)+"_BIN"); ok {
		bin = v
	}
	// The CLI's private home (config, sessions) lives under .aiwg/ralph,
	// which is never committed.
	ag, err := provider.New(a.Provider, provider.Config{Model: a.Model, MaxTurns: a.MaxTurns, Credentials: creds, Extra: a.Args,
		Binary: bin, StateDir: stateDir, AgentConfig: a.Config})
	if err != nil {
		return nil, fmt.Errorf("building the %s agent: %w", a.Provider, err)
	}
	return ag, nil
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
