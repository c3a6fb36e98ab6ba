package githubtest

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file serves what the "CI failed: fix it" trigger reads: workflow
// runs and their jobs, job logs (a redirect to the blob host, which refuses
// a request that carries an Authorization header, as Azure blob storage
// does), the runs of a workflow, file contents at a commit, commit
// comparisons and commit comments.

// WorkflowRun is a workflow run of the fake. Zero fields get defaults when
// it is added: Status "completed", RunNumber and RunAttempt 1, HeadRepo the
// repository, Actor and TriggeringActor "octocat", Created now.
type WorkflowRun struct {
	ID         int64
	WorkflowID int64
	Name       string // the workflow's name ("CI")
	Path       string // ".github/workflows/ci.yml"
	Event      string // push, pull_request, ...
	Status     string
	Conclusion string
	HeadBranch string
	HeadSHA    string
	// HeadRepo is the full name of the head's repository: a fork when it
	// differs. The run lists no pull request then, as GitHub does.
	HeadRepo          string
	RunNumber         int
	RunAttempt        int
	Actor             string
	TriggeringActor   string
	HeadCommitMessage string
	// PullRequests are numbers of pull requests of the repository.
	PullRequests []int
	Created      time.Time
	Jobs         []Job
}

// Job is a job of a workflow run.
type Job struct {
	ID         int64 // assigned when the run is added
	Name       string
	Status     string // default "completed"
	Conclusion string
	Labels     []string
	// Steps as GitHub lists them; Number is the position (1-based) and
	// Status "completed" when left zero.
	Steps []JobStep
	// Log is the job's log, served through the blob redirect. LogGone
	// answers 410 instead (logs expire).
	Log     string
	LogGone bool
}

// JobStep is one step of a job.
type JobStep struct {
	Number     int
	Name       string
	Status     string
	Conclusion string
}

// Commit is a commit the fake knows, for comparisons.
type Commit struct {
	SHA     string
	Parent  string // the first parent ("" for a root commit)
	Message string
	Author  string // a login
}

// ciState is what a repository holds for the CI trigger.
type ciState struct {
	runs           []*WorkflowRun
	files          map[string]map[string][]byte // ref -> path -> content
	commits        map[string]*Commit
	commitComments []*commitComment
}

type commitComment struct {
	Comment
	SHA string
}

func (r *repoState) ciData() *ciState {
	if r.ci == nil {
		r.ci = &ciState{files: map[string]map[string][]byte{}, commits: map[string]*Commit{}}
	}
	return r.ci
}

// AddWorkflowRun stores a workflow run with its jobs and returns it with
// its ids and defaults filled in.
func (s *Server) AddWorkflowRun(repo string, run WorkflowRun) WorkflowRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return run
	}
	if run.ID == 0 {
		run.ID = s.nextID()
	}
	if run.WorkflowID == 0 {
		run.WorkflowID = 900 + int64(len(run.Path))
	}
	if run.Status == "" {
		run.Status = "completed"
	}
	if run.RunNumber == 0 {
		run.RunNumber = 1
	}
	if run.RunAttempt == 0 {
		run.RunAttempt = 1
	}
	if run.HeadRepo == "" {
		run.HeadRepo = r.fullName()
	}
	if run.Actor == "" {
		run.Actor = "octocat"
	}
	if run.TriggeringActor == "" {
		run.TriggeringActor = run.Actor
	}
	if run.Created.IsZero() {
		run.Created = s.now()
	}
	for i := range run.Jobs {
		j := &run.Jobs[i]
		j.ID = s.nextID()
		if j.Status == "" {
			j.Status = "completed"
		}
		for k := range j.Steps {
			if j.Steps[k].Number == 0 {
				j.Steps[k].Number = k + 1
			}
			if j.Steps[k].Status == "" {
				j.Steps[k].Status = "completed"
			}
		}
	}
	stored := run
	stored.Jobs = append([]Job(nil), run.Jobs...)
	ci := r.ciData()
	ci.runs = append(ci.runs, &stored)
	return run
}

// SetFile makes path hold content at ref (a commit SHA or a branch) for the
// contents API.
func (s *Server) SetFile(repo, ref, path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return
	}
	ci := r.ciData()
	if ci.files[ref] == nil {
		ci.files[ref] = map[string][]byte{}
	}
	ci.files[ref][path] = append([]byte(nil), content...)
}

