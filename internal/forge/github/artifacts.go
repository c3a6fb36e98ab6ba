package github

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// Bounds of an artifact download (the loop state is a few MB at most).
const (
	MaxArtifactBytes = 100 << 20 // the zip, and the sum of its uncompressed files
	maxArtifactFiles = 10000
)

// Artifact is a workflow run artifact (of an earlier run, for resume).
type Artifact struct {
	ID        int64
	Name      string
	RunID     int64
	CreatedAt time.Time
	Expired   bool
	Size      int64
}

// FindArtifacts lists the unexpired artifacts of the repository named
// exactly name, newest first. It needs `actions: read` (the default of
// GITHUB_TOKEN unless the workflow narrows `permissions:`). go-github v62 has
// no name filter, so the request is built here.
func (c *Client) FindArtifacts(ctx context.Context, name string) ([]Artifact, error) {
	if name == "" {
		return nil, errors.New("finding artifacts: the name is empty")
	}
	q := url.Values{"name": {name}, "per_page": {"100"}}
	var found []Artifact
	for page := 1; page <= maxPages; page++ {
		q.Set("page", strconv.Itoa(page))
		var list gh.ArtifactList
		resp, err := c.do(ctx, http.MethodGet, c.repoPath("actions", "artifacts")+"?"+q.Encode(), nil, &list, needActionsRead)
		if err != nil {
			return nil, fmt.Errorf("finding artifacts named %q: %w", name, err)
		}
		for _, a := range list.Artifacts {
			if a.GetName() != name || a.GetExpired() {
				continue
			}
			found = append(found, Artifact{
				ID:        a.GetID(),
				Name:      a.GetName(),
				RunID:     a.GetWorkflowRun().GetID(),
				CreatedAt: a.GetCreatedAt().Time,
				Expired:   a.GetExpired(),
				Size:      a.GetSizeInBytes(),
			})
		}
		if resp == nil || resp.NextPage == 0 || len(list.Artifacts) == 0 {
			break
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		if !found[i].CreatedAt.Equal(found[j].CreatedAt) {
			return found[i].CreatedAt.After(found[j].CreatedAt)
		}
		return found[i].ID > found[j].ID
	})
	return found, nil
}

// DownloadArtifact downloads artifact id and returns its files by slash
// path. GitHub answers the zip request with a redirect to a signed blob URL,
// which is fetched by a separate HTTP client that never sends the token.
// The zip and its content are bounded by MaxArtifactBytes; paths that would
// escape a directory are refused.
func (c *Client) DownloadArtifact(ctx context.Context, id int64) (map[string][]byte, error) {
	rel := c.repoPath("actions", "artifacts", strconv.FormatInt(id, 10), "zip")
	ec := errorContext{endpoint: endpoint(http.MethodGet, rel), need: []string{needActionsRead}}
	req, err := c.gh.NewRequest(http.MethodGet, rel, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ec.endpoint, err)
	}
	resp, err := c.api.Do(req.WithContext(ctx))
	if err != nil {
		return nil, c.wrapErr(ec, err)
	}
	defer resp.Body.Close()

	var data []byte
	switch resp.StatusCode {
	case http.StatusFound, http.StatusMovedPermanently, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
		if err != nil || resp.Header.Get("Location") == "" {
			return nil, fmt.Errorf("%s: redirect without a usable Location", ec.endpoint)
		}
		data, err = c.fetchBlob(ctx, loc)
		if err != nil {
			return nil, fmt.Errorf("downloading artifact %d: %w", id, err)
		}
	case http.StatusOK:
		if data, err = readBounded(resp); err != nil {
			return nil, fmt.Errorf("%s: %w", ec.endpoint, err)
		}
	default:
		return nil, fmt.Errorf("downloading artifact %d: %w", id, c.wrapErr(ec, gh.CheckResponse(resp)))
	}
	files, err := Unzip(data, MaxArtifactBytes)
	if err != nil {
		return nil, fmt.Errorf("artifact %d: %w", id, err)
	}
	return files, nil
}

// fetchBlob GETs a signed URL without any credentials, retrying 5xx and
// network errors a few times.
func (c *Client) fetchBlob(ctx context.Context, u *url.URL) ([]byte, error) {
	return c.fetchSigned(ctx, u, readBounded)
}

