package actions

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/julienschmidt/httprouter"
	"github.com/nektos/act/pkg/artifacts"
	"github.com/nektos/act/pkg/common"
)

// osFS gives act's artifact routes the real file system (act's own is
// unexported).
type osFS struct{}

func (osFS) Open(name string) (fs.File, error) { return os.Open(name) }

func (osFS) OpenWritable(name string) (artifacts.WritableFile, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(name, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
}

func (osFS) OpenAppendable(name string) (artifacts.WritableFile, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

type recorded struct {
	Method string
	Path   string
	Query  string
	Auth   string
	Body   []byte
}

// actServer is act's artifacts v4 server (RoutesV4) behind a middleware
// that checks the runtime token as the results service does (act's own
// routes do not), records requests, and can inject failures.
type actServer struct {
	*httptest.Server
	dir   string
	runID int64
	token string

	mu       sync.Mutex
	requests []recorded
	// fail, when set, may answer a request itself (status, body, headers).
	fail  func(r recorded, attempt int) (status int, body string, header map[string]string)
	tries map[string]int
}

const (
	testRunID = 1234
	testJobID = 56
)

func newActServer(t *testing.T) *actServer {
	t.Helper()
	token, err := common.CreateAuthorizationToken(7, testRunID, testJobID)
	if err != nil {
		t.Fatal(err)
	}
	s := &actServer{dir: t.TempDir(), runID: testRunID, token: token, tries: map[string]int{}}
	router := httprouter.New()
	artifacts.RoutesV4(router, s.dir, osFS{}, osFS{})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Auth: r.Header.Get("Authorization"), Body: body}
		method := filepath.Base(r.URL.Path)
		key := method + "?" + r.URL.Query().Get("comp")
		s.mu.Lock()
		s.requests = append(s.requests, rec)
		s.tries[key]++
		attempt := s.tries[key]
		fail := s.fail
		s.mu.Unlock()

		blob := method == "UploadArtifact" || method == "DownloadArtifact"
		if blob && rec.Auth != "" {
			t.Errorf("%s %s carried an Authorization header; the signed URL must be used without it", r.Method, method)
			http.Error(w, "unexpected Authorization on a signed URL", http.StatusBadRequest)
			return
		}
		if !blob {
			if !strings.HasPrefix(rec.Auth, "Bearer ") {
				twirpErr(w, http.StatusUnauthorized, "unauthenticated", "no bearer token")
				return
			}
			if _, err := common.ParseAuthorizationToken(r); err != nil {
				twirpErr(w, http.StatusUnauthorized, "unauthenticated", "invalid token: "+err.Error())
				return
			}
		}
		if fail != nil {
			if status, body, header := fail(rec, attempt); status != 0 {
				for k, v := range header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(status)
				io.WriteString(w, body)
				return
			}
		}
		router.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func twirpErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"code": code, "msg": msg})
}

func (s *actServer) env() map[string]string {
	return map[string]string{
		"ACTIONS_RUNTIME_TOKEN": s.token,
		// A path after the origin, as the runner's value has: the client
		// must use the origin only.
		"ACTIONS_RESULTS_URL": s.URL + "/some/results/path/",
	}
}

func (s *actServer) client(t *testing.T) *ArtifactClient {
	t.Helper()
	c, err := NewArtifactClient(mapEnv(s.env()), s.Client())
	if err != nil {
		t.Fatal(err)
	}
	c.RetryWait = time.Millisecond
	return c
}

func (s *actServer) recorded(method string) []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []recorded
	for _, r := range s.requests {
		if filepath.Base(r.Path) == method {
			out = append(out, r)
		}
	}
	return out
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func stateFiles(t *testing.T) map[string][]byte {
	return map[string][]byte{
		"state.json":                        []byte(`{"version":"2.0.0","loop_id":"ralph-fix-tests-0123abcd","status":"running","iteration":1}`),
		"checkpoints/iteration-001.json.gz": randomBytes(t, 300<<10), // incompressible: several blocks
		"logs/iteration-001.log":            bytes.Repeat([]byte("ok  \tpkg\t0.1s\n"), 2000),
		"empty.txt":                         {},
	}
}

