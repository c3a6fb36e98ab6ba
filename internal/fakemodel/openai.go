package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// openaiRequest is the part of a Responses API request the fake reads.
type openaiRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Input json.RawMessage `json:"input"`
}

// countOpenAIToolResults counts tool outputs in the input items.
func countOpenAIToolResults(req openaiRequest) int {
	var items []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(req.Input, &items) != nil {
		return 0 // a plain string
	}
	n := 0
	for _, it := range items {
		switch it.Type {
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output", "computer_call_output":
			n++
		}
	}
	return n
}

// additionalTools lists the tools of "additional_tools" input items
// (namespaces flattened).
func additionalTools(req openaiRequest) []string {
	type tool struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Tools []tool `json:"tools"`
	}
	var items []struct {
		Type  string `json:"type"`
		Tools []tool `json:"tools"`
	}
	if json.Unmarshal(req.Input, &items) != nil {
		return nil
	}
	var names []string
	var walk func([]tool)
	walk = func(ts []tool) {
		for _, t := range ts {
			if len(t.Tools) > 0 {
				walk(t.Tools)
			} else if t.Name != "" {
				names = append(names, t.Name)
			}
		}
	}
	for _, it := range items {
		if it.Type == "additional_tools" {
			walk(it.Tools)
		}
	}
	return names
}

func writeOpenAIError(w http.ResponseWriter, e *Error) {
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	typ, code := e.Type, ""
	switch e.Status {
	case http.StatusUnauthorized:
		typ, code = "invalid_request_error", "invalid_api_key"
	case http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	case 529, http.StatusServiceUnavailable:
		typ, code = "server_error", "server_is_overloaded"
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.Status == http.StatusUnauthorized && e.Message == Unauthorized().Message {
		msg = "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."
	}
	writeJSON(w, e.Status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

func (s *Server) openaiResponses(w http.ResponseWriter, rec Request) {
	rec.API = "openai"
	var req openaiRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		s.record(rec)
		writeOpenAIError(w, &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "fakemodel: request body is not JSON: " + err.Error()})
		return
	}
	rec.Model, rec.Stream = req.Model, req.Stream
	for _, t := range req.Tools {
		name := t.Name
		if name == "" {
			name = t.Type // local_shell, web_search...
		}
		rec.Tools = append(rec.Tools, name)
	}
	if len(rec.Tools) == 0 {
		// Codex's code mode offers its tools as an input item instead.
		rec.Tools = additionalTools(req)
	}
	rec.ToolResults = countOpenAIToolResults(req)
	step, model := s.pick(&rec)
	s.record(rec)
	if step.Error != nil {
		writeOpenAIError(w, step.Error)
		return
	}
	if model == "" {
		model = req.Model
	}
	id := s.nextID()
	respID := fmt.Sprintf("resp_fake%04d", id)
	in, out := usage(step)

	type item = map[string]any
	var output []item
	if step.Text != "" {
		output = append(output, item{"id": fmt.Sprintf("msg_fake%04d", id), "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": step.Text, "annotations": []any{}}}})
	}
	for i, tc := range step.ToolCalls {
		callID := fmt.Sprintf("call_fake%04d_%d", id, i)
		if tc.Custom != "" {
			output = append(output, item{"id": fmt.Sprintf("ctc_fake%04d_%d", id, i), "type": "custom_tool_call", "status": "completed",
				"call_id": callID, "name": tc.Name, "input": tc.Custom})
			continue
		}
		output = append(output, item{"id": fmt.Sprintf("fc_fake%04d_%d", id, i), "type": "function_call", "status": "completed",
			"call_id": callID, "name": tc.Name, "arguments": mustJSON(tc.Input)})
	}
	if output == nil {
		output = []item{}
	}
	u := map[string]any{"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": in + out}
	response := func(status string, out []item, u any) map[string]any {
		return map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(), "status": status,
			"model": model, "output": out, "usage": u, "error": nil, "incomplete_details": nil}
	}

	if !req.Stream {
		writeJSON(w, http.StatusOK, response("completed", output, u))
		return
	}

	e := newSSE(w)
	seq := 0
	send := func(name string, data map[string]any) {
		data["type"] = name
		data["sequence_number"] = seq
		seq++
		e.event(name, data)
	}
	send("response.created", map[string]any{"response": response("in_progress", []item{}, nil)})
	send("response.in_progress", map[string]any{"response": response("in_progress", []item{}, nil)})
	for oi, it := range output {
		switch it["type"] {
		case "message":
			text := step.Text
			added := item{"id": it["id"], "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}
			send("response.output_item.added", map[string]any{"output_index": oi, "item": added})
			send("response.content_part.added", map[string]any{"item_id": it["id"], "output_index": oi, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, c := range chunks(text, 3) {
				send("response.output_text.delta", map[string]any{"item_id": it["id"], "output_index": oi, "content_index": 0, "delta": c, "logprobs": []any{}})
			}
			send("response.output_text.done", map[string]any{"item_id": it["id"], "output_index": oi, "content_index": 0, "text": text, "logprobs": []any{}})
			send("response.content_part.done", map[string]any{"item_id": it["id"], "output_index": oi, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
		case "function_call":
			args := it["arguments"].(string)
			added := item{"id": it["id"], "type": "function_call", "status": "in_progress", "call_id": it["call_id"], "name": it["name"], "arguments": ""}
			send("response.output_item.added", map[string]any{"output_index": oi, "item": added})
			for _, c := range chunks(args, 3) {
				send("response.function_call_arguments.delta", map[string]any{"item_id": it["id"], "output_index": oi, "delta": c})
			}
			send("response.function_call_arguments.done", map[string]any{"item_id": it["id"], "output_index": oi, "arguments": args})
		case "custom_tool_call":
			input := it["input"].(string)
			added := item{"id": it["id"], "type": "custom_tool_call", "status": "in_progress", "call_id": it["call_id"], "name": it["name"], "input": ""}
			send("response.output_item.added", map[string]any{"output_index": oi, "item": added})
			for _, c := range chunks(input, 3) {
				send("response.custom_tool_call_input.delta", map[string]any{"item_id": it["id"], "output_index": oi, "delta": c})
			}
			send("response.custom_tool_call_input.done", map[string]any{"item_id": it["id"], "output_index": oi, "input": input})
		}
		send("response.output_item.done", map[string]any{"output_index": oi, "item": it})
	}
	send("response.completed", map[string]any{"response": response("completed", output, u)})
}
