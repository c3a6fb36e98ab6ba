// Package github is everything agent-loop says to GitHub: the REST API through
// go-github (pull requests, the sticky report comment, reactions, permission
// checks, check runs, artifacts of earlier runs) and the one GraphQL mutation
// REST lacks (marking a draft pull request ready for review).
//
// Every call goes through one transport that adds the token for the API host
// only, and retries rate limits (after the wait GitHub asks for) and 5xx
// answers a bounded number of times. Errors name the endpoint; permission
// refusals are *PermissionError saying what to put in the workflow's
// `permissions:`; other API errors are *APIError. The token never appears in
// an error or log line.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// DefaultAPIURL is the API root of github.com (GITHUB_API_URL there).
const DefaultAPIURL = "https://api.github.com"

// Client talks to one repository's GitHub API.
type Client struct {
	gh         *gh.Client
	api        *http.Client // authenticated, retrying; follows no redirect (artifacts)
	blob       *http.Client // no Authorization ever: signed blob URLs
	sleep      SleepFunc
	token      string
	owner      string
	repo       string
	basePath   string // path of the API root, with a trailing slash
	graphqlURL string

	loginMu sync.Mutex
	logins  []string // the logins our comments are authored by (learned once)
}

// Option adjusts a Client; tests use them to inject the clock and transport.
type Option func(*options)

type options struct {
	transport http.RoundTripper
	sleep     SleepFunc
	now       func() time.Time
	logf      func(format string, args ...any)
}

// WithTransport sets the HTTP transport under the auth and retry layers
// (default http.DefaultTransport). It is used for the blob downloads too.
func WithTransport(rt http.RoundTripper) Option { return func(o *options) { o.transport = rt } }

// WithSleep replaces the wait between retries (tests pass one that records
// the durations and returns at once).
func WithSleep(sleep SleepFunc) Option { return func(o *options) { o.sleep = sleep } }

// WithClock replaces time.Now when reading rate-limit reset times.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithLogf receives a line for every retry (rate limit, 5xx). The lines never
// contain the token.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(o *options) { o.logf = logf }
}

// New returns a client for owner/repo. apiURL is GITHUB_API_URL
// (https://api.github.com, or https://HOST/api/v3 on GitHub Enterprise
// Server); empty means github.com. New makes no network call.
func New(ctx context.Context, token, apiURL, owner, repo string, opts ...Option) (*Client, error) {
	_ = ctx // reserved: New makes no request today
	o := options{transport: http.DefaultTransport, sleep: sleepContext, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	var problems []error
	token = strings.TrimSpace(token)
	if token == "" {
		problems = append(problems, errors.New("the github-token input is empty: keep its default (${{ github.token }}) "+
			"or pass a GitHub App or personal access token with contents, pull-requests and issues write access"))
	}
	if owner == "" || repo == "" || strings.Contains(owner, "/") || strings.Contains(repo, "/") {
		problems = append(problems, fmt.Errorf("repository %q/%q: want an owner and a name as in GITHUB_REPOSITORY=owner/name", owner, repo))
	}
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	base, err := url.Parse(apiURL)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		problems = append(problems, fmt.Errorf("GitHub API URL %q: want an absolute http(s) URL such as %s or https://HOST/api/v3 (GITHUB_API_URL)", apiURL, DefaultAPIURL))
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	base.RawQuery, base.Fragment = "", ""
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}

	rt := &retryTransport{
		next:  &authTransport{token: token, scheme: base.Scheme, host: base.Host, next: o.transport},
		sleep: o.sleep,
		now:   o.now,
		logf:  o.logf,
	}
	api := &http.Client{
		Transport: rt,
		// Never follow redirects with the API client: the artifact download
		// answers 302 to a signed URL, fetched by c.blob without the token.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	// go-github follows redirects with its own copy of the client; the auth
	// transport still keeps the token on the API host only.
	client := gh.NewClient(&http.Client{Transport: rt})
	client.BaseURL = base
	client.UploadURL = uploadURL(base)
	client.UserAgent = "agent-loop"

	return &Client{
		gh:         client,
		api:        api,
		blob:       &http.Client{Transport: o.transport, Timeout: 10 * time.Minute},
		sleep:      o.sleep,
		token:      token,
		owner:      owner,
		repo:       repo,
		basePath:   base.Path,
		graphqlURL: graphQLURL(base),
	}, nil
}

// uploadURL derives the uploads root: uploads.github.com for github.com,
// /api/uploads/ on GitHub Enterprise Server, the API root otherwise.
func uploadURL(base *url.URL) *url.URL {
	u := *base
	switch {
	case strings.EqualFold(base.Host, "api.github.com"):
		u.Host, u.Path = "uploads.github.com", "/"
	case strings.HasSuffix(base.Path, "/api/v3/"):
		u.Path = strings.TrimSuffix(base.Path, "v3/") + "uploads/"
	}
	return &u
}

// graphQLURL derives the GraphQL endpoint: /graphql under the API root, and
// /api/graphql on GitHub Enterprise Server (whose REST root is /api/v3).
func graphQLURL(base *url.URL) string {
	u := *base
	if strings.HasSuffix(base.Path, "/api/v3/") {
		u.Path = strings.TrimSuffix(base.Path, "v3/") + "graphql"
	} else {
		u.Path = base.Path + "graphql"
	}
	return u.String()
}

// Owner and Repo name the repository this client talks to.
func (c *Client) Owner() string { return c.owner }
func (c *Client) Repo() string  { return c.repo }

// repoPath is "repos/{owner}/{repo}" plus the escaped elements of rest.
func (c *Client) repoPath(rest ...string) string {
	parts := []string{"repos", url.PathEscape(c.owner), url.PathEscape(c.repo)}
	parts = append(parts, rest...)
	return strings.Join(parts, "/")
}

// endpoint names a call for errors: "GET /repos/o/r/pulls".
func endpoint(method, rel string) string {
	if i := strings.IndexByte(rel, '?'); i >= 0 {
		rel = rel[:i]
	}
	return method + " /" + strings.TrimPrefix(rel, "/")
}

// do sends one REST request through go-github and decodes the answer into v.
func (c *Client) do(ctx context.Context, method, rel string, body, v any, need ...string) (*gh.Response, error) {
	ec := errorContext{endpoint: endpoint(method, rel), need: need}
	req, err := c.gh.NewRequest(method, rel, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ec.endpoint, err)
	}
	resp, err := c.gh.Do(ctx, req, v)
	if err != nil {
		return resp, c.wrapErr(ec, err)
	}
	return resp, nil
}
