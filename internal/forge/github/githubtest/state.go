package githubtest

import (
	"archive/zip"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
	"time"
)

// RepoConfig describes a repository of the fake.
type RepoConfig struct {
	Private  bool
	Archived bool
	// DefaultBranch defaults to "main".
	DefaultBranch string
	// ActionsCannotCreatePRs refuses pull requests created with an Actions
	// token, as the setting "Allow GitHub Actions to create and approve pull
	// requests" does when it is off.
	ActionsCannotCreatePRs bool
	// NoDrafts refuses draft pull requests (private repositories on a free
	// plan).
	NoDrafts bool
	// Collaborators maps a login to its role: admin, maintain, write,
	// triage, read. Others have no role ("none"); logins listed in
	// Nonexistent are unknown users (404).
	Collaborators map[string]string
	Nonexistent   []string
	// Branches, when not nil, are the only heads a pull request can be
	// opened from (branch -> commit sha); when nil any head is accepted and
	// gets a made-up sha.
	Branches map[string]string
}

type repoState struct {
	id          int64
	owner, name string
	cfg         RepoConfig
	nextNumber  int
	issues      map[int]*Issue
	pulls       map[int]*PullRequest
	comments    []*Comment
	reactions   []*Reaction
	checkRuns   []*CheckRun
	artifacts   []*storedArtifact
	ci          *ciState // workflow runs, files, commits (ci.go)
}

func (r *repoState) fullName() string { return r.owner + "/" + r.name }

// PullRequest is a pull request of the fake.
type PullRequest struct {
	ID      int64
	Number  int
	NodeID  string
	Title   string
	Body    string
	State   string // open, closed
	Draft   bool
	Head    string // branch name
	HeadSHA string
	Base    string
	// HeadRepo is the full name of the repository of the head branch: a
	// fork when it differs from the repository (default: the same).
	HeadRepo string
	Author   string
	Created  time.Time
	Updated  time.Time
}

// Issue is an issue of the fake (pull requests have one too).
type Issue struct {
	ID      int64
	Number  int
	Title   string
	Body    string
	Author  string
	State   string
	IsPR    bool
	Created time.Time
}

// Comment is an issue or pull request comment.
type Comment struct {
	ID      int64
	Issue   int
	Author  string
	Body    string
	Created time.Time
	Updated time.Time
}

// Reaction is a reaction to a comment.
type Reaction struct {
	ID        int64
	CommentID int64
	Author    string
	Content   string
}

// CheckRun is a check run created through the API.
type CheckRun struct {
	ID         int64
	Name       string
	HeadSHA    string
	Status     string
	Conclusion string
	Title      string
	Summary    string
	Author     string
}

// Artifact is a workflow run artifact to serve.
type Artifact struct {
	Name    string
	RunID   int64
	Created time.Time
	Expired bool
	// Files are zipped when the artifact is added; Zip, when set, is served
	// as is instead (to test hostile archives).
	Files map[string][]byte
	Zip   []byte
}

type storedArtifact struct {
	Artifact
	ID  int64
	zip []byte
}

// AddRepo adds (or reconfigures) a repository "owner/name".
func (s *Server) AddRepo(fullName string, cfg RepoConfig) {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok || owner == "" || name == "" {
		s.t.Errorf("githubtest: AddRepo(%q): want owner/name", fullName)
		return
	}
	if cfg.DefaultBranch == "" {
		cfg.DefaultBranch = "main"
	}
	key := strings.ToLower(fullName)
	if r, ok := s.repos[key]; ok {
		r.cfg = cfg
		return
	}
	s.repos[key] = &repoState{
		id: s.nextID(), owner: owner, name: name, cfg: cfg, nextNumber: 1,
		issues: map[int]*Issue{}, pulls: map[int]*PullRequest{},
	}
	s.repoOrder = append(s.repoOrder, key)
}

func (s *Server) nextID() int64 {
	s.lastID++
	return s.lastID
}

func (s *Server) repo(fullName string) *repoState {
	r, ok := s.repos[strings.ToLower(fullName)]
	if !ok {
		s.t.Errorf("githubtest: no repository %q (add it with AddRepo)", fullName)
	}
	return r
}

// SetCollaborator gives login a role on a repository.
func (s *Server) SetCollaborator(repo, login, role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return
	}
	if r.cfg.Collaborators == nil {
		r.cfg.Collaborators = map[string]string{}
	}
	r.cfg.Collaborators[login] = role
}

