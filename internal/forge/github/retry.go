package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry bounds. GitHub asks clients to wait Retry-After seconds after a
// secondary rate limit, until X-RateLimit-Reset after a primary one, and at
// least a minute when neither header says (docs: "Rate limits for the REST
// API", "Handle rate limit errors appropriately").
const (
	maxRateLimitAttempts = 5               // attempts of one request that meets rate limits
	maxServerAttempts    = 4               // one try and 3 retries for 5xx and network errors
	maxSingleWait        = 2 * time.Minute // a rate limit resetting later than this is not waited for
	maxTotalWait         = 5 * time.Minute // all the waiting of one request
	secondaryDefaultWait = time.Minute
	serverBackoff        = time.Second // doubled after each 5xx
	maxPeekBody          = 64 << 10    // bytes of a 403/429 body read to classify it
)

// SleepFunc waits d or until ctx is done.
type SleepFunc func(ctx context.Context, d time.Duration) error

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// authTransport adds the token to requests for the API host only, so that a
// redirect to another host (an artifact's blob URL) never carries it.
type authTransport struct {
	token  string
	scheme string
	host   string
	next   http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == t.host && req.URL.Scheme == t.scheme {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	return t.next.RoundTrip(req)
}

// retryTransport retries rate-limited requests (403 with
// X-RateLimit-Remaining: 0, 429, secondary limits) after the wait GitHub asks
// for, and 5xx answers and network errors with a doubling backoff, so that
// go-github only ever sees the final answer (and does not block later
// requests on a limit that has cleared).
type retryTransport struct {
	next  http.RoundTripper
	sleep SleepFunc
	now   func() time.Time
	logf  func(format string, args ...any)
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var waited time.Duration
	rateAttempts, serverAttempts := 0, 0
	backoff := serverBackoff
	for {
		if req.Body != nil && req.GetBody != nil && (rateAttempts > 0 || serverAttempts > 0) {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("replaying the request body: %w", err)
			}
			req = req.Clone(ctx)
			req.Body = body
		}
		resp, err := t.next.RoundTrip(req)
		replayable := req.Body == nil || req.GetBody != nil
		if err != nil {
			serverAttempts++
			if !replayable || serverAttempts >= maxServerAttempts || ctx.Err() != nil {
				return nil, err
			}
			t.log("GitHub API %s %s: %v; retrying in %s (attempt %d of %d)", req.Method, req.URL.Path, err, backoff, serverAttempts+1, maxServerAttempts)
			if serr := t.sleep(ctx, backoff); serr != nil {
				return nil, err
			}
			backoff *= 2
			continue
		}
		switch {
		case resp.StatusCode >= 500 && resp.StatusCode <= 599:
			serverAttempts++
			if !replayable || serverAttempts >= maxServerAttempts {
				return resp, nil
			}
			discard(resp)
			t.log("GitHub API %s %s: %s; retrying in %s (attempt %d of %d)", req.Method, req.URL.Path, resp.Status, backoff, serverAttempts+1, maxServerAttempts)
			if serr := t.sleep(ctx, backoff); serr != nil {
				return nil, serr
			}
			backoff *= 2
			continue
		case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests:
			wait, limited := t.rateLimitWait(resp, rateAttempts)
			if !limited {
				return resp, nil
			}
			rateAttempts++
			if !replayable || rateAttempts >= maxRateLimitAttempts || wait > maxSingleWait || waited+wait > maxTotalWait {
				return resp, nil
			}
			discard(resp)
			t.log("GitHub API rate limit on %s %s (%s); waiting %s (attempt %d of %d)", req.Method, req.URL.Path, resp.Status, wait.Round(time.Second), rateAttempts+1, maxRateLimitAttempts)
			if serr := t.sleep(ctx, wait); serr != nil {
				return nil, serr
			}
			waited += wait
			continue
		}
		return resp, nil
	}
}

// rateLimitWait says whether resp is a rate limit and how long to wait before
// attempt n+1 (n counts the rate-limited attempts so far). The body of a
// 403 is peeked at and put back.
func (t *retryTransport) rateLimitWait(resp *http.Response, n int) (time.Duration, bool) {
	h := resp.Header
	retryAfter := parseRetryAfter(h.Get("Retry-After"), t.now())
	remaining := h.Get("X-RateLimit-Remaining")
	reset := parseUnix(h.Get("X-RateLimit-Reset"))

	limited := resp.StatusCode == http.StatusTooManyRequests || remaining == "0" || retryAfter >= 0
	if !limited {
		body := peekBody(resp)
		lower := strings.ToLower(string(body))
		limited = strings.Contains(lower, "secondary rate limit") || strings.Contains(lower, "abuse") ||
			strings.Contains(lower, "rate limit exceeded")
	}
	if !limited {
		return 0, false
	}
	switch {
	case retryAfter >= 0:
		return retryAfter, true
	case remaining == "0" && !reset.IsZero():
		d := reset.Sub(t.now()) + time.Second
		if d < time.Second {
			d = time.Second
		}
		return d, true
	default:
		// No header says: at least a minute, then exponentially longer.
		return secondaryDefaultWait << n, true
	}
}

func (t *retryTransport) log(format string, args ...any) {
	if t.logf != nil {
		t.logf(format, args...)
	}
}

// parseRetryAfter reads Retry-After as seconds or an HTTP date; -1 when absent
// or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return -1
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second
	}
	if when, err := http.ParseTime(v); err == nil {
		d := when.Sub(now)
		if d < 0 {
			d = 0
		}
		return d
	}
	return -1
}

func parseUnix(v string) time.Time {
	secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || secs <= 0 {
		return time.Time{}
	}
	return time.Unix(secs, 0)
}

// peekBody reads up to maxPeekBody bytes of the body and puts them back.
func peekBody(resp *http.Response) []byte {
	if resp.Body == nil {
		return nil
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxPeekBody))
	if err != nil && !errors.Is(err, io.EOF) {
		head = nil
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	return head
}

func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
}
