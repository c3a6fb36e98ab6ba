package provider

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
)

// split feeds input to a splitter in chunks of size n and collects what it
// hands on.
func split(input string, max, n int) (jsonLines []string, text string, skipped int) {
	var tb strings.Builder
	s := newSplitter(max, func(l []byte) { jsonLines = append(jsonLines, string(l)) }, func(b []byte) { tb.Write(b) })
	for i := 0; i < len(input); i += n {
		end := min(i+n, len(input))
		_, _ = s.Write([]byte(input[i:end]))
	}
	s.Close()
	return jsonLines, tb.String(), s.Skipped()
}

func TestSplitter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, input string
		max         int
		json        []string
		text        string
		skipped     int
	}{
		{name: "events", input: "{\"a\":1}\n{\"b\":2}\n", max: 100, json: []string{`{"a":1}`, `{"b":2}`}},
		{name: "text_between", input: "hello\nworld\n{\"a\":1}\nbye\n", max: 100, json: []string{`{"a":1}`}, text: "hello\nworld\nbye\n"},
		{name: "crlf", input: "{\"a\":1}\r\n", max: 100, json: []string{`{"a":1}`}},
		{name: "no_final_newline", input: "{\"a\":1}\n{\"b\":2}", max: 100, json: []string{`{"a":1}`, `{"b":2}`}},
		{name: "text_without_newline", input: "partial", max: 100, text: "partial"},
		{name: "brace_inside_text_line", input: "x {\"a\":1}\n", max: 100, text: "x {\"a\":1}\n"},
		{name: "too_long", input: "{\"long\":\"" + strings.Repeat("x", 50) + "\"}\n{\"ok\":1}\n", max: 20, json: []string{`{"ok":1}`}, skipped: 1},
		{name: "exactly_max", input: "{\"a\":\"12345\"}\n", max: 13, json: []string{`{"a":"12345"}`}},
		{name: "one_over_max", input: "{\"a\":\"123456\"}\n", max: 13, skipped: 1},
	}
	for _, tc := range cases {
		for _, n := range []int{1, 2, 3, 7, 1 << 20} {
			json, text, skipped := split(tc.input, tc.max, n)
			if d := cmp.Diff(tc.json, json); d != "" {
				t.Errorf("%s/chunk %d: JSON lines (-want +got):\n%s", tc.name, n, d)
			}
			if text != tc.text || skipped != tc.skipped {
				t.Errorf("%s/chunk %d: text %q skipped %d, want %q %d", tc.name, n, text, skipped, tc.text, tc.skipped)
			}
		}
	}
}

func TestCappedWriter(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := newCappedWriter(&buf, 10, "output")
	for _, s := range []string{"12345", "67890abc", "more"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if !strings.HasPrefix(buf.String(), "1234567890\n[agent-loop: output truncated") || c.Dropped() != 7 {
		t.Errorf("got %q, dropped %d", buf.String(), c.Dropped())
	}
	// A failing writer does not fail the run.
	c = newCappedWriter(failWriter{}, 10, "output")
	if n, err := c.Write([]byte("abc")); n != 3 || err != nil {
		t.Errorf("Write to a failing writer = %d, %v", n, err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// FuzzSplitter: whatever the CLI prints, the splitter never panics, hands on
// every byte of text and every JSON line within the bound, whatever the
// chunking.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("{\"a\":1}\ntext\n{\"b\"\n"), 3, 8)
	f.Add([]byte("\n\n{\r\n{}"), 1, 2)
	f.Add([]byte(strings.Repeat("y\n", 100)), 5, 4)
	f.Fuzz(func(t *testing.T, data []byte, chunk, max int) {
		if chunk <= 0 || chunk > 4096 || max <= 0 || max > 4096 {
			return
		}
		json1, text1, skip1 := split(string(data), max, chunk)
		json2, text2, skip2 := split(string(data), max, len(data)+1)
		if !cmp.Equal(json1, json2) || text1 != text2 || skip1 != skip2 {
			t.Fatalf("chunking changed the result: %q/%q/%d vs %q/%q/%d", json1, text1, skip1, json2, text2, skip2)
		}
		for _, l := range json1 {
			if len(l) > max || !strings.HasPrefix(l, "{") {
				t.Fatalf("bad JSON line %q", l)
			}
		}
	})
}

// FuzzParsers: no event stream makes a parser panic, and a failed exit is
// never a clean run (except for Claude Code, whose result event is trusted
// over its exit code).
func FuzzParsers(f *testing.F) {
	for _, seed := range []string{
		`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"usage":{"input_tokens":5}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":["a",1]}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":[{"type":"text","text":"x"}]}]}}`,
		`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":9,"output_tokens":2}}`,
		`{"type":"item.completed","item":{"type":"command_execution","exit_code":1}}`,
		`{"type":"step_finish","part":{"tokens":{"input":1,"cache":{"read":2}},"cost":0.1}}`,
		`{"type":"error","error":{"name":"APIError","data":{"statusCode":429}}}`,
		`{"type":"completion","finalText":"x","usage":{"input_tokens":3}}`,
		`{"type":"message","role":"assistant","content":"é","delta":true}`,
		`{"type":"result","status":"error","stats":{"models":{"":{"input_tokens":1}}}}`,
		`{"type":null,"message":7}`,
	} {
		f.Add([]byte(seed), 0)
		f.Add([]byte(seed), 1)
	}
	parsers := map[string]func() eventParser{
		"claude":   func() eventParser { return &claudeParser{} },
		"codex":    func() eventParser { return &codexParser{prices: DefaultPrices()} },
		"opencode": func() eventParser { return &opencodeParser{} },
		"droid":    func() eventParser { return &droidParser{prices: DefaultPrices()} },
		"gemini":   func() eventParser { return &geminiParser{prices: DefaultPrices()} },
	}
	f.Fuzz(func(t *testing.T, data []byte, exit int) {
		for name, mk := range parsers {
			p := mk()
			s := newSplitter(MaxLine, func(l []byte) { p.event(l, io.Discard) }, func([]byte) {})
			_, _ = s.Write(data)
			s.Close()
			var r loop.AgentResult
			r.ExitCode = exit
			p.finish(&r, runInfo{res: process.Result{ExitCode: exit}, provider: name})
			if exit != 0 && r.Class == loop.ClassNone && name != "claude" {
				t.Fatalf("%s: exit %d classified clean: %+v", name, exit, r)
			}
		}
	})
}