func TestArtifactRoundTripAct(t *testing.T) {
	t.Parallel()
	s := newActServer(t)
	c := s.client(t)
	c.BlockSize = 64 << 10
	files := stateFiles(t)
	ctx := context.Background()

	id, size, err := c.Upload(ctx, "agent-loop-state", files)
	if err != nil {
		t.Fatal(err)
	}
	want, err := zipFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(len(want)) {
		t.Errorf("Upload size = %d, want the zip's %d", size, len(want))
	}
	// What act stored is exactly our zip, blocks in order.
	stored, err := os.ReadFile(filepath.Join(s.dir, fmt.Sprint(testRunID), "agent-loop-state", "agent-loop-state.zip"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored, want) {
		t.Errorf("stored zip (%d bytes) differs from the uploaded zip (%d bytes)", len(stored), len(want))
	}

	// The wire: snake_case, int64 as strings, no mime_type, hash of the zip.
	var create map[string]any
	json.Unmarshal(s.recorded("CreateArtifact")[0].Body, &create)
	wantCreate := map[string]any{
		"workflow_run_backend_id": fmt.Sprint(testRunID), "workflow_job_run_backend_id": fmt.Sprint(testJobID),
		"name": "agent-loop-state", "version": float64(4),
	}
	if diff := cmp.Diff(wantCreate, create); diff != "" {
		t.Errorf("CreateArtifact request (-want +got):\n%s", diff)
	}
	var finalize map[string]any
	json.Unmarshal(s.recorded("FinalizeArtifact")[0].Body, &finalize)
	sum := sha256.Sum256(want)
	if finalize["size"] != fmt.Sprint(len(want)) || finalize["hash"] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("FinalizeArtifact request: size %v hash %v", finalize["size"], finalize["hash"])
	}
	var blocks, lists int
	var listBody string
	for _, r := range s.recorded("UploadArtifact") {
		switch {
		case strings.Contains(r.Query, "comp=blocklist"):
			lists++
			listBody = string(r.Body)
		case strings.Contains(r.Query, "comp=block&blockid="):
			blocks++
		}
	}
	wantBlocks := (len(want) + c.BlockSize - 1) / c.BlockSize
	if blocks != wantBlocks || lists != 1 {
		t.Errorf("blob upload: %d Put Block, %d Put Block List; want %d and 1", blocks, lists, wantBlocks)
	}
	if n := strings.Count(listBody, "<Latest>"); n != wantBlocks {
		t.Errorf("Put Block List names %d blocks, want %d: %s", n, wantBlocks, listBody)
	}

	list, err := c.List(ctx, "agent-loop-state")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "agent-loop-state" || list[0].ID != id || list[0].CreatedAt.IsZero() {
		t.Errorf("List = %+v, want one artifact agent-loop-state with id %d", list, id)
	}
	got, err := c.Download(ctx, "agent-loop-state")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(files, got); diff != "" {
		t.Errorf("downloaded files (-want +got):\n%s", diff)
	}

	if _, err := c.Download(ctx, "no-such-artifact"); !errors.Is(err, ErrArtifactNotFound) {
		t.Errorf("Download of a missing name: err = %v, want ErrArtifactNotFound", err)
	}
	if _, err := c.Delete(ctx, "agent-loop-state"); err != nil {
		t.Fatal(err)
	}
	if list, err := c.List(ctx, "agent-loop-state"); err != nil || len(list) != 0 {
		t.Errorf("after Delete: List = %+v, %v", list, err)
	}
}

func TestZipDeterministic(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{"b.txt": []byte("b"), "a/x.json": []byte("{}"), "c": nil}
	first, err := zipFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, _ := zipFiles(files)
		if !bytes.Equal(first, again) {
			t.Fatal("zipFiles gave different bytes for the same files")
		}
	}
	zr, _ := zip.NewReader(bytes.NewReader(first), int64(len(first)))
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if diff := cmp.Diff([]string{"a/x.json", "b.txt", "c"}, names); diff != "" {
		t.Errorf("entry order (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"../x", "/abs", "a//b", "a/./b", "a\\b", "x:y", ""} {
		if _, err := zipFiles(map[string][]byte{bad: nil}); err == nil {
			t.Errorf("zipFiles accepted the path %q", bad)
		}
	}
}

