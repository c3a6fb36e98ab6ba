// Package githubtest is a fake GitHub for tests: an httptest.Server that
// speaks the REST API agent-loop uses (repositories, collaborator
// permissions, pull requests, issues and their comments, reactions, check
// runs, Actions artifacts with their blob redirect, workflow runs, jobs and
// job logs, file contents, commit comparisons and commit comments) and the two GraphQL
// operations it sends (viewer login, markPullRequestReadyForReview), with
// in-memory state: a pull request created is found again by its head, a
// comment updated is updated in place.
//
// It answers in the shapes of the real API (fields, status codes, Link
// pagination, rate-limit headers, "Resource not accessible by integration"
// refusals) and fails the test on any request it does not handle. Tokens
// are checked on every request; the blob server that artifact downloads are
// redirected to fails the test when a request carries an Authorization
// header, and refuses such a request for a job log with 400
// InvalidAuthenticationInfo, as Azure blob storage does. Faults (rate limits, 5xx) can be injected per endpoint.
//
// Typical use, in-process or against a binary (GITHUB_API_URL=srv.URL,
// github-token githubtest.DefaultToken, GITHUB_REPOSITORY
// githubtest.DefaultRepoFullName):
//
//	srv := githubtest.New(t)
//	issue := srv.AddIssue(githubtest.DefaultRepoFullName, "alice", "Fix the tests", "")
//	srv.SetCollaborator(githubtest.DefaultRepoFullName, "alice", "write")
//	// ... run the code under test ...
//	prs := srv.PullRequests(githubtest.DefaultRepoFullName)
//	comments := srv.Comments(githubtest.DefaultRepoFullName, prs[0].Number)
package githubtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Defaults of a new Server.
const (
	// DefaultToken is accepted as a GITHUB_TOKEN with write access to
	// everything (the default permissions of a workflow token).
	DefaultToken = "ghs_githubtest0123456789abcdefABCDEF0123"
	DefaultOwner = "octo-org"
	DefaultRepo  = "demo"
	// DefaultRepoFullName is the repository New creates.
	DefaultRepoFullName = DefaultOwner + "/" + DefaultRepo
	// ActionsLogin authors everything GITHUB_TOKEN writes.
	ActionsLogin = "github-actions[bot]"
)

// TokenKind says what kind of credential a token is.
type TokenKind int

const (
	// ActionsToken is a workflow's GITHUB_TOKEN: GET /user is refused, the
	// repository shows no permissions, writes need `permissions:` scopes.
	ActionsToken TokenKind = iota
	// AppToken is another GitHub App's installation token: as ActionsToken,
	// authored by "<app>[bot]".
	AppToken
	// UserToken is a personal access token: GET /user answers its login and
	// the repository shows the owner's permissions.
	UserToken
)

// Token is a credential the server accepts.
type Token struct {
	Value string
	Kind  TokenKind
	// Login authors what the token writes (default ActionsLogin for an
	// ActionsToken).
	Login string
	// Permissions of an Actions or App token by scope ("contents",
	// "pull-requests", "issues", "checks", "actions"): "write", "read" or
	// "none". Nil grants write on every scope; a non-nil map grants only
	// what it lists (as `permissions:` does).
	Permissions map[string]string
	// Role of a user token's owner on every repository: admin (default),
	// maintain, write, triage or read.
	Role string
	// Scopes, when not nil, are sent as X-OAuth-Scopes (a classic PAT).
	Scopes []string
}

// Option configures a Server.
type Option func(*Server)

// WithGHES serves the API as GitHub Enterprise Server does: REST under
// /api/v3/ and GraphQL at /api/graphql.
func WithGHES() Option {
	return func(s *Server) { s.prefix, s.graphqlPath = "/api/v3", "/api/graphql" }
}

// WithToken adds an accepted token.
func WithToken(tok Token) Option { return func(s *Server) { s.addToken(tok) } }

