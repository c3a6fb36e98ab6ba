package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
)

// Claude runs Claude Code headless:
//
//	claude -p --output-format stream-json --verbose --permission-mode acceptEdits
//	  --allowedTools "Bash Edit Write Read Glob Grep MultiEdit" [--max-turns N]
//	  [--model M] [--max-budget-usd X] [extra...]   (prompt on stdin)
//
// acceptEdits with allowed tools works as root, where
// --dangerously-skip-permissions refuses to run. The result event's subtype
// and is_error decide the outcome, not the exit code.
type Claude struct {
	cliBase

	budgetOnce sync.Once
	hasBudget  bool
}

var (
	_ loop.Agent       = (*Claude)(nil)
	_ loop.Preflighter = (*Claude)(nil)
)

// ClaudeAllowedTools are the tools Claude Code may use without asking.
const ClaudeAllowedTools = "Bash Edit Write Read Glob Grep MultiEdit"

// claudeQuietEnv keeps Claude Code from calling home: no telemetry, error
// reports or update checks; the model API (ANTHROPIC_BASE_URL) only.
var claudeQuietEnv = []string{
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
	"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1", "CLAUDE_CODE_ENABLE_TELEMETRY=0",
}

// Preflight checks the CLI and the credentials and returns `claude --version`.
func (c *Claude) Preflight(ctx context.Context, env []string) (string, error) {
	home, cleanup, err := c.scratchHome()
	if err != nil {
		return "", err
	}
	defer cleanup()
	return c.preflight(ctx, env, append([]string{"CLAUDE_CONFIG_DIR=" + home}, claudeQuietEnv...)...)
}

// supportsBudget reports whether this claude has --max-budget-usd.
func (c *Claude) supportsBudget(ctx context.Context, bin string, env []string) bool {
	c.budgetOnce.Do(func() {
		out := process.NewTail(256 << 10)
		_, err := process.Run(ctx, process.Spec{Path: bin, Args: []string{"--help"}, Env: env, Stdout: out, Stderr: out,
			Timeout: 10 * time.Second, Grace: time.Second})
		c.hasBudget = err == nil && strings.Contains(out.String(), "--max-budget-usd")
	})
	return c.hasBudget
}

// Run runs Claude Code once in req.Dir.
func (c *Claude) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	bin, err := c.binary(req.Env)
	if err != nil {
		return loop.AgentResult{}, err
	}
	home, cleanup, err := c.home()
	if err != nil {
		return loop.AgentResult{}, err
	}
	defer cleanup()
	env := process.Override(req.Env, append(append([]string{"CLAUDE_CONFIG_DIR=" + home}, claudeQuietEnv...), c.credentialEnv()...)...)

	args := []string{"-p", "--output-format", "stream-json", "--verbose",
		"--permission-mode", "acceptEdits", "--allowedTools", ClaudeAllowedTools}
	if n := c.maxTurns(req); n > 0 {
		args = append(args, "--max-turns", strconv.Itoa(n))
	}
	if m := c.model(req); m != "" {
		args = append(args, "--model", m)
	}
	if req.BudgetUSD > 0 && c.supportsBudget(ctx, bin, env) {
		args = append(args, "--max-budget-usd", strconv.FormatFloat(req.BudgetUSD, 'f', -1, 64))
	}
	args = append(args, c.cfg.Extra...)
	return c.execute(ctx, req, invocation{bin: bin, args: args, env: env, stdin: strings.NewReader(req.Prompt)}, &claudeParser{})
}

// claudeEvent is the part of a stream-json event the parser reads.
type claudeEvent struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	Version   string `json:"claude_code_version"`
	Message   *struct {
		Content []claudeBlock `json:"content"`
	} `json:"message"`
	// api_retry
	Attempt     int `json:"attempt"`
	MaxRetries  int `json:"max_retries"`
	ErrorStatus int `json:"error_status"`
	// result
	IsError           bool         `json:"is_error"`
	NumTurns          int          `json:"num_turns"`
	TotalCostUSD      float64      `json:"total_cost_usd"`
	Usage             *claudeUsage `json:"usage"`
	Result            string       `json:"result"`
	Errors            []string     `json:"errors"`
	APIErrorStatus    int          `json:"api_error_status"`
	APIErrorType      string       `json:"api_error_type"`
	PermissionDenials []struct {
		ToolName  string         `json:"tool_name"`
		ToolInput map[string]any `json:"tool_input"`
	} `json:"permission_denials"`
}

type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

type claudeBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`
	Input   map[string]any  `json:"input"`
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"is_error"`
}

