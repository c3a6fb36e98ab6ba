package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
)

const loopID = "ralph-fix-tests-1a2b3c4d"

func TestUpsertCommentSticky(t *testing.T) {
	t.Parallel()
	userToken := githubtest.Token{Value: "ghp_user000000000000000000000000000000000", Kind: githubtest.UserToken, Login: "maintainer"}
	appToken := githubtest.Token{Value: "ghs_app0000000000000000000000000000000000", Kind: githubtest.AppToken, Login: "loop-bot[bot]"}
	marker := github.StickyMarker(loopID)
	tests := []struct {
		name  string
		token githubtest.Token
		// seed adds comments before the loop's first upsert.
		seed       func(srv *githubtest.Server, n int)
		wantAuthor string
		// wantOthers is the number of comments that are not ours.
		wantOthers int
		// viewer says whether the GraphQL viewer is asked.
		viewer bool
	}{
		{name: "GITHUB_TOKEN", token: githubtest.Token{Value: githubtest.DefaultToken}, wantAuthor: githubtest.ActionsLogin, viewer: true},
		{name: "personal access token", token: userToken, wantAuthor: "maintainer"},
		{name: "GitHub App token", token: appToken, wantAuthor: "loop-bot[bot]", viewer: true},
		{
			name:  "a user quoting the marker does not hijack the comment",
			token: githubtest.Token{Value: githubtest.DefaultToken},
			seed: func(srv *githubtest.Server, n int) {
				srv.AddComment(full, n, "mallory", marker+"\nI wrote this report")
				srv.AddComment(full, n, "mallory", "> "+marker+"\n> quoted")
				// A human whose login is the bot's without [bot].
				srv.AddComment(full, n, "github-actions", marker+"\nnot the bot")
			},
			wantAuthor: githubtest.ActionsLogin, wantOthers: 3, viewer: true,
		},
		{
			name:  "another loop's sticky comment is left alone",
			token: githubtest.Token{Value: githubtest.DefaultToken},
			seed: func(srv *githubtest.Server, n int) {
				srv.AddComment(full, n, githubtest.ActionsLogin, github.StickyMarker("ralph-other-00000000")+"\nother loop")
			},
			wantAuthor: githubtest.ActionsLogin, wantOthers: 1, viewer: true,
		},
		{
			name:  "found on a later page",
			token: githubtest.Token{Value: githubtest.DefaultToken},
			seed: func(srv *githubtest.Server, n int) {
				for i := 0; i < 230; i++ {
					srv.AddComment(full, n, "someone", fmt.Sprintf("comment %d", i))
				}
			},
			wantAuthor: githubtest.ActionsLogin, wantOthers: 230, viewer: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var opts []githubtest.Option
			if tt.token.Value != githubtest.DefaultToken {
				opts = append(opts, githubtest.WithToken(tt.token))
			}
			srv := githubtest.New(t, opts...)
			n := srv.AddPullRequest(full, githubtest.PullRequest{Title: "t", Head: "agent-loop/a"})
			if tt.seed != nil {
				tt.seed(srv, n)
			}

			// Two clients: a re-run of the workflow must find the comment too.
			first, _ := newClient(t, srv, tt.token.Value)
			id1, err := first.UpsertComment(ctx, n, loopID, "iteration 1")
			if err != nil {
				t.Fatalf("first UpsertComment: %v", err)
			}
			second, _ := newClient(t, srv, tt.token.Value)
			id2, err := second.UpsertComment(ctx, n, loopID, "iteration 2")
			if err != nil {
				t.Fatalf("second UpsertComment: %v", err)
			}
			id3, err := second.UpsertComment(ctx, n, loopID, "iteration 3")
			if err != nil {
				t.Fatalf("third UpsertComment: %v", err)
			}
			if id1 != id2 || id2 != id3 {
				t.Errorf("comment ids %d, %d, %d; want one comment updated in place", id1, id2, id3)
			}

			var ours []githubtest.Comment
			others := 0
			for _, cm := range srv.Comments(full, n) {
				if cm.ID == id1 {
					ours = append(ours, cm)
				} else {
					others++
				}
			}
			if len(ours) != 1 || others != tt.wantOthers {
				t.Fatalf("ours=%d others=%d; want 1 and %d", len(ours), others, tt.wantOthers)
			}
			if diff := cmp.Diff(marker+"\niteration 3", ours[0].Body); diff != "" {
				t.Errorf("sticky body (-want +got):\n%s", diff)
			}
			if ours[0].Author != tt.wantAuthor {
				t.Errorf("author = %q, want %q", ours[0].Author, tt.wantAuthor)
			}
			if got := srv.Hits(http.MethodPost, "/repos/"+full+fmt.Sprintf("/issues/%d/comments", n)); got != 1 {
				t.Errorf("comments created = %d, want 1", got)
			}
			if got := srv.Hits(http.MethodPost, "/graphql") > 0; got != tt.viewer {
				t.Errorf("asked the GraphQL viewer = %v, want %v", got, tt.viewer)
			}
			for _, cm := range srv.Comments(full, n) {
				if cm.ID != id1 && cm.Updated != cm.Created {
					t.Errorf("comment %d by %s was edited", cm.ID, cm.Author)
				}
			}
		})
	}
}

