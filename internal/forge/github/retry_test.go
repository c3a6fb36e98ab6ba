package github_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
)

const pullsPath = "/repos/" + full + "/pulls"

func TestRetries(t *testing.T) {
	t.Parallel()
	tooMany := githubtest.Fault{Method: http.MethodPost, Path: pullsPath, Status: http.StatusTooManyRequests,
		Header: http.Header{"Retry-After": {"3"}}, Body: `{"message":"Too many requests"}`}
	secondaryNoHeader := githubtest.Fault{Method: http.MethodPost, Path: pullsPath, Status: http.StatusForbidden,
		Body: `{"message":"You have exceeded a secondary rate limit and have been temporarily blocked from content creation.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`}
	tests := []struct {
		name   string
		faults func(now time.Time) []githubtest.Fault
		// wantSleeps are checked to within a second and a half.
		wantSleeps []time.Duration
		wantPosts  int
		wantErr    func(t *testing.T, err error)
	}{
		{
			name: "primary rate limit then success",
			faults: func(now time.Time) []githubtest.Fault {
				return []githubtest.Fault{githubtest.RateLimited(http.MethodPost, pullsPath, now.Add(30*time.Second))}
			},
			wantSleeps: []time.Duration{31 * time.Second}, wantPosts: 2,
		},
		{
			name: "secondary rate limit with Retry-After",
			faults: func(time.Time) []githubtest.Fault {
				return []githubtest.Fault{githubtest.SecondaryRateLimited(http.MethodPost, pullsPath, 7*time.Second)}
			},
			wantSleeps: []time.Duration{7 * time.Second}, wantPosts: 2,
		},
		{
			name:       "secondary rate limit without headers waits a minute",
			faults:     func(time.Time) []githubtest.Fault { return []githubtest.Fault{secondaryNoHeader} },
			wantSleeps: []time.Duration{time.Minute}, wantPosts: 2,
		},
		{
			name:       "429 twice",
			faults:     func(time.Time) []githubtest.Fault { f := tooMany; f.Times = 2; return []githubtest.Fault{f} },
			wantSleeps: []time.Duration{3 * time.Second, 3 * time.Second}, wantPosts: 3,
		},
		{
			name: "5xx retried with backoff",
			faults: func(time.Time) []githubtest.Fault {
				return []githubtest.Fault{githubtest.ServerError(http.MethodPost, pullsPath, http.StatusBadGateway, 3)}
			},
			wantSleeps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, wantPosts: 4,
		},
		{
			name: "5xx four times is an error",
			faults: func(time.Time) []githubtest.Fault {
				return []githubtest.Fault{githubtest.ServerError(http.MethodPost, pullsPath, http.StatusServiceUnavailable, 4)}
			},
			wantSleeps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, wantPosts: 4,
			wantErr: func(t *testing.T, err error) {
				var apiErr *github.APIError
				if !errors.As(err, &apiErr) || apiErr.Status != http.StatusServiceUnavailable || apiErr.Endpoint != "POST "+pullsPath {
					t.Errorf("error = %#v; want an *APIError 503 on POST %s", err, pullsPath)
				}
			},
		},
		{
			name: "rate limit resetting in an hour is not waited for",
			faults: func(now time.Time) []githubtest.Fault {
				return []githubtest.Fault{githubtest.RateLimited(http.MethodPost, pullsPath, now.Add(time.Hour))}
			},
			wantPosts: 1,
			wantErr: func(t *testing.T, err error) {
				var apiErr *github.APIError
				if !errors.As(err, &apiErr) || !apiErr.RateLimited || apiErr.Reset.IsZero() || !strings.Contains(err.Error(), "resets at") {
					t.Errorf("error = %v; want a rate-limited *APIError with its reset time", err)
				}
			},
		},
		{
			name: "rate limit that never clears stops after five attempts",
			faults: func(time.Time) []githubtest.Fault {
				f := githubtest.SecondaryRateLimited(http.MethodPost, pullsPath, 10*time.Second)
				f.Times = 10
				return []githubtest.Fault{f}
			},
			wantSleeps: []time.Duration{10 * time.Second, 10 * time.Second, 10 * time.Second, 10 * time.Second}, wantPosts: 5,
			wantErr: func(t *testing.T, err error) {
				var apiErr *github.APIError
				if !errors.As(err, &apiErr) || !apiErr.RateLimited || apiErr.Status != http.StatusForbidden {
					t.Errorf("error = %v; want a rate-limited *APIError 403", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t)
			for _, f := range tt.faults(time.Now()) {
				srv.Fail(f)
			}
			c, rec := newClient(t, srv, githubtest.DefaultToken)
			_, created, err := c.EnsurePR(context.Background(), github.PRRequest{Head: "agent-loop/r", Base: "main", Title: "t", Body: "b"})
			if tt.wantErr != nil {
				if err == nil {
					t.Fatal("EnsurePR succeeded; want an error")
				}
				tt.wantErr(t, err)
			} else if err != nil || !created {
				t.Fatalf("EnsurePR = %v, created %v", err, created)
			}
			// Reset times are whole seconds: allow the clock's fraction.
			approx := cmp.Comparer(func(a, b time.Duration) bool { return (a - b).Abs() <= 1500*time.Millisecond })
			if diff := cmp.Diff(tt.wantSleeps, rec.Sleeps(), approx); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if n := srv.Hits(http.MethodPost, pullsPath); n != tt.wantPosts {
				t.Errorf("POST attempts = %d, want %d", n, tt.wantPosts)
			}
			wantPRs := 1
			if tt.wantErr != nil {
				wantPRs = 0
			}
			if n := len(srv.PullRequests(full)); n != wantPRs {
				t.Errorf("pull requests = %d, want %d", n, wantPRs)
			}
			if len(tt.wantSleeps) > 0 && !strings.Contains(rec.Logs(), pullsPath) {
				t.Errorf("no log line names the retried endpoint; logs:\n%s", rec.Logs())
			}
		})
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	srv.Fail(githubtest.SecondaryRateLimited(http.MethodGet, pullsPath+"/1", 30*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	c, err := github.New(ctx, githubtest.DefaultToken, srv.URL, owner, repo, github.WithSleep(func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetPR(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("GetPR = %v; want context.Canceled", err)
	}
}

func TestTokenNeverInErrorsOrLogs(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	// A server (or proxy) that echoes the credential back in its messages.
	echo := `{"message":"token ` + githubtest.DefaultToken + ` is not allowed here"}`
	srv.Fail(githubtest.Fault{Method: http.MethodGet, Path: pullsPath + "/1", Status: http.StatusBadGateway, Body: echo, Times: 4})
	srv.Fail(githubtest.Fault{Method: http.MethodGet, Path: "/repos/" + full + "/issues/1", Status: http.StatusBadRequest, Body: echo})
	srv.Fail(githubtest.Fault{Method: http.MethodPost, Path: "/graphql", Status: http.StatusOK,
		Body: `{"errors":[{"type":"INTERNAL","message":"` + githubtest.DefaultToken + `"}]}`})
	srv.AddPullRequest(full, githubtest.PullRequest{Title: "t", Head: "h", Draft: true})
	c, rec := newClient(t, srv, githubtest.DefaultToken)

	var errs []error
	_, err := c.GetPR(context.Background(), 1)
	errs = append(errs, err)
	_, _, err = c.IssueTitleBody(context.Background(), 1)
	errs = append(errs, err)
	_, _, err = c.EnsurePR(context.Background(), github.PRRequest{Head: "h", Base: "main", Title: "t"})
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Fatalf("call %d succeeded; want an error", i)
		}
		if strings.Contains(err.Error(), githubtest.DefaultToken) {
			t.Errorf("error %d shows the token: %v", i, err)
		}
		if !strings.Contains(err.Error(), "***") {
			t.Errorf("error %d: %v; want the echoed token replaced by ***", i, err)
		}
	}
	if strings.Contains(rec.Logs(), githubtest.DefaultToken) {
		t.Errorf("the logs show the token:\n%s", rec.Logs())
	}
}
