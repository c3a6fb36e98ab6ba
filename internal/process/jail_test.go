package process

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// recordingJail wraps commands in `env JAILED=1` and records the sweeps.
type recordingJail struct {
	broken bool // Wrap points the command at a program that is not there
	wraps  int
	sweeps []int
	err    error
}

func (j *recordingJail) Wrap(cmd *exec.Cmd) error {
	j.wraps++
	cmd.Args = append([]string{"env", "JAILED=1", cmd.Path}, cmd.Args[1:]...)
	p, err := exec.LookPath("env")
	if err != nil {
		return err
	}
	cmd.Path = p
	if j.broken {
		cmd.Path = "/nonexistent/wrapper"
	}
	return nil
}

func (j *recordingJail) Sweep(leader int) (int, error) {
	j.sweeps = append(j.sweeps, leader)
	return 2, j.err
}

func TestRunUnderAJail(t *testing.T) {
	t.Parallel()
	j := &recordingJail{}
	ctx := WithJail(context.Background(), j)
	if JailOf(ctx) != j || JailOf(context.Background()) != nil {
		t.Fatal("JailOf does not return the jail of the context")
	}
	var out bytes.Buffer
	res, err := Run(ctx, Spec{Path: "sh", Args: []string{"-c", "echo $JAILED"}, Env: shEnv(), Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) != "1" || j.wraps != 1 || len(j.sweeps) != 1 || j.sweeps[0] <= 0 || res.Swept != 2 {
		t.Fatalf("output %q, wraps %d, sweeps %v, swept %d: the child must run wrapped and be swept once", out.String(), j.wraps, j.sweeps, res.Swept)
	}
	// A sweep that could not end everything is an error the caller sees.
	j.err = errors.New("2 processes still alive")
	res, err = Run(ctx, Spec{Path: "true", Env: shEnv()})
	var se *SweepError
	if !errors.As(err, &se) || res.ExitCode != 0 || !strings.Contains(err.Error(), "still alive") {
		t.Fatalf("err = %v, res = %+v; want a SweepError with the result", err, res)
	}
	// A child that cannot start still frees the jail.
	j.err, j.broken = nil, true
	if _, err := Run(ctx, Spec{Path: "true", Env: shEnv()}); err == nil {
		t.Fatal("a missing program started")
	}
	if last := j.sweeps[len(j.sweeps)-1]; last != 0 || len(j.sweeps) != 3 {
		t.Fatalf("sweeps %v: a failed start must be swept with leader 0", j.sweeps)
	}
}
