package githubtest

import (
	"net/http"
	"regexp"
	"strings"
)

var pullRequestIDLiteral = regexp.MustCompile(`pullRequestId:\s*"([^"]+)"`)

// serveGraphQL answers the operations agent-loop sends: `viewer { login }`
// and markPullRequestReadyForReview. Any other operation fails the test.
// Errors come as GitHub sends them: 200 with "errors" (and "data": null for
// the failed field).
func (s *Server) serveGraphQL(c *call) {
	var in struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if !c.decode(&in) {
		return
	}
	switch {
	case strings.Contains(in.Query, "markPullRequestReadyForReview"):
		s.markReady(c, in.Query, in.Variables)
	case strings.Contains(in.Query, "viewer"):
		c.json(http.StatusOK, map[string]any{"data": map[string]any{"viewer": map[string]any{"login": c.tok.Login}}})
	default:
		s.t.Errorf("githubtest: unexpected GraphQL operation %q", in.Query)
		c.json(http.StatusOK, map[string]any{"errors": []any{map[string]any{
			"message": "this fake does not implement the operation"}}})
	}
}

func (s *Server) markReady(c *call, query string, vars map[string]any) {
	id, _ := vars["id"].(string)
	if id == "" {
		id, _ = vars["pullRequestId"].(string)
	}
	if id == "" {
		if m := pullRequestIDLiteral.FindStringSubmatch(query); m != nil {
			id = m[1]
		}
	}
	fail := func(typ, msg string) {
		c.json(http.StatusOK, map[string]any{
			"data": map[string]any{"markPullRequestReadyForReview": nil},
			"errors": []any{map[string]any{"type": typ, "path": []string{"markPullRequestReadyForReview"},
				"locations": []any{map[string]int{"line": 2, "column": 3}}, "message": msg}},
		})
	}
	for _, key := range s.repoOrder {
		r := s.repos[key]
		for _, p := range r.pulls {
			if p.NodeID != id {
				continue
			}
			if c.tok.Kind != UserToken && c.tok.Permissions != nil && c.tok.Permissions["pull-requests"] != "write" {
				fail("FORBIDDEN", "Resource not accessible by integration")
				return
			}
			if c.tok.Kind == UserToken && c.tok.Role != "admin" && c.tok.Role != "maintain" && c.tok.Role != "write" {
				fail("FORBIDDEN", "Resource not accessible by personal access token")
				return
			}
			p.Draft = false
			p.Updated = s.now()
			c.json(http.StatusOK, map[string]any{"data": map[string]any{"markPullRequestReadyForReview": map[string]any{
				"clientMutationId": nil,
				"pullRequest":      map[string]any{"id": p.NodeID, "number": p.Number, "isDraft": false},
			}}})
			return
		}
	}
	fail("NOT_FOUND", "Could not resolve to a node with the global id of '"+id+"'")
}
