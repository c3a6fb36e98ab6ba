package github_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
)

func TestNewValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		token, api, o, r    string
		wantErr, alsoWanted string
	}{
		{name: "empty token", token: " ", o: "o", r: "r", wantErr: "the github-token input is empty: ", alsoWanted: "${{ github.token }}"},
		{name: "relative API URL", token: "t", api: "api.github.com", o: "o", r: "r", wantErr: "GitHub API URL", alsoWanted: "/api/v3"},
		{name: "ftp API URL", token: "t", api: "ftp://x/", o: "o", r: "r", wantErr: "absolute http(s) URL"},
		{name: "missing repository", token: "t", o: "o", wantErr: "GITHUB_REPOSITORY=owner/name"},
		{name: "owner/name in owner", token: "t", o: "o/r", r: "r", wantErr: "want an owner and a name"},
		{name: "every problem at once", api: "::", wantErr: "github-token input is empty", alsoWanted: "GITHUB_REPOSITORY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := github.New(context.Background(), tt.token, tt.api, tt.o, tt.r)
			if err == nil || c != nil {
				t.Fatalf("New = %v, %v; want an error", c, err)
			}
			for _, s := range []string{tt.wantErr, tt.alsoWanted} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
	if c, err := github.New(context.Background(), "t", "", "o", "r"); err != nil || c.Owner() != "o" || c.Repo() != "r" {
		t.Errorf("New with the default API URL = %v", err)
	}
}

// TestGHES runs the whole flow against a server that, like GitHub
// Enterprise Server, serves REST under /api/v3/ and GraphQL at /api/graphql;
// the fake fails the test on any path outside them.
func TestGHES(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t, githubtest.WithGHES())
	if !strings.HasSuffix(srv.URL, "/api/v3") {
		t.Fatalf("GHES URL = %s", srv.URL)
	}
	srv.AddRepo(full, githubtest.RepoConfig{Collaborators: map[string]string{"alice": "maintain"}})
	c, _ := newClient(t, srv, githubtest.DefaultToken)

	if err := c.CheckPushAccess(ctx); err != nil {
		t.Fatal(err)
	}
	if p, err := c.ActorPermission(ctx, "alice"); err != nil || p != "maintain" {
		t.Fatalf("ActorPermission = %q, %v", p, err)
	}
	pr, created, err := c.EnsurePR(ctx, github.PRRequest{Head: "agent-loop/g", Base: "main", Title: "t", Draft: true})
	if err != nil || !created {
		t.Fatal(err)
	}
	if _, _, err := c.EnsurePR(ctx, github.PRRequest{Head: "agent-loop/g", Base: "main", Title: "t2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpsertComment(ctx, pr.Number, loopID, "report"); err != nil {
		t.Fatal(err)
	}
	id := srv.AddArtifact(full, githubtest.Artifact{Name: "s", Files: map[string][]byte{"f": []byte("x")}})
	if files, err := c.DownloadArtifact(ctx, id); err != nil || string(files["f"]) != "x" {
		t.Fatalf("DownloadArtifact = %v, %v", files, err)
	}
	if got := srv.PullRequests(full); len(got) != 1 || got[0].Draft || got[0].Title != "t2" {
		t.Errorf("pull requests = %+v", got)
	}
	if srv.Hits(http.MethodPost, "/api/graphql") != 2 { // viewer login, then ready for review
		t.Errorf("GraphQL calls at /api/graphql = %d, want 2; requests: %+v", srv.Hits(http.MethodPost, "/api/graphql"), srv.Requests())
	}
	for _, r := range srv.Requests() {
		if !r.Authorized {
			t.Errorf("%s %s was not authorized", r.Method, r.Path)
		}
	}
}

func TestCreateCheckRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sha := strings.Repeat("c", 40)
	srv := githubtest.New(t)
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	if err := c.CreateCheckRun(ctx, sha, "agent-loop", "success", "Completed in 3 iterations", "all tests pass"); err != nil {
		t.Fatal(err)
	}
	want := []githubtest.CheckRun{{Name: "agent-loop", HeadSHA: sha, Status: "completed", Conclusion: "success",
		Title: "Completed in 3 iterations", Summary: "all tests pass", Author: githubtest.ActionsLogin}}
	got := srv.CheckRuns(full)
	for i := range got {
		got[i].ID = 0
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check runs (-want +got):\n%s", diff)
	}

	if err := c.CreateCheckRun(ctx, sha, "agent-loop", "passed", "t", "s"); err == nil || !strings.Contains(err.Error(), "success, failure") {
		t.Errorf("invalid conclusion: %v; want an error listing the valid ones", err)
	}

	tok := githubtest.Token{Value: "ghs_nochecks0000000000000000000000000000", Kind: githubtest.ActionsToken,
		Permissions: map[string]string{"contents": "write", "pull-requests": "write", "issues": "write"}}
	srv.AddToken(tok)
	narrow, _ := newClient(t, srv, tok.Value)
	err := narrow.CreateCheckRun(ctx, sha, "agent-loop", "failure", "t", "s")
	var perr *github.PermissionError
	if !errors.As(err, &perr) || !strings.Contains(err.Error(), "checks: write") {
		t.Errorf("without checks: write: %v; want a *PermissionError naming it", err)
	}
	if len(srv.CheckRuns(full)) != 1 {
		t.Errorf("check runs = %d, want 1", len(srv.CheckRuns(full)))
	}
}

// TestPermissionErrorText pins the messages a maintainer reads when the
// token is short of rights (golden file; go test -update rewrites it).
func TestPermissionErrorText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	readOnly := githubtest.Token{Value: "ghs_ro00000000000000000000000000000000000", Kind: githubtest.ActionsToken,
		Permissions: map[string]string{"contents": "read", "pull-requests": "read", "issues": "read"}}
	user := githubtest.Token{Value: "ghp_reader0000000000000000000000000000000", Kind: githubtest.UserToken, Role: "read", Login: "reader"}
	classic := githubtest.Token{Value: "ghp_classic000000000000000000000000000000", Kind: githubtest.UserToken, Scopes: []string{"read:org"}}
	srv := githubtest.New(t, githubtest.WithToken(readOnly), githubtest.WithToken(user), githubtest.WithToken(classic))
	n := srv.AddIssue(full, "alice", "t", "b")

	var out strings.Builder
	record := func(title string, err error) {
		out.WriteString("== " + title + "\n")
		if err == nil {
			out.WriteString("(no error)\n")
			return
		}
		out.WriteString(err.Error() + "\n")
	}
	ro, _ := newClient(t, srv, readOnly.Value)
	_, _, err := ro.EnsurePR(ctx, github.PRRequest{Head: "b", Base: "main", Title: "t"})
	record("read-only GITHUB_TOKEN opens a pull request", err)
	_, err = ro.UpsertComment(ctx, n, loopID, "report")
	record("read-only GITHUB_TOKEN comments", err)
	u, _ := newClient(t, srv, user.Value)
	record("PAT of a reader, preflight", u.CheckPushAccess(ctx))
	cl, _ := newClient(t, srv, classic.Value)
	record("classic PAT without repo, preflight", cl.CheckPushAccess(ctx))
	srv.AddRepo(full, githubtest.RepoConfig{ActionsCannotCreatePRs: true})
	def, _ := newClient(t, srv, githubtest.DefaultToken)
	_, _, err = def.EnsurePR(ctx, github.PRRequest{Head: "b", Base: "main", Title: "t"})
	record("Actions may not create pull requests", err)

	golden := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}
