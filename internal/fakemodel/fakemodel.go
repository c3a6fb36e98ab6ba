// Package fakemodel runs fake model servers for tests: the Anthropic Messages
// API, the OpenAI Responses API and the Gemini API on 127.0.0.1, streaming
// over SSE, that answer from a Script instead of a model. A real agent CLI
// pointed at one (ANTHROPIC_BASE_URL, a Codex model provider's base_url,
// GOOGLE_GEMINI_BASE_URL) runs for real: the
// script makes the "model" call the CLI's own tools (Write, Bash, shell,
// apply_patch), the CLI executes them on disk, sends the results back, and
// the script answers the next turn.
//
// A Script answers by the state of the conversation, not by timing: step i
// answers a request whose history holds i tool results, so retries, side
// requests and slow machines do not shift the script. Every request is
// recorded (path, headers, model, tools offered) for assertions, and the
// server doubles as an HTTP proxy that refuses and records everything sent
// to it, so a test can prove that no request left 127.0.0.1.
package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Script says what the fake model does, turn by turn.
type Script struct {
	// Steps answers the requests of the main conversation (those that offer
	// tools): Steps[i] answers a request whose history holds i tool results.
	// Requests past the last step get the last step again.
	Steps []Step
	// Side answers requests that offer no tools (titles, summaries, topic
	// detection, quota probes). The zero Step answers "ok".
	Side Step
	// Model is the model name reported back; empty echoes the request's.
	Model string
}

// Step is one answer of the fake model.
type Step struct {
	// Text is assistant text, sent before the tool calls.
	Text string
	// ToolCalls are the tools the model calls, in order.
	ToolCalls []ToolCall
	// Error answers with an HTTP error instead (Text and ToolCalls ignored).
	Error *Error
	// InputTokens and OutputTokens are the usage reported; zero reports
	// DefaultInputTokens and DefaultOutputTokens.
	InputTokens  int64
	OutputTokens int64
}

// Usage reported when a Step leaves it zero.
const (
	DefaultInputTokens  = 1200
	DefaultOutputTokens = 80
)

// ToolCall is one tool the model calls.
type ToolCall struct {
	Name string
	// Input is the JSON object of arguments (function tools, Anthropic tools).
	Input map[string]any
	// Custom, when not empty, makes an OpenAI custom (freeform) tool call
	// whose input is this text (Codex's apply_patch grammar tool).
	Custom string
}

// Error is an HTTP error answer.
type Error struct {
	Status int
	// RetryAfter is sent as the retry-after header when not empty.
	RetryAfter string
	// Type is the API's error type (authentication_error, rate_limit_error,
	// overloaded_error...); empty picks one from Status.
	Type    string
	Message string
}

// Unauthorized is a 401 with an invalid-key message.
func Unauthorized() *Error {
	return &Error{Status: http.StatusUnauthorized, Type: "authentication_error", Message: "invalid x-api-key"}
}

// RateLimited is a 429 with retry-after seconds.
func RateLimited(retryAfter int) *Error {
	return &Error{Status: http.StatusTooManyRequests, Type: "rate_limit_error", RetryAfter: fmt.Sprint(retryAfter),
		Message: "This request would exceed your organization's rate limit. Please try again later."}
}

// Overloaded is Anthropic's 529.
func Overloaded() *Error {
	return &Error{Status: 529, Type: "overloaded_error", Message: "Overloaded"}
}

// Request is one request the server saw.
type Request struct {
	Time   time.Time
	Method string
	Path   string
	Host   string
	Header http.Header
	// API is "anthropic", "openai", "gemini", "proxy" (a request that tried
	// to leave through the server as a proxy), "probe" or "unknown".
	API    string
	Model  string
	Stream bool
	// Tools lists the names of the tools offered.
	Tools []string
	// ToolResults is the number of tool results in the history.
	ToolResults int
	// Step is the index of the step that answered, -1 for a side request.
	Step int
	// Body is the request body (at most MaxBody bytes).
	Body []byte
}

// MaxBody bounds the recorded body of one request.
const MaxBody = 8 << 20

