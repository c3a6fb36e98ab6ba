package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"

	"github.com/aiwg/agent-loop/internal/escape"
)

// Check run conclusions GitHub accepts from a client.
var checkConclusions = []string{"success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required"}

// maxCheckSummaryBytes is GitHub's limit on a check run's output.summary.
const maxCheckSummaryBytes = 65535

// CreateCheckRun records a completed check run named name on headSHA with the
// loop's verdict. It is optional: GITHUB_TOKEN without `checks: write` gets a
// *PermissionError, which callers report and carry on.
func (c *Client) CreateCheckRun(ctx context.Context, headSHA, name, conclusion, title, summary string) error {
	valid := false
	for _, v := range checkConclusions {
		if conclusion == v {
			valid = true
		}
	}
	if !valid {
		return fmt.Errorf("check run %q: conclusion %q: want one of %s", name, conclusion, strings.Join(checkConclusions, ", "))
	}
	if headSHA == "" || name == "" {
		return fmt.Errorf("check run %q: the head commit and the name are required", name)
	}
	summary = escape.Truncate(summary, maxCheckSummaryBytes, truncatedNote)
	title = escape.Terminal(title)
	opts := gh.CreateCheckRunOptions{
		Name:        name,
		HeadSHA:     headSHA,
		Status:      gh.String("completed"),
		Conclusion:  gh.String(conclusion),
		CompletedAt: &gh.Timestamp{Time: time.Now().UTC().Truncate(time.Second)},
		Output:      &gh.CheckRunOutput{Title: gh.String(title), Summary: gh.String(summary)},
	}
	if _, err := c.do(ctx, http.MethodPost, c.repoPath("check-runs"), opts, nil, needChecks); err != nil {
		return fmt.Errorf("creating check run %q on %s: %w", name, headSHA, err)
	}
	return nil
}