func TestUpsertCommentViewerFails(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	n := srv.AddIssue(full, "alice", "Fix the tests", "they fail")
	// The GraphQL viewer is down: github-actions[bot] is assumed.
	srv.Fail(githubtest.ServerError(http.MethodPost, "/graphql", http.StatusBadGateway, 4))
	srv.AddComment(full, n, githubtest.ActionsLogin, github.StickyMarker(loopID)+"\nold report")
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	if _, err := c.UpsertComment(context.Background(), n, loopID, "new report"); err != nil {
		t.Fatal(err)
	}
	got := srv.Comments(full, n)
	if len(got) != 1 || !strings.HasSuffix(got[0].Body, "\nnew report") {
		t.Errorf("comments = %+v; want the old report updated", got)
	}
}

func TestUpsertCommentInvalidLoopID(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	for _, id := range []string{"", "a b", "x-->", "loop\n"} {
		if _, err := c.UpsertComment(context.Background(), 1, id, "x"); err == nil {
			t.Errorf("UpsertComment(loop id %q) succeeded; want an error", id)
		}
	}
}

func TestUpsertCommentTruncates(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	n := srv.AddIssue(full, "alice", "t", "b")
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	huge := strings.Repeat("é", 40000) // 80,000 bytes
	if _, err := c.UpsertComment(context.Background(), n, loopID, huge); err != nil {
		t.Fatal(err)
	}
	body := srv.Comments(full, n)[0].Body
	if len(body) > 65536 || !strings.HasPrefix(body, github.StickyMarker(loopID)) || !strings.Contains(body, "cut:") {
		t.Errorf("body of %d bytes; want at most 65536 with the marker and a cut note", len(body))
	}
}

func TestCommentPermissionError(t *testing.T) {
	t.Parallel()
	tok := githubtest.Token{Value: "ghs_noissues0000000000000000000000000000", Kind: githubtest.ActionsToken,
		Permissions: map[string]string{"contents": "write", "pull-requests": "read"}}
	srv := githubtest.New(t, githubtest.WithToken(tok))
	n := srv.AddIssue(full, "alice", "t", "b")
	c, _ := newClient(t, srv, tok.Value)
	_, err := c.Comment(context.Background(), n, "hello")
	var perr *github.PermissionError
	if !errors.As(err, &perr) || !strings.Contains(err.Error(), "issues: write") {
		t.Fatalf("Comment error = %v; want a *PermissionError naming issues: write", err)
	}
}

func TestReact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t)
	n := srv.AddIssue(full, "alice", "t", "b")
	cid := srv.AddComment(full, n, "alice", "/agent-loop fix the tests")
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	for _, content := range []string{"eyes", "eyes", "rocket"} {
		if err := c.React(ctx, cid, content); err != nil {
			t.Fatalf("React(%q): %v", content, err)
		}
	}
	var got []string
	for _, r := range srv.Reactions(full, cid) {
		got = append(got, r.Author+":"+r.Content)
	}
	if diff := cmp.Diff([]string{"github-actions[bot]:eyes", "github-actions[bot]:rocket"}, got); diff != "" {
		t.Errorf("reactions (-want +got):\n%s", diff)
	}
	if err := c.React(ctx, cid, "thumbsup"); err == nil || !strings.Contains(err.Error(), "+1") {
		t.Errorf("React(thumbsup) = %v; want an error listing the valid contents", err)
	}
	if err := c.React(ctx, 999999, "eyes"); err == nil {
		t.Errorf("React on a missing comment succeeded")
	}
}

func TestIssueTitleBody(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	n := srv.AddIssue(full, "alice", "Make the build green", "go test ./... fails on main")
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	title, body, err := c.IssueTitleBody(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Make the build green", "go test ./... fails on main"}, []string{title, body}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var apiErr *github.APIError
	if _, _, err := c.IssueTitleBody(context.Background(), 404); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Errorf("missing issue: %v; want an *APIError 404", err)
	}
}