// APIKey returns the credential the request carried: x-api-key,
// x-goog-api-key, or the bearer token of Authorization.
func (r Request) APIKey() string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	if k := r.Header.Get("X-Goog-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// Server is a running fake model server.
type Server struct {
	// URL is the server's root, e.g. http://127.0.0.1:41234: the Anthropic
	// and Gemini base URL, the OpenAI base URL without /v1, and the proxy URL.
	URL string

	srv    *httptest.Server
	mu     sync.Mutex
	script Script
	reqs   []Request
	seq    int
}

// Start starts a server on 127.0.0.1 answering from script.
func Start(script Script) *Server {
	s := &Server{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// OpenAIBaseURL is the base URL for OpenAI clients (with /v1).
func (s *Server) OpenAIBaseURL() string { return s.URL + "/v1" }

// SetScript replaces the script (for a test that changes the model's mind).
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = script
}

// Requests returns every request seen so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Conversation returns the requests of the main conversation (not side
// requests, not escapes).
func (s *Server) Conversation() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if (r.API == "anthropic" || r.API == "openai" || r.API == "gemini") && r.Step >= 0 {
			out = append(out, r)
		}
	}
	return out
}

// Escaped returns the requests that did not go to a model API of this
// server: proxy requests for other hosts and unknown paths.
func (s *Server) Escaped() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.API == "proxy" || r.API == "unknown" {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
}

func (s *Server) nextID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

func (s *Server) currentScript() Script {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.script
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, MaxBody))
	rec := Request{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Host: r.Host, Header: r.Header.Clone(), Body: body, Step: -1}

	// A proxy request: CONNECT host:443, or an absolute URI for another host.
	if r.Method == http.MethodConnect || (r.URL.IsAbs() && r.URL.Host != strings.TrimPrefix(s.URL, "http://")) {
		rec.API = "proxy"
		if r.Method == http.MethodConnect {
			rec.Path = r.Host
		} else {
			rec.Path = r.URL.String()
		}
		s.record(rec)
		http.Error(w, "fakemodel: no request may leave 127.0.0.1", http.StatusForbidden)
		return
	}

	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodPost && path == "/v1/messages":
		s.anthropicMessages(w, rec)
	case r.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		rec.API = "anthropic"
		s.record(rec)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": approxTokens(body)})
	case r.Method == http.MethodPost && (path == "/v1/responses" || path == "/responses"):
		s.openaiResponses(w, rec)
	case r.Method == http.MethodPost && strings.HasPrefix(path, "/v1beta/models/"):
		s.gemini(w, r, rec)
	case r.Method == http.MethodGet && (path == "/v1/models" || path == "/models"):
		rec.API = "openai"
		s.record(rec)
		model := s.currentScript().Model
		if model == "" {
			model = "fake-model"
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": model, "object": "model", "created": 0, "owned_by": "fakemodel"}}, "models": []any{}})
	case r.Method == http.MethodHead || (r.Method == http.MethodGet && path == ""):
		// Connectivity probes.
		rec.API = "probe"
		s.record(rec)
		w.WriteHeader(http.StatusOK)
	default:
		rec.API = "unknown"
		s.record(rec)
		http.Error(w, "fakemodel: no such endpoint "+r.Method+" "+r.URL.Path, http.StatusNotFound)
	}
}

// pick chooses the step for a request of the conversation.
func (s *Server) pick(rec *Request) (Step, string) {
	sc := s.currentScript()
	if len(rec.Tools) == 0 || len(sc.Steps) == 0 {
		rec.Step = -1
		st := sc.Side
		if st.Text == "" && len(st.ToolCalls) == 0 && st.Error == nil {
			st.Text = "ok"
		}
		return st, sc.Model
	}
	i := rec.ToolResults
	if i >= len(sc.Steps) {
		i = len(sc.Steps) - 1
	}
	rec.Step = i
	return sc.Steps[i], sc.Model
}

func usage(st Step) (in, out int64) {
	in, out = st.InputTokens, st.OutputTokens
	if in == 0 {
		in = DefaultInputTokens
	}
	if out == 0 {
		out = DefaultOutputTokens
	}
	return in, out
}

func approxTokens(body []byte) int {
	n := len(body) / 4
	if n < 1 {
		n = 1
	}
	return n
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events and flushes after each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (e *sse) event(name string, data any) {
	var buf bytes.Buffer
	b, _ := json.Marshal(data)
	fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", name, b)
	_, _ = e.w.Write(buf.Bytes())
	if e.f != nil {
		e.f.Flush()
	}
}

func mustJSON(v any) string {
	if v == nil {
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// chunks splits s into up to n pieces, so deltas really arrive in parts.
func chunks(s string, n int) []string {
	if s == "" {
		return nil
	}
	size := (len(s) + n - 1) / n
	if size < 1 {
		size = 1
	}
	var out []string
	for len(s) > size {
		cut := size
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
