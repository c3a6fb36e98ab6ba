package actions

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrArtifactsUnavailable means this job cannot use artifacts v4 (GHES, an
// old runner, or a token without the results scope). Callers test for it
// with errors.Is and keep the state on the state ref instead.
var ErrArtifactsUnavailable = errors.New("artifacts need ACTIONS_RUNTIME_TOKEN: are you on GHES? state falls back to the state ref")

// ErrArtifactExists matches (errors.Is) the error of uploading a name that
// this workflow run already has: names are unique per run.
var ErrArtifactExists = errors.New("an artifact with this name already exists in this workflow run")

// ErrArtifactNotFound matches the error of downloading a name this workflow
// run does not have.
var ErrArtifactNotFound = errors.New("artifact not found in this workflow run")

// MaxArtifactDownload is the default bound on a downloaded artifact, both
// the zip and its unpacked content (100 MiB).
const MaxArtifactDownload int64 = 100 << 20

const (
	artifactService = "github.actions.results.api.v1.ArtifactService"
	// azureVersion is the Blob service REST version sent with block uploads.
	azureVersion = "2023-11-03"
	userAgent    = "agent-loop"
)

// unavailableError is an ErrArtifactsUnavailable with a more precise cause.
type unavailableError struct{ msg string }

func (e *unavailableError) Error() string        { return e.msg }
func (e *unavailableError) Is(target error) bool { return target == ErrArtifactsUnavailable }

// TwirpError is a non-success reply of the results service.
type TwirpError struct {
	Method string // CreateArtifact, ...
	Status int    // HTTP status
	Code   string // Twirp error code (already_exists, unauthenticated, ...)
	Msg    string
}

func (e *TwirpError) Error() string {
	s := fmt.Sprintf("%s.%s: HTTP %d", "ArtifactService", e.Method, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	switch {
	case e.Status == http.StatusUnauthorized || e.Code == "unauthenticated":
		s += " (the results service refused ACTIONS_RUNTIME_TOKEN: it expired or belongs to another job)"
	case e.Status == http.StatusForbidden || e.Code == "permission_denied":
		s += " (the runtime token may not do this; artifacts of other runs need the REST API and a GitHub token)"
	}
	return s
}

// Is makes errors.Is(err, ErrArtifactExists) and ErrArtifactNotFound work.
func (e *TwirpError) Is(target error) bool {
	switch target {
	case ErrArtifactExists:
		return e.Status == http.StatusConflict || e.Code == "already_exists"
	case ErrArtifactNotFound:
		return e.Status == http.StatusNotFound || e.Code == "not_found"
	}
	return false
}

// Artifact is one artifact of this workflow run.
type Artifact struct {
	ID        int64
	Name      string
	Size      int64
	CreatedAt time.Time
	// Digest is "sha256:<hex>" of the zip when the service reports it.
	Digest                  string
	WorkflowRunBackendID    string
	WorkflowJobRunBackendID string
}

// ArtifactClient speaks the artifacts v4 protocol of @actions/artifact:
// Twirp JSON to the results service, the zip to a signed Azure blob URL.
// It handles artifacts of the current run; those of earlier runs are read
// through the REST API (internal/forge/github).
type ArtifactClient struct {
	httpClient *http.Client
	token      string
	baseURL    string // origin of ACTIONS_RESULTS_URL
	runID      string // workflow run backend id
	jobID      string // workflow job run backend id

	// MaxAttempts bounds the tries of one request (429, 5xx and network
	// errors are retried). Default 5.
	MaxAttempts int
	// RetryWait is the first wait between tries; it doubles after each
	// (with jitter), and a Retry-After header is honoured. Default 1s.
	RetryWait time.Duration
	// BlockSize is the size of the Azure blocks the zip is uploaded in.
	// Default 8 MiB.
	BlockSize int
	// TempDir holds the zip while it is uploaded ("": os.TempDir()).
	TempDir string
	// MaxDownloadSize bounds a downloaded zip and its unpacked content.
	// Default MaxArtifactDownload.
	MaxDownloadSize int64
	// RetentionDays, when positive, sets the artifact's expiry; otherwise
	// the repository's retention applies.
	RetentionDays int
}

// NewArtifactClient reads ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL and
// takes the workflow run and job backend ids from the token's scp claim
// (Actions.Results:<runId>:<jobId>; the token is decoded, not verified).
// When the job has no artifacts v4 service the error matches
// ErrArtifactsUnavailable. A nil httpClient gets one with a 10-minute
// timeout.
func NewArtifactClient(getenv Env, httpClient *http.Client) (*ArtifactClient, error) {
	token := getenv("ACTIONS_RUNTIME_TOKEN")
	if token == "" {
		return nil, ErrArtifactsUnavailable
	}
	results := getenv("ACTIONS_RESULTS_URL")
	if results == "" {
		return nil, &unavailableError{"artifacts need ACTIONS_RESULTS_URL (the artifacts v4 results service), which this runner does not set: are you on GHES? state falls back to the state ref"}
	}
	u, err := url.Parse(results)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("ACTIONS_RESULTS_URL %q is not an absolute URL (want https://host/...)", results)
	}
	run, job, err := BackendIDs(token)
	if err != nil {
		return nil, err
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 10 * time.Minute}
	}
	return &ArtifactClient{
		httpClient: httpClient,
		token:      token,
		baseURL:    u.Scheme + "://" + u.Host,
		runID:      run,
		jobID:      job,
	}, nil
}

