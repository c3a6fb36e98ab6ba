package githubtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	gh "github.com/google/go-github/v62/github"
)

// recordingT captures the fake's test failures instead of failing.
type recordingT struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingT) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingT) Errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func do(t *testing.T, method, url, auth, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

func TestUnexpectedPathsFailTheTest(t *testing.T) {
	t.Parallel()
	rt := &recordingT{TB: t}
	s := New(rt)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/repos/octo-org/demo/branches"},
		{"DELETE", "/repos/octo-org/demo/pulls/1"},
		{"GET", "/api/v3/user"}, // not GHES
	} {
		resp, _ := do(t, tc.method, s.URL+tc.path, "Bearer "+DefaultToken, "")
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s: status %d, want 404", tc.method, tc.path, resp.StatusCode)
		}
	}
	if got := len(rt.Errors()); got != 3 {
		t.Errorf("recorded failures = %d, want 3: %q", got, rt.Errors())
	}
	for _, e := range rt.Errors() {
		if !strings.HasPrefix(e, "githubtest: unexpected ") {
			t.Errorf("failure %q", e)
		}
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	s := New(t)
	for auth, want := range map[string]int{
		"":                       http.StatusUnauthorized,
		"Bearer nope":            http.StatusUnauthorized,
		"Basic " + DefaultToken:  http.StatusUnauthorized,
		"Bearer " + DefaultToken: http.StatusOK,
		"token " + DefaultToken:  http.StatusOK,
	} {
		resp, body := do(t, "GET", s.URL+"/repos/octo-org/demo", auth, "")
		if resp.StatusCode != want {
			t.Errorf("Authorization %q: status %d (%s), want %d", auth, resp.StatusCode, body, want)
		}
	}
	resp, body := do(t, "GET", s.URL+"/user", "Bearer "+DefaultToken, "")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "Resource not accessible by integration") {
		t.Errorf("GET /user with GITHUB_TOKEN: %d %s", resp.StatusCode, body)
	}
}

func TestBlobRefusesAuthorization(t *testing.T) {
	t.Parallel()
	rt := &recordingT{TB: t}
	s := New(rt)
	id := s.AddArtifact(DefaultRepoFullName, Artifact{Name: "a", Files: map[string][]byte{"f": []byte("x")}})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/repos/%s/actions/artifacts/%d/zip", s.URL, DefaultRepoFullName, id), nil)
	req.Header.Set("Authorization", "Bearer "+DefaultToken)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, s.BlobURL+"/artifacts/") {
		t.Fatalf("zip: %d Location %q", resp.StatusCode, loc)
	}
	// A client that forwards the token fails the test (recorded here).
	if resp, _ := do(t, "GET", loc, "Bearer "+DefaultToken, ""); resp.StatusCode != http.StatusOK {
		t.Errorf("blob: %d", resp.StatusCode)
	}
	if errs := rt.Errors(); len(errs) != 1 || !strings.Contains(errs[0], "Authorization") {
		t.Errorf("recorded failures %q; want one about the Authorization header", errs)
	}
	// A forged signature is refused like Azure does.
	if resp, body := do(t, "GET", s.BlobURL+fmt.Sprintf("/artifacts/%d.zip?sig=forged", id), "", ""); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "AuthenticationFailed") {
		t.Errorf("forged signature: %d %s", resp.StatusCode, body)
	}
}