// AddCommit records a commit for comparisons.
func (s *Server) AddCommit(repo string, c Commit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return
	}
	cc := c
	r.ciData().commits[c.SHA] = &cc
}

// AddCommitComment adds a comment on commit sha (an earlier report, a user
// quoting a marker) and returns its id.
func (s *Server) AddCommitComment(repo, sha, author, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return 0
	}
	now := s.now()
	cm := &commitComment{Comment: Comment{ID: s.nextID(), Author: author, Body: body, Created: now, Updated: now}, SHA: sha}
	r.ciData().commitComments = append(r.ciData().commitComments, cm)
	return cm.ID
}

// CommitComments returns the comments on commit sha, oldest first.
func (s *Server) CommitComments(repo, sha string) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return nil
	}
	var out []Comment
	for _, c := range r.ciData().commitComments {
		if c.SHA == sha {
			out = append(out, c.Comment)
		}
	}
	return out
}

// LogRejections counts the log downloads the blob host refused because
// they carried an Authorization header.
func (s *Server) LogRejections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logRejections
}

// WorkflowRunEvent is the payload of the workflow_run event "completed"
// for run id, as GitHub delivers it (event.json of the Action).
func (s *Server) WorkflowRunEvent(repo string, runID int64) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return nil
	}
	run := s.findRun(r, runID)
	if run == nil {
		s.t.Errorf("githubtest: no workflow run %d in %s", runID, repo)
		return nil
	}
	return map[string]any{
		"action":       "completed",
		"workflow_run": s.runJSON(r, run),
		"workflow": map[string]any{"id": run.WorkflowID, "name": run.Name, "path": run.Path,
			"state": "active", "url": s.apiURL(fmt.Sprintf("/repos/%s/actions/workflows/%d", r.fullName(), run.WorkflowID))},
		"repository": s.repoJSON(r, nil),
		"sender":     s.userJSON(run.TriggeringActor),
	}
}

func (s *Server) findRun(r *repoState, id int64) *WorkflowRun {
	for _, run := range r.ciData().runs {
		if run.ID == id {
			return run
		}
	}
	return nil
}

