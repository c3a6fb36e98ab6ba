package github_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
)

// TestOversizedReportKeepsItsEnd: a report over GitHub's 65,536-byte limit
// that is cut inside a <details> (or a code fence) must not swallow the
// note that says it was cut: the cut closes them first. And the PR title,
// plain text from the task, reaches GitHub without control or bidi
// characters.
func TestOversizedReportKeepsItsEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t)
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	n := srv.AddPullRequest(full, githubtest.PullRequest{Title: "t", Head: "agent-loop/a"})

	body := "### report\n\n<details><summary>every iteration</summary>\n\n```\n" + strings.Repeat("a long log line é\n", 6000)
	id, err := c.UpsertComment(ctx, n, loopID, body)
	if err != nil {
		t.Fatalf("UpsertComment: %v", err)
	}
	var got string
	for _, cm := range srv.Comments(full, n) {
		if cm.ID == id {
			got = cm.Body
		}
	}
	if len(got) > 65536 || !utf8.ValidString(got) {
		t.Fatalf("the comment is %d bytes (valid UTF-8: %v)", len(got), utf8.ValidString(got))
	}
	if !strings.Contains(got, "```\n</details>\n") || !strings.HasSuffix(got, "the loop's artifact)_") {
		t.Errorf("the cut comment does not close its code block and <details> before the note:\n%s", got[len(got)-300:])
	}

	title := "agent-loop: fix \x1b]0;pwned\x07 the \u202eparser\r\nand more"
	pr, _, err := c.EnsurePR(ctx, github.PRRequest{Head: "agent-loop/x", Base: "main", Title: title, Body: "body"})
	if err != nil {
		t.Fatalf("EnsurePR: %v", err)
	}
	if want := "agent-loop: fix ^[]0;pwned^G the [U+202E]parser and more"; pr.Title != want {
		t.Errorf("PR title %q, want %q", pr.Title, want)
	}
}
