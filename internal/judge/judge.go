package judge

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/shellcmd"
)

var _ loop.Judge = (*Judge)(nil)

// Options configures a Judge. The zero value is usable.
type Options struct {
	// Depends is what the criterion depends on in the repository: the
	// files it reads to decide what runs, the named scripts it follows and
	// its runner (shellcmd.Analyze's Depends, computed when the loop
	// starts, before any agent runs). The judge also analyses the command
	// itself, so the zero value still watches the task files and scripts
	// its words name.
	Depends shellcmd.Depends
	// StallAfter: the same failing fingerprint with no score improvement for
	// this many iterations stalls the loop (default 3).
	StallAfter int
	// EmptyDiffStall: this many empty diffs in a row stall the loop
	// (default 2).
	EmptyDiffStall int
	// Reinforcement is the starting level: "" means MINIMAL; "OFF" disables
	// escalation (stalls are still detected).
	Reinforcement string
}

// Judge implements loop.Judge. It is safe for concurrent use.
type Judge struct {
	opts Options

	mu        sync.Mutex
	latencies []time.Duration
}

// New returns a Judge with defaults filled in.
func New(opts Options) *Judge {
	if opts.StallAfter <= 0 {
		opts.StallAfter = 3
	}
	if opts.EmptyDiffStall <= 0 {
		opts.EmptyDiffStall = 2
	}
	opts.Reinforcement = strings.ToUpper(strings.TrimSpace(opts.Reinforcement))
	if opts.Reinforcement == "" || ValidateLevel(opts.Reinforcement) != nil {
		opts.Reinforcement = LevelMinimal
	}
	opts.Depends.Files = slices.Clone(opts.Depends.Files)
	opts.Depends.Targets = slices.Clone(opts.Depends.Targets)
	return &Judge{opts: opts}
}

// Assess judges one iteration: regressions from the diff against the
// baseline and from the test results, and the quality score.
func (j *Judge) Assess(ctx context.Context, in loop.JudgeInput) (loop.Verdict, error) {
	return j.AssessHeldOut(ctx, in, nil)
}

// Latencies returns the duration of every Assess call so far, in order
// (for the p95/p99 detection latency of persistence_metrics).
func (j *Judge) Latencies() []time.Duration {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.latencies)
}