func TestArtifactRetries(t *testing.T) {
	t.Parallel()
	s := newActServer(t)
	s.fail = func(r recorded, attempt int) (int, string, map[string]string) {
		switch method := filepath.Base(r.Path); {
		case method == "CreateArtifact" && attempt <= 2:
			return http.StatusServiceUnavailable, `{"code":"unavailable","msg":"try later"}`, nil
		case method == "UploadArtifact" && strings.Contains(r.Query, "comp=block&") && attempt == 1:
			return http.StatusInternalServerError, "<Error><Code>InternalError</Code></Error>", nil
		case method == "FinalizeArtifact" && attempt == 1:
			return http.StatusTooManyRequests, `{"code":"resource_exhausted","msg":"slow down"}`, map[string]string{"Retry-After": "0"}
		case method == "DownloadArtifact" && attempt == 1:
			return http.StatusBadGateway, "bad gateway", nil
		}
		return 0, "", nil
	}
	c := s.client(t)
	files := map[string][]byte{"state.json": []byte(`{"iteration":3}`)}
	if _, _, err := c.Upload(context.Background(), "state", files); err != nil {
		t.Fatalf("Upload through transient failures: %v", err)
	}
	got, err := c.Download(context.Background(), "state")
	if err != nil {
		t.Fatalf("Download through a transient failure: %v", err)
	}
	if diff := cmp.Diff(files, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	counts := map[string]int{}
	for _, m := range []string{"CreateArtifact", "FinalizeArtifact", "DownloadArtifact"} {
		counts[m] = len(s.recorded(m))
	}
	if diff := cmp.Diff(map[string]int{"CreateArtifact": 3, "FinalizeArtifact": 2, "DownloadArtifact": 2}, counts); diff != "" {
		t.Errorf("attempts per method (-want +got):\n%s", diff)
	}
}

func TestArtifactRetriesExhausted(t *testing.T) {
	t.Parallel()
	s := newActServer(t)
	s.fail = func(r recorded, attempt int) (int, string, map[string]string) {
		return http.StatusBadGateway, `{"code":"unavailable","msg":"down"}`, nil
	}
	c := s.client(t)
	_, err := c.List(context.Background(), "state")
	var te *TwirpError
	if !errors.As(err, &te) || te.Status != http.StatusBadGateway || !strings.Contains(err.Error(), "after 5 attempts") {
		t.Fatalf("List against a down service: err = %v, want a 502 TwirpError after 5 attempts", err)
	}
	if n := len(s.recorded("ListArtifacts")); n != 5 {
		t.Errorf("%d attempts, want 5", n)
	}
}

func TestArtifactRetryHonoursContext(t *testing.T) {
	t.Parallel()
	s := newActServer(t)
	s.fail = func(recorded, int) (int, string, map[string]string) {
		return http.StatusServiceUnavailable, `{}`, map[string]string{"Retry-After": "30"}
	}
	c := s.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.List(ctx, "state")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("List waited %v after its context ended", d)
	}
}

func TestArtifactBadToken(t *testing.T) {
	t.Parallel()
	s := newActServer(t)
	env := s.env()
	// Same claims, forged signature: the service refuses it.
	parts := strings.Split(s.token, ".")
	parts[2] = base64.RawURLEncoding.EncodeToString([]byte("not the signature"))
	env["ACTIONS_RUNTIME_TOKEN"] = strings.Join(parts, ".")
	c, err := NewArtifactClient(mapEnv(env), s.Client())
	if err != nil {
		t.Fatal(err)
	}
	c.RetryWait = time.Millisecond
	_, _, err = c.Upload(context.Background(), "state", map[string][]byte{"a": nil})
	var te *TwirpError
	if !errors.As(err, &te) || te.Status != http.StatusUnauthorized {
		t.Fatalf("Upload with a forged token: err = %v, want a 401 TwirpError", err)
	}
	if !strings.Contains(err.Error(), "ACTIONS_RUNTIME_TOKEN") {
		t.Errorf("error %q does not say which token was refused", err)
	}
	if n := len(s.recorded("CreateArtifact")); n != 1 {
		t.Errorf("a 401 was tried %d times, want 1 (not retryable)", n)
	}
}

