package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
)

// Codex runs the OpenAI Codex CLI headless:
//
//	codex exec --json --sandbox danger-full-access --skip-git-repo-check
//	  -c model_provider=agentloop -c model_providers.agentloop={...}
//	  -c analytics.enabled=false -c features.plugins=false ... [-m M] [extra...] -
//
// with the prompt on stdin. Codex's own sandbox does not work inside
// containers, hence danger-full-access (the harness is the sandbox).
//
// With a private configuration (Config.AgentConfig "private", or "auto"
// without a configuration of the user's), CODEX_HOME is a directory of the
// loop's own and the model provider is defined on the command line:
// base_url is OPENAI_BASE_URL when the environment has it, else the OpenAI
// API, and the key is read from the credential variable that is set. With
// the user's configuration ("user", or "auto" when $CODEX_HOME is set or
// ~/.codex holds one), CODEX_HOME is the user's and its model providers and
// login apply as they are.
//
// Codex waits for an unreachable model API for as long as it is let
// ("Reconnecting... waiting for network"): the run is ended at the first
// such message, as a configuration error naming the address and what sets
// it. Codex reports tokens, not cost: the cost is estimated from Prices.
type Codex struct {
	cliBase
}

var (
	_ loop.Agent       = (*Codex)(nil)
	_ loop.Preflighter = (*Codex)(nil)
)

// codexProviderID names the model provider agent-loop defines for Codex.
const codexProviderID = "agentloop"

// codexFallbackModel prices runs whose model is unknown (the CLI's default).
const codexFallbackModel = "gpt-5"

// codexQuietConfig turns off what would call anything but the model API:
// analytics, the plugin and app catalogs.
var codexQuietConfig = []string{
	"analytics.enabled=false", "features.plugins=false", "features.remote_plugin=false", "features.apps=false",
	"check_for_update_on_startup=false",
}

// Preflight checks the CLI, the credentials (with a private configuration)
// and the model API, and returns `codex --version`.
func (c *Codex) Preflight(ctx context.Context, env []string) (string, error) {
	home, cleanup, err := c.scratchHome()
	if uc := userCodexConfig(c.cfg.AgentConfig, env); uc != nil {
		home, cleanup, err = uc.home, func() {}, nil
	}
	if err != nil {
		return "", err
	}
	defer cleanup()
	return c.preflight(ctx, env, "CODEX_HOME="+home)
}

// codexHome is the CODEX_HOME of a run: a private one, holding a copy of
// the user's configuration and login when the run uses them (the user's
// directory itself is never written, and the sandbox's user may not be
// able to: a root loop's agent runs as another user); without a state
// directory, the user's in place.
func (c *Codex) codexHome(env []string) (string, func(), error) {
	uc := userCodexConfig(c.cfg.AgentConfig, env)
	if uc != nil && c.cfg.StateDir == "" {
		return uc.home, func() {}, nil
	}
	home, cleanup, err := c.home()
	if err != nil || uc == nil {
		return home, cleanup, err
	}
	for _, name := range []string{"config.toml", "auth.json"} {
		b, err := os.ReadFile(filepath.Join(uc.home, name))
		if errors.Is(err, fs.ErrNotExist) {
			_ = os.Remove(filepath.Join(home, name))
			continue
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(home, name), b, 0o600)
		}
		if err != nil {
			cleanup()
			return "", nil, fmt.Errorf("codex provider: copying %s of the user's configuration %s: %w", name, uc.home, err)
		}
	}
	return home, cleanup, nil
}

// tomlString quotes s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Run runs Codex once in req.Dir.
func (c *Codex) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	bin, err := c.binary(req.Env)
	if err != nil {
		return loop.AgentResult{}, err
	}
	home, cleanup, err := c.codexHome(req.Env)
	if err != nil {
		return loop.AgentResult{}, err
	}
	defer cleanup()
	creds := c.credentialEnv()
	hide := slices.Clone(c.creds)
	uc := userCodexConfig(c.cfg.AgentConfig, req.Env)
	if uc != nil && uc.envKey != "" && !slices.Contains(c.creds, uc.envKey) {
		// The user's model provider reads its key from its own variable.
		if v := c.cfg.Credentials[uc.envKey]; v != "" {
			creds = append(creds, uc.envKey+"="+v)
		}
		hide = append(hide, uc.envKey)
	}
	env := process.Override(req.Env, append([]string{"CODEX_HOME=" + home}, creds...)...)

	args := []string{"exec", "--json", "--sandbox", "danger-full-access", "--skip-git-repo-check"}
	if uc == nil {
		keyVar := "OPENAI_API_KEY"
		if len(creds) > 0 {
			keyVar, _, _ = strings.Cut(creds[0], "=")
		}
		baseURL, _ := process.Lookup(req.Env, "OPENAI_BASE_URL")
		if baseURL == "" {
			baseURL = "https://api.openai.com/v1"
		}
		provider := fmt.Sprintf("{name=%s,base_url=%s,env_key=%s,wire_api=\"responses\"}",
			tomlString("agent-loop"), tomlString(baseURL), tomlString(keyVar))
		args = append(args, "-c", "model_provider="+codexProviderID, "-c", "model_providers."+codexProviderID+"="+provider)
	}
	for _, kv := range codexQuietConfig {
		args = append(args, "-c", kv)
	}
	// The agent's shell does not need the model API key.
	quoted := make([]string, len(hide))
	for i, v := range hide {
		quoted[i] = tomlString(v)
	}
	args = append(args, "-c", "shell_environment_policy.exclude=["+strings.Join(quoted, ",")+"]")
	model := c.model(req)
	if model != "" {
		args = append(args, "-m", model)
	}
	args = append(args, c.cfg.Extra...)
	args = append(args, "-")
	p := &codexParser{prices: c.prices(), model: model, endpoints: c.endpoints(req.Env)}
	return c.execute(ctx, req, invocation{bin: bin, args: args, env: env, stdin: strings.NewReader(req.Prompt)}, p)
}

