package loop_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/redact"
)

// syncBuffer is the terminal of the test: written by the engine's
// goroutines, read at the end.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunawayAgentOutputIsBounded: an agent that prints 40 MiB leaves an
// iteration log of about 16 MiB and about 2 MiB on the terminal, each with
// the start, a line saying what was left out, and the end, secrets masked
// on both sides of the cut.
func TestRunawayAgentOutputIsBounded(t *testing.T) {
	t.Parallel()
	const secret = "sk-ant-secret-value-0123456789"
	dir, repo := newRepo(t)
	agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
		line := []byte(strings.Repeat("y", 200) + " " + secret + "\n")
		req.Output.Write([]byte("the first line\n"))
		for written := 0; written < 40<<20; written += len(line) {
			if _, err := req.Output.Write(line); err != nil {
				return loop.AgentResult{}, err
			}
		}
		req.Output.Write([]byte("the last line " + secret + "\n"))
		writeFile(req.Dir, "fixed", "yes\n")
		return loop.AgentResult{}, nil
	})
	e, st := newEngine(t, dir, repo, agent, fakeJudge{}, nil)
	var secrets redact.Set
	secrets.Add(secret)
	e.Redact = secrets.Writer
	term := &syncBuffer{}
	e.AgentOut = term
	if _, err := e.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(e.Dir.LogPath(1))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		text  string
		limit int
	}{"iteration log": {string(log), 16<<20 + 64<<10}, "terminal": {term.String(), 2<<20 + 64<<10}} {
		if len(tc.text) > tc.limit {
			t.Errorf("%s: %d bytes, want at most %d", name, len(tc.text), tc.limit)
		}
		if strings.Contains(tc.text, secret) || strings.Contains(tc.text, secret[:12]+"\n") {
			t.Errorf("%s holds the secret or a cut piece of it", name)
		}
		for _, want := range []string{"the first line\n", "bytes of output left out here", "the last line ***\n"} {
			if !strings.Contains(tc.text, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	if !strings.Contains(string(log), "--- completion check") {
		t.Error("the check's output does not follow the agent's in the log")
	}
	if i, j := strings.Index(string(log), "the last line"), strings.Index(string(log), "--- completion check"); i > j {
		t.Error("the agent's kept tail comes after the check's output")
	}
}