func (s *Server) runJSON(r *repoState, run *WorkflowRun) map[string]any {
	full := r.fullName()
	api := s.apiURL(fmt.Sprintf("/repos/%s/actions/runs/%d", full, run.ID))
	prs := []any{}
	if strings.EqualFold(run.HeadRepo, full) {
		for _, n := range run.PullRequests {
			p, ok := r.pulls[n]
			if !ok {
				continue
			}
			prs = append(prs, map[string]any{
				"url": s.apiURL(fmt.Sprintf("/repos/%s/pulls/%d", full, n)), "id": p.ID, "number": n,
				"head": map[string]any{"ref": p.Head, "sha": p.HeadSHA, "repo": map[string]any{"id": r.id, "url": s.apiURL("/repos/" + full), "name": r.name}},
				"base": map[string]any{"ref": p.Base, "sha": s.branchSHA(r, p.Base), "repo": map[string]any{"id": r.id, "url": s.apiURL("/repos/" + full), "name": r.name}},
			})
		}
	}
	headRepo := s.repoJSON(r, nil)
	if !strings.EqualFold(run.HeadRepo, full) {
		owner, name, _ := strings.Cut(run.HeadRepo, "/")
		headRepo = map[string]any{"id": r.id + 100000, "full_name": run.HeadRepo, "name": name, "owner": s.userJSON(owner), "fork": true, "private": false}
	}
	var conclusion any
	if run.Conclusion != "" {
		conclusion = run.Conclusion
	}
	created := run.Created.Format(time.RFC3339)
	return map[string]any{
		"id": run.ID, "name": run.Name, "node_id": fmt.Sprintf("WFR_kwLO%06d", run.ID),
		"head_branch": run.HeadBranch, "head_sha": run.HeadSHA, "path": run.Path, "display_title": firstLine(run.HeadCommitMessage),
		"run_number": run.RunNumber, "run_attempt": run.RunAttempt, "event": run.Event, "status": run.Status,
		"conclusion": conclusion, "workflow_id": run.WorkflowID, "check_suite_id": run.ID + 7,
		"url": api, "html_url": fmt.Sprintf("https://github.com/%s/actions/runs/%d", full, run.ID),
		"pull_requests": prs, "created_at": created, "updated_at": created, "run_started_at": created,
		"actor": s.userJSON(run.Actor), "triggering_actor": s.userJSON(run.TriggeringActor),
		"jobs_url": api + "/jobs", "logs_url": api + "/logs", "check_suite_url": s.apiURL(fmt.Sprintf("/repos/%s/check-suites/%d", full, run.ID+7)),
		"artifacts_url": api + "/artifacts", "cancel_url": api + "/cancel", "rerun_url": api + "/rerun",
		"previous_attempt_url": nil,
		"workflow_url":         s.apiURL(fmt.Sprintf("/repos/%s/actions/workflows/%d", full, run.WorkflowID)),
		"head_commit": map[string]any{"id": run.HeadSHA, "tree_id": strings.Repeat("0", 40), "message": run.HeadCommitMessage,
			"timestamp": created, "author": map[string]any{"name": "A U Thor", "email": "author@example.com"},
			"committer": map[string]any{"name": "A U Thor", "email": "author@example.com"}},
		"repository": s.repoJSON(r, nil), "head_repository": headRepo,
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// ciRoute maps the CI endpoints after /repos/{owner}/{repo}.
func ciRoute(method string, rest []string) (repoHandler, []string) {
	get, post, patch := method == http.MethodGet, method == http.MethodPost, method == http.MethodPatch
	n := len(rest)
	switch {
	case n == 3 && get && rest[0] == "actions" && rest[1] == "runs" && isNum(rest[2]):
		return (*call).getRun, rest[2:3]
	case n == 4 && get && rest[0] == "actions" && rest[1] == "runs" && isNum(rest[2]) && rest[3] == "jobs":
		return (*call).listJobs, rest[2:3]
	case n == 4 && get && rest[0] == "actions" && rest[1] == "jobs" && isNum(rest[2]) && rest[3] == "logs":
		return (*call).jobLogs, rest[2:3]
	case n == 4 && get && rest[0] == "actions" && rest[1] == "workflows" && rest[3] == "runs":
		return (*call).listWorkflowRuns, rest[2:3]
	case n >= 2 && get && rest[0] == "contents":
		return (*call).getContents, []string{strings.Join(rest[1:], "/")}
	case n == 2 && get && rest[0] == "compare":
		return (*call).compare, rest[1:2]
	case n == 3 && rest[0] == "commits" && rest[2] == "comments" && get:
		return (*call).listCommitComments, rest[1:2]
	case n == 3 && rest[0] == "commits" && rest[2] == "comments" && post:
		return (*call).createCommitComment, rest[1:2]
	case n == 2 && rest[0] == "comments" && isNum(rest[1]) && patch:
		return (*call).patchCommitComment, rest[1:2]
	}
	return nil, nil
}

const actionsDoc = "https://docs.github.com/rest/actions"

// run is the workflow run a request names, after the token is checked for
// `actions: read`; nil when the answer (403, 404) was written.
func (c *call) run(r *repoState, arg, doc string) *WorkflowRun {
	if !c.allow(r, false, doc, "actions") {
		return nil
	}
	id, _ := strconv.ParseInt(arg, 10, 64)
	run := c.s.findRun(r, id)
	if run == nil {
		c.notFound(doc)
	}
	return run
}

func (c *call) getRun(r *repoState, args []string) {
	if run := c.run(r, args[0], actionsDoc+"/workflow-runs#get-a-workflow-run"); run != nil {
		c.json(http.StatusOK, c.s.runJSON(r, run))
	}
}

func (c *call) listJobs(r *repoState, args []string) {
	const doc = actionsDoc + "/workflow-jobs#list-jobs-for-a-workflow-run"
	run := c.run(r, args[0], doc)
	if run == nil {
		return
	}
	if f := c.r.URL.Query().Get("filter"); f != "" && f != "latest" && f != "all" {
		c.validation(doc, map[string]any{"resource": "WorkflowJob", "field": "filter", "code": "invalid"})
		return
	}
	full := r.fullName()
	lo, hi := c.paginate(len(run.Jobs))
	jobs := []any{}
	for _, j := range run.Jobs[lo:hi] {
		steps := []any{}
		for _, st := range j.Steps {
			var conclusion any
			if st.Conclusion != "" {
				conclusion = st.Conclusion
			}
			steps = append(steps, map[string]any{"name": st.Name, "status": st.Status, "conclusion": conclusion, "number": st.Number,
				"started_at": run.Created.Format(time.RFC3339), "completed_at": run.Created.Format(time.RFC3339)})
		}
		var conclusion any
		if j.Conclusion != "" {
			conclusion = j.Conclusion
		}
		labels := j.Labels
		if labels == nil {
			labels = []string{"ubuntu-latest"}
		}
		jobs = append(jobs, map[string]any{
			"id": j.ID, "run_id": run.ID, "run_url": c.s.apiURL(fmt.Sprintf("/repos/%s/actions/runs/%d", full, run.ID)),
			"node_id": fmt.Sprintf("CR_kwDO%06d", j.ID), "head_sha": run.HeadSHA, "head_branch": run.HeadBranch,
			"url":      c.s.apiURL(fmt.Sprintf("/repos/%s/actions/jobs/%d", full, j.ID)),
			"html_url": fmt.Sprintf("https://github.com/%s/actions/runs/%d/job/%d", full, run.ID, j.ID),
			"status":   j.Status, "conclusion": conclusion, "name": j.Name, "steps": steps, "labels": labels,
			"check_run_url": c.s.apiURL(fmt.Sprintf("/repos/%s/check-runs/%d", full, j.ID)),
			"created_at":    run.Created.Format(time.RFC3339), "started_at": run.Created.Format(time.RFC3339),
			"completed_at": run.Created.Format(time.RFC3339), "run_attempt": run.RunAttempt, "workflow_name": run.Name,
			"runner_id": 1, "runner_name": "GitHub Actions 1", "runner_group_id": 1, "runner_group_name": "GitHub Actions",
		})
	}
	c.json(http.StatusOK, map[string]any{"total_count": len(run.Jobs), "jobs": jobs})
}

func (c *call) jobLogs(r *repoState, args []string) {
	const doc = actionsDoc + "/workflow-jobs#download-job-logs-for-a-workflow-run"
	if !c.allow(r, false, doc, "actions") {
		return
	}
	id, _ := strconv.ParseInt(args[0], 10, 64)
	for _, run := range r.ciData().runs {
		for _, j := range run.Jobs {
			if j.ID != id {
				continue
			}
			if j.LogGone {
				c.errorJSON(http.StatusGone, "The logs for this job have expired.", doc)
				return
			}
			c.redirectToBlob("logs", id, ".txt")
			return
		}
	}
	c.notFound(doc)
}

// serveLogBlob serves a job log at its signed URL; s.mu is held.
func (s *Server) serveLogBlob(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		// Azure blob storage refuses a bearer token on a SAS URL.
		s.logRejections++
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("x-ms-error-code", "InvalidAuthenticationInfo")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>InvalidAuthenticationInfo</Code><Message>Authentication information is not given in the correct format. Check the value of Authorization header.</Message></Error>`)
		return
	}
	id, ok := s.blobSigs[r.URL.Query().Get("sig")]
	if !ok || r.URL.Path != fmt.Sprintf("/logs/%d.txt", id) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code><Message>Server failed to authenticate the request.</Message></Error>`)
		return
	}
	for _, repo := range s.repos {
		if repo.ci == nil {
			continue
		}
		for _, run := range repo.ci.runs {
			for _, j := range run.Jobs {
				if j.ID == id {
					s.blobHits++
					w.Header().Set("Content-Type", "text/plain")
					w.Header().Set("Content-Length", strconv.Itoa(len(j.Log)))
					_, _ = io.WriteString(w, j.Log)
					return
				}
			}
		}
	}
	http.NotFound(w, r)
}

