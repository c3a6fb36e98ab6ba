package github_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/forge/github"
	"github.com/aiwg/agent-loop/internal/forge/github/githubtest"
)

func TestFindAndDownloadArtifacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t)
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	name := "agent-loop-state-ralph-fix-tests-1a2b3c4d"
	older := srv.AddArtifact(full, githubtest.Artifact{Name: name, RunID: 101, Created: base,
		Files: map[string][]byte{"state.json": []byte(`{"iteration":1}`)}})
	newest := srv.AddArtifact(full, githubtest.Artifact{Name: name, RunID: 103, Created: base.Add(2 * time.Hour),
		Files: map[string][]byte{
			"state.json":                        []byte(`{"iteration":3}`),
			"checkpoints/iteration-003.json.gz": {0x1f, 0x8b, 0x08, 0x00},
		}})
	srv.AddArtifact(full, githubtest.Artifact{Name: name, RunID: 102, Created: base.Add(time.Hour), Expired: true})
	srv.AddArtifact(full, githubtest.Artifact{Name: name + "-other", RunID: 104, Created: base.Add(3 * time.Hour)})

	c, _ := newClient(t, srv, githubtest.DefaultToken)
	got, err := c.FindArtifacts(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var ids, runs []int64
	for _, a := range got {
		ids, runs = append(ids, a.ID), append(runs, a.RunID)
		if a.Name != name || a.Expired || a.Size <= 0 || a.CreatedAt.IsZero() {
			t.Errorf("artifact %+v", a)
		}
	}
	if diff := cmp.Diff([]int64{newest, older}, ids); diff != "" {
		t.Errorf("artifact ids, newest first and unexpired (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{103, 101}, runs); diff != "" {
		t.Errorf("run ids (-want +got):\n%s", diff)
	}

	files, err := c.DownloadArtifact(ctx, newest)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{
		"state.json":                        []byte(`{"iteration":3}`),
		"checkpoints/iteration-003.json.gz": {0x1f, 0x8b, 0x08, 0x00},
	}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	// The blob server (another host) fails the test if it sees the token.
	if srv.BlobHits() != 1 {
		t.Errorf("blob downloads = %d, want 1", srv.BlobHits())
	}
}

func TestFindArtifactsPaginates(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	for i := 0; i < 205; i++ {
		srv.AddArtifact(full, githubtest.Artifact{Name: "state", RunID: int64(i + 1), Created: time.Unix(int64(1700000000+i), 0)})
	}
	c, _ := newClient(t, srv, githubtest.DefaultToken)
	got, err := c.FindArtifacts(context.Background(), "state")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 205 || got[0].RunID != 205 || got[204].RunID != 1 {
		t.Errorf("got %d artifacts, first run %d; want 205 newest first", len(got), got[0].RunID)
	}
	if n := srv.Hits(http.MethodGet, "/repos/"+full+"/actions/artifacts"); n != 3 {
		t.Errorf("list requests = %d, want 3 pages", n)
	}
}

func TestDownloadArtifactErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var slip bytes.Buffer
	zw := zip.NewWriter(&slip)
	w, _ := zw.Create("../../.github/workflows/evil.yml")
	_, _ = w.Write([]byte("on: push"))
	_ = zw.Close()

	srv := githubtest.New(t)
	expired := srv.AddArtifact(full, githubtest.Artifact{Name: "s", Expired: true})
	hostile := srv.AddArtifact(full, githubtest.Artifact{Name: "s", Zip: slip.Bytes()})
	notZip := srv.AddArtifact(full, githubtest.Artifact{Name: "s", Zip: []byte("<html>sign in</html>")})
	c, _ := newClient(t, srv, githubtest.DefaultToken)

	var apiErr *github.APIError
	if _, err := c.DownloadArtifact(ctx, expired); !errors.As(err, &apiErr) || apiErr.Status != http.StatusGone {
		t.Errorf("expired: %v; want an *APIError 410", err)
	}
	if _, err := c.DownloadArtifact(ctx, 424242); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Errorf("missing: %v; want an *APIError 404", err)
	}
	if _, err := c.DownloadArtifact(ctx, hostile); err == nil || !strings.Contains(err.Error(), "unsafe path") {
		t.Errorf("zip slip: %v; want an unsafe path error", err)
	}
	if _, err := c.DownloadArtifact(ctx, notZip); err == nil || !strings.Contains(err.Error(), "zip") {
		t.Errorf("not a zip: %v", err)
	}

	tok := githubtest.Token{Value: "ghs_noactions00000000000000000000000000", Kind: githubtest.ActionsToken,
		Permissions: map[string]string{"contents": "write"}}
	srv.AddToken(tok)
	narrow, _ := newClient(t, srv, tok.Value)
	_, err := narrow.FindArtifacts(ctx, "s")
	var perr *github.PermissionError
	if !errors.As(err, &perr) || !strings.Contains(err.Error(), "actions: read") {
		t.Errorf("without actions: read: %v; want a *PermissionError naming it", err)
	}
}

