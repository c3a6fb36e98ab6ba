// Package process runs external commands for the harness: the agent CLIs and
// the completion command. Every child runs in its own process group with a
// filtered environment, a wall timeout and an idle timeout; on cancellation the
// whole group gets SIGINT, then SIGTERM, then SIGKILL. Under a context that
// carries a Jail (WithJail; internal/sandbox is one), the child runs inside
// it, and when the child ends the jail ends every process it started,
// whatever group or session it moved to, before Run returns.
package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Spec describes one child process.
type Spec struct {
	Path  string   // program; looked up in PATH when it has no slash
	Args  []string // arguments, without the program name
	Dir   string
	Env   []string // the complete environment of the child (never inherited)
	Stdin io.Reader
	// Stdout and Stderr receive the child's output as it is produced; nil
	// discards. The same writer may be given for both.
	Stdout io.Writer
	Stderr io.Writer
	// Timeout bounds the whole run; IdleTimeout the time without output.
	Timeout     time.Duration
	IdleTimeout time.Duration
	// Grace is the time between SIGINT, SIGTERM and SIGKILL (default 2 s).
	Grace time.Duration
}

// Result is how a child ended.
type Result struct {
	ExitCode  int // -1 when killed by a signal
	Duration  time.Duration
	TimedOut  bool // wall timeout reached
	Idle      bool // idle timeout reached
	Cancelled bool // the context was cancelled
	Signal    string
	// Swept is how many processes the jail's sweep ended outside the
	// child's process group (started in the background and left behind).
	Swept int
}

// A Jail contains the children Run starts under a context that carries it
// (WithJail): the agent, the completion command, everything they start.
// internal/sandbox implements it.
type Jail interface {
	// Wrap turns cmd, not yet started, into one that runs inside the
	// jail (it may change Path, Args, Env and SysProcAttr; the child must
	// still lead its own process group).
	Wrap(cmd *exec.Cmd) error
	// Sweep ends every process the wrapped command left behind (leader:
	// its pid, 0 when it did not start); Run calls it once after every
	// Wrap. It returns how many it ended outside the leader's group.
	Sweep(leader int) (int, error)
}

type jailKey struct{}

// WithJail returns a context under which Run starts every child inside j.
func WithJail(ctx context.Context, j Jail) context.Context {
	return context.WithValue(ctx, jailKey{}, j)
}

// JailOf returns the jail ctx carries, nil when none.
func JailOf(ctx context.Context) Jail {
	j, _ := ctx.Value(jailKey{}).(Jail)
	return j
}

// SweepError says the jail's sweep could not end every process the child
// left behind: the harness must not go on as if nothing of the child's
// were running.
type SweepError struct {
	Program string
	Err     error
}

func (e *SweepError) Error() string {
	return fmt.Sprintf("after %s: %v", e.Program, e.Err)
}
func (e *SweepError) Unwrap() error { return e.Err }

// Uncontained marks the error for the engine (loop.Uncontained): nothing
// may be committed or pushed while the child's processes may still run.
func (e *SweepError) Uncontained() bool { return true }

// Stopped reports whether the harness stopped the child.
func (r Result) Stopped() bool { return r.TimedOut || r.Idle || r.Cancelled }

// NotFoundError says a program is not installed.
type NotFoundError struct {
	Program string
	Err     error
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s: not found in PATH (%v)", e.Program, e.Err)
}
func (e *NotFoundError) Unwrap() error { return e.Err }

