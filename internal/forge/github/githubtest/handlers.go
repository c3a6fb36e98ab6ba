package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// call is one authenticated request being served (s.mu is held).
type call struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	tok  Token
	path string
}

type repoHandler func(c *call, r *repoState, args []string)

// route serves c, or reports false for a path the fake does not handle.
func (s *Server) route(c *call) bool {
	seg := strings.Split(strings.Trim(c.path, "/"), "/")
	m := c.r.Method
	if len(seg) == 1 && seg[0] == "user" && m == http.MethodGet {
		c.getUser()
		return true
	}
	if len(seg) < 3 || seg[0] != "repos" {
		return false
	}
	h, args := repoRoute(m, seg[3:])
	if h == nil {
		h, args = ciRoute(m, seg[3:])
	}
	if h == nil {
		return false
	}
	r, ok := s.repos[strings.ToLower(seg[1]+"/"+seg[2])]
	if !ok {
		c.notFound("https://docs.github.com/rest/repos/repos#get-a-repository")
		return true
	}
	h(c, r, args)
	return true
}

func isNum(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n > 0
}

// repoRoute maps the path after /repos/{owner}/{repo} to its handler; args
// are the variable path elements.
func repoRoute(method string, rest []string) (repoHandler, []string) {
	get, post, patch := method == http.MethodGet, method == http.MethodPost, method == http.MethodPatch
	switch len(rest) {
	case 0:
		if get {
			return (*call).getRepo, nil
		}
	case 1:
		switch {
		case rest[0] == "pulls" && get:
			return (*call).listPulls, nil
		case rest[0] == "pulls" && post:
			return (*call).createPull, nil
		case rest[0] == "check-runs" && post:
			return (*call).createCheckRun, nil
		}
	case 2:
		switch {
		case rest[0] == "pulls" && isNum(rest[1]) && get:
			return (*call).getPull, rest[1:]
		case rest[0] == "pulls" && isNum(rest[1]) && patch:
			return (*call).patchPull, rest[1:]
		case rest[0] == "issues" && isNum(rest[1]) && get:
			return (*call).getIssue, rest[1:]
		case rest[0] == "actions" && rest[1] == "artifacts" && get:
			return (*call).listArtifacts, nil
		}
	case 3:
		switch {
		case rest[0] == "collaborators" && rest[2] == "permission" && get:
			return (*call).getPermission, rest[1:2]
		case rest[0] == "issues" && isNum(rest[1]) && rest[2] == "comments" && get:
			return (*call).listComments, rest[1:2]
		case rest[0] == "issues" && isNum(rest[1]) && rest[2] == "comments" && post:
			return (*call).createComment, rest[1:2]
		case rest[0] == "issues" && rest[1] == "comments" && isNum(rest[2]) && get:
			return (*call).getComment, rest[2:]
		case rest[0] == "issues" && rest[1] == "comments" && isNum(rest[2]) && patch:
			return (*call).patchComment, rest[2:]
		}
	case 4:
		switch {
		case rest[0] == "issues" && rest[1] == "comments" && isNum(rest[2]) && rest[3] == "reactions" && post:
			return (*call).createReaction, rest[2:3]
		case rest[0] == "actions" && rest[1] == "artifacts" && isNum(rest[2]) && rest[3] == "zip" && get:
			return (*call).downloadArtifact, rest[2:3]
		}
	}
	return nil, nil
}

// ---- answers ----

func (c *call) json(status int, v any) { writeJSON(c.w, status, v) }

func (c *call) errorJSON(status int, message, doc string) {
	c.json(status, map[string]any{"message": message, "documentation_url": doc, "status": strconv.Itoa(status)})
}

func (c *call) notFound(doc string) { c.errorJSON(http.StatusNotFound, "Not Found", doc) }

