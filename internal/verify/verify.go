// Package verify runs the completion command for the harness: `sh -c` in
// the command's working directory with the filtered environment, bounded
// output, a timeout, and its output and report files parsed into test counts
// and coverage. The agent's word never decides completion; this does.
package verify

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// Shell runs completion commands with /bin/sh.
type Shell struct {
	// Shell is the shell to use (default "sh").
	Shell string
	// Keep is how much of the output is kept for parsing (default 1 MiB).
	Keep int
	// ScanReports also reads JUnit XML and coverage files written by the run.
	ScanReports bool
}

var _ loop.Verifier = (*Shell)(nil)

// Check runs req.Command once.
func (s *Shell) Check(ctx context.Context, req loop.CheckRequest) (loop.CheckResult, error) {
	sh := s.Shell
	if sh == "" {
		sh = "sh"
	}
	keep := s.Keep
	if keep == 0 {
		keep = 1 << 20
	}
	tail := process.NewTail(keep)
	var out io.Writer = tail
	if req.Output != nil {
		out = io.MultiWriter(tail, req.Output)
	}
	start := time.Now()
	res, err := process.Run(ctx, process.Spec{
		Path: sh, Args: []string{"-c", req.Command}, Dir: req.Dir, Env: req.Env,
		Stdout: out, Stderr: out, Timeout: req.Timeout,
	})
	if err != nil {
		return loop.CheckResult{}, fmt.Errorf("running %q in %s: %w", req.Command, req.Dir, err)
	}
	output := tail.String()
	if d := tail.Dropped(); d > 0 {
		output = fmt.Sprintf("[... %d bytes of earlier output dropped ...]\n", d) + output
	}
	cr := loop.CheckResult{
		Passed:   res.ExitCode == 0 && !res.Stopped(),
		ExitCode: res.ExitCode,
		Duration: res.Duration,
		Output:   output,
		TimedOut: res.TimedOut,
		Tests:    testreport.Parse(output),
	}
	if res.TimedOut {
		cr.Output += fmt.Sprintf("\n[agent-loop: the completion command was stopped after %s]\n", req.Timeout)
	}
	if s.ScanReports {
		if rep, err := testreport.ScanReports(req.Dir, start); err == nil {
			cr.Tests = testreport.Merge(cr.Tests, rep)
		}
	}
	return cr, nil
}