// Server is the fake GitHub. Its methods are safe for concurrent use.
type Server struct {
	// URL is the API root, what GITHUB_API_URL holds
	// (http://127.0.0.1:PORT, or .../api/v3 with WithGHES).
	URL string
	// GraphQLURL is the GraphQL endpoint.
	GraphQLURL string
	// BlobURL is the root of the fake blob storage artifact downloads are
	// redirected to (another host: it must never see the token).
	BlobURL string

	t           testing.TB
	srv, blob   *httptest.Server
	prefix      string
	graphqlPath string

	mu        sync.Mutex
	tokens    map[string]Token
	repos     map[string]*repoState
	repoOrder []string
	lastID    int64
	faults    []*Fault
	requests  []Request
	blobHits  int
	remaining int
	blobSigs  map[string]int64 // signature -> artifact or job id
	// logRejections counts log downloads refused for an Authorization header.
	logRejections int
	now           func() time.Time
	userIDs       map[string]int64
}

// New starts a fake GitHub with DefaultToken and the repository
// DefaultRepoFullName; both servers are closed when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		t:           t,
		graphqlPath: "/graphql",
		tokens:      map[string]Token{},
		repos:       map[string]*repoState{},
		remaining:   5000,
		blobSigs:    map[string]int64{},
		userIDs:     map[string]int64{},
		now:         func() time.Time { return time.Now().UTC().Truncate(time.Second) },
	}
	s.addToken(Token{Value: DefaultToken, Kind: ActionsToken})
	for _, opt := range opts {
		opt(s)
	}
	s.AddRepo(DefaultRepoFullName, RepoConfig{})
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveAPI))
	s.blob = httptest.NewServer(http.HandlerFunc(s.serveBlob))
	t.Cleanup(func() {
		s.srv.Close()
		s.blob.Close()
	})
	s.URL = s.srv.URL + s.prefix
	s.GraphQLURL = s.srv.URL + s.graphqlPath
	s.BlobURL = s.blob.URL
	return s
}

func (s *Server) addToken(tok Token) {
	if tok.Value == "" {
		s.t.Errorf("githubtest: a Token needs a Value")
		return
	}
	switch {
	case tok.Login != "":
	case tok.Kind == ActionsToken:
		tok.Login = ActionsLogin
	case tok.Kind == AppToken:
		tok.Login = "test-app[bot]"
	default:
		tok.Login = "octocat"
	}
	if tok.Kind == UserToken && tok.Role == "" {
		tok.Role = "admin"
	}
	s.tokens[tok.Value] = tok
}

// AddToken makes the server accept one more token.
func (s *Server) AddToken(tok Token) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addToken(tok)
}

