package github_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
)

func TestEnsurePRCreatesThenUpdates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t)
	c, _ := newClient(t, srv, githubtest.DefaultToken)

	if pr, err := c.FindPR(ctx, "agent-loop/x"); err != nil || pr != nil {
		t.Fatalf("FindPR before any PR = %+v, %v; want nil, nil", pr, err)
	}
	pr, created, err := c.EnsurePR(ctx, github.PRRequest{Head: "agent-loop/x", Base: "main", Title: "first", Body: "body 1", Draft: true})
	if err != nil || !created {
		t.Fatalf("EnsurePR (create) = %v, created=%v", err, created)
	}
	if !pr.Draft || !pr.SameRepo || pr.HeadRef != "agent-loop/x" || pr.BaseRef != "main" || pr.HeadRepoFullName != full || pr.HeadSHA == "" || pr.URL == "" {
		t.Errorf("created PR = %+v", pr)
	}

	again, created, err := c.EnsurePR(ctx, github.PRRequest{Head: "agent-loop/x", Base: "main", Title: "second", Body: "body 2", Draft: true})
	if err != nil || created {
		t.Fatalf("EnsurePR (update) = %v, created=%v", err, created)
	}
	if again.Number != pr.Number {
		t.Errorf("updated PR number = %d, want %d", again.Number, pr.Number)
	}
	// Unchanged content: no PATCH at all.
	if _, _, err := c.EnsurePR(ctx, github.PRRequest{Head: "agent-loop/x", Base: "main", Title: "second", Body: "body 2", Draft: true}); err != nil {
		t.Fatal(err)
	}

	got := srv.PullRequests(full)
	if len(got) != 1 {
		t.Fatalf("the fake holds %d pull requests, want 1: %+v", len(got), got)
	}
	if diff := cmp.Diff([]string{"second", "body 2", "agent-loop/x"}, []string{got[0].Title, got[0].Body, got[0].Head}); diff != "" {
		t.Errorf("stored PR (-want +got):\n%s", diff)
	}
	if !got[0].Draft {
		t.Errorf("the PR stopped being a draft though every request asked for a draft")
	}
	prPath := "/repos/" + full + "/pulls"
	if n := srv.Hits(http.MethodPost, prPath); n != 1 {
		t.Errorf("POST %s hits = %d, want 1", prPath, n)
	}
	if n := srv.Hits(http.MethodPatch, prPath+"/1"); n != 1 {
		t.Errorf("PATCH hits = %d, want 1 (the unchanged third call must not patch)", n)
	}

	fetched, err := c.GetPR(ctx, pr.Number)
	if err != nil || fetched.Title != "second" {
		t.Errorf("GetPR = %+v, %v", fetched, err)
	}
}

func TestEnsurePRDraftTransitions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		startDraft bool
		wantDraft  bool // requested
		endDraft   bool
		graphql    int
	}{
		{name: "draft to ready via GraphQL", startDraft: true, wantDraft: false, endDraft: false, graphql: 1},
		{name: "draft stays draft", startDraft: true, wantDraft: true, endDraft: true, graphql: 0},
		{name: "ready is never turned back to draft", startDraft: false, wantDraft: true, endDraft: false, graphql: 0},
		{name: "ready stays ready", startDraft: false, wantDraft: false, endDraft: false, graphql: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv := githubtest.New(t)
			n := srv.AddPullRequest(full, githubtest.PullRequest{Title: "t", Head: "agent-loop/y", Draft: tt.startDraft, Author: githubtest.ActionsLogin})
			c, _ := newClient(t, srv, githubtest.DefaultToken)
			pr, created, err := c.EnsurePR(ctx, github.PRRequest{Head: "agent-loop/y", Base: "main", Title: "t", Draft: tt.wantDraft})
			if err != nil || created || pr.Number != n {
				t.Fatalf("EnsurePR = %+v, created=%v, %v", pr, created, err)
			}
			if pr.Draft != tt.endDraft || srv.PullRequests(full)[0].Draft != tt.endDraft {
				t.Errorf("draft: returned %v, stored %v; want %v", pr.Draft, srv.PullRequests(full)[0].Draft, tt.endDraft)
			}
			if got := srv.Hits(http.MethodPost, "/graphql"); got != tt.graphql {
				t.Errorf("GraphQL calls = %d, want %d", got, tt.graphql)
			}
		})
	}
}

