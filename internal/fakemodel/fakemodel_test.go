package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type sseEvent struct {
	name string
	data map[string]any
}

// post sends a JSON body and returns the response.
func post(t *testing.T, u string, body any, header map[string]string) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readSSE parses a server-sent event stream.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var name string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if d["type"] != name {
				t.Fatalf("event %q carries type %v", name, d["type"])
			}
			out = append(out, sseEvent{name, d})
		}
	}
	return out
}

var script = Script{Steps: []Step{
	{Text: "Let me fix it.", ToolCalls: []ToolCall{{Name: "Write", Input: map[string]any{"file_path": "/r/a.txt", "content": "answer=42\n"}}}, InputTokens: 500, OutputTokens: 30},
	{Text: "Fixed"},
}}

func anthropicBody(toolResults int, stream bool) map[string]any {
	msgs := []any{map[string]any{"role": "user", "content": "fix it"}}
	for i := 0; i < toolResults; i++ {
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t", "name": "Write", "input": map[string]any{}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t", "content": "ok"}}})
	}
	return map[string]any{"model": "claude-test", "stream": stream, "max_tokens": 100, "messages": msgs,
		"tools": []any{map[string]any{"name": "Write", "input_schema": map[string]any{"type": "object"}}}}
}

func TestAnthropicStreamsTheScript(t *testing.T) {
	t.Parallel()
	srv := Start(script)
	defer srv.Close()
	resp := post(t, srv.URL+"/v1/messages", anthropicBody(0, true), map[string]string{"x-api-key": "sk-ant-1"})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := readSSE(t, resp.Body)
	var names []string
	var text, toolJSON string
	var toolName any
	for _, e := range evs {
		names = append(names, e.name)
		switch e.name {
		case "content_block_start":
			if cb := e.data["content_block"].(map[string]any); cb["type"] == "tool_use" {
				toolName = cb["name"]
			}
		case "content_block_delta":
			d := e.data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				text += d["text"].(string)
			case "input_json_delta":
				toolJSON += d["partial_json"].(string)
			}
		}
	}
	if names[0] != "message_start" || names[len(names)-1] != "message_stop" || names[len(names)-2] != "message_delta" {
		t.Errorf("event order %v", names)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(toolJSON), &input); err != nil || input["content"] != "answer=42\n" || toolName != "Write" {
		t.Errorf("tool call %v %q (%v)", toolName, toolJSON, err)
	}
	if text != "Let me fix it." {
		t.Errorf("text %q", text)
	}
	last := evs[len(evs)-2].data
	if last["delta"].(map[string]any)["stop_reason"] != "tool_use" || last["usage"].(map[string]any)["output_tokens"] != 30.0 {
		t.Errorf("message_delta %v", last)
	}
	if start := evs[0].data["message"].(map[string]any); start["model"] != "claude-test" || start["usage"].(map[string]any)["input_tokens"] != 500.0 {
		t.Errorf("message_start %v", start)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].APIKey() != "sk-ant-1" || reqs[0].Step != 0 || reqs[0].Model != "claude-test" || !cmp.Equal(reqs[0].Tools, []string{"Write"}) {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestAnthropicAnswersByToolResults(t *testing.T) {
	t.Parallel()
	srv := Start(script)
	defer srv.Close()
	// Non-streaming, after one tool result: step 1, the final text.
	resp := post(t, srv.URL+"/v1/messages", anthropicBody(1, false), nil)
	var msg struct {
		Content    []map[string]any `json:"content"`
		StopReason string           `json:"stop_reason"`
		Usage      map[string]int   `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0]["text"] != "Fixed" || msg.StopReason != "end_turn" || msg.Usage["input_tokens"] != DefaultInputTokens {
		t.Errorf("message %+v", msg)
	}
	// Past the last step: the last step again.
	post(t, srv.URL+"/v1/messages", anthropicBody(5, false), nil)
	// No tools offered: a side request.
	side := anthropicBody(0, false)
	delete(side, "tools")
	resp = post(t, srv.URL+"/v1/messages", side, nil)
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"text":"ok"`) {
		t.Errorf("side answer %s", b)
	}
	resp = post(t, srv.URL+"/v1/messages/count_tokens", side, nil)
	b, _ = io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "input_tokens") {
		t.Errorf("count_tokens %s", b)
	}
	var steps []int
	for _, r := range srv.Requests() {
		steps = append(steps, r.Step)
	}
	if d := cmp.Diff([]int{1, 1, -1, -1}, steps); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if len(srv.Conversation()) != 2 || len(srv.Escaped()) != 0 {
		t.Errorf("conversation %d escaped %d", len(srv.Conversation()), len(srv.Escaped()))
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		err    *Error
		path   string
		body   map[string]any
		status int
		retry  string
		want   string
	}{
		{"anthropic_401", Unauthorized(), "/v1/messages", anthropicBody(0, true), 401, "", `"type":"authentication_error"`},
		{"anthropic_429", RateLimited(7), "/v1/messages", anthropicBody(0, true), 429, "7", `"type":"rate_limit_error"`},
		{"anthropic_529", Overloaded(), "/v1/messages", anthropicBody(0, true), 529, "", `"type":"overloaded_error"`},
		{"openai_401", Unauthorized(), "/v1/responses", openaiBody(0), 401, "", `"code":"invalid_api_key"`},
		{"openai_429", RateLimited(2), "/v1/responses", openaiBody(0), 429, "2", `"code":"rate_limit_exceeded"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := Start(Script{Steps: []Step{{Error: tc.err}}})
			defer srv.Close()
			resp := post(t, srv.URL+tc.path, tc.body, nil)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || resp.Header.Get("Retry-After") != tc.retry || !strings.Contains(string(b), tc.want) {
				t.Errorf("status %d retry-after %q body %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
			}
		})
	}
}

func openaiBody(toolResults int) map[string]any {
	input := []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "fix it"}}}}
	for i := 0; i < toolResults; i++ {
		input = append(input, map[string]any{"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"},
			map[string]any{"type": "function_call_output", "call_id": "c", "output": "done"})
	}
	return map[string]any{"model": "gpt-test", "stream": true, "input": input,
		"tools": []any{map[string]any{"type": "function", "name": "exec_command"}, map[string]any{"type": "custom", "name": "apply_patch"}}}
}

func TestOpenAIStreamsTheScript(t *testing.T) {
	t.Parallel()
	srv := Start(Script{Steps: []Step{
		{Text: "Patching.", ToolCalls: []ToolCall{
			{Name: "exec_command", Input: map[string]any{"cmd": "ls"}},
			{Name: "apply_patch", Custom: "*** Begin Patch\n*** End Patch\n"},
		}},
		{Text: "Fixed", InputTokens: 10, OutputTokens: 2},
	}})
	defer srv.Close()
	resp := post(t, srv.OpenAIBaseURL()+"/responses", openaiBody(0), map[string]string{"Authorization": "Bearer sk-o"})
	evs := readSSE(t, resp.Body)
	var args, custom, text string
	var done []string
	for i, e := range evs {
		if int(e.data["sequence_number"].(float64)) != i {
			t.Errorf("event %d has sequence_number %v", i, e.data["sequence_number"])
		}
		switch e.name {
		case "response.output_text.delta":
			text += e.data["delta"].(string)
		case "response.function_call_arguments.delta":
			args += e.data["delta"].(string)
		case "response.custom_tool_call_input.delta":
			custom += e.data["delta"].(string)
		case "response.output_item.done":
			done = append(done, e.data["item"].(map[string]any)["type"].(string))
		}
	}
	if evs[0].name != "response.created" || evs[len(evs)-1].name != "response.completed" {
		t.Errorf("first/last events %s %s", evs[0].name, evs[len(evs)-1].name)
	}
	if text != "Patching." || args != `{"cmd":"ls"}` || custom != "*** Begin Patch\n*** End Patch\n" {
		t.Errorf("text %q args %q custom %q", text, args, custom)
	}
	if d := cmp.Diff([]string{"message", "function_call", "custom_tool_call"}, done); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
	usage := evs[len(evs)-1].data["response"].(map[string]any)["usage"].(map[string]any)
	if usage["input_tokens"] != float64(DefaultInputTokens) || usage["output_tokens"] != float64(DefaultOutputTokens) {
		t.Errorf("usage %v", usage)
	}
	// After a tool output: step 1.
	resp = post(t, srv.OpenAIBaseURL()+"/responses", openaiBody(1), nil)
	evs = readSSE(t, resp.Body)
	if u := evs[len(evs)-1].data["response"].(map[string]any)["usage"].(map[string]any); u["input_tokens"] != 10.0 {
		t.Errorf("step 1 usage %v", u)
	}
	reqs := srv.Requests()
	if reqs[0].APIKey() != "sk-o" || reqs[0].Step != 0 || reqs[1].Step != 1 || !cmp.Equal(reqs[0].Tools, []string{"exec_command", "apply_patch"}) {
		t.Errorf("recorded %+v", reqs)
	}
}

// Everything that tries to leave through the fake (as a proxy) is refused
// and recorded, as are unknown endpoints.
func TestEscapesAreRefusedAndRecorded(t *testing.T) {
	t.Parallel()
	srv := Start(Script{})
	defer srv.Close()
	proxy, _ := url.Parse(srv.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	resp, err := client.Get("http://telemetry.example.invalid/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("plain proxy request: status %d", resp.StatusCode)
	}
	if _, err := client.Get("https://api.example.invalid/"); err == nil {
		t.Error("a CONNECT through the fake succeeded")
	}
	resp, err = http.Get(srv.URL + "/api/oauth/profile")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var got []string
	for _, r := range srv.Escaped() {
		got = append(got, r.API+" "+r.Method+" "+r.Path)
	}
	want := []string{"proxy GET http://telemetry.example.invalid/v1/events", "proxy CONNECT api.example.invalid:443", "unknown GET /api/oauth/profile"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("escaped (-want +got):\n%s", d)
	}
}

func TestGeminiStreamsTheScript(t *testing.T) {
	t.Parallel()
	srv := Start(Script{Steps: []Step{
		{Text: "Writing.", ToolCalls: []ToolCall{{Name: "write_file", Input: map[string]any{"file_path": "/r/a.txt", "content": "x"}}}},
		{Error: RateLimited(3)},
	}})
	defer srv.Close()
	body := func(results int) map[string]any {
		contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "fix it"}}}}
		for i := 0; i < results; i++ {
			contents = append(contents, map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "write_file", "response": map[string]any{"output": "ok"}}}}})
		}
		return map[string]any{"contents": contents, "tools": []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "write_file"}}}}}
	}
	resp := post(t, srv.URL+"/v1beta/models/gemini-test:streamGenerateContent?alt=sse", body(0), map[string]string{"x-goog-api-key": "g-1"})
	var text string
	var call map[string]any
	var usage map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "data: ")
		if !ok {
			continue
		}
		var chunk struct {
			Candidates []struct {
				Content struct {
					Parts []map[string]any `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
			UsageMetadata map[string]any `json:"usageMetadata"`
		}
		if err := json.Unmarshal([]byte(line), &chunk); err != nil {
			t.Fatal(err)
		}
		for _, p := range chunk.Candidates[0].Content.Parts {
			if s, ok := p["text"].(string); ok {
				text += s
			}
			if fc, ok := p["functionCall"].(map[string]any); ok {
				call = fc
			}
		}
		if chunk.UsageMetadata != nil {
			usage = chunk.UsageMetadata
		}
	}
	if text != "Writing." || call["name"] != "write_file" || call["args"].(map[string]any)["content"] != "x" {
		t.Errorf("text %q call %v", text, call)
	}
	if usage["promptTokenCount"] != float64(DefaultInputTokens) || usage["candidatesTokenCount"] != float64(DefaultOutputTokens) {
		t.Errorf("usage %v", usage)
	}
	resp = post(t, srv.URL+"/v1beta/models/gemini-test:generateContent", body(1), nil)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || !strings.Contains(string(b), "RESOURCE_EXHAUSTED") {
		t.Errorf("step 1: %d %s", resp.StatusCode, b)
	}
	reqs := srv.Requests()
	if reqs[0].API != "gemini" || reqs[0].Model != "gemini-test" || reqs[0].APIKey() != "g-1" || reqs[1].Step != 1 || !reqs[0].Stream {
		t.Errorf("recorded %+v", reqs)
	}
}