func (c *call) validation(doc string, errs ...map[string]any) {
	c.json(http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed", "errors": errs, "documentation_url": doc, "status": "422"})
}

// decode reads the JSON body into v, answering 400 when it is not JSON.
func (c *call) decode(v any) bool {
	data, err := io.ReadAll(io.LimitReader(c.r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		c.errorJSON(http.StatusBadRequest, "Problems parsing JSON", "https://docs.github.com/rest")
		return false
	}
	return true
}

// allow reports whether the token may act on r with any of scopes at level
// read or write, and answers the refusal when it may not.
func (c *call) allow(r *repoState, write bool, doc string, scopes ...string) bool {
	ok := false
	switch c.tok.Kind {
	case UserToken:
		switch c.tok.Role {
		case "admin", "maintain", "write":
			ok = true
		case "triage", "read":
			ok = !write || (len(scopes) > 0 && scopes[0] == "issues")
		}
		if !ok {
			c.errorJSON(http.StatusForbidden, "Resource not accessible by personal access token", doc)
		}
		return ok
	default:
		if c.tok.Permissions == nil {
			return true
		}
		for _, sc := range scopes {
			switch c.tok.Permissions[sc] {
			case "write":
				ok = true
			case "read":
				ok = ok || !write
			}
		}
		if !ok {
			c.errorJSON(http.StatusForbidden, "Resource not accessible by integration", doc)
		}
		return ok
	}
}

// ---- users and repositories ----

func (c *call) getUser() {
	if c.tok.Kind != UserToken {
		c.errorJSON(http.StatusForbidden, "Resource not accessible by integration", "https://docs.github.com/rest/users/users#get-the-authenticated-user")
		return
	}
	u := c.s.userJSON(c.tok.Login)
	u["name"], u["email"], u["created_at"] = "The Octocat", nil, "2011-01-25T18:44:36Z"
	c.json(http.StatusOK, u)
}

func (s *Server) userJSON(login string) map[string]any {
	id, ok := s.userIDs[strings.ToLower(login)]
	if !ok {
		id = 1000 + int64(len(s.userIDs))
		s.userIDs[strings.ToLower(login)] = id
	}
	typ, name := "User", login
	if strings.HasSuffix(login, "[bot]") {
		typ, name = "Bot", strings.TrimSuffix(login, "[bot]")
	}
	return map[string]any{
		"login": login, "id": id, "node_id": fmt.Sprintf("U_kgDO%06d", id),
		"avatar_url": fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", id), "gravatar_id": "",
		"url":      s.apiURL("/users/" + url.PathEscape(login)),
		"html_url": "https://github.com/" + url.PathEscape(name),
		"type":     typ, "site_admin": false,
	}
}

func (s *Server) apiURL(path string) string { return s.srv.URL + s.prefix + path }

func (c *call) getRepo(r *repoState, _ []string) {
	c.json(http.StatusOK, c.s.repoJSON(r, &c.tok))
}

func (s *Server) repoJSON(r *repoState, tok *Token) map[string]any {
	visibility := "public"
	if r.cfg.Private {
		visibility = "private"
	}
	full := r.fullName()
	out := map[string]any{
		"id": r.id, "node_id": fmt.Sprintf("R_kgDO%06d", r.id), "name": r.name, "full_name": full,
		"private": r.cfg.Private, "owner": s.userJSON(r.owner),
		"html_url": "https://github.com/" + full, "description": nil, "fork": false,
		"url": s.apiURL("/repos/" + full), "default_branch": r.cfg.DefaultBranch,
		"archived": r.cfg.Archived, "disabled": false, "visibility": visibility,
		"created_at": "2020-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z", "pushed_at": "2024-01-01T00:00:00Z",
	}
	// Only user tokens see their permissions; installation tokens do not.
	if tok != nil && tok.Kind == UserToken {
		role := tok.Role
		out["permissions"] = map[string]bool{
			"admin":    role == "admin",
			"maintain": role == "admin" || role == "maintain",
			"push":     role == "admin" || role == "maintain" || role == "write",
			"triage":   role != "read",
			"pull":     true,
		}
	}
	return out
}

func (c *call) getPermission(r *repoState, args []string) {
	login := args[0]
	for _, n := range r.cfg.Nonexistent {
		if strings.EqualFold(n, login) {
			c.notFound("https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user")
			return
		}
	}
	role := "none"
	for l, rl := range r.cfg.Collaborators {
		if strings.EqualFold(l, login) {
			role = rl
		}
	}
	legacy := map[string]string{"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}[role]
	if legacy == "" {
		legacy = "none"
	}
	user := c.s.userJSON(login)
	user["permissions"] = map[string]bool{
		"admin": role == "admin", "maintain": role == "admin" || role == "maintain",
		"push": legacy == "admin" || legacy == "write", "triage": role != "read" && role != "none", "pull": role != "none",
	}
	user["role_name"] = role
	c.json(http.StatusOK, map[string]any{"permission": legacy, "role_name": role, "user": user})
}

// ---- pull requests ----

const pullsDoc = "https://docs.github.com/rest/pulls/pulls"

func (s *Server) pullJSON(r *repoState, p *PullRequest) map[string]any {
	full := r.fullName()
	headOwner, _, _ := strings.Cut(p.HeadRepo, "/")
	headRepo := s.repoJSON(r, nil)
	if !strings.EqualFold(p.HeadRepo, full) {
		headRepo = map[string]any{"full_name": p.HeadRepo, "name": strings.SplitN(p.HeadRepo, "/", 2)[1],
			"owner": s.userJSON(headOwner), "fork": true, "private": false}
	}
	base := s.branchSHA(r, p.Base)
	api := s.apiURL("/repos/" + full + "/pulls/" + strconv.Itoa(p.Number))
	html := "https://github.com/" + full + "/pull/" + strconv.Itoa(p.Number)
	return map[string]any{
		"url": api, "id": p.ID, "node_id": p.NodeID, "html_url": html,
		"diff_url": html + ".diff", "patch_url": html + ".patch",
		"issue_url":    s.apiURL("/repos/" + full + "/issues/" + strconv.Itoa(p.Number)),
		"comments_url": s.apiURL("/repos/" + full + "/issues/" + strconv.Itoa(p.Number) + "/comments"),
		"number":       p.Number, "state": p.State, "locked": false, "title": p.Title, "body": p.Body,
		"user": s.userJSON(p.Author), "labels": []any{}, "milestone": nil, "draft": p.Draft,
		"created_at": p.Created.Format(time.RFC3339), "updated_at": p.Updated.Format(time.RFC3339),
		"closed_at": nil, "merged_at": nil, "merge_commit_sha": nil, "assignee": nil, "assignees": []any{},
		"requested_reviewers": []any{}, "author_association": "CONTRIBUTOR", "auto_merge": nil,
		"head": map[string]any{"label": headOwner + ":" + p.Head, "ref": p.Head, "sha": p.HeadSHA,
			"user": s.userJSON(headOwner), "repo": headRepo},
		"base": map[string]any{"label": r.owner + ":" + p.Base, "ref": p.Base, "sha": base,
			"user": s.userJSON(r.owner), "repo": s.repoJSON(r, nil)},
		"merged": false, "mergeable": nil, "comments": 0, "commits": 1, "additions": 0, "deletions": 0, "changed_files": 0,
	}
}

func (c *call) listPulls(r *repoState, _ []string) {
	if !c.allow(r, false, pullsDoc+"#list-pull-requests", "pull-requests") {
		return
	}
	q := c.r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var list []*PullRequest
	for _, p := range r.pulls {
		if state != "all" && p.State != state {
			continue
		}
		if h := q.Get("head"); h != "" {
			owner, branch, ok := strings.Cut(h, ":")
			if !ok {
				// GitHub ignores a head filter without "user:".
				owner, branch = "", ""
			}
			headOwner, _, _ := strings.Cut(p.HeadRepo, "/")
			if ok && (!strings.EqualFold(owner, headOwner) || branch != p.Head) {
				continue
			}
		}
		if b := q.Get("base"); b != "" && b != p.Base {
			continue
		}
		list = append(list, p)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Number > list[j].Number })
	lo, hi := c.paginate(len(list))
	out := []any{}
	for _, p := range list[lo:hi] {
		out = append(out, c.s.pullJSON(r, p))
	}
	c.json(http.StatusOK, out)
}

func (c *call) createPull(r *repoState, _ []string) {
	const doc = pullsDoc + "#create-a-pull-request"
	var in struct {
		Title, Head, Base, Body string
		Draft                   bool
	}
	if !c.decode(&in) || !c.allow(r, true, doc, "pull-requests") {
		return
	}
	if c.tok.Kind == ActionsToken && r.cfg.ActionsCannotCreatePRs {
		c.errorJSON(http.StatusForbidden, "GitHub Actions is not permitted to create or approve pull requests.", doc)
		return
	}
	for field, v := range map[string]string{"title": in.Title, "head": in.Head, "base": in.Base} {
		if strings.TrimSpace(v) == "" {
			c.validation(doc, map[string]any{"resource": "PullRequest", "field": field, "code": "missing_field"})
			return
		}
	}
	owner, branch := r.owner, in.Head
	if o, b, ok := strings.Cut(in.Head, ":"); ok {
		owner, branch = o, b
	}
	if !strings.EqualFold(owner, r.owner) {
		c.validation(doc, map[string]any{"resource": "PullRequest", "field": "head", "code": "invalid"})
		return
	}
	if r.cfg.Branches != nil {
		if _, ok := r.cfg.Branches[branch]; !ok {
			c.validation(doc, map[string]any{"resource": "PullRequest", "field": "head", "code": "invalid"})
			return
		}
		if _, ok := r.cfg.Branches[in.Base]; !ok {
			c.validation(doc, map[string]any{"resource": "PullRequest", "field": "base", "code": "invalid"})
			return
		}
	}
	if branch == in.Base {
		c.validation(doc, map[string]any{"resource": "PullRequest", "code": "custom",
			"message": fmt.Sprintf("No commits between %s and %s", in.Base, branch)})
		return
	}
	for _, p := range r.pulls {
		if p.State == "open" && p.Head == branch && p.Base == in.Base && strings.EqualFold(p.HeadRepo, r.fullName()) {
			c.validation(doc, map[string]any{"resource": "PullRequest", "code": "custom",
				"message": fmt.Sprintf("A pull request already exists for %s:%s.", r.owner, branch)})
			return
		}
	}
	if in.Draft && r.cfg.NoDrafts {
		c.validation(doc, map[string]any{"resource": "PullRequest", "code": "custom",
			"message": "Draft pull requests are not supported in this repository."})
		return
	}
	p := c.s.openPR(r, PullRequest{Title: in.Title, Body: in.Body, Head: branch, Base: in.Base, Draft: in.Draft, Author: c.tok.Login})
	c.w.Header().Set("Location", c.s.apiURL("/repos/"+r.fullName()+"/pulls/"+strconv.Itoa(p.Number)))
	c.json(http.StatusCreated, c.s.pullJSON(r, p))
}

func (c *call) pull(r *repoState, arg string) *PullRequest {
	n, _ := strconv.Atoi(arg)
	p, ok := r.pulls[n]
	if !ok {
		c.notFound(pullsDoc + "#get-a-pull-request")
		return nil
	}
	return p
}

func (c *call) getPull(r *repoState, args []string) {
	if !c.allow(r, false, pullsDoc+"#get-a-pull-request", "pull-requests") {
		return
	}
	if p := c.pull(r, args[0]); p != nil {
		c.json(http.StatusOK, c.s.pullJSON(r, p))
	}
}

func (c *call) patchPull(r *repoState, args []string) {
	var in struct {
		Title, Body, State, Base *string
	}
	if !c.decode(&in) || !c.allow(r, true, pullsDoc+"#update-a-pull-request", "pull-requests") {
		return
	}
	p := c.pull(r, args[0])
	if p == nil {
		return
	}
	if in.Title != nil {
		p.Title = *in.Title
		r.issues[p.Number].Title = *in.Title
	}
	if in.Body != nil {
		p.Body = *in.Body
		r.issues[p.Number].Body = *in.Body
	}
	if in.State != nil {
		p.State = *in.State
		r.issues[p.Number].State = *in.State
	}
	if in.Base != nil {
		p.Base = *in.Base
	}
	p.Updated = c.s.now()
	c.json(http.StatusOK, c.s.pullJSON(r, p))
}

// ---- issues and comments ----

const issuesDoc = "https://docs.github.com/rest/issues"

func (c *call) issue(r *repoState, arg string) *Issue {
	n, _ := strconv.Atoi(arg)
	is, ok := r.issues[n]
	if !ok {
		c.notFound(issuesDoc + "/issues#get-an-issue")
		return nil
	}
	return is
}

// issueScopes are the permission scopes that cover comments on is.
func issueScopes(is *Issue) []string {
	if is.IsPR {
		return []string{"issues", "pull-requests"}
	}
	return []string{"issues"}
}

func (c *call) getIssue(r *repoState, args []string) {
	is := c.issue(r, args[0])
	if is == nil || !c.allow(r, false, issuesDoc+"/issues#get-an-issue", issueScopes(is)...) {
		return
	}
	full := r.fullName()
	api := c.s.apiURL("/repos/" + full + "/issues/" + strconv.Itoa(is.Number))
	n := 0
	for _, cm := range r.comments {
		if cm.Issue == is.Number {
			n++
		}
	}
	out := map[string]any{
		"url": api, "repository_url": c.s.apiURL("/repos/" + full), "comments_url": api + "/comments",
		"html_url": "https://github.com/" + full + "/issues/" + strconv.Itoa(is.Number),
		"id":       is.ID, "node_id": fmt.Sprintf("I_kwDO%06d", is.ID), "number": is.Number, "title": is.Title,
		"user": c.s.userJSON(is.Author), "labels": []any{}, "state": is.State, "locked": false,
		"assignee": nil, "assignees": []any{}, "milestone": nil, "comments": n,
		"created_at": is.Created.Format(time.RFC3339), "updated_at": is.Created.Format(time.RFC3339), "closed_at": nil,
		"author_association": "OWNER", "body": is.Body, "state_reason": nil,
	}
	if is.IsPR {
		html := "https://github.com/" + full + "/pull/" + strconv.Itoa(is.Number)
		out["pull_request"] = map[string]any{"url": c.s.apiURL("/repos/" + full + "/pulls/" + strconv.Itoa(is.Number)),
			"html_url": html, "diff_url": html + ".diff", "patch_url": html + ".patch", "merged_at": nil}
		out["html_url"] = html
	}
	c.json(http.StatusOK, out)
}

func (s *Server) commentJSON(r *repoState, cm *Comment) map[string]any {
	full := r.fullName()
	var app any
	if strings.HasSuffix(cm.Author, "[bot]") {
		slug := strings.TrimSuffix(cm.Author, "[bot]")
		app = map[string]any{"id": 15368, "slug": slug, "name": slug, "owner": s.userJSON("github")}
	}
	reactions := map[string]any{"url": s.apiURL(fmt.Sprintf("/repos/%s/issues/comments/%d/reactions", full, cm.ID)), "total_count": 0,
		"+1": 0, "-1": 0, "laugh": 0, "hooray": 0, "confused": 0, "heart": 0, "rocket": 0, "eyes": 0}
	for _, x := range r.reactions {
		if x.CommentID == cm.ID {
			reactions[x.Content] = reactions[x.Content].(int) + 1
			reactions["total_count"] = reactions["total_count"].(int) + 1
		}
	}
	return map[string]any{
		"id": cm.ID, "node_id": fmt.Sprintf("IC_kwDO%06d", cm.ID),
		"url":       s.apiURL(fmt.Sprintf("/repos/%s/issues/comments/%d", full, cm.ID)),
		"html_url":  fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", full, cm.Issue, cm.ID),
		"issue_url": s.apiURL(fmt.Sprintf("/repos/%s/issues/%d", full, cm.Issue)),
		"body":      cm.Body, "user": s.userJSON(cm.Author),
		"created_at": cm.Created.Format(time.RFC3339), "updated_at": cm.Updated.Format(time.RFC3339),
		"author_association": "NONE", "performed_via_github_app": app, "reactions": reactions,
	}
}

func (c *call) listComments(r *repoState, args []string) {
	is := c.issue(r, args[0])
	if is == nil || !c.allow(r, false, issuesDoc+"/comments#list-issue-comments", issueScopes(is)...) {
		return
	}
	var list []*Comment
	for _, cm := range r.comments {
		if cm.Issue == is.Number {
			list = append(list, cm)
		}
	}
	lo, hi := c.paginate(len(list))
	out := []any{}
	for _, cm := range list[lo:hi] {
		out = append(out, c.s.commentJSON(r, cm))
	}
	c.json(http.StatusOK, out)
}

func (c *call) createComment(r *repoState, args []string) {
	const doc = issuesDoc + "/comments#create-an-issue-comment"
	var in struct{ Body *string }
	if !c.decode(&in) {
		return
	}
	is := c.issue(r, args[0])
	if is == nil || !c.allow(r, true, doc, issueScopes(is)...) {
		return
	}
	if in.Body == nil || *in.Body == "" {
		c.validation(doc, map[string]any{"resource": "IssueComment", "field": "body", "code": "missing_field"})
		return
	}
	if len(*in.Body) > 65536 {
		c.validation(doc, map[string]any{"resource": "IssueComment", "field": "body", "code": "custom",
			"message": "body is too long (maximum is 65536 characters)"})
		return
	}
	now := c.s.now()
	cm := &Comment{ID: c.s.nextID(), Issue: is.Number, Author: c.tok.Login, Body: *in.Body, Created: now, Updated: now}
	r.comments = append(r.comments, cm)
	c.w.Header().Set("Location", c.s.apiURL(fmt.Sprintf("/repos/%s/issues/comments/%d", r.fullName(), cm.ID)))
	c.json(http.StatusCreated, c.s.commentJSON(r, cm))
}

func (c *call) comment(r *repoState, arg string) *Comment {
	id, _ := strconv.ParseInt(arg, 10, 64)
	for _, cm := range r.comments {
		if cm.ID == id {
			return cm
		}
	}
	c.notFound(issuesDoc + "/comments#get-an-issue-comment")
	return nil
}

func (c *call) getComment(r *repoState, args []string) {
	cm := c.comment(r, args[0])
	if cm == nil || !c.allow(r, false, issuesDoc+"/comments#get-an-issue-comment", issueScopes(r.issues[cm.Issue])...) {
		return
	}
	c.json(http.StatusOK, c.s.commentJSON(r, cm))
}

func (c *call) patchComment(r *repoState, args []string) {
	const doc = issuesDoc + "/comments#update-an-issue-comment"
	var in struct{ Body *string }
	if !c.decode(&in) {
		return
	}
	cm := c.comment(r, args[0])
	if cm == nil || !c.allow(r, true, doc, issueScopes(r.issues[cm.Issue])...) {
		return
	}
	if in.Body == nil || *in.Body == "" {
		c.validation(doc, map[string]any{"resource": "IssueComment", "field": "body", "code": "missing_field"})
		return
	}
	if c.tok.Kind != UserToken && !strings.EqualFold(cm.Author, c.tok.Login) {
		// An App may edit only its own comments.
		c.errorJSON(http.StatusForbidden, "Resource not accessible by integration", doc)
		return
	}
	cm.Body = *in.Body
	cm.Updated = c.s.now()
	c.json(http.StatusOK, c.s.commentJSON(r, cm))
}

var reactionContents = map[string]bool{"+1": true, "-1": true, "laugh": true, "confused": true, "heart": true, "hooray": true, "rocket": true, "eyes": true}

func (c *call) createReaction(r *repoState, args []string) {
	const doc = "https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment"
	var in struct{ Content string }
	if !c.decode(&in) {
		return
	}
	cm := c.comment(r, args[0])
	if cm == nil || !c.allow(r, true, doc, issueScopes(r.issues[cm.Issue])...) {
		return
	}
	if !reactionContents[in.Content] {
		c.validation(doc, map[string]any{"resource": "Reaction", "field": "content", "code": "invalid"})
		return
	}
	status := http.StatusOK
	var x *Reaction
	for _, old := range r.reactions {
		if old.CommentID == cm.ID && old.Content == in.Content && strings.EqualFold(old.Author, c.tok.Login) {
			x = old
		}
	}
	if x == nil {
		x = &Reaction{ID: c.s.nextID(), CommentID: cm.ID, Author: c.tok.Login, Content: in.Content}
		r.reactions = append(r.reactions, x)
		status = http.StatusCreated
	}
	c.json(status, map[string]any{"id": x.ID, "node_id": fmt.Sprintf("REA_lATO%06d", x.ID),
		"user": c.s.userJSON(x.Author), "content": x.Content, "created_at": c.s.now().Format(time.RFC3339)})
}

// ---- check runs ----

var checkConclusions = map[string]bool{"action_required": true, "cancelled": true, "failure": true, "neutral": true,
	"success": true, "skipped": true, "stale": true, "timed_out": true}

func (c *call) createCheckRun(r *repoState, _ []string) {
	const doc = "https://docs.github.com/rest/checks/runs#create-a-check-run"
	var in struct {
		Name       string `json:"name"`
		HeadSHA    string `json:"head_sha"`
		Status     string `json:"status"`
		Conclusion string `json:"conclusion"`
		Output     *struct {
			Title   string `json:"title"`
			Summary string `json:"summary"`
		} `json:"output"`
	}
	if !c.decode(&in) {
		return
	}
	if c.tok.Kind == UserToken {
		c.errorJSON(http.StatusForbidden, "You must authenticate via a GitHub App.", doc)
		return
	}
	if !c.allow(r, true, doc, "checks") {
		return
	}
	switch {
	case in.Name == "":
		c.validation(doc, map[string]any{"resource": "CheckRun", "field": "name", "code": "missing_field"})
		return
	case len(in.HeadSHA) != 40:
		c.validation(doc, map[string]any{"resource": "CheckRun", "field": "head_sha", "code": "invalid"})
		return
	case in.Conclusion != "" && !checkConclusions[in.Conclusion]:
		c.validation(doc, map[string]any{"resource": "CheckRun", "field": "conclusion", "code": "invalid"})
		return
	case in.Status == "completed" && in.Conclusion == "":
		c.validation(doc, map[string]any{"resource": "CheckRun", "code": "custom", "message": "conclusion is required when status is completed"})
		return
	case in.Output != nil && len(in.Output.Summary) > 65535:
		c.validation(doc, map[string]any{"resource": "CheckRun", "code": "custom", "message": "output.summary is too long (maximum is 65535 characters)"})
		return
	}
	if in.Status == "" {
		in.Status = "queued"
		if in.Conclusion != "" {
			in.Status = "completed"
		}
	}
	run := &CheckRun{ID: c.s.nextID(), Name: in.Name, HeadSHA: in.HeadSHA, Status: in.Status, Conclusion: in.Conclusion, Author: c.tok.Login}
	if in.Output != nil {
		run.Title, run.Summary = in.Output.Title, in.Output.Summary
	}
	r.checkRuns = append(r.checkRuns, run)
	now := c.s.now().Format(time.RFC3339)
	var conclusion any
	if run.Conclusion != "" {
		conclusion = run.Conclusion
	}
	api := c.s.apiURL(fmt.Sprintf("/repos/%s/check-runs/%d", r.fullName(), run.ID))
	c.json(http.StatusCreated, map[string]any{
		"id": run.ID, "head_sha": run.HeadSHA, "node_id": fmt.Sprintf("CR_kwDO%06d", run.ID), "external_id": "",
		"url": api, "html_url": fmt.Sprintf("https://github.com/%s/runs/%d", r.fullName(), run.ID), "details_url": "",
		"status": run.Status, "conclusion": conclusion, "started_at": now, "completed_at": now, "name": run.Name,
		"output": map[string]any{"title": run.Title, "summary": run.Summary, "text": nil,
			"annotations_count": 0, "annotations_url": api + "/annotations"},
		"check_suite":   map[string]any{"id": c.s.nextID()},
		"app":           map[string]any{"id": 15368, "slug": "github-actions", "name": "GitHub Actions"},
		"pull_requests": []any{},
	})
}

// ---- artifacts ----

const artifactsDoc = "https://docs.github.com/rest/actions/artifacts"

func (s *Server) artifactJSON(r *repoState, a *storedArtifact) map[string]any {
	api := s.apiURL(fmt.Sprintf("/repos/%s/actions/artifacts/%d", r.fullName(), a.ID))
	return map[string]any{
		"id": a.ID, "node_id": fmt.Sprintf("MDg6QXJ0aWZhY3Q%06d", a.ID), "name": a.Name,
		"size_in_bytes": len(a.zip), "url": api, "archive_download_url": api + "/zip", "expired": a.Expired,
		"digest":     nil,
		"created_at": a.Created.Format(time.RFC3339), "updated_at": a.Created.Format(time.RFC3339),
		"expires_at": a.Created.Add(90 * 24 * time.Hour).Format(time.RFC3339),
		"workflow_run": map[string]any{"id": a.RunID, "repository_id": r.id, "head_repository_id": r.id,
			"head_branch": r.cfg.DefaultBranch, "head_sha": s.branchSHA(r, r.cfg.DefaultBranch)},
	}
}

func (c *call) listArtifacts(r *repoState, _ []string) {
	if !c.allow(r, false, artifactsDoc+"#list-artifacts-for-a-repository", "actions") {
		return
	}
	name := c.r.URL.Query().Get("name")
	var list []*storedArtifact
	for _, a := range r.artifacts {
		if name == "" || a.Name == name {
			list = append(list, a)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].ID > list[j].ID })
	lo, hi := c.paginate(len(list))
	out := []any{}
	for _, a := range list[lo:hi] {
		out = append(out, c.s.artifactJSON(r, a))
	}
	c.json(http.StatusOK, map[string]any{"total_count": len(list), "artifacts": out})
}

func (c *call) downloadArtifact(r *repoState, args []string) {
	const doc = artifactsDoc + "#download-an-artifact"
	if !c.allow(r, false, doc, "actions") {
		return
	}
	id, _ := strconv.ParseInt(args[0], 10, 64)
	for _, a := range r.artifacts {
		if a.ID != id {
			continue
		}
		if a.Expired {
			c.errorJSON(http.StatusGone, "Artifact has expired", doc)
			return
		}
		c.redirectToBlob("artifacts", id, ".zip")
		return
	}
	c.notFound(doc)
}

// ---- pagination ----

// paginate reads per_page (default 30, at most 100) and page, sets the Link
// header and returns the slice bounds of the page.
func (c *call) paginate(total int) (int, int) {
	q := c.r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	if per > 100 {
		per = 100
	}
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	last := (total + per - 1) / per
	if last == 0 {
		last = 1
	}
	link := func(p int, rel string) string {
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(per))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, c.s.srv.URL, c.r.URL.Path, q.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		c.w.Header().Set("Link", strings.Join(links, ", "))
	}
	lo := (page - 1) * per
	if lo > total {
		lo = total
	}
	hi := lo + per
	if hi > total {
		hi = total
	}
	return lo, hi
}