// SetBranch records branch at sha (turning on head validation) and moves
// the head of the open pull requests from it, as a push does.
func (s *Server) SetBranch(repo, branch, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return
	}
	if r.cfg.Branches == nil {
		r.cfg.Branches = map[string]string{}
	}
	r.cfg.Branches[branch] = sha
	for _, p := range r.pulls {
		if p.Head == branch && p.State == "open" && strings.EqualFold(p.HeadRepo, r.fullName()) {
			p.HeadSHA = sha
		}
	}
}

// AddIssue opens an issue and returns its number.
func (s *Server) AddIssue(repo, author, title, body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return 0
	}
	n := r.nextNumber
	r.nextNumber++
	r.issues[n] = &Issue{ID: s.nextID(), Number: n, Title: title, Body: body, Author: author, State: "open", Created: s.now()}
	return n
}

// AddPullRequest adds an existing pull request (a draft, one from a fork)
// and returns its number. Zero fields get defaults.
func (s *Server) AddPullRequest(repo string, pr PullRequest) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return 0
	}
	if pr.Author == "" {
		pr.Author = "octocat"
	}
	return s.openPR(r, pr).Number
}

// openPR stores a new pull request (and its issue) in r. s.mu is held.
func (s *Server) openPR(r *repoState, pr PullRequest) *PullRequest {
	pr.Number = r.nextNumber
	r.nextNumber++
	pr.ID = s.nextID()
	pr.NodeID = "PR_kwDOfake" + hex.EncodeToString([]byte(r.fullName()))[:8] + "z" + strconv.Itoa(pr.Number)
	if pr.State == "" {
		pr.State = "open"
	}
	if pr.Base == "" {
		pr.Base = r.cfg.DefaultBranch
	}
	if pr.HeadRepo == "" {
		pr.HeadRepo = r.fullName()
	}
	if pr.HeadSHA == "" {
		pr.HeadSHA = s.branchSHA(r, pr.Head)
	}
	now := s.now()
	pr.Created, pr.Updated = now, now
	p := pr
	r.pulls[pr.Number] = &p
	r.issues[pr.Number] = &Issue{ID: pr.ID, Number: pr.Number, Title: pr.Title, Body: pr.Body, Author: pr.Author, State: pr.State, IsPR: true, Created: now}
	return &p
}

func (s *Server) branchSHA(r *repoState, branch string) string {
	if sha, ok := r.cfg.Branches[branch]; ok {
		return sha
	}
	sum := sha1.Sum([]byte(r.fullName() + "\x00" + branch))
	return hex.EncodeToString(sum[:])
}

// AddComment adds a comment by author (a user quoting a marker, an old
// report) and returns its id.
func (s *Server) AddComment(repo string, number int, author, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return 0
	}
	now := s.now()
	c := &Comment{ID: s.nextID(), Issue: number, Author: author, Body: body, Created: now, Updated: now}
	r.comments = append(r.comments, c)
	return c.ID
}

// AddArtifact stores an artifact and returns its id.
func (s *Server) AddArtifact(repo string, a Artifact) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return 0
	}
	if a.Created.IsZero() {
		a.Created = s.now()
	}
	data := a.Zip
	if data == nil {
		var err error
		if data, err = zipFiles(a.Files); err != nil {
			s.t.Errorf("githubtest: zipping artifact %q: %v", a.Name, err)
			return 0
		}
	}
	st := &storedArtifact{Artifact: a, ID: s.nextID(), zip: data}
	r.artifacts = append(r.artifacts, st)
	return st.ID
}

func zipFiles(files map[string][]byte) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PullRequests returns the pull requests of a repository, by number.
func (s *Server) PullRequests(repo string) []PullRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return nil
	}
	out := make([]PullRequest, 0, len(r.pulls))
	for _, p := range r.pulls {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// Comments returns the comments on issue or pull request number, oldest
// first.
func (s *Server) Comments(repo string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return nil
	}
	var out []Comment
	for _, c := range r.comments {
		if c.Issue == number {
			out = append(out, *c)
		}
	}
	return out
}

// Reactions returns the reactions to a comment.
func (s *Server) Reactions(repo string, commentID int64) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return nil
	}
	var out []Reaction
	for _, x := range r.reactions {
		if x.CommentID == commentID {
			out = append(out, *x)
		}
	}
	return out
}

// CheckRuns returns the check runs created on a repository.
func (s *Server) CheckRuns(repo string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repo)
	if r == nil {
		return nil
	}
	out := make([]CheckRun, 0, len(r.checkRuns))
	for _, c := range r.checkRuns {
		out = append(out, *c)
	}
	return out
}