func (c *call) listWorkflowRuns(r *repoState, args []string) {
	const doc = actionsDoc + "/workflow-runs#list-workflow-runs-for-a-workflow"
	if !c.allow(r, false, doc, "actions") {
		return
	}
	q := c.r.URL.Query()
	var list []*WorkflowRun
	for _, run := range r.ciData().runs {
		if strconv.FormatInt(run.WorkflowID, 10) != args[0] && !strings.HasSuffix(run.Path, "/"+args[0]) {
			continue
		}
		if b := q.Get("branch"); b != "" && run.HeadBranch != b {
			continue
		}
		if e := q.Get("event"); e != "" && run.Event != e {
			continue
		}
		if st := q.Get("status"); st != "" && run.Status != st && run.Conclusion != st {
			continue
		}
		if h := q.Get("head_sha"); h != "" && run.HeadSHA != h {
			continue
		}
		list = append(list, run)
	}
	sort.SliceStable(list, func(i, j int) bool {
		if !list[i].Created.Equal(list[j].Created) {
			return list[i].Created.After(list[j].Created)
		}
		return list[i].ID > list[j].ID
	})
	lo, hi := c.paginate(len(list))
	out := []any{}
	for _, run := range list[lo:hi] {
		out = append(out, c.s.runJSON(r, run))
	}
	c.json(http.StatusOK, map[string]any{"total_count": len(list), "workflow_runs": out})
}