// TestDownloadArtifactRedirectWithoutToken checks the redirect on a bare
// server pair: the API answers 302 to another host, which must receive no
// Authorization header even when the signed URL's host equals the API's
// host name on another port.
func TestDownloadArtifactRedirectWithoutToken(t *testing.T) {
	t.Parallel()
	var zipData bytes.Buffer
	zw := zip.NewWriter(&zipData)
	w, _ := zw.Create("a.txt")
	_, _ = w.Write([]byte("A"))
	_ = zw.Close()

	blob := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("Authorization"); h != "" {
			t.Errorf("blob server got Authorization %q", h)
		}
		_, _ = w.Write(zipData.Bytes())
	}))
	defer blob.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-123456" {
			t.Errorf("API request without the token: %q", r.Header.Get("Authorization"))
		}
		if r.URL.Path != "/repos/o/r/actions/artifacts/7/zip" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		}
		http.Redirect(w, r, blob.URL+"/blob/7.zip?sig=abc", http.StatusFound)
	}))
	defer api.Close()

	c, err := github.New(context.Background(), "tok-123456", api.URL, "o", "r")
	if err != nil {
		t.Fatal(err)
	}
	files, err := c.DownloadArtifact(context.Background(), 7)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]byte{"a.txt": []byte("A")}, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func zipOf(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zipEntry struct {
	name string
	data []byte
	mode fs.FileMode
}

const symlinkMode = fs.ModeSymlink | 0o777

func TestUnzip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entries []zipEntry
		max     int64
		want    map[string][]byte
		wantErr string
	}{
		{name: "files and directories", entries: []zipEntry{{name: "dir/"}, {name: "dir/a", data: []byte("a")}, {name: "./b", data: []byte("b")}},
			want: map[string][]byte{"dir/a": []byte("a"), "b": []byte("b")}},
		{name: "empty archive", want: map[string][]byte{}},
		{name: "parent directory", entries: []zipEntry{{name: "a/../../x", data: []byte("x")}}, wantErr: "unsafe path"},
		{name: "absolute", entries: []zipEntry{{name: "/etc/passwd", data: []byte("x")}}, wantErr: "unsafe path"},
		{name: "backslash", entries: []zipEntry{{name: `..\x`, data: []byte("x")}}, wantErr: "unsafe path"},
		{name: "drive letter", entries: []zipEntry{{name: "C:/x", data: []byte("x")}}, wantErr: "unsafe path"},
		{name: "duplicate", entries: []zipEntry{{name: "a", data: []byte("1")}, {name: "./a", data: []byte("2")}}, wantErr: "twice"},
		{name: "symlink", entries: []zipEntry{{name: "link", data: []byte("/etc/passwd"), mode: symlinkMode}}, wantErr: "regular files"},
		{name: "bigger than the bound", entries: []zipEntry{{name: "a", data: bytes.Repeat([]byte("z"), 600)}, {name: "b", data: bytes.Repeat([]byte("z"), 600)}},
			max: 1000, wantErr: "more than the 1000 bytes"},
		{name: "exactly the bound", entries: []zipEntry{{name: "a", data: bytes.Repeat([]byte("z"), 1000)}},
			max: 1000, want: map[string][]byte{"a": bytes.Repeat([]byte("z"), 1000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			max := tt.max
			if max == 0 {
				max = github.MaxArtifactBytes
			}
			got, err := github.Unzip(zipOf(t, tt.entries...), max)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Unzip = %v; want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnzipBomb(t *testing.T) {
	t.Parallel()
	// 16 MB of zeros compress to about 16 KB; the bound counts the bytes
	// read, not what the headers claim.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("zeros")
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for i := 0; i < 16; i++ {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 1<<20 {
		t.Fatalf("the bomb is %d bytes compressed", buf.Len())
	}
	const limit = 4 << 20
	if _, err := github.Unzip(buf.Bytes(), limit); err == nil || !strings.Contains(err.Error(), fmt.Sprint(limit)) {
		t.Errorf("Unzip(zip bomb) = %v; want the size bound error", err)
	}
}
