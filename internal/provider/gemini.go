package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
)

// Gemini runs Google's Gemini CLI headless:
//
//	gemini --output-format stream-json --approval-mode yolo [-m M] [extra...] -p PROMPT
//
// with GEMINI_CLI_TRUST_WORKSPACE=true (else it refuses an untrusted folder,
// exit 55), GEMINI_CLI_HOME in the private configuration directory (with a
// settings.json: auth method, no usage statistics, three attempts per model
// request, maxSessionTurns) and
// telemetry off; GOOGLE_GEMINI_BASE_URL passes through. Events: init, message, tool_use, tool_result, error,
// result{status, stats}. Exit codes: 41 auth, 42 input, 52 config, 53 turn
// limit, 55 untrusted workspace, 130 cancelled. Gemini reports tokens, not
// cost: the cost is estimated from Prices.
type Gemini struct {
	cliBase
}

var (
	_ loop.Agent       = (*Gemini)(nil)
	_ loop.Preflighter = (*Gemini)(nil)
)

// geminiMaxAttempts caps the Gemini CLI's own retries of a model request.
const geminiMaxAttempts = 3

// geminiFallbackModel prices runs whose model is unknown.
const geminiFallbackModel = "gemini-2.5-pro"

// Gemini CLI exit codes (packages/core/src/utils/errors.ts).
const (
	geminiExitAuth      = 41
	geminiExitInput     = 42
	geminiExitConfig    = 52
	geminiExitTurnLimit = 53
	geminiExitUntrusted = 55
)

func geminiEnv(home string) []string {
	return []string{"GEMINI_CLI_HOME=" + home, "GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_TELEMETRY_ENABLED=false"}
}

// writeGeminiSettings writes the private settings.json: the auth method of
// the credential given (without it, GOOGLE_GEMINI_BASE_URL would select the
// "gateway" method, which headless runs refuse), no usage statistics (they
// go to Google's servers), no auto-update, fewer retries and the turn cap.
func writeGeminiSettings(home string, creds []string, maxTurns int) error {
	settings := map[string]any{
		"privacy": map[string]any{"usageStatisticsEnabled": false},
		"general": map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false,
			// Its default, 10 attempts with up to 30 s between them, hides a
			// rate limit for minutes; the engine backs off and retries itself.
			"maxAttempts": geminiMaxAttempts},
	}
	authType := ""
	for _, kv := range creds {
		switch {
		case strings.HasPrefix(kv, "GEMINI_API_KEY="):
			authType = "gemini-api-key"
		case strings.HasPrefix(kv, "GOOGLE_API_KEY=") && authType == "":
			authType = "vertex-ai"
		}
	}
	if authType != "" {
		settings["security"] = map[string]any{"auth": map[string]any{"selectedType": authType}}
	}
	if maxTurns > 0 {
		settings["model"] = map[string]any{"maxSessionTurns": maxTurns}
	}
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("gemini provider: creating %s: %w", dir, err)
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	p := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		return fmt.Errorf("gemini provider: writing %s: %w", p, err)
	}
	return nil
}

// Preflight checks the CLI and the credentials and returns `gemini --version`.
func (g *Gemini) Preflight(ctx context.Context, env []string) (string, error) {
	home, cleanup, err := g.scratchHome()
	if err != nil {
		return "", err
	}
	defer cleanup()
	return g.preflight(ctx, env, geminiEnv(home)...)
}

// Run runs the Gemini CLI once in req.Dir.
func (g *Gemini) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	bin, err := g.binary(req.Env)
	if err != nil {
		return loop.AgentResult{}, err
	}
	home, cleanup, err := g.home()
	if err != nil {
		return loop.AgentResult{}, err
	}
	defer cleanup()
	creds := g.credentialEnv()
	if err := writeGeminiSettings(home, creds, g.maxTurns(req)); err != nil {
		return loop.AgentResult{}, err
	}
	env := process.Override(req.Env, append(geminiEnv(home), creds...)...)
	args := []string{"--output-format", "stream-json", "--approval-mode", "yolo"}
	model := g.model(req)
	if model != "" {
		args = append(args, "-m", model)
	}
	args = append(args, g.cfg.Extra...)
	inv := invocation{bin: bin, env: env}
	if len(req.Prompt) > maxPromptArg {
		// -p is appended to what stdin holds.
		inv.stdin = strings.NewReader(req.Prompt)
		args = append(args, "-p", "Follow the instructions above.")
	} else {
		args = append(args, "-p", req.Prompt)
	}
	inv.args = args
	return g.execute(ctx, req, inv, &geminiParser{prices: g.prices(), model: model})
}