func (c *call) getContents(r *repoState, args []string) {
	const doc = "https://docs.github.com/rest/repos/contents#get-repository-content"
	if !c.allow(r, false, doc, "contents") {
		return
	}
	p, err := url.PathUnescape(args[0])
	if err != nil {
		c.notFound(doc)
		return
	}
	ref := c.r.URL.Query().Get("ref")
	if ref == "" {
		ref = r.cfg.DefaultBranch
	}
	data, ok := r.ciData().files[ref][p]
	if !ok {
		c.notFound(doc)
		return
	}
	name := p[strings.LastIndex(p, "/")+1:]
	full := r.fullName()
	enc := base64.StdEncoding.EncodeToString(data)
	// GitHub wraps the base64 text at 60 characters.
	var wrapped strings.Builder
	for len(enc) > 60 {
		wrapped.WriteString(enc[:60] + "\n")
		enc = enc[60:]
	}
	wrapped.WriteString(enc + "\n")
	c.json(http.StatusOK, map[string]any{
		"type": "file", "encoding": "base64", "size": len(data), "name": name, "path": p,
		"content": wrapped.String(), "sha": fmt.Sprintf("%040x", len(data)),
		"url":      c.s.apiURL("/repos/" + full + "/contents/" + p + "?ref=" + url.QueryEscape(ref)),
		"html_url": "https://github.com/" + full + "/blob/" + ref + "/" + p,
	})
}

func (c *call) compare(r *repoState, args []string) {
	const doc = "https://docs.github.com/rest/commits/commits#compare-two-commits"
	if !c.allow(r, false, doc, "contents") {
		return
	}
	base, head, ok := strings.Cut(args[0], "...")
	if !ok {
		c.notFound(doc)
		return
	}
	ci := r.ciData()
	if ci.commits[base] == nil || ci.commits[head] == nil {
		c.notFound(doc)
		return
	}
	ancestors := func(sha string) []*Commit {
		var out []*Commit
		for seen := 0; sha != "" && seen < 100000; seen++ {
			cm := ci.commits[sha]
			if cm == nil {
				break
			}
			out = append(out, cm)
			sha = cm.Parent
		}
		return out
	}
	headLine, baseLine := ancestors(head), ancestors(base)
	inBase := map[string]int{}
	for i, cm := range baseLine {
		inBase[cm.SHA] = i
	}
	var ahead []*Commit
	behind := len(baseLine)
	for _, cm := range headLine {
		if i, ok := inBase[cm.SHA]; ok {
			behind = i
			break
		}
		ahead = append(ahead, cm)
	}
	status := "diverged"
	switch {
	case len(ahead) == 0 && behind == 0:
		status = "identical"
	case behind == 0:
		status = "ahead"
	case len(ahead) == 0:
		status = "behind"
	}
	full := r.fullName()
	commits := []any{}
	for i := len(ahead) - 1; i >= 0 && len(commits) < 250; i-- {
		cm := ahead[i]
		commits = append(commits, map[string]any{
			"sha": cm.SHA, "node_id": "C_" + cm.SHA[:8], "html_url": "https://github.com/" + full + "/commit/" + cm.SHA,
			"commit": map[string]any{"message": cm.Message, "author": map[string]any{"name": cm.Author, "email": cm.Author + "@example.com"}},
			"author": c.s.userJSON(cm.Author), "parents": []any{map[string]any{"sha": cm.Parent}},
		})
	}
	c.json(http.StatusOK, map[string]any{
		"url": c.s.apiURL("/repos/" + full + "/compare/" + args[0]), "html_url": "https://github.com/" + full + "/compare/" + args[0],
		"status": status, "ahead_by": len(ahead), "behind_by": behind, "total_commits": len(ahead),
		"commits": commits, "files": []any{},
	})
}

