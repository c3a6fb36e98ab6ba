package github_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	owner = githubtest.DefaultOwner
	repo  = githubtest.DefaultRepo
	full  = githubtest.DefaultRepoFullName
)

// recorder records the waits between retries (returning at once) and the
// log lines of the client.
type recorder struct {
	mu     sync.Mutex
	sleeps []time.Duration
	logs   []string
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sleeps = append(r.sleeps, d)
	return ctx.Err()
}

func (r *recorder) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recorder) Sleeps() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.sleeps...)
}

func (r *recorder) Logs() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.logs, "\n")
}

// newClient returns a client of the fake's default repository with token.
func newClient(t *testing.T, srv *githubtest.Server, token string) (*github.Client, *recorder) {
	t.Helper()
	rec := &recorder{}
	c, err := github.New(context.Background(), token, srv.URL, owner, repo,
		github.WithSleep(rec.sleep), github.WithLogf(rec.logf))
	if err != nil {
		t.Fatalf("github.New: %v", err)
	}
	return c, rec
}
