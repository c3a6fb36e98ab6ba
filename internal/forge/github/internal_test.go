package github

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

func TestDerivedURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		api, upload, graphql string
	}{
		{"https://api.github.com", "https://uploads.github.com/", "https://api.github.com/graphql"},
		{"https://ghe.example.com/api/v3", "https://ghe.example.com/api/uploads/", "https://ghe.example.com/api/graphql"},
		{"https://ghe.example.com/api/v3/", "https://ghe.example.com/api/uploads/", "https://ghe.example.com/api/graphql"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/graphql"},
	}
	for _, tt := range tests {
		c, err := New(t.Context(), "tok", tt.api, "o", "r")
		if err != nil {
			t.Fatal(err)
		}
		if got := c.gh.UploadURL.String(); got != tt.upload {
			t.Errorf("%s: upload URL = %s, want %s", tt.api, got, tt.upload)
		}
		if c.graphqlURL != tt.graphql {
			t.Errorf("%s: GraphQL URL = %s, want %s", tt.api, c.graphqlURL, tt.graphql)
		}
		base, _ := url.Parse(tt.api)
		if got := c.gh.BaseURL.Host; got != base.Host {
			t.Errorf("%s: base host %s", tt.api, got)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":         -1,
		"abc":      -1,
		"-5":       -1,
		"0":        0,
		"17":       17 * time.Second,
		"99999999": 24 * time.Hour,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
	}
	for in, want := range tests {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSafeZipPath(t *testing.T) {
	t.Parallel()
	ok := map[string]string{"a": "a", "a/b": "a/b", "./a": "a", "a//b": "a/b", "a/./b/": "a/b", "..a": "..a", "a..": "a.."}
	for in, want := range ok {
		if got, err := safeZipPath(in); err != nil || got != want {
			t.Errorf("safeZipPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "/a", "../a", "a/../../b", "a/..", `a\b`, "C:/a", "c:a", "a\x00b"} {
		if got, err := safeZipPath(in); err == nil {
			t.Errorf("safeZipPath(%q) = %q; want an error", in, got)
		}
	}
}
