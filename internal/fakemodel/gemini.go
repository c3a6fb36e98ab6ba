package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The Gemini API (generativelanguage v1beta), as the Gemini CLI speaks it
// with GOOGLE_GEMINI_BASE_URL: POST /v1beta/models/{model}:streamGenerateContent
// (?alt=sse), :generateContent and :countTokens, key in x-goog-api-key.

type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			FunctionResponse json.RawMessage `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

func geminiStatus(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable, 529:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}

func writeGeminiError(w http.ResponseWriter, e *Error) {
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	msg := e.Message
	if e.Status == http.StatusUnauthorized && msg == Unauthorized().Message {
		msg = "API key not valid. Please pass a valid API key."
	}
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	writeJSON(w, e.Status, map[string]any{"error": map[string]any{"code": e.Status, "message": msg, "status": geminiStatus(e.Status)}})
}

// gemini serves /v1beta/models/{model}:{method}.
func (s *Server) gemini(w http.ResponseWriter, r *http.Request, rec Request) {
	rec.API = "gemini"
	rest := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), "/v1/models/")
	model, method, _ := strings.Cut(rest, ":")
	rec.Model = model
	if method == "countTokens" {
		s.record(rec)
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": approxTokens(rec.Body)})
		return
	}
	if method != "generateContent" && method != "streamGenerateContent" {
		rec.API = "unknown"
		s.record(rec)
		http.Error(w, "fakemodel: no such Gemini method "+method, http.StatusNotFound)
		return
	}
	rec.Stream = method == "streamGenerateContent"
	var req geminiRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		s.record(rec)
		writeGeminiError(w, &Error{Status: http.StatusBadRequest, Message: "fakemodel: request body is not JSON: " + err.Error()})
		return
	}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			rec.Tools = append(rec.Tools, f.Name)
		}
	}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if len(p.FunctionResponse) > 0 && string(p.FunctionResponse) != "null" {
				rec.ToolResults++
			}
		}
	}
	step, version := s.pick(&rec)
	s.record(rec)
	if step.Error != nil {
		writeGeminiError(w, step.Error)
		return
	}
	if version == "" {
		version = model
	}
	id := s.nextID()
	in, out := usage(step)
	var calls []any
	for i, tc := range step.ToolCalls {
		args := tc.Input
		if args == nil {
			args = map[string]any{}
		}
		calls = append(calls, map[string]any{"functionCall": map[string]any{"id": fmt.Sprintf("call_fake%04d_%d", id, i), "name": tc.Name, "args": args}})
	}
	chunk := func(parts []any, final bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		c := map[string]any{"candidates": []any{cand}, "modelVersion": version, "responseId": fmt.Sprintf("resp_fake%04d", id)}
		if final {
			cand["finishReason"] = "STOP"
			c["usageMetadata"] = map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out}
		}
		return c
	}
	if !rec.Stream {
		var parts []any
		if step.Text != "" {
			parts = append(parts, map[string]any{"text": step.Text})
		}
		writeJSON(w, http.StatusOK, chunk(append(parts, calls...), true))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	for _, c := range chunks(step.Text, 3) {
		send(chunk([]any{map[string]any{"text": c}}, false))
	}
	if calls == nil {
		calls = []any{map[string]any{"text": ""}}
	}
	send(chunk(calls, true))
}