// codexEvent is the part of a `codex exec --json` event the parser reads.
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"`
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"`
	Item *codexItem `json:"item"`
}

type codexItem struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Message  string `json:"message"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exit_code"`
	Status   string `json:"status"`
	Changes  []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Query  string `json:"query"`
}

// codexParser reads Codex's JSONL events.
type codexParser struct {
	prices    Prices
	model     string
	endpoints []endpoint // where the model API is, for the message when it is unreachable
	offline   string     // Codex is waiting for the network: why the run ends

	thread         string
	message        string
	turns          int
	input, cached  int64
	output         int64
	failed         string
	lastError      string
	completedTurns int
}

func (p *codexParser) event(line []byte, out io.Writer) {
	var ev codexEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return
	}
	switch ev.Type {
	case "thread.started":
		p.thread = ev.ThreadID
		fmt.Fprintf(out, "codex thread %s\n", ev.ThreadID)
	case "turn.started":
		p.turns++
	case "turn.completed":
		p.completedTurns++
		if ev.Usage != nil {
			p.input += ev.Usage.InputTokens
			p.cached += ev.Usage.CachedInputTokens
			p.output += ev.Usage.OutputTokens
		}
	case "turn.failed":
		p.failed = "turn failed"
		if ev.Error != nil && ev.Error.Message != "" {
			p.failed = ev.Error.Message
		}
		fmt.Fprintf(out, "✗ %s\n", oneLine(p.failed, 300))
	case "error":
		fmt.Fprintf(out, "! %s\n", oneLine(ev.Message, 300))
		switch {
		case strings.Contains(ev.Message, "waiting for network"):
			// Codex would wait (and print this) until the idle timeout.
			p.offline = ev.Message
		case !strings.HasPrefix(ev.Message, "Reconnecting"):
			p.lastError = ev.Message
		}
	case "item.started", "item.completed":
		if ev.Item != nil {
			p.item(ev.Type == "item.completed", ev.Item, out)
		}
	}
}

func (p *codexParser) item(done bool, it *codexItem, out io.Writer) {
	switch it.Type {
	case "agent_message":
		if done {
			renderText(out, it.Text)
			if strings.TrimSpace(it.Text) != "" {
				p.message = it.Text
			}
		}
	case "reasoning":
		if done && it.Text != "" {
			fmt.Fprintf(out, "· %s\n", oneLine(it.Text, 160))
		}
	case "command_execution":
		if !done {
			renderTool(out, "shell", it.Command)
		} else if it.ExitCode != nil && *it.ExitCode != 0 {
			fmt.Fprintf(out, "  ✗ exit %d\n", *it.ExitCode)
		}
	case "file_change":
		if done {
			for _, ch := range it.Changes {
				renderTool(out, "edit", ch.Kind+" "+ch.Path)
			}
		}
	case "mcp_tool_call":
		if !done {
			renderTool(out, it.Server+"."+it.Tool, "")
		}
	case "web_search":
		if !done {
			renderTool(out, "web_search", it.Query)
		}
	case "error":
		// Warnings (unknown model metadata, ignored settings): not failures.
		if done {
			fmt.Fprintf(out, "! %s\n", oneLine(it.Message, 300))
		}
	}
}

// halt ends the run when Codex waits for a network that is not there.
func (p *codexParser) halt() (loop.ErrorClass, string, bool) {
	if p.offline == "" {
		return "", "", false
	}
	where, setBy := "the model API", "OPENAI_BASE_URL (or the base_url of your Codex model provider)"
	if len(p.endpoints) > 0 {
		where, setBy = "the model API at "+p.endpoints[0].url, p.endpoints[0].setBy
	}
	return loop.ClassAuth, fmt.Sprintf("codex cannot reach %s (%s): check the network, or set %s to the proxy or gateway that serves it",
		where, oneLine(p.offline, 200), setBy), true
}

func (p *codexParser) finish(r *loop.AgentResult, info runInfo) {
	r.SessionID = p.thread
	r.Message = p.message
	r.Turns = p.completedTurns
	r.InputTokens, r.OutputTokens = p.input, p.output
	if p.input > 0 || p.output > 0 {
		if pr, ok := p.prices.Lookup(p.model, codexFallbackModel); ok {
			r.CostUSD = pr.Cost(p.input, p.cached, p.output)
			r.CostEstimated = true
		}
	}
	switch {
	case p.failed != "":
		failure(r, "codex", p.failed, loop.ClassCrash)
	case info.res.ExitCode != 0 && p.lastError != "":
		failure(r, "codex", p.lastError, loop.ClassCrash)
	case info.res.ExitCode != 0:
		crash(r, info, fmt.Sprintf("codex exited with code %d", info.res.ExitCode))
	case p.completedTurns == 0:
		crash(r, info, "codex ended without completing a turn")
	}
}