// Request is one request the API server received.
type Request struct {
	Method string
	// Path is relative to the API root ("/repos/o/r/pulls"), or the GraphQL
	// path.
	Path  string
	Query string
	// Authorized is true when the request carried an accepted token.
	Authorized bool
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Hits counts the requests received for method and path (relative to the
// API root).
func (s *Server) Hits(method, path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// BlobHits counts the downloads the blob server served.
func (s *Server) BlobHits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blobHits
}

// Fault is an answer injected in place of the normal one.
type Fault struct {
	// Method matches the request method ("" matches any).
	Method string
	// Path matches the path relative to the API root exactly, or as a prefix
	// when it ends with "*".
	Path   string
	Status int
	Header http.Header
	// Body is sent as is (JSON, as GitHub's errors are).
	Body string
	// Times is how many requests the fault answers (0 means 1).
	Times int
}

// Fail injects a fault; faults are matched in the order they were added.
func (s *Server) Fail(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Times <= 0 {
		f.Times = 1
	}
	s.faults = append(s.faults, &f)
}

// RateLimited is a primary rate limit: 403 with X-RateLimit-Remaining: 0
// until reset.
func RateLimited(method, path string, reset time.Time) Fault {
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Used", "5000")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	return Fault{Method: method, Path: path, Status: http.StatusForbidden, Header: h,
		Body: `{"message":"API rate limit exceeded for installation ID 1. If you reach out to GitHub Support for help, please include the request ID.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api","status":"403"}`}
}

// SecondaryRateLimited is a secondary rate limit: 403 with Retry-After.
func SecondaryRateLimited(method, path string, retryAfter time.Duration) Fault {
	h := http.Header{}
	h.Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	return Fault{Method: method, Path: path, Status: http.StatusForbidden, Header: h,
		Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits","status":"403"}`}
}

// ServerError answers status (a 5xx) times times.
func ServerError(method, path string, status, times int) Fault {
	return Fault{Method: method, Path: path, Status: status, Times: times,
		Body: fmt.Sprintf(`{"message":"%s"}`, http.StatusText(status))}
}

func (s *Server) takeFault(method, path string) *Fault {
	for i, f := range s.faults {
		if f.Method != "" && f.Method != method {
			continue
		}
		if p, ok := strings.CutSuffix(f.Path, "*"); ok {
			if !strings.HasPrefix(path, p) {
				continue
			}
		} else if f.Path != path {
			continue
		}
		f.Times--
		if f.Times <= 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		return f
	}
	return nil
}

// serveAPI is the entry of the API server: auth, faults, routing.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	var rel string
	switch {
	case r.URL.Path == s.graphqlPath:
		rel = s.graphqlPath
	case s.prefix == "" || strings.HasPrefix(r.URL.Path, s.prefix+"/"):
		rel = strings.TrimPrefix(r.URL.Path, s.prefix)
	default:
		s.unexpected(w, r)
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	tok, authorized := s.authenticate(r)
	s.requests = append(s.requests, Request{Method: r.Method, Path: rel, Query: r.URL.RawQuery, Authorized: authorized})
	s.rateHeaders(w, rel == s.graphqlPath)
	if authorized && tok.Scopes != nil {
		w.Header().Set("X-OAuth-Scopes", strings.Join(tok.Scopes, ", "))
	}
	if f := s.takeFault(r.Method, rel); f != nil {
		for k, vs := range f.Header {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(f.Status)
		_, _ = io.WriteString(w, f.Body)
		return
	}
	if !authorized {
		writeJSON(w, http.StatusUnauthorized, map[string]any{
			"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
		return
	}
	c := &call{s: s, w: w, r: r, tok: tok, path: rel}
	if rel == s.graphqlPath {
		if r.Method != http.MethodPost {
			s.unexpected(w, r)
			return
		}
		s.serveGraphQL(c)
		return
	}
	if !s.route(c) {
		s.unexpected(w, r)
	}
}

func (s *Server) unexpected(w http.ResponseWriter, r *http.Request) {
	s.t.Errorf("githubtest: unexpected %s %s", r.Method, r.URL.RequestURI())
	writeJSON(w, http.StatusNotFound, map[string]any{
		"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
}

// authenticate accepts "Authorization: Bearer T" and "Authorization: token T".
func (s *Server) authenticate(r *http.Request) (Token, bool) {
	h := r.Header.Get("Authorization")
	scheme, value, ok := strings.Cut(h, " ")
	if !ok || (!strings.EqualFold(scheme, "bearer") && !strings.EqualFold(scheme, "token")) {
		return Token{}, false
	}
	tok, ok := s.tokens[strings.TrimSpace(value)]
	return tok, ok
}

func (s *Server) rateHeaders(w http.ResponseWriter, graphql bool) {
	if s.remaining > 1 {
		s.remaining--
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", strconv.Itoa(s.remaining))
	h.Set("X-RateLimit-Used", strconv.Itoa(5000-s.remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	if graphql {
		h.Set("X-RateLimit-Resource", "graphql")
	} else {
		h.Set("X-RateLimit-Resource", "core")
	}
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	h.Set("X-GitHub-Request-Id", randomHex(8))
}

// serveBlob serves artifact zips and job logs at signed URLs, like Azure
// blob storage.
func (s *Server) serveBlob(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/logs/") {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.serveLogBlob(w, r)
		return
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		s.t.Errorf("githubtest: the blob server got an Authorization header (%d bytes): a token must never follow the redirect to a signed URL", len(auth))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/artifacts/") {
		s.t.Errorf("githubtest: unexpected blob %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	id, ok := s.blobSigs[r.URL.Query().Get("sig")]
	if !ok || r.URL.Path != fmt.Sprintf("/artifacts/%d.zip", id) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code><Message>Server failed to authenticate the request.</Message></Error>`)
		return
	}
	for _, repo := range s.repos {
		for _, a := range repo.artifacts {
			if a.ID == id {
				s.blobHits++
				w.Header().Set("Content-Type", "application/zip")
				w.Header().Set("Content-Length", strconv.Itoa(len(a.zip)))
				_, _ = w.Write(a.zip)
				return
			}
		}
	}
	http.NotFound(w, r)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