// fetchSigned GETs a signed URL without any credentials and reads a 200
// answer with read, retrying 5xx and network errors a few times.
func (c *Client) fetchSigned(ctx context.Context, u *url.URL, read func(*http.Response) ([]byte, error)) ([]byte, error) {
	host := u.Scheme + "://" + u.Host // never log the signed query
	backoff := serverBackoff
	var lastErr error
	for attempt := 1; attempt <= maxServerAttempts; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, fmt.Errorf("blob at %s: %w", host, err)
		}
		resp, err := c.blob.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var uerr *url.Error
			if errors.As(err, &uerr) {
				err = uerr.Err // its text holds the signed URL
			}
			lastErr = fmt.Errorf("blob at %s: %w", host, err)
		} else {
			if resp.StatusCode == http.StatusOK {
				data, err := read(resp)
				resp.Body.Close()
				if err != nil {
					return nil, fmt.Errorf("blob at %s: %w", host, err)
				}
				return data, nil
			}
			discard(resp)
			lastErr = fmt.Errorf("blob at %s: %s", host, resp.Status)
			if resp.StatusCode < 500 {
				return nil, lastErr
			}
		}
		if attempt < maxServerAttempts {
			if err := c.sleep(ctx, backoff); err != nil {
				return nil, err
			}
			backoff *= 2
		}
	}
	return nil, lastErr
}

func readBounded(resp *http.Response) ([]byte, error) {
	if resp.ContentLength > MaxArtifactBytes {
		return nil, fmt.Errorf("the artifact is %d bytes, more than the %d allowed", resp.ContentLength, MaxArtifactBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxArtifactBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the artifact: %w", err)
	}
	if len(data) > MaxArtifactBytes {
		return nil, fmt.Errorf("the artifact is more than the %d bytes allowed", MaxArtifactBytes)
	}
	return data, nil
}

// Unzip reads a zip archive into memory: files by cleaned slash path,
// directories skipped. It refuses paths that are absolute, contain "..",
// backslashes or NUL, symbolic links, duplicate names, more than 10,000
// files, and more than maxTotal uncompressed bytes in all (whatever the
// headers claim).
func Unzip(data []byte, maxTotal int64) (map[string][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("reading the zip: %w", err)
	}
	if len(zr.File) > maxArtifactFiles {
		return nil, fmt.Errorf("the zip holds %d files, more than the %d allowed", len(zr.File), maxArtifactFiles)
	}
	files := make(map[string][]byte, len(zr.File))
	var total int64
	for _, f := range zr.File {
		name, err := safeZipPath(f.Name)
		if err != nil {
			return nil, err
		}
		mode := f.Mode()
		if mode.IsDir() || strings.HasSuffix(f.Name, "/") {
			continue
		}
		if name == "." {
			return nil, fmt.Errorf("zip entry %q: unsafe path (no file name)", f.Name)
		}
		if mode&fs.ModeSymlink != 0 || !mode.IsRegular() {
			return nil, fmt.Errorf("zip entry %q: only regular files are accepted (it is %s)", f.Name, mode.Type())
		}
		if _, dup := files[name]; dup {
			return nil, fmt.Errorf("zip entry %q: the name appears twice", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("zip entry %q: %w", f.Name, err)
		}
		content, err := io.ReadAll(io.LimitReader(rc, maxTotal-total+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("zip entry %q: %w", f.Name, err)
		}
		total += int64(len(content))
		if total > maxTotal {
			return nil, fmt.Errorf("the zip's files are more than the %d bytes allowed", maxTotal)
		}
		files[name] = content
	}
	return files, nil
}

// safeZipPath returns the cleaned name of a zip entry, or an error when
// writing it under a directory could escape that directory.
func safeZipPath(name string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("zip entry %q: unsafe path (%s)", name, why)
	}
	switch {
	case name == "":
		return bad("empty")
	case strings.ContainsAny(name, "\\\x00"):
		return bad("backslash or NUL")
	case strings.HasPrefix(name, "/"):
		return bad("absolute")
	case len(name) >= 2 && name[1] == ':':
		return bad("drive letter")
	}
	for _, elem := range strings.Split(name, "/") {
		if elem == ".." {
			return bad("contains ..")
		}
	}
	return path.Clean(name), nil
}