// geminiEvent is the part of a Gemini CLI stream-json event the parser reads.
type geminiEvent struct {
	Type       string         `json:"type"`
	SessionID  string         `json:"session_id"`
	Model      string         `json:"model"`
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	Delta      bool           `json:"delta"`
	ToolName   string         `json:"tool_name"`
	Parameters map[string]any `json:"parameters"`
	Status     string         `json:"status"`
	Severity   string         `json:"severity"`
	Message    string         `json:"message"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		Cached       int64 `json:"cached"`
		ToolCalls    int   `json:"tool_calls"`
		Models       map[string]struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
			Cached       int64 `json:"cached"`
		} `json:"models"`
	} `json:"stats"`
}

// geminiParser reads the Gemini CLI's stream-json.
type geminiParser struct {
	prices Prices
	model  string

	session  string
	text     strings.Builder // the current assistant message
	message  string
	midLine  bool
	turns    int
	result   *geminiEvent
	errMsg   string
	warnings int
}

// maxMessage bounds the final message kept from streamed deltas.
const maxMessage = 64 << 10

func (p *geminiParser) endText(out io.Writer) {
	if p.midLine {
		fmt.Fprintln(out)
		p.midLine = false
	}
	if s := strings.TrimSpace(p.text.String()); s != "" {
		p.message = s
	}
	p.text.Reset()
}

func (p *geminiParser) event(line []byte, out io.Writer) {
	var ev geminiEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return
	}
	if ev.SessionID != "" {
		p.session = ev.SessionID
	}
	switch ev.Type {
	case "init":
		if p.model == "" {
			p.model = ev.Model
		}
		fmt.Fprintf(out, "gemini session %s, model %s\n", ev.SessionID, ev.Model)
	case "message":
		if ev.Role != "assistant" {
			return
		}
		if !ev.Delta {
			p.endText(out)
		}
		if p.text.Len() == 0 {
			p.turns++
		}
		if p.text.Len() < maxMessage {
			p.text.WriteString(ev.Content)
		}
		_, _ = io.WriteString(out, ev.Content)
		p.midLine = !strings.HasSuffix(ev.Content, "\n")
		if !ev.Delta {
			p.endText(out)
		}
	case "tool_use":
		p.endText(out)
		renderTool(out, ev.ToolName, summarizeInput(ev.Parameters))
	case "tool_result":
		p.endText(out)
		if ev.Status == "error" && ev.Error != nil {
			fmt.Fprintf(out, "  ✗ %s\n", oneLine(ev.Error.Message, 200))
		}
	case "error":
		p.endText(out)
		fmt.Fprintf(out, "! %s\n", oneLine(ev.Message, 300))
		if ev.Severity == "error" {
			p.errMsg = ev.Message
		} else {
			p.warnings++
		}
	case "result":
		p.endText(out)
		e := ev
		p.result = &e
	}
}

func (p *geminiParser) finish(r *loop.AgentResult, info runInfo) {
	r.SessionID = p.session
	if p.text.Len() > 0 {
		p.endText(io.Discard)
	}
	r.Message = p.message
	r.Turns = p.turns
	res := p.result
	if res != nil && res.Stats != nil {
		s := res.Stats
		r.InputTokens, r.OutputTokens = s.InputTokens, s.OutputTokens
		cost, priced := 0.0, false
		for model, m := range s.Models {
			if pr, ok := p.prices.Lookup(model, geminiFallbackModel); ok {
				cost += pr.Cost(m.InputTokens, m.Cached, m.OutputTokens)
				priced = true
			}
		}
		if !priced && r.Tokens() > 0 {
			if pr, ok := p.prices.Lookup(p.model, geminiFallbackModel); ok {
				cost, priced = pr.Cost(s.InputTokens, s.Cached, s.OutputTokens), true
			}
		}
		if priced && r.Tokens() > 0 {
			r.CostUSD, r.CostEstimated = cost, true
		}
	}
	msg := p.errMsg
	if res != nil && res.Error != nil {
		msg = strings.TrimSpace(res.Error.Type + ": " + res.Error.Message)
	}
	switch code := info.res.ExitCode; {
	case code == geminiExitAuth:
		r.Class = loop.ClassAuth
		r.Detail = fmt.Sprintf("gemini could not authenticate (exit 41): %s; set GEMINI_API_KEY", oneLine(orStderr(msg, info), 300))
	case code == geminiExitConfig || code == geminiExitUntrusted || code == geminiExitInput:
		r.Class = loop.ClassAuth
		r.Detail = fmt.Sprintf("gemini refused its configuration or input (exit %d): %s", code, oneLine(orStderr(msg, info), 300))
	case code == geminiExitTurnLimit:
		r.Class = loop.ClassMaxTurns
		r.Detail = "gemini stopped at its session turn limit (maxSessionTurns)"
	case res != nil && res.Status == "error", res == nil && msg != "":
		failure(r, "gemini", msg, loop.ClassCrash)
	case code != 0:
		crash(r, info, fmt.Sprintf("gemini exited with code %d", code))
	case res == nil:
		crash(r, info, "gemini ended without a result event")
	}
}

func orStderr(msg string, info runInfo) string {
	if msg != "" {
		return msg
	}
	if s := lastLine(info.stderr); s != "" {
		return s
	}
	return "no message"
}