// Run starts the child and waits for it and its process group. The error is
// non-nil only when the child could not be started, or when the jail of
// ctx could not end what it left behind (*SweepError, with the Result).
func Run(ctx context.Context, spec Spec) (Result, error) {
	path := spec.Path
	if !containsSlash(path) {
		p, err := LookPath(path, spec.Env)
		if err != nil {
			return Result{}, &NotFoundError{Program: spec.Path, Err: err}
		}
		path = p
	}
	grace := spec.Grace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	cmd := &exec.Cmd{Path: path, Args: append([]string{spec.Path}, spec.Args...), Dir: spec.Dir, Env: spec.Env}
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	jail := JailOf(ctx)
	if jail != nil {
		if err := jail.Wrap(cmd); err != nil {
			return Result{}, fmt.Errorf("starting %s in the sandbox: %w", spec.Path, err)
		}
	}
	if spec.Stdin != nil {
		cmd.Stdin = spec.Stdin
	}

	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	var copies sync.WaitGroup
	var readers []*os.File
	pipe := func(w io.Writer) (*os.File, error) {
		r, wr, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		readers = append(readers, r)
		copies.Add(1)
		go func() {
			defer copies.Done()
			buf := make([]byte, 32*1024)
			for {
				n, err := r.Read(buf)
				if n > 0 {
					last.Store(time.Now().UnixNano())
					if w != nil {
						_, _ = w.Write(buf[:n])
					}
				}
				if err != nil {
					return
				}
			}
		}()
		return wr, nil
	}
	outW, err := pipe(spec.Stdout)
	if err != nil {
		if jail != nil {
			_, _ = jail.Sweep(0)
		}
		return Result{}, fmt.Errorf("creating output pipe: %w", err)
	}
	errW := outW
	if spec.Stderr != spec.Stdout {
		if errW, err = pipe(spec.Stderr); err != nil {
			outW.Close()
			if jail != nil {
				_, _ = jail.Sweep(0)
			}
			return Result{}, fmt.Errorf("creating error pipe: %w", err)
		}
	}
	cmd.Stdout, cmd.Stderr = outW, errW

	start := time.Now()
	if err := cmd.Start(); err != nil {
		outW.Close()
		if errW != outW {
			errW.Close()
		}
		for _, r := range readers {
			r.Close()
		}
		if jail != nil {
			_, _ = jail.Sweep(0)
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return Result{}, &NotFoundError{Program: spec.Path, Err: err}
		}
		return Result{}, fmt.Errorf("starting %s: %w", spec.Path, err)
	}
	// The child holds its own copies of the write ends.
	outW.Close()
	if errW != outW {
		errW.Close()
	}
	pgid := cmd.Process.Pid

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var res Result
	var timeout <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var idleTick <-chan time.Time
	if spec.IdleTimeout > 0 {
		tk := time.NewTicker(idleCheck(spec.IdleTimeout))
		defer tk.Stop()
		idleTick = tk.C
	}

	var waitErr error
	stopping := false
	var escalate <-chan time.Time
	stage := 0
	signals := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL}
	stop := func() {
		if stopping {
			return
		}
		stopping = true
		_ = syscall.Kill(-pgid, signals[0])
		escalate = time.After(grace)
	}
	ctxDone := ctx.Done()
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case <-ctxDone:
			ctxDone = nil
			res.Cancelled = true
			stop()
		case <-timeout:
			res.TimedOut = true
			stop()
		case <-idleTick:
			if time.Since(time.Unix(0, last.Load())) >= spec.IdleTimeout && !stopping {
				res.Idle = true
				stop()
			}
		case <-escalate:
			stage++
			if stage < len(signals) {
				_ = syscall.Kill(-pgid, signals[stage])
				escalate = time.After(grace)
			} else {
				escalate = nil
			}
		}
	}
	res.Duration = time.Since(start)
	// Whatever the leader did, its group goes with it: children that forked
	// and stayed behind are killed, so no process outlives the run.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	// In a jail, so does everything else it started (in another group or
	// session, double-forked): before the output is drained, since they
	// may hold the pipes.
	var sweepErr error
	if jail != nil {
		n, err := jail.Sweep(pgid)
		res.Swept = n
		if err != nil {
			sweepErr = &SweepError{Program: spec.Path, Err: err}
		}
	}

	// Wait for the output to drain; a grandchild that escaped the group may
	// hold the pipe open, so the wait is bounded.
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(2 * time.Second):
		for _, r := range readers {
			r.Close()
		}
		<-drained
	}
	for _, r := range readers {
		r.Close()
	}

	res.ExitCode = exitCode(cmd.ProcessState, waitErr)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
	}
	return res, sweepErr
}

func idleCheck(idle time.Duration) time.Duration {
	d := idle / 10
	if d < 10*time.Millisecond {
		d = 10 * time.Millisecond
	}
	if d > time.Second {
		d = time.Second
	}
	return d
}

func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		if err != nil {
			return -1
		}
		return 0
	}
	return ps.ExitCode()
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}