// claudeParser reads Claude Code's stream-json.
type claudeParser struct {
	session   string
	result    *claudeEvent
	lastText  string
	apiStatus int // last API error status seen in a retry
	turns     int
}

func (p *claudeParser) event(line []byte, out io.Writer) {
	var ev claudeEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return // not an event of ours; it is in the transcript
	}
	if ev.SessionID != "" {
		p.session = ev.SessionID
	}
	switch ev.Type {
	case "system":
		switch ev.Subtype {
		case "init":
			fmt.Fprintf(out, "claude %s, model %s, session %s\n", ev.Version, ev.Model, ev.SessionID)
		case "api_retry":
			p.apiStatus = ev.ErrorStatus
			fmt.Fprintf(out, "! model API error %d, retry %d of %d\n", ev.ErrorStatus, ev.Attempt, ev.MaxRetries)
		}
	case "assistant":
		if ev.Message == nil {
			return
		}
		p.turns++
		for _, b := range ev.Message.Content {
			switch b.Type {
			case "text":
				renderText(out, b.Text)
				if strings.TrimSpace(b.Text) != "" {
					p.lastText = b.Text
				}
			case "tool_use":
				renderTool(out, b.Name, summarizeInput(b.Input))
			}
		}
	case "user":
		if ev.Message == nil {
			return
		}
		for _, b := range ev.Message.Content {
			if b.Type == "tool_result" && b.IsError {
				fmt.Fprintf(out, "  ✗ %s\n", oneLine(blockText(b.Content), 200))
			}
		}
	case "result":
		e := ev
		p.result = &e
	}
}

// blockText is the text of a tool_result's content (a string or blocks).
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type, Text string
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, " ")
	}
	return string(raw)
}

func (p *claudeParser) finish(r *loop.AgentResult, info runInfo) {
	r.SessionID = p.session
	res := p.result
	if res == nil {
		r.Turns = p.turns
		r.Message = p.lastText
		if info.res.ExitCode == 0 {
			crash(r, info, "claude ended without a result event")
		} else {
			crash(r, info, fmt.Sprintf("claude exited with code %d and no result", info.res.ExitCode))
		}
		if r.Class == loop.ClassCrash && p.apiStatus != 0 {
			if c := classifyStatus(p.apiStatus); c != loop.ClassNone {
				r.Class = c
			}
		}
		return
	}
	r.Turns = res.NumTurns
	r.CostUSD = res.TotalCostUSD
	if u := res.Usage; u != nil {
		r.InputTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
		r.OutputTokens = u.OutputTokens
	}
	if !res.IsError {
		// An error's text is in Detail, not carried as the agent's message.
		r.Message = res.Result
	}
	r.PermissionDenials = len(res.PermissionDenials)

	msg := res.Result
	if msg == "" && len(res.Errors) > 0 {
		msg = strings.Join(res.Errors, "; ")
	}
	switch {
	case res.Subtype == "error_max_turns":
		r.Class = loop.ClassMaxTurns
		r.Detail = fmt.Sprintf("claude stopped at its turn limit (--max-turns) after %d turns", res.NumTurns)
	case res.Subtype == "error_max_budget_usd":
		r.Class = loop.ClassBudget
		r.Detail = fmt.Sprintf("claude stopped at its budget (--max-budget-usd) after $%.4f", res.TotalCostUSD)
	case res.APIErrorStatus != 0 || res.APIErrorType != "":
		cls := classifyStatus(res.APIErrorStatus)
		switch res.APIErrorType {
		case "authentication_error", "permission_error":
			cls = loop.ClassAuth
		case "rate_limit_error", "overloaded_error":
			cls = loop.ClassRateLimit
		}
		failure(r, "claude", fmt.Sprintf("model API error %d %s: %s", res.APIErrorStatus, res.APIErrorType, msg), loop.ClassCrash)
		if cls != loop.ClassNone {
			r.Class = cls
		}
	case res.IsError || strings.HasPrefix(res.Subtype, "error"):
		if msg == "" {
			msg = res.Subtype
		}
		failure(r, "claude", msg, loop.ClassCrash)
	case len(res.PermissionDenials) > 0:
		var tools []string
		for _, d := range res.PermissionDenials {
			tools = append(tools, strings.TrimSpace(d.ToolName+" "+oneLine(summarizeInput(d.ToolInput), 60)))
		}
		r.Class = loop.ClassToolFailure
		r.Detail = fmt.Sprintf("claude's edits were denied: %d tool use(s) refused by its permission mode (%s); "+
			"the run allows only %s with --permission-mode acceptEdits", len(tools), strings.Join(tools, "; "), ClaudeAllowedTools)
	}
}