// BackendIDs returns the workflow run and job backend ids of a runtime token
// from its scp claim, whose scopes are separated by spaces, one of them
// "Actions.Results:<runId>:<jobId>". The signature is not verified: the
// service does that.
func BackendIDs(token string) (runID, jobID string, err error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", "", fmt.Errorf("ACTIONS_RUNTIME_TOKEN is not a JWT: want three dot-separated parts, got %d", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return "", "", fmt.Errorf("ACTIONS_RUNTIME_TOKEN is not a JWT: decoding its payload: %w", err)
	}
	var claims struct {
		Scp json.RawMessage `json:"scp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", "", fmt.Errorf("ACTIONS_RUNTIME_TOKEN is not a JWT: decoding its claims: %w", err)
	}
	var scopes []string
	var one string
	switch {
	case len(claims.Scp) == 0:
	case json.Unmarshal(claims.Scp, &one) == nil:
		scopes = strings.Fields(one)
	default:
		var many []string
		if json.Unmarshal(claims.Scp, &many) == nil {
			for _, s := range many {
				scopes = append(scopes, strings.Fields(s)...)
			}
		}
	}
	for _, scope := range scopes {
		p := strings.Split(scope, ":")
		if len(p) == 3 && p[0] == "Actions.Results" && p[1] != "" && p[2] != "" {
			return p[1], p[2], nil
		}
	}
	return "", "", &unavailableError{"artifacts need an ACTIONS_RUNTIME_TOKEN with an Actions.Results:<run>:<job> scope, and this one has none: are you on GHES? state falls back to the state ref"}
}

// Upload zips files (paths relative, "/"-separated; deterministic order and
// timestamps, so the same files give the same bytes) and uploads them as
// artifact name (see UploadFrom).
func (c *ArtifactClient) Upload(ctx context.Context, name string, files map[string][]byte) (id int64, size int64, err error) {
	return c.UploadFrom(ctx, name, mapSource(files))
}

// Source feeds an archive: it calls add once for each file, in the order
// the archive takes them (names relative, "/"-separated). add reads r to
// its end before it returns.
type Source func(add func(name string, r io.Reader) error) error

// mapSource is the Source of files, in name order.
func mapSource(files map[string][]byte) Source {
	return func(add func(string, io.Reader) error) error {
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if err := add(name, bytes.NewReader(files[name])); err != nil {
				return err
			}
		}
		return nil
	}
}

// UploadFrom zips what src gives into a temporary file (never whole in
// memory: a large log costs a buffer, not its size) and uploads it as
// artifact name: CreateArtifact, the zip in Azure blocks (Put Block, Put
// Block List) on the signed URL, FinalizeArtifact with its size and
// sha256. It returns the artifact id and the zip's size. A name this run
// already has fails with an error matching ErrArtifactExists.
func (c *ArtifactClient) UploadFrom(ctx context.Context, name string, src Source) (id int64, size int64, err error) {
	if err := validateArtifactName(name); err != nil {
		return 0, 0, err
	}
	tmp, err := os.CreateTemp(c.TempDir, "agent-loop-artifact-*.zip")
	if err != nil {
		return 0, 0, fmt.Errorf("uploading artifact %q: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	if err := zipTo(io.MultiWriter(tmp, h), src); err != nil {
		return 0, 0, fmt.Errorf("uploading artifact %q: %w", name, err)
	}
	fi, err := tmp.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("uploading artifact %q: %w", name, err)
	}
	size = fi.Size()

	create := createArtifactRequest{
		WorkflowRunBackendID:    c.runID,
		WorkflowJobRunBackendID: c.jobID,
		Name:                    name,
		Version:                 4,
	}
	if c.RetentionDays > 0 {
		create.ExpiresAt = time.Now().UTC().AddDate(0, 0, c.RetentionDays).Format(time.RFC3339)
	}
	reply, err := c.twirp(ctx, "CreateArtifact", create)
	if err != nil {
		return 0, 0, fmt.Errorf("uploading artifact %q: %w", name, err)
	}
	if !reply.boolean("ok") {
		return 0, 0, fmt.Errorf("uploading artifact %q: CreateArtifact answered ok=false", name)
	}
	uploadURL := reply.str("signed_upload_url")
	if uploadURL == "" {
		return 0, 0, fmt.Errorf("uploading artifact %q: CreateArtifact returned no signed_upload_url", name)
	}
	if err := c.putBlob(ctx, uploadURL, tmp, size); err != nil {
		return 0, 0, fmt.Errorf("uploading artifact %q: %w", name, err)
	}
	reply, err = c.twirp(ctx, "FinalizeArtifact", finalizeArtifactRequest{
		WorkflowRunBackendID:    c.runID,
		WorkflowJobRunBackendID: c.jobID,
		Name:                    name,
		Size:                    strconv.FormatInt(size, 10),
		Hash:                    "sha256:" + hex.EncodeToString(h.Sum(nil)),
	})
	if err != nil {
		return 0, 0, fmt.Errorf("uploading artifact %q: %w", name, err)
	}
	if !reply.boolean("ok") {
		return 0, 0, fmt.Errorf("uploading artifact %q: FinalizeArtifact answered ok=false", name)
	}
	id, err = reply.int64("artifact_id")
	if err != nil {
		return 0, 0, fmt.Errorf("uploading artifact %q: FinalizeArtifact: %w", name, err)
	}
	return id, size, nil
}

// List returns this workflow run's artifacts called name (all of them when
// name is ""), in the service's order.
func (c *ArtifactClient) List(ctx context.Context, name string) ([]Artifact, error) {
	req := listArtifactsRequest{WorkflowRunBackendID: c.runID, WorkflowJobRunBackendID: c.jobID}
	if name != "" {
		req.NameFilter = &name
	}
	reply, err := c.twirp(ctx, "ListArtifacts", req)
	if err != nil {
		return nil, fmt.Errorf("listing artifacts %q: %w", name, err)
	}
	var raws []twirpReply
	if raw := reply.field("artifacts"); len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &raws); err != nil {
			return nil, fmt.Errorf("listing artifacts %q: decoding the artifacts list: %w", name, err)
		}
	}
	out := make([]Artifact, 0, len(raws))
	for _, r := range raws {
		a := Artifact{
			Name:                    r.str("name"),
			Digest:                  r.str("digest"),
			WorkflowRunBackendID:    r.str("workflow_run_backend_id"),
			WorkflowJobRunBackendID: r.str("workflow_job_run_backend_id"),
		}
		var err error
		if a.ID, err = r.int64("database_id"); err != nil {
			return nil, fmt.Errorf("listing artifacts %q: artifact %q: %w", name, a.Name, err)
		}
		if a.Size, err = r.int64("size"); err != nil {
			return nil, fmt.Errorf("listing artifacts %q: artifact %q: %w", name, a.Name, err)
		}
		if ts := r.str("created_at"); ts != "" {
			if a.CreatedAt, err = time.Parse(time.RFC3339Nano, ts); err != nil {
				return nil, fmt.Errorf("listing artifacts %q: artifact %q: created_at: %w", name, a.Name, err)
			}
		}
		if name != "" && a.Name != name {
			continue // a service that ignores the filter
		}
		out = append(out, a)
	}
	return out, nil
}

// Download fetches artifact name of this workflow run (the newest when
// there are several) and returns its files. The zip is read from the signed
// URL without the runtime token, bounded by MaxDownloadSize (zip and
// unpacked content), checked against the digest when the service gives one,
// and refused when an entry would land outside the extraction directory
// (absolute paths, "..", backslashes, symbolic links).
func (c *ArtifactClient) Download(ctx context.Context, name string) (map[string][]byte, error) {
	arts, err := c.List(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("downloading artifact %q: %w", name, err)
	}
	if len(arts) == 0 {
		return nil, fmt.Errorf("downloading artifact %q: %w", name, ErrArtifactNotFound)
	}
	art := slices.MaxFunc(arts, func(a, b Artifact) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return int(min(max(a.ID-b.ID, -1), 1))
	})
	limit := c.maxDownload()
	if art.Size > limit {
		return nil, fmt.Errorf("downloading artifact %q: its size %d bytes exceeds the %d-byte limit; refusing", name, art.Size, limit)
	}
	reply, err := c.twirp(ctx, "GetSignedArtifactURL", getSignedArtifactURLRequest{
		WorkflowRunBackendID:    c.runID,
		WorkflowJobRunBackendID: c.jobID,
		Name:                    name,
	})
	if err != nil {
		return nil, fmt.Errorf("downloading artifact %q: %w", name, err)
	}
	signed := reply.str("signed_url")
	if signed == "" {
		return nil, fmt.Errorf("downloading artifact %q: GetSignedArtifactURL returned no signed_url", name)
	}
	data, err := c.getBlob(ctx, signed, limit)
	if err != nil {
		return nil, fmt.Errorf("downloading artifact %q: %w", name, err)
	}
	if want, ok := strings.CutPrefix(art.Digest, "sha256:"); ok {
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, want) {
			return nil, fmt.Errorf("downloading artifact %q: the zip's sha256 is %s, the service says %s; refusing a corrupted download", name, got, want)
		}
	}
	files, err := unzipFiles(data, limit)
	if err != nil {
		return nil, fmt.Errorf("downloading artifact %q: %w", name, err)
	}
	return files, nil
}

// Delete deletes artifact name of this workflow run and returns its id
// (used to replace the state artifact within one run, since names are
// unique per run).
func (c *ArtifactClient) Delete(ctx context.Context, name string) (int64, error) {
	reply, err := c.twirp(ctx, "DeleteArtifact", deleteArtifactRequest{
		WorkflowRunBackendID:    c.runID,
		WorkflowJobRunBackendID: c.jobID,
		Name:                    name,
	})
	if err != nil {
		return 0, fmt.Errorf("deleting artifact %q: %w", name, err)
	}
	if !reply.boolean("ok") {
		return 0, fmt.Errorf("deleting artifact %q: DeleteArtifact answered ok=false", name)
	}
	id, err := reply.int64("artifact_id")
	if err != nil {
		return 0, fmt.Errorf("deleting artifact %q: %w", name, err)
	}
	return id, nil
}

// Twirp requests: snake_case, int64 as strings (protojson), no mime_type
// (act's server rejects unknown fields).
type createArtifactRequest struct {
	WorkflowRunBackendID    string `json:"workflow_run_backend_id"`
	WorkflowJobRunBackendID string `json:"workflow_job_run_backend_id"`
	Name                    string `json:"name"`
	ExpiresAt               string `json:"expires_at,omitempty"`
	Version                 int    `json:"version"`
}

type finalizeArtifactRequest struct {
	WorkflowRunBackendID    string `json:"workflow_run_backend_id"`
	WorkflowJobRunBackendID string `json:"workflow_job_run_backend_id"`
	Name                    string `json:"name"`
	Size                    string `json:"size"`
	Hash                    string `json:"hash"`
}

type listArtifactsRequest struct {
	WorkflowRunBackendID    string  `json:"workflow_run_backend_id"`
	WorkflowJobRunBackendID string  `json:"workflow_job_run_backend_id"`
	NameFilter              *string `json:"name_filter,omitempty"`
}

type getSignedArtifactURLRequest struct {
	WorkflowRunBackendID    string `json:"workflow_run_backend_id"`
	WorkflowJobRunBackendID string `json:"workflow_job_run_backend_id"`
	Name                    string `json:"name"`
}

type deleteArtifactRequest = getSignedArtifactURLRequest

// twirpReply is a decoded JSON reply whose fields are found under their
// snake_case or camelCase names.
type twirpReply map[string]json.RawMessage

func (r twirpReply) field(snake string) json.RawMessage {
	if v, ok := r[snake]; ok {
		return v
	}
	return r[camel(snake)]
}

func (r twirpReply) str(snake string) string {
	var s string
	if raw := r.field(snake); raw != nil && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

func (r twirpReply) boolean(snake string) bool {
	var b bool
	if raw := r.field(snake); raw != nil && json.Unmarshal(raw, &b) == nil {
		return b
	}
	return false
}

// int64 reads an int64 sent as a string (protojson) or a number; absent is 0.
func (r twirpReply) int64(snake string) (int64, error) {
	raw := r.field(snake)
	if raw == nil || string(raw) == "null" {
		return 0, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("field %s is %s, want an integer", snake, raw)
	}
	return n, nil
}

func camel(snake string) string {
	parts := strings.Split(snake, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// maxReply bounds a Twirp reply body.
const maxReply = 16 << 20

func (c *ArtifactClient) twirp(ctx context.Context, method string, req any) (twirpReply, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the request: %w", method, err)
	}
	endpoint := c.baseURL + "/twirp/" + artifactService + "/" + method
	resp, err := c.send(ctx, method, maxReply, func() (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Authorization", "Bearer "+c.token)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json")
		return r, nil
	})
	if err != nil {
		var se *statusError
		if errors.As(err, &se) {
			te := &TwirpError{Method: method, Status: se.status}
			var tw struct {
				Code string `json:"code"`
				Msg  string `json:"msg"`
			}
			if json.Unmarshal(se.body, &tw) == nil {
				te.Code, te.Msg = tw.Code, tw.Msg
			} else {
				te.Msg = strings.TrimSpace(string(truncate(se.body, 200)))
			}
			if se.attempts > 1 {
				return nil, fmt.Errorf("after %d attempts: %w", se.attempts, te)
			}
			return nil, te
		}
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	var reply twirpReply
	if err := json.Unmarshal(resp, &reply); err != nil {
		return nil, fmt.Errorf("%s: decoding the reply %q: %w", method, truncate(resp, 200), err)
	}
	return reply, nil
}

// putBlob uploads data to a signed Azure blob URL in blocks (Put Block) and
// commits them (Put Block List), as @azure/storage-blob does; the signed URL
// carries its own authorisation, so no Authorization header is sent.
func (c *ArtifactClient) putBlob(ctx context.Context, signedURL string, data io.ReaderAt, size int64) error {
	blockSize := int64(c.BlockSize)
	if blockSize <= 0 {
		blockSize = 8 << 20
	}
	var ids []string
	for off, i := int64(0), 0; off < size || i == 0; i++ {
		end := min(off+blockSize, size)
		// Block ids must have the same length within a blob.
		id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "agent-loop-block-%08d", i))
		ids = append(ids, id)
		u := withQuery(signedURL, "comp=block&blockid="+url.QueryEscape(id))
		_, err := c.send(ctx, "Put Block", 1<<20, func() (*http.Request, error) {
			// A section reader of its own for each attempt (a retry
			// re-reads the block from its start).
			r, err := http.NewRequestWithContext(ctx, http.MethodPut, u, io.NewSectionReader(data, off, end-off))
			if err != nil {
				return nil, err
			}
			r.ContentLength = end - off
			r.Header.Set("Content-Type", "application/octet-stream")
			r.Header.Set("x-ms-version", azureVersion)
			return r, nil
		})
		if err != nil {
			return fmt.Errorf("uploading block %d of the zip: %w", i, blobError(err))
		}
		off = end
	}
	var list strings.Builder
	list.WriteString(`<?xml version="1.0" encoding="utf-8"?><BlockList>`)
	for _, id := range ids {
		list.WriteString("<Latest>" + id + "</Latest>")
	}
	list.WriteString("</BlockList>")
	u := withQuery(signedURL, "comp=blocklist")
	_, err := c.send(ctx, "Put Block List", 1<<20, func() (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPut, u, strings.NewReader(list.String()))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/xml")
		r.Header.Set("x-ms-version", azureVersion)
		r.Header.Set("x-ms-blob-content-type", "application/zip")
		return r, nil
	})
	if err != nil {
		return fmt.Errorf("committing the zip's blocks: %w", blobError(err))
	}
	return nil
}

func (c *ArtifactClient) getBlob(ctx context.Context, signedURL string, limit int64) ([]byte, error) {
	data, err := c.send(ctx, "GET artifact zip", limit, func() (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, signedURL, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("fetching the zip from the signed URL: %w", blobError(err))
	}
	return data, nil
}

func blobError(err error) error {
	var se *statusError
	if errors.As(err, &se) {
		return fmt.Errorf("blob storage answered HTTP %d after %d attempt(s): %s", se.status, se.attempts, truncate(se.body, 300))
	}
	return err
}

func withQuery(raw, extra string) string {
	if strings.Contains(raw, "?") {
		return raw + "&" + extra
	}
	return raw + "?" + extra
}

// statusError is a non-2xx reply (after retries when it was retryable).
type statusError struct {
	status   int
	body     []byte
	attempts int
}

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.status, truncate(e.body, 200))
}

// errTooLarge is returned when a body exceeds its bound.
type errTooLarge struct{ limit int64 }

func (e *errTooLarge) Error() string {
	return fmt.Sprintf("the reply exceeds the %d-byte limit; refusing it", e.limit)
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// send runs the request build makes, retrying 429, 5xx and network errors
// up to MaxAttempts times with exponential backoff, and returns the body of
// the 2xx reply (at most limit bytes).
func (c *ArtifactClient) send(ctx context.Context, what string, limit int64, build func() (*http.Request, error)) ([]byte, error) {
	attempts := c.MaxAttempts
	if attempts <= 0 {
		attempts = 5
	}
	var last error
	for attempt := 1; ; attempt++ {
		req, err := build()
		if err != nil {
			return nil, fmt.Errorf("%s: building the request: %w", what, err)
		}
		req.Header.Set("User-Agent", userAgent)
		var retryAfter time.Duration
		resp, err := c.httpClient.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s: %w", what, ctx.Err())
			}
			last = err
		} else {
			body, rerr := readBounded(resp.Body, limit)
			resp.Body.Close()
			switch {
			case rerr != nil && isTooLarge(rerr):
				return nil, fmt.Errorf("%s: %w", what, rerr)
			case resp.StatusCode >= 200 && resp.StatusCode < 300 && rerr == nil:
				return body, nil
			case resp.StatusCode >= 200 && resp.StatusCode < 300:
				last = rerr // cut off mid-body: retry
			case retryableStatus(resp.StatusCode):
				last = &statusError{status: resp.StatusCode, body: body, attempts: attempt}
				retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
			default:
				return nil, &statusError{status: resp.StatusCode, body: body, attempts: attempt}
			}
		}
		if attempt >= attempts {
			var se *statusError
			if errors.As(last, &se) {
				return nil, last
			}
			return nil, fmt.Errorf("%s: after %d attempts: %w", what, attempt, last)
		}
		wait := c.backoff(attempt)
		if retryAfter > wait {
			wait = retryAfter
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), last)
		case <-t.C:
		}
	}
}

func (c *ArtifactClient) backoff(attempt int) time.Duration {
	base := c.RetryWait
	if base <= 0 {
		base = time.Second
	}
	d := base << (attempt - 1)
	// ±20% jitter so parallel jobs do not retry in step.
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && secs > 0 {
		return min(time.Duration(secs)*time.Second, time.Minute)
	}
	return 0
}

func readBounded(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return data, err
	}
	if int64(len(data)) > limit {
		return nil, &errTooLarge{limit: limit}
	}
	return data, nil
}

func isTooLarge(err error) bool {
	var e *errTooLarge
	return errors.As(err, &e)
}

func truncate(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append(slices.Clip(b[:n]), "..."...)
}

func (c *ArtifactClient) maxDownload() int64 {
	if c.MaxDownloadSize > 0 {
		return c.MaxDownloadSize
	}
	return MaxArtifactDownload
}

// The characters @actions/artifact refuses in artifact names; paths may
// also not contain them, except "/".
const invalidNameChars = "\":<>|*?\r\n\\/"

func validateArtifactName(name string) error {
	if name == "" {
		return errors.New("artifact name is empty: give a name such as agent-loop-state")
	}
	if i := strings.IndexAny(name, invalidNameChars); i >= 0 {
		return fmt.Errorf("artifact name %q contains %q, which artifacts do not allow (none of \" : < > | * ? \\r \\n \\ /)", name, name[i])
	}
	return nil
}

func validateArchivePath(p string) error {
	if i := strings.IndexAny(p, strings.TrimSuffix(invalidNameChars, "/")+"\x00"); i >= 0 {
		return fmt.Errorf("file name %q contains %q, which artifacts do not allow", p, p[i])
	}
	if p == "." || !fs.ValidPath(p) {
		return fmt.Errorf("file name %q is not a clean relative path (no leading /, no . or .. elements, no empty elements)", p)
	}
	return nil
}

// zipEpoch is the timestamp of every entry, so equal files zip to equal
// bytes.
var zipEpoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

func zipFiles(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := zipTo(&buf, mapSource(files)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipTo writes the zip of what src gives to w (deterministic timestamps
// and modes), refusing unsafe and repeated names.
func zipTo(w io.Writer, src Source) error {
	zw := zip.NewWriter(w)
	seen := map[string]bool{}
	err := src(func(name string, r io.Reader) error {
		if err := validateArchivePath(name); err != nil {
			return err
		}
		if seen[name] {
			return fmt.Errorf("zipping %s: the name is given twice", name)
		}
		seen[name] = true
		h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: zipEpoch}
		h.SetMode(0o644)
		f, err := zw.CreateHeader(h)
		if err != nil {
			return fmt.Errorf("zipping %s: %w", name, err)
		}
		if _, err := io.Copy(f, r); err != nil {
			return fmt.Errorf("zipping %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("finishing the zip: %w", err)
	}
	return nil
}

// unzipFiles unpacks a zip held in memory, refusing entries that could land
// outside the extraction directory (zip-slip), symbolic links, duplicates,
// and more than limit bytes of content in all.
func unzipFiles(data []byte, limit int64) (map[string][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("reading the zip: %w", err)
	}
	files := make(map[string][]byte, len(zr.File))
	remaining := limit
	for _, f := range zr.File {
		mode := f.Mode()
		if mode.IsDir() {
			if err := validateArchivePath(strings.TrimSuffix(f.Name, "/")); err != nil {
				return nil, fmt.Errorf("zip entry: %w", err)
			}
			continue
		}
		if err := validateArchivePath(f.Name); err != nil {
			return nil, fmt.Errorf("zip entry: %w", err)
		}
		if mode&fs.ModeSymlink != 0 || !mode.IsRegular() {
			return nil, fmt.Errorf("zip entry %q is not a regular file (%s); refusing it", f.Name, mode.Type())
		}
		if _, dup := files[f.Name]; dup {
			return nil, fmt.Errorf("zip entry %q appears twice; refusing the archive", f.Name)
		}
		if f.UncompressedSize64 > uint64(remaining) {
			return nil, fmt.Errorf("zip entry %q (%d bytes) exceeds the %d-byte limit on unpacked content; refusing it", f.Name, f.UncompressedSize64, limit)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("zip entry %q: %w", f.Name, err)
		}
		content, err := io.ReadAll(io.LimitReader(rc, remaining+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("zip entry %q: %w", f.Name, err)
		}
		if int64(len(content)) > remaining {
			return nil, fmt.Errorf("zip entry %q unpacks past the %d-byte limit on unpacked content; refusing it", f.Name, limit)
		}
		remaining -= int64(len(content))
		files[f.Name] = content
	}
	return files, nil
}