func jwtWith(t testing.TB, claims any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(payload) + "." + enc.EncodeToString([]byte("sig"))
}

func TestNewArtifactClientErrors(t *testing.T) {
	t.Parallel()
	const results = "https://results-receiver.actions.githubusercontent.com/"
	tests := []struct {
		name            string
		env             map[string]string
		wantUnavailable bool
		wantErr         string // substring; "" = no error
		wantRun         string
		wantJob         string
	}{
		{
			name:            "no runtime token (GHES)",
			env:             map[string]string{"ACTIONS_RESULTS_URL": results},
			wantUnavailable: true,
			wantErr:         "artifacts need ACTIONS_RUNTIME_TOKEN: are you on GHES? state falls back to the state ref",
		},
		{
			name:            "no results URL",
			env:             map[string]string{"ACTIONS_RUNTIME_TOKEN": jwtWith(t, map[string]string{"scp": "Actions.Results:1:2"})},
			wantUnavailable: true,
			wantErr:         "ACTIONS_RESULTS_URL",
		},
		{
			name:    "not a JWT",
			env:     map[string]string{"ACTIONS_RUNTIME_TOKEN": "ghs_plain", "ACTIONS_RESULTS_URL": results},
			wantErr: "not a JWT",
		},
		{
			name:    "payload not base64",
			env:     map[string]string{"ACTIONS_RUNTIME_TOKEN": "a.!!!.c", "ACTIONS_RESULTS_URL": results},
			wantErr: "not a JWT",
		},
		{
			name:            "no results scope",
			env:             map[string]string{"ACTIONS_RUNTIME_TOKEN": jwtWith(t, map[string]string{"scp": "Actions.GenericRead:1"}), "ACTIONS_RESULTS_URL": results},
			wantUnavailable: true,
			wantErr:         "Actions.Results",
		},
		{
			name:    "relative results URL",
			env:     map[string]string{"ACTIONS_RUNTIME_TOKEN": jwtWith(t, map[string]string{"scp": "Actions.Results:1:2"}), "ACTIONS_RESULTS_URL": "/twirp"},
			wantErr: "not an absolute URL",
		},
		{
			name: "GitHub's scopes, space separated",
			env: map[string]string{"ACTIONS_RESULTS_URL": results, "ACTIONS_RUNTIME_TOKEN": jwtWith(t, map[string]string{
				"scp": "Actions.ExampleScope Actions.Results:ce7f54c7-61c7-4aae-887f-30da475f5f1a:ca395085-040a-526b-2ce8-bdc85f692774",
			})},
			wantRun: "ce7f54c7-61c7-4aae-887f-30da475f5f1a", wantJob: "ca395085-040a-526b-2ce8-bdc85f692774",
		},
		{
			name: "scopes as an array",
			env: map[string]string{"ACTIONS_RESULTS_URL": results, "ACTIONS_RUNTIME_TOKEN": jwtWith(t, map[string][]string{
				"scp": {"Actions.UploadArtifacts:9", "Actions.Results:11:22"},
			})},
			wantRun: "11", wantJob: "22",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := NewArtifactClient(mapEnv(tt.env), nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.runID != tt.wantRun || c.jobID != tt.wantJob || c.baseURL != "https://results-receiver.actions.githubusercontent.com" {
					t.Errorf("run %q job %q base %q", c.runID, c.jobID, c.baseURL)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if got := errors.Is(err, ErrArtifactsUnavailable); got != tt.wantUnavailable {
				t.Errorf("errors.Is(err, ErrArtifactsUnavailable) = %v, want %v", got, tt.wantUnavailable)
			}
		})
	}
}

// fakeResults is a hand-written results service for replies act does not
// give: conflicts, snake_case replies, digests.
func fakeResults(t *testing.T, handle func(method string, body map[string]any) (int, any)) (*ArtifactClient, *httptest.Server) {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/blob" {
			http.ServeFile(w, r, r.URL.Query().Get("file"))
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		status, reply := handle(filepath.Base(r.URL.Path), body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(reply)
	}))
	t.Cleanup(srv.Close)
	c, err := NewArtifactClient(mapEnv(map[string]string{
		"ACTIONS_RUNTIME_TOKEN": jwtWith(t, map[string]string{"scp": "Actions.Results:r1:j1"}),
		"ACTIONS_RESULTS_URL":   srv.URL,
	}), srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	c.RetryWait = time.Millisecond
	return c, srv
}

