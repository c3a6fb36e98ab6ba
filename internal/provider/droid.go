package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
)

// Droid runs Factory's droid headless:
//
//	droid exec --auto high -o stream-json [-m M] [extra...] PROMPT   (or -f PROMPT_FILE)
//
// with FACTORY_API_KEY. stream-json (system/init, message, tool_call,
// tool_result, error, completion) streams, so the idle timeout sees a
// working agent; the -o json result object is understood too. droid reports
// tokens, not dollars: the cost is estimated from Prices.
type Droid struct {
	cliBase
}

var (
	_ loop.Agent       = (*Droid)(nil)
	_ loop.Preflighter = (*Droid)(nil)
)

// droidFallbackModel prices runs whose model is unknown.
const droidFallbackModel = "gpt-5"

// Preflight checks the CLI and the credentials and returns `droid --version`.
func (d *Droid) Preflight(ctx context.Context, env []string) (string, error) {
	return d.preflight(ctx, env)
}

// Run runs droid once in req.Dir.
func (d *Droid) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	bin, err := d.binary(req.Env)
	if err != nil {
		return loop.AgentResult{}, err
	}
	env := process.Override(req.Env, d.credentialEnv()...)
	args := []string{"exec", "--auto", "high", "-o", "stream-json"}
	model := d.model(req)
	if model != "" {
		args = append(args, "-m", model)
	}
	args = append(args, d.cfg.Extra...)
	if len(req.Prompt) > maxPromptArg && req.PromptFile != "" {
		args = append(args, "-f", req.PromptFile)
	} else {
		args = append(args, req.Prompt)
	}
	return d.execute(ctx, req, invocation{bin: bin, args: args, env: env}, &droidParser{prices: d.prices(), model: model})
}

// droidEvent is the part of a droid stream-json (or json) event the parser
// reads.
type droidEvent struct {
	Type       string         `json:"type"`
	Subtype    string         `json:"subtype"`
	SessionID  string         `json:"session_id"`
	Model      string         `json:"model"`
	Role       string         `json:"role"`
	Text       string         `json:"text"`
	ToolName   string         `json:"toolName"`
	ToolID     string         `json:"toolId"`
	Parameters map[string]any `json:"parameters"`
	IsError    bool           `json:"isError"`
	Value      any            `json:"value"`
	Message    string         `json:"message"`
	// completion (stream-json) and result (json)
	FinalText string      `json:"finalText"`
	NumTurns  int         `json:"numTurns"`
	Turns     int         `json:"num_turns"`
	Result    string      `json:"result"`
	IsErrorR  bool        `json:"is_error"`
	Usage     *droidUsage `json:"usage"`
}

type droidUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// droidParser reads droid's events.
type droidParser struct {
	prices Prices
	model  string

	session  string
	message  string
	done     *droidEvent
	errMsg   string
	messages int
}

func (p *droidParser) event(line []byte, out io.Writer) {
	var ev droidEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return
	}
	if ev.SessionID != "" {
		p.session = ev.SessionID
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" {
			if ev.Model != "" {
				p.model = ev.Model // the model droid really uses
			}
			fmt.Fprintf(out, "droid session %s, model %s\n", ev.SessionID, ev.Model)
		}
	case "message":
		if ev.Role == "assistant" {
			p.messages++
			renderText(out, ev.Text)
			if strings.TrimSpace(ev.Text) != "" {
				p.message = ev.Text
			}
		}
	case "reasoning":
		if ev.Text != "" {
			fmt.Fprintf(out, "· %s\n", oneLine(ev.Text, 160))
		}
	case "tool_call":
		name := ev.ToolName
		if name == "" {
			name = ev.ToolID
		}
		renderTool(out, name, summarizeInput(ev.Parameters))
	case "tool_result":
		if ev.IsError {
			fmt.Fprintf(out, "  ✗ %s\n", oneLine(fmt.Sprint(ev.Value), 200))
		}
	case "error":
		p.errMsg = strings.TrimPrefix(ev.Message, "Error: ")
		fmt.Fprintf(out, "✗ %s\n", oneLine(p.errMsg, 300))
	case "completion", "result":
		e := ev
		p.done = &e
	}
}

func (p *droidParser) finish(r *loop.AgentResult, info runInfo) {
	r.SessionID = p.session
	r.Message = p.message
	r.Turns = p.messages
	done := p.done
	if done != nil {
		if done.FinalText != "" {
			r.Message = done.FinalText
		} else if done.Result != "" {
			r.Message = done.Result
		}
		r.Turns = max(done.NumTurns, done.Turns)
		if u := done.Usage; u != nil {
			r.InputTokens = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
			r.OutputTokens = u.OutputTokens
			if r.Tokens() > 0 {
				if pr, ok := p.prices.Lookup(p.model, droidFallbackModel); ok {
					r.CostUSD = pr.Cost(r.InputTokens, u.CacheReadInputTokens, r.OutputTokens)
					r.CostEstimated = true
				}
			}
		}
	}
	switch {
	case done != nil && (done.IsErrorR || done.IsError || done.Subtype == "failure"):
		msg := done.Result
		if msg == "" {
			msg = p.errMsg
		}
		failure(r, "droid", msg, loop.ClassCrash)
	case p.errMsg != "" && (done == nil || info.res.ExitCode != 0):
		failure(r, "droid", p.errMsg, loop.ClassCrash)
	case info.res.ExitCode != 0:
		crash(r, info, fmt.Sprintf("droid exited with code %d", info.res.ExitCode))
	case done == nil:
		crash(r, info, "droid ended without a completion event")
	}
}
