package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
)

// eventParser reads one CLI's structured stream. event is called for each
// JSON line, in order, from a single goroutine; finish is called once after
// the process ended and fills the result from what was seen.
type eventParser interface {
	event(line []byte, out io.Writer)
	finish(r *loop.AgentResult, run runInfo)
}

// runInfo is what the runner knows when the CLI has ended.
type runInfo struct {
	res      process.Result
	stderr   string // tail of stderr (and of plain stdout text)
	skipped  int    // JSON lines over MaxLine
	provider string
}

// invocation is one CLI run.
type invocation struct {
	bin   string
	args  []string
	env   []string
	stdin io.Reader
}

// execute runs the CLI, streams its output through p and classifies the run.
func (b *cliBase) execute(ctx context.Context, req loop.AgentRequest, inv invocation, p eventParser) (loop.AgentResult, error) {
	out := newCappedWriter(req.Output, MaxOutput, b.name+" output")
	var transcript *cappedWriter
	if req.Transcript != nil {
		transcript = newCappedWriter(req.Transcript, MaxTranscript, b.name+" transcript")
	}
	tail := process.NewTail(16 << 10)
	// A parser that sees the CLI wait for what will not come ends the run.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var halted struct {
		class  loop.ErrorClass
		detail string
	}
	split := newSplitter(MaxLine, func(line []byte) {
		if transcript != nil {
			_, _ = transcript.Write(append(line, '\n'))
		}
		p.event(line, out)
		if h, ok := p.(halter); ok && halted.class == "" {
			if class, detail, stop2 := h.halt(); stop2 {
				halted.class, halted.detail = class, detail
				stop()
			}
		}
	}, func(text []byte) {
		_, _ = out.Write(text)
		_, _ = tail.Write(text)
	})
	stdin := inv.stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	res, err := process.Run(runCtx, process.Spec{
		Path: inv.bin, Args: inv.args, Dir: req.Dir, Env: inv.env, Stdin: stdin,
		Stdout: split, Stderr: io.MultiWriter(out, tail),
		Timeout: req.Timeout, IdleTimeout: req.IdleTimeout,
	})
	if err != nil {
		var nf *process.NotFoundError
		if errors.As(err, &nf) {
			return loop.AgentResult{}, fmt.Errorf("%w: %w", &MissingCLIError{Provider: b.name, Program: inv.bin, Install: b.install}, err)
		}
		return loop.AgentResult{}, fmt.Errorf("%s provider: starting %s: %w", b.name, inv.bin, err)
	}
	split.Close()
	r := loop.AgentResult{ExitCode: res.ExitCode, Duration: res.Duration}
	info := runInfo{res: res, stderr: tail.String(), skipped: split.Skipped(), provider: b.name}
	p.finish(&r, info)
	// The harness's own stops override whatever the CLI said last.
	switch {
	case halted.class != "" && ctx.Err() == nil:
		r.Class, r.Detail = halted.class, halted.detail
	case res.Cancelled:
		r.Class, r.Detail = loop.ClassCancelled, fmt.Sprintf("%s was stopped: the loop was cancelled", b.name)
	case res.TimedOut:
		r.Class, r.Detail = loop.ClassTimeout, fmt.Sprintf("%s was stopped after the iteration timeout (%s)", b.name, req.Timeout)
	case res.Idle:
		r.Class, r.Detail = loop.ClassIdle, fmt.Sprintf("%s was stopped: no output for %s (idle timeout)", b.name, req.IdleTimeout)
	}
	if info.skipped > 0 && r.Detail == "" && r.Class == loop.ClassNone {
		r.Detail = fmt.Sprintf("%d output lines over %d MB were skipped", info.skipped, MaxLine>>20)
	}
	return r, nil
}

// halter is a parser that can tell, from the events so far, that the CLI
// waits for something that will not come (the network): the run is ended
// with that class and detail instead of at the idle timeout.
type halter interface {
	halt() (class loop.ErrorClass, detail string, stop bool)
}

// Patterns of provider errors, in CLI messages and API error bodies.
var (
	authPattern = regexp.MustCompile(`(?i)(\b401\b|\b403\b|unauthori[sz]ed|invalid[ _-]?(x-)?api[ _-]?key|incorrect api key|` +
		`authentication[ _]?(error|failed)|please run /login|not logged in|invalid bearer token|oauth token (has )?expired|` +
		`api key not valid|permission_error|forbidden|credit balance is too low)`)
	rateLimitPattern = regexp.MustCompile(`(?i)(\b429\b|\b529\b|too many requests|rate[ _-]?limit|overloaded|quota|` +
		`resource[ _]exhausted|usage limit|capacity)`)
)

// classifyText classifies an error message: auth, rate limit or "".
func classifyText(msg string) loop.ErrorClass {
	switch {
	case msg == "":
		return loop.ClassNone
	case rateLimitPattern.MatchString(msg):
		return loop.ClassRateLimit
	case authPattern.MatchString(msg):
		return loop.ClassAuth
	}
	return loop.ClassNone
}

// classifyStatus classifies an HTTP status of the model API.
func classifyStatus(status int) loop.ErrorClass {
	switch status {
	case 401, 403:
		return loop.ClassAuth
	case 429, 529, 503:
		return loop.ClassRateLimit
	}
	return loop.ClassNone
}

// failure fills Class and Detail for a run that failed with msg: auth and
// rate limits are told apart from other failures (fallback).
func failure(r *loop.AgentResult, provider, msg string, fallback loop.ErrorClass) {
	msg = oneLine(msg, 400)
	switch classifyText(msg) {
	case loop.ClassAuth:
		r.Class = loop.ClassAuth
		r.Detail = fmt.Sprintf("%s could not authenticate with the model API: %s; check the API key or token", provider, msg)
	case loop.ClassRateLimit:
		r.Class = loop.ClassRateLimit
		r.Detail = fmt.Sprintf("%s was rate limited or the model API is overloaded: %s", provider, msg)
	default:
		r.Class = fallback
		r.Detail = fmt.Sprintf("%s failed: %s", provider, msg)
	}
}

// crash classifies a run without a structured result.
func crash(r *loop.AgentResult, info runInfo, why string) {
	msg := lastLine(info.stderr)
	if msg == "" {
		msg = why
	} else {
		msg = why + ": " + msg
	}
	failure(r, info.provider, msg, loop.ClassCrash)
}

// oneLine squeezes s to one line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// renderTool writes one line for a tool call: "→ Name: summary".
func renderTool(out io.Writer, name, summary string) {
	if summary == "" {
		fmt.Fprintf(out, "→ %s\n", name)
		return
	}
	fmt.Fprintf(out, "→ %s: %s\n", name, oneLine(summary, 160))
}

// renderText writes assistant text, ending with a newline.
func renderText(out io.Writer, text string) {
	text = strings.TrimRight(text, "\n")
	if strings.TrimSpace(text) == "" {
		return
	}
	fmt.Fprintln(out, text)
}

// summarizeInput picks the most telling argument of a tool call.
func summarizeInput(input map[string]any) string {
	for _, k := range []string{"command", "cmd", "file_path", "filePath", "path", "absolute_path", "pattern", "url", "query", "description", "prompt"} {
		switch v := input[k].(type) {
		case string:
			if v != "" {
				return v
			}
		case []any:
			parts := make([]string, 0, len(v))
			for _, p := range v {
				parts = append(parts, fmt.Sprint(p))
			}
			return strings.Join(parts, " ")
		}
	}
	return ""
}
