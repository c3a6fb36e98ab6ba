package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/process"
)

// EvalOptions configure Evaluate.
type EvalOptions struct {
	// Bin is the agent-loop binary to run.
	Bin string
	// Checkouts holds one directory per label, <owner>__<name>.
	Checkouts string
	// Timeout bounds each infer run (default 2 minutes).
	Timeout time.Duration
	// Env is the environment of the children (filtered of secrets).
	Env []string
	// Progress receives one line per repository as it is scored.
	Progress io.Writer
}

// maxProposal bounds how much of infer's output is read.
const maxProposal = 4 << 20

// Evaluate runs `agent-loop infer --format json -C CHECKOUT TASK` for every
// label, one at a time, and scores each proposal. A label without a checkout
// is reported missing; a checkout that is a clone at another commit than the
// label's is an error, so a stale checkout is never scored.
func Evaluate(ctx context.Context, labels []Label, opts EvalOptions) []Result {
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	results := make([]Result, 0, len(labels))
	for i, l := range labels {
		r := evalOne(ctx, l, opts)
		fmt.Fprintf(opts.Progress, "[%d/%d] %-45s %s\n", i+1, len(labels), l.Repo, r.Verdict)
		results = append(results, r)
	}
	return results
}

func evalOne(ctx context.Context, l Label, opts EvalOptions) Result {
	r := Result{Repo: l.Repo, Ecosystem: l.Ecosystem, Commit: l.Commit, Expected: l.Expected(), Several: l.Several}
	dir := filepath.Join(opts.Checkouts, l.Slug())
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		r.Verdict = VerdictMissing
		r.Error = "no checkout at " + dir
		return r
	}
	head, isClone, err := CheckoutHead(ctx, dir, opts.Env)
	switch {
	case err != nil:
		r.Verdict, r.Error = VerdictError, err.Error()
		return r
	case isClone && head != l.Commit:
		r.Verdict = VerdictError
		r.Error = fmt.Sprintf("checkout is at %s, the label at %s: remove %s and run prepare", head, l.Commit, dir)
		return r
	}
	stdout, stderr := process.NewTail(maxProposal), process.NewTail(2048)
	res, err := process.Run(ctx, process.Spec{
		Path: opts.Bin, Args: []string{"infer", "--format", "json", "-C", dir, l.Task},
		Dir: dir, Env: opts.Env,
		Stdout: stdout, Stderr: stderr,
		Timeout: opts.Timeout,
	})
	r.DurationMS = res.Duration.Milliseconds()
	switch {
	case err != nil:
		r.Verdict, r.Error = VerdictError, err.Error()
		return r
	case res.TimedOut:
		r.Verdict, r.Error = VerdictError, fmt.Sprintf("infer did not finish within %s", opts.Timeout)
		return r
	case res.Stopped():
		r.Verdict, r.Error = VerdictError, "infer was stopped"
		return r
	case res.ExitCode != 0:
		r.Verdict = VerdictError
		r.Error = fmt.Sprintf("infer exited %d: %s", res.ExitCode, strings.TrimSpace(stderr.String()))
		return r
	}
	if stdout.Dropped() > 0 {
		r.Verdict, r.Error = VerdictError, fmt.Sprintf("infer printed more than %d bytes", maxProposal)
		return r
	}
	p, err := ParseProposal([]byte(stdout.String()))
	if err != nil {
		r.Verdict, r.Error = VerdictError, err.Error()
		return r
	}
	r.Verdict = Score(l, p)
	r.Confidence = p.Confidence
	r.Class = p.Class
	r.Proposed = p.Target()
	r.Setup = p.SetupLine()
	return r
}

// BuildAgentLoop compiles ./cmd/agent-loop of the module at root into dir and
// returns the binary's path.
func BuildAgentLoop(ctx context.Context, root, dir string, env []string) (string, error) {
	bin := filepath.Join(dir, "agent-loop")
	var out bytes.Buffer
	res, err := process.Run(ctx, process.Spec{
		Path: "go", Args: []string{"build", "-o", bin, "./cmd/agent-loop"},
		Dir: root, Env: env, Stdout: &out, Stderr: &out, Timeout: 15 * time.Minute,
	})
	if err != nil {
		return "", fmt.Errorf("building agent-loop in %s: %w", root, err)
	}
	if res.ExitCode != 0 || res.Stopped() {
		return "", fmt.Errorf("building agent-loop in %s: go build exited %d: %s", root, res.ExitCode, strings.TrimSpace(out.String()))
	}
	return bin, nil
}

var moduleRE = regexp.MustCompile(`(?m)^module\s+github\.com/aiwg/agent-loop\s*$`)

// ModuleRoot walks up from dir to the go.mod of github.com/aiwg/agent-loop.
func ModuleRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && moduleRE.Match(data) {
			return d, nil
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("reading %s: %w", filepath.Join(d, "go.mod"), err)
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is not inside the agent-loop module: run from the repository", abs)
		}
	}
}

// Inside reports whether path lies inside root (or is root).
func Inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