func TestEnsurePRRaceAlreadyExists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t)
	srv.AddPullRequest(full, githubtest.PullRequest{Title: "old", Head: "agent-loop/z", Author: githubtest.ActionsLogin})
	// The first listing misses the pull request (another run opened it a
	// moment later): creating it gets GitHub's 422 "already exists".
	srv.Fail(githubtest.Fault{Method: http.MethodGet, Path: "/repos/" + full + "/pulls", Status: http.StatusOK, Body: "[]"})
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	pr, created, err := c.EnsurePR(ctx, github.PRRequest{Head: "agent-loop/z", Base: "main", Title: "new"})
	if err != nil || created {
		t.Fatalf("EnsurePR = %v, created=%v; want the existing PR updated", err, created)
	}
	if pr.Title != "new" || len(srv.PullRequests(full)) != 1 {
		t.Errorf("PR = %+v, stored %+v", pr, srv.PullRequests(full))
	}
}

func TestEnsurePRDraftUnsupported(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	srv.AddRepo(full, githubtest.RepoConfig{Private: true, NoDrafts: true})
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	pr, created, err := c.EnsurePR(context.Background(), github.PRRequest{Head: "b", Base: "main", Title: "t", Draft: true})
	if err != nil || !created || pr.Draft {
		t.Fatalf("EnsurePR = %+v, %v, %v; want a ready PR after the draft was refused", pr, created, err)
	}
}

func TestEnsurePRFork(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	n := srv.AddPullRequest(full, githubtest.PullRequest{Title: "from a fork", Head: "patch-1", HeadRepo: "mallory/demo", Author: "mallory"})
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	pr, err := c.GetPR(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	if pr.SameRepo || pr.HeadRepoFullName != "mallory/demo" {
		t.Errorf("fork PR = %+v; want SameRepo false", pr)
	}
	// A branch of the same name in the fork is not ours.
	if got, err := c.FindPR(context.Background(), "patch-1"); err != nil || got != nil {
		t.Errorf("FindPR(patch-1) = %+v, %v; want nil (the fork's branch)", got, err)
	}
}

func TestEnsurePRReadOnlyToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		token    githubtest.Token
		repo     githubtest.RepoConfig
		wantNeed []string
		wantText []string
	}{
		{
			name:     "GITHUB_TOKEN with read permissions",
			token:    githubtest.Token{Value: "ghs_readonly000000000000000000000000000", Kind: githubtest.ActionsToken, Permissions: map[string]string{"contents": "read", "pull-requests": "read", "issues": "read"}},
			wantNeed: []string{"pull-requests: write"},
			wantText: []string{"POST /repos/octo-org/demo/pulls", "Resource not accessible by integration", "pull-requests: write", "permissions:", "contents: write", "issues: write", github.PermissionsDoc},
		},
		{
			name:     "Actions may not create pull requests in this repository",
			token:    githubtest.Token{Value: "ghs_actions00000000000000000000000000000", Kind: githubtest.ActionsToken},
			repo:     githubtest.RepoConfig{ActionsCannotCreatePRs: true},
			wantNeed: []string{"pull-requests: write"},
			wantText: []string{"Allow GitHub Actions to create and approve pull requests"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t, githubtest.WithToken(tt.token))
			srv.AddRepo(full, tt.repo)
			c, _ := newClient(t, srv, tt.token.Value)
			_, _, err := c.EnsurePR(context.Background(), github.PRRequest{Head: "b", Base: "main", Title: "t"})
			var perr *github.PermissionError
			if !errors.As(err, &perr) {
				t.Fatalf("EnsurePR error = %v (%T); want *PermissionError", err, err)
			}
			if diff := cmp.Diff(tt.wantNeed, perr.Need); diff != "" {
				t.Errorf("Need (-want +got):\n%s", diff)
			}
			for _, s := range tt.wantText {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if len(srv.PullRequests(full)) != 0 {
				t.Errorf("a pull request was created")
			}
		})
	}
}

func TestEnsurePRValidation(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	for _, req := range []github.PRRequest{{Base: "main", Title: "t"}, {Head: "b", Title: "t"}, {Head: "b", Base: "main"}} {
		if _, _, err := c.EnsurePR(context.Background(), req); err == nil {
			t.Errorf("EnsurePR(%+v) succeeded; want an error", req)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("invalid requests reached GitHub (%d calls)", n)
	}
}

func TestEnsurePRUnknownHeadBranch(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	srv.SetBranch(full, "main", strings.Repeat("a", 40))
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	_, _, err := c.EnsurePR(context.Background(), github.PRRequest{Head: "never-pushed", Base: "main", Title: "t"})
	var apiErr *github.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "head") {
		t.Fatalf("error = %v; want a 422 naming the head", err)
	}
	srv.SetBranch(full, "pushed", strings.Repeat("b", 40))
	pr, _, err := c.EnsurePR(context.Background(), github.PRRequest{Head: "pushed", Base: "main", Title: "t"})
	if err != nil || pr.HeadSHA != strings.Repeat("b", 40) {
		t.Fatalf("EnsurePR = %+v, %v", pr, err)
	}
}
