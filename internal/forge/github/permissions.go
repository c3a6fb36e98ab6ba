package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Repository roles, lowest to highest, as GitHub names them.
const (
	PermissionNone     = "none"
	PermissionRead     = "read"
	PermissionTriage   = "triage"
	PermissionWrite    = "write"
	PermissionMaintain = "maintain"
	PermissionAdmin    = "admin"
)

// Actor is a user who asked for a loop and their role on the repository.
type Actor struct {
	Login      string
	Permission string // admin, maintain, write, triage, read, none
}

// CanTrigger reports whether the actor may start a loop.
func (a Actor) CanTrigger() bool { return CanTrigger(a.Permission) }

// CanTrigger reports whether a role may start a loop: write, maintain or
// admin. Everything else (triage, read, none, unknown) may not.
func CanTrigger(permission string) bool {
	switch strings.ToLower(strings.TrimSpace(permission)) {
	case PermissionWrite, PermissionMaintain, PermissionAdmin:
		return true
	}
	return false
}

// collaboratorPermission is the answer of
// GET /repos/{owner}/{repo}/collaborators/{username}/permission. go-github
// v62 lacks role_name, which alone tells maintain and triage apart.
type collaboratorPermission struct {
	Permission string `json:"permission"`
	RoleName   string `json:"role_name"`
	User       *struct {
		Login string `json:"login"`
	} `json:"user"`
}

// ActorPermission returns login's role on the repository: role_name when it
// is one of GitHub's base roles (admin, maintain, write, triage, read),
// otherwise the legacy permission field (a custom role maps to the base role
// it extends, which GitHub reports there). A user GitHub does not know is
// "none".
func (c *Client) ActorPermission(ctx context.Context, login string) (string, error) {
	login = strings.TrimSpace(login)
	if login == "" {
		return "", errors.New("actor permission: the login is empty")
	}
	var p collaboratorPermission
	_, err := c.do(ctx, http.MethodGet, c.repoPath("collaborators", url.PathEscape(login), "permission"), nil, &p)
	if err != nil {
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound && c.repoVisible(ctx) {
			// The repository is there: it is the user GitHub does not know.
			return PermissionNone, nil
		}
		return "", fmt.Errorf("permission of %q on %s/%s: %w", login, c.owner, c.repo, err)
	}
	return normalizePermission(p.RoleName, p.Permission), nil
}

// Actor returns login with their role on the repository.
func (c *Client) Actor(ctx context.Context, login string) (Actor, error) {
	perm, err := c.ActorPermission(ctx, login)
	return Actor{Login: login, Permission: perm}, err
}

func normalizePermission(roleName, permission string) string {
	switch r := strings.ToLower(roleName); r {
	case PermissionAdmin, PermissionMaintain, PermissionWrite, PermissionTriage, PermissionRead:
		return r
	}
	switch p := strings.ToLower(permission); p {
	case PermissionAdmin, PermissionMaintain, PermissionWrite, PermissionTriage, PermissionRead:
		return p
	case "push":
		return PermissionWrite
	case "pull":
		return PermissionRead
	}
	return PermissionNone
}

// repoVisible reports whether GET /repos/{o}/{r} succeeds.
func (c *Client) repoVisible(ctx context.Context) bool {
	_, err := c.do(ctx, http.MethodGet, c.repoPath(), nil, nil)
	return err == nil
}

// repository is the part of GET /repos/{owner}/{repo} the preflight reads.
type repository struct {
	FullName string `json:"full_name"`
	Private  bool   `json:"private"`
	Archived bool   `json:"archived"`
	// Permissions is present for user tokens (PAT, OAuth) and absent for
	// GITHUB_TOKEN and GitHub App installation tokens.
	Permissions *struct {
		Admin    bool `json:"admin"`
		Maintain bool `json:"maintain"`
		Push     bool `json:"push"`
		Triage   bool `json:"triage"`
		Pull     bool `json:"pull"`
	} `json:"permissions"`
}

// CheckPushAccess is the preflight of action mode: can this token push the
// loop branch and open a pull request? It reads GET /repos/{o}/{r}: a user
// token (PAT) shows its permissions there and a classic PAT its scopes
// (X-OAuth-Scopes). GITHUB_TOKEN and App tokens show neither: they pass here,
// and a later refusal is a *PermissionError naming the `permissions:` to add.
func (c *Client) CheckPushAccess(ctx context.Context) error {
	var r repository
	resp, err := c.do(ctx, http.MethodGet, c.repoPath(), nil, &r, needContents)
	if err != nil {
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
			return fmt.Errorf("repository %s/%s is not found or not visible to the github-token "+
				"(check GITHUB_REPOSITORY and that the token may read it): %w", c.owner, c.repo, err)
		}
		return fmt.Errorf("checking push access to %s/%s: %w", c.owner, c.repo, err)
	}
	if r.Archived {
		return fmt.Errorf("repository %s/%s is archived: nothing can be pushed to it; unarchive it in Settings > General", c.owner, c.repo)
	}
	if resp != nil {
		if scopes, ok := resp.Header["X-Oauth-Scopes"]; ok {
			if !hasRepoScope(strings.Join(scopes, ","), r.Private) {
				return &PermissionError{
					Need:     []string{"the repo scope"},
					Doc:      "https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/scopes-for-oauth-apps",
					Endpoint: endpoint(http.MethodGet, c.repoPath()),
					Hint: fmt.Sprintf("the personal access token has scopes %q, which cannot push to %s/%s or open a pull request: "+
						"give it the repo scope (public_repo is enough for a public repository)", strings.Join(scopes, ","), c.owner, c.repo),
				}
			}
		}
	}
	if p := r.Permissions; p != nil && !p.Push && !p.Maintain && !p.Admin {
		return &PermissionError{
			Need:     []string{fmt.Sprintf("write access to %s/%s", c.owner, c.repo)},
			Doc:      "https://docs.github.com/en/organizations/managing-user-access-to-your-organizations-repositories/managing-repository-roles/repository-roles-for-an-organization",
			Endpoint: endpoint(http.MethodGet, c.repoPath()),
			Hint: fmt.Sprintf("the owner of the github-token has only read access to %s/%s: it needs the write, maintain or admin role "+
				"to push the loop branch and open a pull request", c.owner, c.repo),
		}
	}
	return nil
}

// hasRepoScope reports whether classic OAuth scopes allow pushing.
func hasRepoScope(scopes string, private bool) bool {
	for _, s := range strings.Split(scopes, ",") {
		switch strings.TrimSpace(s) {
		case "repo":
			return true
		case "public_repo":
			if !private {
				return true
			}
		}
	}
	return false
}
