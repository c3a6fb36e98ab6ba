package provider

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
)

// Command runs any command as the agent: `sh -c "$AGENT_COMMAND"` in the
// repository with the prompt on stdin and the AGENT_LOOP_* variables of
// DESIGN.md. The task reaches the command only as data (stdin, a file, an
// environment variable), never interpolated into the command line.
type Command struct {
	Script string
	Shell  string // default "sh"
}

var (
	_ loop.Agent       = (*Command)(nil)
	_ loop.Preflighter = (*Command)(nil)
)

// NewCommand returns the command provider for script.
func NewCommand(script string) *Command { return &Command{Script: script} }

// Name is "command".
func (c *Command) Name() string { return "command" }

// Preflight checks that the shell exists.
func (c *Command) Preflight(ctx context.Context, env []string) (string, error) {
	if _, err := process.LookPath(c.shell(), env); err != nil {
		return "", fmt.Errorf("the command provider needs %s: %w", c.shell(), err)
	}
	return "sh", nil
}

func (c *Command) shell() string {
	if c.Shell != "" {
		return c.Shell
	}
	return "sh"
}

// Run runs the command once.
func (c *Command) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	env := process.Override(req.Env,
		"AGENT_LOOP_PROMPT_FILE="+req.PromptFile,
		"AGENT_LOOP_ITERATION="+strconv.Itoa(req.Iteration),
		"AGENT_LOOP_ID="+req.LoopID,
		"AGENT_LOOP_TASK="+req.Task,
		"AGENT_LOOP_COMPLETION="+req.Criterion,
		"AGENT_LOOP_LAST_OUTPUT_FILE="+req.LastOutputFile,
	)
	tail := process.NewTail(4096)
	out := joinWriters(req.Output, tail)
	res, err := process.Run(ctx, process.Spec{
		Path: c.shell(), Args: []string{"-c", c.Script}, Dir: req.Dir, Env: env,
		Stdin: strings.NewReader(req.Prompt), Stdout: out, Stderr: out,
		Timeout: req.Timeout, IdleTimeout: req.IdleTimeout,
	})
	if err != nil {
		return loop.AgentResult{}, err
	}
	ar := loop.AgentResult{ExitCode: res.ExitCode, Duration: res.Duration, Message: lastLines(tail.String(), 5)}
	ar.Class, ar.Detail = classifyExit(res)
	return ar, nil
}

// classifyExit maps how a process ended to an error class when the CLI has
// no structured output to say more.
func classifyExit(res process.Result) (loop.ErrorClass, string) {
	switch {
	case res.Cancelled:
		return loop.ClassCancelled, "stopped: the loop was interrupted"
	case res.TimedOut:
		return loop.ClassTimeout, fmt.Sprintf("stopped after the iteration timeout (%s)", res.Duration.Round(1e9))
	case res.Idle:
		return loop.ClassIdle, "stopped: no output for the idle timeout"
	case res.ExitCode != 0:
		return loop.ClassCrash, fmt.Sprintf("exited with code %d", res.ExitCode)
	}
	return loop.ClassNone, ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// joinWriters is io.MultiWriter that skips nil writers.
func joinWriters(ws ...io.Writer) io.Writer {
	var out []io.Writer
	for _, w := range ws {
		if w != nil {
			out = append(out, w)
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	return io.MultiWriter(out...)
}
