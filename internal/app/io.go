package app

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aiwg/agent-loop/internal/config"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/redact"
)

// IO is what a command may touch of the outside world.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Environ is the harness's environment (os.Environ()).
	Environ []string
	// Interactive is true when a person can answer questions (a terminal on
	// stdin, not CI).
	Interactive bool
}

func (o IO) getenv(k string) string {
	v, _ := process.Lookup(o.Environ, k)
	return v
}

// harnessSecrets is what must never appear in a log, a transcript or a
// report: the GitHub and runtime tokens of the environment and the push token.
func harnessSecrets(o IO, token string) *redact.Set {
	s := &redact.Set{}
	for _, k := range []string{"GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN"} {
		s.Add(o.getenv(k))
	}
	s.Add(token)
	return s
}

// ExitError carries an exit code and the message that explains it.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// usage wraps configuration problems: exit 2.
func usage(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: loop.ExitConfig, Err: err}
}

func usagef(format string, args ...any) error {
	return &ExitError{Code: loop.ExitConfig, Err: fmt.Errorf(format, args...)}
}

// problemList formats preflight problems as one message.
func problemList(errs []error) error {
	var all []string
	for _, e := range errs {
		all = append(all, flatten(e)...)
	}
	if len(all) == 0 {
		return nil
	}
	var b strings.Builder
	if len(all) == 1 {
		b.WriteString("cannot start the loop: ")
		b.WriteString(all[0])
	} else {
		fmt.Fprintf(&b, "cannot start the loop; %d problems:", len(all))
		for _, p := range all {
			fmt.Fprintf(&b, "\n  - %s", p)
		}
	}
	return &ExitError{Code: loop.ExitConfig, Err: errors.New(b.String())}
}

func flatten(err error) []string {
	if ps := config.Problems(err); len(ps) > 0 {
		var out []string
		for _, p := range ps {
			out = append(out, p.Error())
		}
		return out
	}
	return []string{err.Error()}
}
