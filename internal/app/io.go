package app

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/redact"
	"github.com/aiwg/agent-loop/internal/spec"
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

// UsageError is a problem of the user's input or configuration (a bad
// value, a missing credential, an unknown loop): nothing was started, or
// the loop stopped before it could do anything. The doors exit 2 on it.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// IsUsage reports whether err is (or wraps) a UsageError.
func IsUsage(err error) bool {
	var ue *UsageError
	return errors.As(err, &ue)
}

// usage marks err as a usage error.
func usage(err error) error {
	if err == nil || IsUsage(err) {
		return err
	}
	return &UsageError{Err: err}
}

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// problemList formats preflight problems as one usage error.
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
	return &UsageError{Err: errors.New(b.String())}
}

// ProblemList is problemList for the doors: the problems of spec.Validate
// (and any others) as one usage error, each on its own line.
func ProblemList(err error) error { return problemList([]error{err}) }

func flatten(err error) []string {
	if ps := spec.Problems(err); len(ps) > 0 {
		var out []string
		for _, p := range ps {
			out = append(out, p.Error())
		}
		return out
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []string{err.Error()}
}

// multiWriter writes to every writer; one that fails (a terminal closed
// under a pipe: EPIPE) is dropped and the others go on, so the loop's log
// and the agent's output never stop because the terminal went away.
func multiWriter(ws ...io.Writer) io.Writer { return &lenientMulti{ws: ws} }

type lenientMulti struct {
	mu sync.Mutex
	ws []io.Writer
}

func (m *lenientMulti) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := m.ws[:0:0]
	var first error
	for _, w := range m.ws {
		if _, err := w.Write(p); err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		kept = append(kept, w)
	}
	m.ws = kept
	if len(kept) == 0 && first != nil {
		return 0, first
	}
	return len(p), nil
}
