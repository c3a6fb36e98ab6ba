package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropicRequest is the part of a Messages API request the fake reads.
type anthropicRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Tools  []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// countAnthropicToolResults counts tool_result blocks in the history.
func countAnthropicToolResults(req anthropicRequest) int {
	n := 0
	for _, m := range req.Messages {
		var blocks []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				n++
			}
		}
	}
	return n
}

func anthropicErrorType(e *Error) string {
	if e.Type != "" {
		return e.Type
	}
	switch e.Status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	case http.StatusBadRequest:
		return "invalid_request_error"
	}
	return "api_error"
}

func writeAnthropicError(w http.ResponseWriter, e *Error) {
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	w.Header().Set("X-Should-Retry", fmt.Sprint(e.Status == http.StatusTooManyRequests || e.Status >= 500))
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	writeJSON(w, e.Status, map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(e), "message": msg}})
}

func (s *Server) anthropicMessages(w http.ResponseWriter, rec Request) {
	rec.API = "anthropic"
	var req anthropicRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		s.record(rec)
		writeAnthropicError(w, &Error{Status: http.StatusBadRequest, Message: "fakemodel: request body is not JSON: " + err.Error()})
		return
	}
	rec.Model, rec.Stream = req.Model, req.Stream
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.Name)
	}
	rec.ToolResults = countAnthropicToolResults(req)
	step, model := s.pick(&rec)
	s.record(rec)
	if step.Error != nil {
		writeAnthropicError(w, step.Error)
		return
	}
	if model == "" {
		model = req.Model
	}
	id := s.nextID()
	msgID := fmt.Sprintf("msg_fake%04d", id)
	in, out := usage(step)
	stop := "end_turn"
	if len(step.ToolCalls) > 0 {
		stop = "tool_use"
	}
	type block = map[string]any
	var content []block
	if step.Text != "" {
		content = append(content, block{"type": "text", "text": step.Text})
	}
	for i, tc := range step.ToolCalls {
		input := tc.Input
		if input == nil {
			input = map[string]any{}
		}
		content = append(content, block{"type": "tool_use", "id": fmt.Sprintf("toolu_fake%04d_%d", id, i), "name": tc.Name, "input": input})
	}
	u := map[string]any{"input_tokens": in, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

	if !req.Stream {
		if content == nil {
			content = []block{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": u})
		return
	}

	e := newSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	e.event("ping", map[string]any{"type": "ping"})
	for i, b := range content {
		switch b["type"] {
		case "text":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, c := range chunks(b["text"].(string), 3) {
				e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": c}})
			}
		case "tool_use":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{
				"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			for _, c := range chunks(mustJSON(b["input"]), 3) {
				e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": c}})
			}
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	e.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"input_tokens": in, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}
