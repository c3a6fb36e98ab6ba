package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
)

// Opencode runs opencode headless:
//
//	opencode run --format json [--model provider/model] [extra...] PROMPT
//
// with its XDG directories in the private configuration directory and a
// configuration (OPENCODE_CONFIG_CONTENT, merged over the user's) that
// allows edits and shell commands without asking, turns off sharing and
// auto-update, and points the anthropic/openai providers at
// ANTHROPIC_BASE_URL/OPENAI_BASE_URL when the environment has them. Its exit
// code is unreliable: error events decide failure. Cost is reported per step.
type Opencode struct {
	cliBase
}

var (
	_ loop.Agent       = (*Opencode)(nil)
	_ loop.Preflighter = (*Opencode)(nil)
)

var opencodeQuietEnv = []string{"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_SHARE=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1"}

// maxPromptArg is the longest prompt passed as an argument (Linux caps one
// argument at 128 KiB); longer prompts go through a file or stdin.
const maxPromptArg = 100 << 10

func opencodeEnv(home string) []string {
	return append([]string{
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
	}, opencodeQuietEnv...)
}

// Preflight checks the CLI and the credentials and returns `opencode --version`.
func (o *Opencode) Preflight(ctx context.Context, env []string) (string, error) {
	home, cleanup, err := o.scratchHome()
	if err != nil {
		return "", err
	}
	defer cleanup()
	return o.preflight(ctx, env, opencodeEnv(home)...)
}

// opencodeConfig merges agent-loop's settings over the user's
// OPENCODE_CONFIG_CONTENT (the user's explicit settings win).
func opencodeConfig(env []string) (string, error) {
	cfg := map[string]any{}
	if user, ok := process.Lookup(env, "OPENCODE_CONFIG_CONTENT"); ok && strings.TrimSpace(user) != "" {
		if err := json.Unmarshal([]byte(user), &cfg); err != nil {
			return "", fmt.Errorf("opencode provider: OPENCODE_CONFIG_CONTENT is not a JSON object: %w", err)
		}
	}
	setDefault(cfg, "autoupdate", false)
	setDefault(cfg, "share", "disabled")
	setDefault(cfg, "permission", map[string]any{"edit": "allow", "bash": "allow", "webfetch": "allow"})
	base := map[string]string{}
	if u, _ := process.Lookup(env, "ANTHROPIC_BASE_URL"); u != "" {
		u = strings.TrimRight(u, "/")
		if !strings.HasSuffix(u, "/v1") {
			u += "/v1"
		}
		base["anthropic"] = u
	}
	if u, _ := process.Lookup(env, "OPENAI_BASE_URL"); u != "" {
		base["openai"] = strings.TrimRight(u, "/")
	}
	if len(base) > 0 {
		providers, _ := cfg["provider"].(map[string]any)
		if providers == nil {
			providers = map[string]any{}
		}
		for name, url := range base {
			p, _ := providers[name].(map[string]any)
			if p == nil {
				p = map[string]any{}
			}
			opts, _ := p["options"].(map[string]any)
			if opts == nil {
				opts = map[string]any{}
			}
			setDefault(opts, "baseURL", url)
			p["options"] = opts
			providers[name] = p
		}
		cfg["provider"] = providers
	}
	b, err := json.Marshal(cfg)
	return string(b), err
}

func setDefault(m map[string]any, k string, v any) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// opencodeKeys maps an opencode model provider to its credential variable.
var opencodeKeys = map[string]string{
	"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "openrouter": "OPENROUTER_API_KEY",
	"google": "GEMINI_API_KEY", "opencode": "OPENCODE_API_KEY",
}

// modelCredentials passes on only the key of the model's provider
// ("anthropic/claude-sonnet-4-5" -> ANTHROPIC_API_KEY); for another
// provider or no model, every key opencode may use.
func (o *Opencode) modelCredentials(model string) []string {
	all := o.credentialEnv()
	prefix, _, ok := strings.Cut(model, "/")
	key := opencodeKeys[prefix]
	if !ok || key == "" {
		return all
	}
	for _, kv := range all {
		if strings.HasPrefix(kv, key+"=") {
			out := []string{kv}
			if key == "GEMINI_API_KEY" {
				// opencode's google provider reads this name.
				out = append(out, "GOOGLE_GENERATIVE_AI_API_KEY="+strings.TrimPrefix(kv, key+"="))
			}
			return out
		}
	}
	return all
}