func (s *Server) commitCommentJSON(r *repoState, cm *commitComment) map[string]any {
	full := r.fullName()
	return map[string]any{
		"id": cm.ID, "node_id": fmt.Sprintf("CC_kwDO%06d", cm.ID), "commit_id": cm.SHA,
		"url":      s.apiURL(fmt.Sprintf("/repos/%s/comments/%d", full, cm.ID)),
		"html_url": fmt.Sprintf("https://github.com/%s/commit/%s#commitcomment-%d", full, cm.SHA, cm.ID),
		"body":     cm.Body, "user": s.userJSON(cm.Author), "path": nil, "position": nil, "line": nil,
		"created_at": cm.Created.Format(time.RFC3339), "updated_at": cm.Updated.Format(time.RFC3339),
		"author_association": "NONE",
	}
}

const commitCommentsDoc = "https://docs.github.com/rest/commits/comments"

func (c *call) listCommitComments(r *repoState, args []string) {
	if !c.allow(r, false, commitCommentsDoc+"#list-commit-comments", "contents") {
		return
	}
	var list []*commitComment
	for _, cm := range r.ciData().commitComments {
		if cm.SHA == args[0] {
			list = append(list, cm)
		}
	}
	lo, hi := c.paginate(len(list))
	out := []any{}
	for _, cm := range list[lo:hi] {
		out = append(out, c.s.commitCommentJSON(r, cm))
	}
	c.json(http.StatusOK, out)
}

func (c *call) createCommitComment(r *repoState, args []string) {
	const doc = commitCommentsDoc + "#create-a-commit-comment"
	var in struct{ Body *string }
	if !c.decode(&in) || !c.allow(r, true, doc, "contents") {
		return
	}
	if in.Body == nil || *in.Body == "" {
		c.validation(doc, map[string]any{"resource": "CommitComment", "field": "body", "code": "missing_field"})
		return
	}
	if len(*in.Body) > 65536 {
		c.validation(doc, map[string]any{"resource": "CommitComment", "field": "body", "code": "custom",
			"message": "body is too long (maximum is 65536 characters)"})
		return
	}
	if r.cfg.Branches != nil || len(r.ciData().commits) > 0 {
		known := r.ciData().commits[args[0]] != nil
		for _, sha := range r.cfg.Branches {
			known = known || sha == args[0]
		}
		if !known {
			c.errorJSON(http.StatusUnprocessableEntity, "No commit found for SHA: "+args[0], doc)
			return
		}
	}
	now := c.s.now()
	cm := &commitComment{Comment: Comment{ID: c.s.nextID(), Author: c.tok.Login, Body: *in.Body, Created: now, Updated: now}, SHA: args[0]}
	r.ciData().commitComments = append(r.ciData().commitComments, cm)
	c.json(http.StatusCreated, c.s.commitCommentJSON(r, cm))
}

func (c *call) patchCommitComment(r *repoState, args []string) {
	const doc = commitCommentsDoc + "#update-a-commit-comment"
	var in struct{ Body *string }
	if !c.decode(&in) || !c.allow(r, true, doc, "contents") {
		return
	}
	id, _ := strconv.ParseInt(args[0], 10, 64)
	for _, cm := range r.ciData().commitComments {
		if cm.ID != id {
			continue
		}
		if in.Body == nil || *in.Body == "" {
			c.validation(doc, map[string]any{"resource": "CommitComment", "field": "body", "code": "missing_field"})
			return
		}
		if c.tok.Kind != UserToken && !strings.EqualFold(cm.Author, c.tok.Login) {
			c.errorJSON(http.StatusForbidden, "Resource not accessible by integration", doc)
			return
		}
		cm.Body = *in.Body
		cm.Updated = c.s.now()
		c.json(http.StatusOK, c.s.commitCommentJSON(r, cm))
		return
	}
	c.notFound(doc)
}

// redirectToBlob answers 302 to a signed URL of the blob host for the
// object id, as GitHub does for artifacts and logs.
func (c *call) redirectToBlob(kind string, id int64, ext string) {
	sig := randomHex(16)
	c.s.blobSigs[sig] = id
	loc := fmt.Sprintf("%s/%s/%d%s?sv=2021-12-02&spr=https&se=%s&sr=b&sp=r&sig=%s",
		c.s.blob.URL, kind, id, ext, url.QueryEscape(c.s.now().Add(time.Minute).Format(time.RFC3339)), sig)
	c.w.Header().Set("Location", loc)
	c.w.WriteHeader(http.StatusFound)
}