func TestArtifactConflict(t *testing.T) {
	t.Parallel()
	calls := 0
	c, _ := fakeResults(t, func(method string, _ map[string]any) (int, any) {
		calls++
		return http.StatusConflict, map[string]string{"code": "already_exists", "msg": "an artifact with this name already exists on the workflow run"}
	})
	_, _, err := c.Upload(context.Background(), "state", map[string][]byte{"a": []byte("x")})
	if !errors.Is(err, ErrArtifactExists) {
		t.Fatalf("err = %v, want ErrArtifactExists", err)
	}
	var te *TwirpError
	if !errors.As(err, &te) || te.Code != "already_exists" || te.Method != "CreateArtifact" {
		t.Errorf("TwirpError = %+v", te)
	}
	if calls != 1 {
		t.Errorf("a 409 was tried %d times, want 1", calls)
	}
}

func writeZip(t *testing.T, entries []zipEntry) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(e.mode)
		f, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(e.content))
	}
	zw.Close()
	p := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type zipEntry struct {
	name    string
	content string
	mode    fs.FileMode
}

func TestArtifactSnakeCaseAndDigest(t *testing.T) {
	t.Parallel()
	good := writeZip(t, []zipEntry{{"state.json", "{}", 0o644}, {"dir/", "", fs.ModeDir | 0o755}})
	data, _ := os.ReadFile(good)
	sum := sha256.Sum256(data)
	tests := []struct {
		name    string
		digest  string
		wantErr string
	}{
		{"digest matches", "sha256:" + hex.EncodeToString(sum[:]), ""},
		{"no digest", "", ""},
		{"digest differs", "sha256:" + strings.Repeat("0", 64), "corrupted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var base string
			c, srv := fakeResults(t, func(method string, body map[string]any) (int, any) {
				switch method {
				case "ListArtifacts":
					if body["name_filter"] != "state" {
						t.Errorf("name_filter = %v", body["name_filter"])
					}
					// snake_case, int64 as JSON numbers
					return 200, map[string]any{"artifacts": []map[string]any{{
						"workflow_run_backend_id": "r1", "workflow_job_run_backend_id": "j1",
						"database_id": 99, "name": "state", "size": len(data),
						"created_at": "2026-01-02T03:04:05.5Z", "digest": tt.digest,
					}}}
				case "GetSignedArtifactURL":
					return 200, map[string]any{"signed_url": base + "/blob?file=" + good}
				}
				return 404, map[string]string{"code": "not_found"}
			})
			base = srv.URL
			list, err := c.List(context.Background(), "state")
			if err != nil {
				t.Fatal(err)
			}
			want := []Artifact{{ID: 99, Name: "state", Size: int64(len(data)), CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 5e8, time.UTC),
				Digest: tt.digest, WorkflowRunBackendID: "r1", WorkflowJobRunBackendID: "j1"}}
			if diff := cmp.Diff(want, list); diff != "" {
				t.Errorf("List (-want +got):\n%s", diff)
			}
			files, err := c.Download(context.Background(), "state")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string][]byte{"state.json": []byte("{}")}, files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDownloadRefusesUnsafeArchives(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entries []zipEntry
		limit   int64
		wantErr string
	}{
		{"zip slip", []zipEntry{{"../../etc/cron.d/evil", "x", 0o644}}, 0, "../../etc/cron.d/evil"},
		{"absolute path", []zipEntry{{"/etc/passwd", "x", 0o644}}, 0, "/etc/passwd"},
		{"backslash", []zipEntry{{"..\\evil", "x", 0o644}}, 0, `..\\evil`},
		{"symbolic link", []zipEntry{{"link", "/etc/passwd", fs.ModeSymlink | 0o777}}, 0, "not a regular file"},
		{"duplicate", []zipEntry{{"a", "1", 0o644}, {"a", "2", 0o644}}, 0, "twice"},
		{"unpacks past the limit", []zipEntry{{"big", strings.Repeat("0", 4096), 0o644}}, 1024, "limit"},
		{"many entries past the limit", []zipEntry{{"a", strings.Repeat("0", 600), 0o644}, {"b", strings.Repeat("0", 600), 0o644}}, 1024, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Plant the archive in act's storage, as if another client had
			// uploaded it, and download it through act.
			s := newActServer(t)
			c := s.client(t)
			if tt.limit > 0 {
				c.MaxDownloadSize = tt.limit
			}
			if _, _, err := c.Upload(context.Background(), "evil", map[string][]byte{"x": nil}); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(writeZip(t, tt.entries))
			if err := os.WriteFile(filepath.Join(s.dir, fmt.Sprint(testRunID), "evil", "evil.zip"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := c.Download(context.Background(), "evil")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Download: err = %v, want a refusal mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestDownloadRefusesLargeZip(t *testing.T) {
	t.Parallel()
	s := newActServer(t)
	c := s.client(t)
	if _, _, err := c.Upload(context.Background(), "big", map[string][]byte{"r": randomBytes(t, 8<<10)}); err != nil {
		t.Fatal(err)
	}
	c.MaxDownloadSize = 4 << 10
	_, err := c.Download(context.Background(), "big")
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("err = %v, want a refusal over the limit", err)
	}
	if n := len(s.recorded("DownloadArtifact")); n != 1 {
		t.Errorf("an oversized download was tried %d times, want 1", n)
	}
}

func TestArtifactNameValidation(t *testing.T) {
	t.Parallel()
	c := &ArtifactClient{}
	for _, name := range []string{"", "a/b", "a:b", "a*b", "a?b", "a\nb", `a"b`, "a|b", "a<b", "a\\b"} {
		if _, _, err := c.Upload(context.Background(), name, nil); err == nil || !strings.Contains(err.Error(), "artifact name") {
			t.Errorf("Upload(%q): err = %v, want an invalid name error", name, err)
		}
	}
}

func FuzzUnzip(f *testing.F) {
	good, _ := zipFiles(map[string][]byte{"state.json": []byte("{}"), "a/b": []byte("x")})
	f.Add(good)
	f.Add([]byte("PK\x03\x04garbage"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := unzipFiles(data, 1<<20)
		if err != nil {
			return
		}
		var total int
		for name, content := range files {
			if validateArchivePath(name) != nil {
				t.Fatalf("unzipFiles returned the unsafe name %q", name)
			}
			total += len(content)
		}
		if total > 1<<20 {
			t.Fatalf("unzipFiles returned %d bytes, over its limit", total)
		}
	})
}

func FuzzBackendIDs(f *testing.F) {
	f.Add(jwtWith(f, map[string]string{"scp": "Actions.Results:1:2"}))
	f.Add("a.b.c")
	f.Add("..")
	f.Add("eyJ.eyJzY3AiOlsxXX0.x")
	f.Fuzz(func(t *testing.T, token string) {
		run, job, err := BackendIDs(token)
		if err != nil {
			return
		}
		if run == "" || job == "" || strings.ContainsAny(run+job, ": \t\n") {
			t.Fatalf("BackendIDs(%q) = %q, %q", token, run, job)
		}
	})
}

// TestListSortsNothingAway checks that List keeps every artifact the service
// returns for a name (several of the same name can exist across attempts).
func TestListKeepsDuplicates(t *testing.T) {
	t.Parallel()
	c, _ := fakeResults(t, func(method string, _ map[string]any) (int, any) {
		return 200, map[string]any{"artifacts": []map[string]any{
			{"databaseId": "1", "name": "state", "size": "10", "createdAt": "2026-01-01T00:00:00Z"},
			{"databaseId": "2", "name": "state", "size": "20", "createdAt": "2026-01-02T00:00:00Z"},
			{"databaseId": "3", "name": "other", "size": "30"},
		}}
	})
	list, err := c.List(context.Background(), "state")
	if err != nil {
		t.Fatal(err)
	}
	ids := []int64{}
	for _, a := range list {
		ids = append(ids, a.ID)
	}
	if !slices.Equal(ids, []int64{1, 2}) {
		t.Errorf("ids = %v, want [1 2] (the service's filter ignored, other names dropped)", ids)
	}
}
