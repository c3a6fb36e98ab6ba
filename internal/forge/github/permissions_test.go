package github_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
)

func TestActorPermission(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	srv.AddRepo(full, githubtest.RepoConfig{
		Collaborators: map[string]string{"alice": "admin", "bob": "maintain", "carol": "write", "dave": "triage", "erin": "read"},
		Nonexistent:   []string{"ghost"},
	})
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	tests := []struct {
		login string
		want  string
		can   bool
	}{
		{"alice", "admin", true},
		{"bob", "maintain", true},
		{"carol", "write", true},
		{"dave", "triage", false},
		{"erin", "read", false},
		{"frank", "none", false},
		{"ghost", "none", false},
		{"ALICE", "admin", true},
	}
	for _, tt := range tests {
		t.Run(tt.login, func(t *testing.T) {
			t.Parallel()
			got, err := c.ActorPermission(context.Background(), tt.login)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || github.CanTrigger(got) != tt.can {
				t.Errorf("ActorPermission(%q) = %q (CanTrigger %v); want %q (%v)", tt.login, got, github.CanTrigger(got), tt.want, tt.can)
			}
			a, err := c.Actor(context.Background(), tt.login)
			if err != nil || a.Permission != tt.want || a.CanTrigger() != tt.can {
				t.Errorf("Actor(%q) = %+v, %v", tt.login, a, err)
			}
		})
	}
}

func TestCanTrigger(t *testing.T) {
	t.Parallel()
	for perm, want := range map[string]bool{
		"admin": true, "maintain": true, "write": true, "Admin": true, " write ": true,
		"triage": false, "read": false, "none": false, "": false, "push": false, "owner": false,
	} {
		if got := github.CanTrigger(perm); got != want {
			t.Errorf("CanTrigger(%q) = %v, want %v", perm, got, want)
		}
	}
}

func TestCheckPushAccess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		token   githubtest.Token
		repo    githubtest.RepoConfig
		wantErr string // "" for success
		perm    bool   // a *PermissionError
	}{
		{name: "GITHUB_TOKEN passes (its rights show only on use)", token: githubtest.Token{Value: "ghs_t1", Kind: githubtest.ActionsToken}},
		{name: "PAT with write", token: githubtest.Token{Value: "ghp_t2", Kind: githubtest.UserToken, Role: "write"}},
		{name: "PAT with maintain", token: githubtest.Token{Value: "ghp_t3", Kind: githubtest.UserToken, Role: "maintain"}},
		{name: "PAT with read", token: githubtest.Token{Value: "ghp_t4", Kind: githubtest.UserToken, Role: "read"}, wantErr: "only read access", perm: true},
		{name: "PAT with triage", token: githubtest.Token{Value: "ghp_t5", Kind: githubtest.UserToken, Role: "triage"}, wantErr: "write, maintain or admin role", perm: true},
		{name: "classic PAT with the repo scope", token: githubtest.Token{Value: "ghp_t6", Kind: githubtest.UserToken, Scopes: []string{"repo", "workflow"}}},
		{name: "classic PAT without the repo scope", token: githubtest.Token{Value: "ghp_t7", Kind: githubtest.UserToken, Scopes: []string{"read:org", "gist"}}, wantErr: "repo scope", perm: true},
		{name: "public_repo on a public repository", token: githubtest.Token{Value: "ghp_t8", Kind: githubtest.UserToken, Scopes: []string{"public_repo"}}},
		{name: "public_repo on a private repository", token: githubtest.Token{Value: "ghp_t9", Kind: githubtest.UserToken, Scopes: []string{"public_repo"}}, repo: githubtest.RepoConfig{Private: true}, wantErr: "repo scope", perm: true},
		{name: "archived repository", token: githubtest.Token{Value: "ghs_t10", Kind: githubtest.ActionsToken}, repo: githubtest.RepoConfig{Archived: true}, wantErr: "archived"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t, githubtest.WithToken(tt.token))
			srv.AddRepo(full, tt.repo)
			c, _ := newClient(t, srv, tt.token.Value)
			err := c.CheckPushAccess(context.Background())
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckPushAccess = %v; want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckPushAccess = %v; want an error mentioning %q", err, tt.wantErr)
			}
			var perr *github.PermissionError
			if errors.As(err, &perr) != tt.perm {
				t.Errorf("error %T: *PermissionError = %v, want %v", err, !tt.perm, tt.perm)
			}
		})
	}
}

func TestCheckPushAccessUnknownRepoAndBadToken(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, err := github.New(context.Background(), githubtest.DefaultToken, srv.URL, "octo-org", "missing")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckPushAccess(context.Background()); err == nil || !strings.Contains(err.Error(), "not found or not visible") {
		t.Errorf("unknown repo: %v", err)
	}
	bad, _ := newClient(t, srv, "ghs_not-a-token-the-server-knows")
	err = bad.CheckPushAccess(context.Background())
	var apiErr *github.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 401 || !strings.Contains(err.Error(), "invalid or expired") {
		t.Errorf("bad token: %v; want a 401 *APIError saying the token is invalid", err)
	}
	if strings.Contains(err.Error(), "ghs_not-a-token") {
		t.Errorf("the error shows the token: %v", err)
	}
}