// Run runs opencode once in req.Dir.
func (o *Opencode) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	bin, err := o.binary(req.Env)
	if err != nil {
		return loop.AgentResult{}, err
	}
	home, cleanup, err := o.home()
	if err != nil {
		return loop.AgentResult{}, err
	}
	defer cleanup()
	conf, err := opencodeConfig(req.Env)
	if err != nil {
		return loop.AgentResult{}, err
	}
	model := o.model(req)
	extra := append(opencodeEnv(home), "OPENCODE_CONFIG_CONTENT="+conf)
	env := process.Override(req.Env, append(extra, o.modelCredentials(model)...)...)
	args := []string{"run", "--format", "json"}
	if model != "" {
		args = append(args, "--model", model)
	}
	args = append(args, o.cfg.Extra...)
	if len(req.Prompt) > maxPromptArg && req.PromptFile != "" {
		args = append(args, "--file", req.PromptFile, "--", "Follow the instructions in the attached file "+filepath.Base(req.PromptFile)+".")
	} else {
		args = append(args, "--", req.Prompt)
	}
	return o.execute(ctx, req, invocation{bin: bin, args: args, env: env}, &opencodeParser{})
}

// opencodeEvent is the part of an `opencode run --format json` event the
// parser reads.
type opencodeEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      *struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		Tool   string `json:"tool"`
		Reason string `json:"reason"`
		State  *struct {
			Status string         `json:"status"`
			Input  map[string]any `json:"input"`
			Error  string         `json:"error"`
			Title  string         `json:"title"`
		} `json:"state"`
		Tokens *struct {
			Input     int64 `json:"input"`
			Output    int64 `json:"output"`
			Reasoning int64 `json:"reasoning"`
			Cache     struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
		Cost float64 `json:"cost"`
	} `json:"part"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message    string `json:"message"`
			StatusCode int    `json:"statusCode"`
		} `json:"data"`
	} `json:"error"`
}

// opencodeParser reads opencode's JSON events.
type opencodeParser struct {
	session       string
	message       string
	steps         int
	finished      int
	input, output int64
	cost          float64
	errMsg        string
	errStatus     int
}

func (p *opencodeParser) event(line []byte, out io.Writer) {
	var ev opencodeEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return
	}
	if ev.SessionID != "" {
		p.session = ev.SessionID
	}
	switch ev.Type {
	case "step_start":
		p.steps++
	case "text":
		if ev.Part != nil {
			renderText(out, ev.Part.Text)
			if strings.TrimSpace(ev.Part.Text) != "" {
				p.message = ev.Part.Text
			}
		}
	case "reasoning":
		if ev.Part != nil && ev.Part.Text != "" {
			fmt.Fprintf(out, "· %s\n", oneLine(ev.Part.Text, 160))
		}
	case "tool_use":
		if ev.Part != nil && ev.Part.State != nil {
			renderTool(out, ev.Part.Tool, summarizeInput(ev.Part.State.Input))
			if ev.Part.State.Status == "error" {
				fmt.Fprintf(out, "  ✗ %s\n", oneLine(ev.Part.State.Error, 200))
			}
		}
	case "step_finish":
		p.finished++
		if ev.Part != nil {
			p.cost += ev.Part.Cost
			if t := ev.Part.Tokens; t != nil {
				p.input += t.Input + t.Cache.Read + t.Cache.Write
				p.output += t.Output + t.Reasoning
			}
		}
	case "error":
		p.errMsg = "error event"
		if ev.Error != nil {
			p.errMsg = strings.TrimSpace(ev.Error.Name + ": " + ev.Error.Data.Message)
			p.errStatus = ev.Error.Data.StatusCode
		}
		fmt.Fprintf(out, "✗ %s\n", oneLine(p.errMsg, 300))
	}
}

func (p *opencodeParser) finish(r *loop.AgentResult, info runInfo) {
	r.SessionID = p.session
	r.Message = p.message
	r.Turns = p.finished
	r.InputTokens, r.OutputTokens, r.CostUSD = p.input, p.output, p.cost
	switch {
	case p.errMsg != "":
		msg := p.errMsg
		if p.errStatus != 0 {
			msg = fmt.Sprintf("model API error %d: %s", p.errStatus, msg)
		}
		failure(r, "opencode", msg, loop.ClassCrash)
		if c := classifyStatus(p.errStatus); c != loop.ClassNone {
			r.Class = c
		}
	case info.res.ExitCode != 0:
		crash(r, info, fmt.Sprintf("opencode exited with code %d", info.res.ExitCode))
	case p.finished == 0:
		crash(r, info, "opencode ended without finishing a step")
	}
}