// TestShapesDecodeWithGoGitHub checks the answers decode into go-github's
// types with the fields a client reads.
func TestShapesDecodeWithGoGitHub(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(t)
	c := gh.NewClient(nil).WithAuthToken(DefaultToken)
	var err error
	if c, err = c.WithEnterpriseURLs(s.URL+"/", s.URL+"/"); err != nil {
		t.Fatal(err)
	}
	// WithEnterpriseURLs appends api/v3/ to a bare host: undo it.
	c.BaseURL.Path, c.UploadURL.Path = "/", "/"

	pr, _, err := c.PullRequests.Create(ctx, DefaultOwner, DefaultRepo, &gh.NewPullRequest{
		Title: gh.String("T"), Head: gh.String("feature"), Base: gh.String("main"), Body: gh.String("B"), Draft: gh.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if pr.GetNumber() != 1 || pr.GetHead().GetRef() != "feature" || pr.GetHead().GetRepo().GetFullName() != DefaultRepoFullName ||
		pr.GetBase().GetRef() != "main" || !pr.GetDraft() || pr.GetNodeID() == "" || pr.GetUser().GetLogin() != ActionsLogin ||
		pr.GetCreatedAt().IsZero() || pr.GetHTMLURL() == "" {
		t.Errorf("pull request decoded as %+v", pr)
	}
	list, resp, err := c.PullRequests.List(ctx, DefaultOwner, DefaultRepo, &gh.PullRequestListOptions{Head: DefaultOwner + ":feature"})
	if err != nil || len(list) != 1 || resp.Rate.Limit != 5000 {
		t.Errorf("list = %d, rate %+v, %v", len(list), resp.Rate, err)
	}
	_, _, err = c.PullRequests.Create(ctx, DefaultOwner, DefaultRepo, &gh.NewPullRequest{
		Title: gh.String("T"), Head: gh.String("feature"), Base: gh.String("main")})
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != 422 || len(er.Errors) != 1 || !strings.Contains(er.Errors[0].Message, "already exists") {
		t.Errorf("second create: %v", err)
	}

	for i := 0; i < 3; i++ {
		if _, _, err := c.Issues.CreateComment(ctx, DefaultOwner, DefaultRepo, 1, &gh.IssueComment{Body: gh.String(fmt.Sprint("c", i))}); err != nil {
			t.Fatal(err)
		}
	}
	comments, resp, err := c.Issues.ListComments(ctx, DefaultOwner, DefaultRepo, 1, &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 2}})
	if err != nil || len(comments) != 2 || resp.NextPage != 2 || resp.LastPage != 2 {
		t.Errorf("comments page 1: %d, next %d, last %d, %v", len(comments), resp.NextPage, resp.LastPage, err)
	}
	if comments[0].GetUser().GetType() != "Bot" || comments[0].GetID() == 0 {
		t.Errorf("comment %+v", comments[0])
	}
	perm, _, err := c.Repositories.GetPermissionLevel(ctx, DefaultOwner, DefaultRepo, "someone")
	if err != nil || perm.GetPermission() != "none" || perm.GetUser().GetLogin() != "someone" {
		t.Errorf("permission %+v, %v", perm, err)
	}
	arts, _, err := c.Actions.ListArtifacts(ctx, DefaultOwner, DefaultRepo, nil)
	if err != nil || arts.GetTotalCount() != 0 {
		t.Errorf("artifacts %+v, %v", arts, err)
	}
	run, _, err := c.Checks.CreateCheckRun(ctx, DefaultOwner, DefaultRepo, gh.CreateCheckRunOptions{
		Name: "x", HeadSHA: strings.Repeat("a", 40), Conclusion: gh.String("success")})
	if err != nil || run.GetStatus() != "completed" || run.GetConclusion() != "success" {
		t.Errorf("check run %+v, %v", run, err)
	}

	// GraphQL errors come with 200, as GitHub sends them.
	body, _ := json.Marshal(map[string]any{"query": "mutation { markPullRequestReadyForReview(input: {pullRequestId: \"nope\"}) { pullRequest { isDraft } } }"})
	resp2, text := do(t, "POST", s.GraphQLURL, "Bearer "+DefaultToken, string(body))
	if resp2.StatusCode != http.StatusOK || !strings.Contains(text, "NOT_FOUND") {
		t.Errorf("GraphQL unknown node: %d %s", resp2.StatusCode, text)
	}
}
