// Package redact removes secrets (tokens, provider keys) from text before it
// reaches a log, a transcript, a report or an artifact.
package redact

import (
	"encoding/base64"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Mask replaces a secret.
const Mask = "***"

// Set is a set of secrets. The zero value redacts nothing.
type Set struct {
	mu      sync.RWMutex
	secrets []string
}

// Add adds secrets (and their base64 and URL-encoded forms); values shorter
// than 4 bytes are ignored (redacting "a" would destroy every log).
func (s *Set) Add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range secrets {
		v = strings.TrimSpace(v)
		if len(v) < 4 {
			continue
		}
		for _, f := range []string{v, base64.StdEncoding.EncodeToString([]byte(v)), url.QueryEscape(v)} {
			if !contains(s.secrets, f) {
				s.secrets = append(s.secrets, f)
			}
		}
	}
	// Longest first, so a secret containing another is masked whole.
	sort.Slice(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// String returns s with every secret replaced by ***.
func (s *Set) String(text string) string {
	if s == nil {
		return text
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.secrets {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Mask)
		}
	}
	return text
}

func (s *Set) maxLen() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.secrets) == 0 {
		return 0
	}
	return len(s.secrets[0])
}

// Writer returns a writer that redacts what it passes to w. It holds back at
// most the length of the longest secret, so a secret split across two writes
// is still caught; Close flushes the rest.
func (s *Set) Writer(w io.Writer) io.WriteCloser { return &writer{set: s, w: w} }

type writer struct {
	set *Set
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

func (r *writer) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	hold := r.set.maxLen() - 1
	if hold < 0 {
		hold = 0
	}
	// Every complete secret in the buffer is masked first; what may still be
	// the start of a secret is at most hold bytes long and stays behind.
	masked := r.set.String(string(r.buf))
	cut := len(masked) - hold
	if cut <= 0 {
		r.buf = append(r.buf[:0], masked...)
		return len(p), nil
	}
	r.buf = append(r.buf[:0], masked[cut:]...)
	if _, err := io.WriteString(r.w, masked[:cut]); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (r *writer) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) == 0 {
		return nil
	}
	out := r.set.String(string(r.buf))
	r.buf = r.buf[:0]
	_, err := io.WriteString(r.w, out)
	return err
}
