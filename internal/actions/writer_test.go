package actions

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/escape"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of the tests
// that exercise concurrency.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestAnnotate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                    string
		level, file, title, msg string
		line                    int
		wantLine                string // exact line, when given
		wantName                string
		wantProps               map[string]string
		wantData                string
	}{
		{
			name: "plain error", level: "error", msg: "the check failed",
			wantLine: "::error::the check failed", wantName: "error", wantProps: map[string]string{}, wantData: "the check failed",
		},
		{
			name: "file line title", level: "warning", file: "pkg/a_test.go", line: 12, title: "test deleted", msg: "TestParse was removed",
			wantLine: "::warning file=pkg/a_test.go,line=12,title=test deleted::TestParse was removed",
			wantName: "warning", wantProps: map[string]string{"file": "pkg/a_test.go", "line": "12", "title": "test deleted"}, wantData: "TestParse was removed",
		},
		{
			name: "escaping of data", level: "notice", msg: "100% done\r\nnext line %0A literal\rover \x1b]0;title\x07",
			wantLine: "::notice::100%25 done%0Anext line %250A literal^Mover ^[]0;title^G",
			wantName: "notice", wantProps: map[string]string{}, wantData: "100% done\nnext line %0A literal^Mover ^[]0;title^G",
		},
		{
			name: "escaping of properties", level: "error", file: "dir,with:colon/x.go", line: 3, title: "a: b, c%\nd", msg: "m::n",
			wantLine: "::error file=dir%2Cwith%3Acolon/x.go,line=3,title=a%3A b%2C c%25 d::m::n",
			wantName: "error", wantProps: map[string]string{"file": "dir,with:colon/x.go", "line": "3", "title": "a: b, c% d"}, wantData: "m::n",
		},
		{
			name: "injection attempt in the message", level: "error", msg: "x\n::set-output name=status::completed",
			wantName: "error", wantProps: map[string]string{}, wantData: "x\n::set-output name=status::completed",
		},
		{
			name: "unknown level is a notice, warn a warning", level: "warn", msg: "w",
			wantLine: "::warning::w", wantName: "warning", wantProps: map[string]string{}, wantData: "w",
		},
		{
			name: "bogus level", level: "set-output name=x", msg: "y",
			wantLine: "::notice::y", wantName: "notice", wantProps: map[string]string{}, wantData: "y",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			w := NewWriter(&out, func(string) string { return "" })
			w.Annotate(tt.level, tt.file, tt.line, tt.title, tt.msg)
			if tt.wantLine != "" && out.String() != tt.wantLine+"\n" {
				t.Errorf("line:\n got %q\nwant %q", out.String(), tt.wantLine+"\n")
			}
			m := runRunner(out.String())
			want := []runnerCommand{{Name: tt.wantName, Props: tt.wantProps, Data: tt.wantData}}
			if diff := cmp.Diff(want, m.executed); diff != "" {
				t.Errorf("runner executed (-want +got):\n%s", diff)
			}
			if len(m.lines) != 1 {
				t.Errorf("the annotation took %d log lines, want 1", len(m.lines))
			}
		})
	}
}

func TestGroup(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := NewWriter(&out, nil)
	w.Mask("s3cr3t-value")
	end := w.Group("iteration 1: s3cr3t-value\n::set-output name=x::y")
	end()
	end() // closing twice is harmless
	m := runRunner(out.String())
	want := []runnerCommand{
		{Name: "add-mask", Props: map[string]string{}, Data: "s3cr3t-value"},
		{Name: "group", Props: map[string]string{}, Data: "iteration 1: *** ::set-output name=x::y"},
		{Name: "endgroup", Props: map[string]string{}},
	}
	if diff := cmp.Diff(want, m.executed); diff != "" {
		t.Errorf("runner executed (-want +got):\n%s", diff)
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	pem := "-----BEGIN KEY-----\r\nMIIEvQIBADANBgkq%0Ahki\r\nxyz\r\n-----END KEY-----\n"
	tests := []struct {
		name      string
		secrets   []string
		wantMasks []string
	}{
		{"single line", []string{"ghp_abcdef123456"}, []string{"ghp_abcdef123456"}},
		{"percent and escapes kept exact", []string{"p%0Ass%25word"}, []string{"p%0Ass%25word"}},
		{
			"multi-line secret, line by line, short lines skipped", []string{pem},
			[]string{"-----BEGIN KEY-----", "MIIEvQIBADANBgkq%0Ahki", "-----END KEY-----"},
		},
		{"too short and blank are not masked", []string{"abc", "   ", ""}, nil},
		{"repeated secret masked once", []string{"token-1234", "token-1234"}, []string{"token-1234"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			w := NewWriter(&out, nil)
			for _, s := range tt.secrets {
				w.Mask(s)
			}
			m := runRunner(out.String())
			if diff := cmp.Diff(tt.wantMasks, m.masks, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("masks the runner registered (-want +got):\n%s", diff)
			}
			for _, c := range m.commands() {
				if c.Name != "add-mask" {
					t.Errorf("unexpected command %+v", c)
				}
			}
		})
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	secret := "ghs_S3cr3t+Tok/en=42&more"
	pem := "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0\n-----END KEY-----"
	w := NewWriter(io.Discard, nil)
	w.Mask(secret)
	w.Mask(pem)
	tests := []struct {
		name, in string
	}{
		{"raw", "token=" + secret + " used"},
		{"twice", secret + secret},
		{"query escaped", "https://x/?t=" + url.QueryEscape(secret)},
		{"path escaped", "https://x/" + url.PathEscape(secret)},
		{"json escaped", `{"token":"` + strings.ReplaceAll(secret, "&", `\u0026`) + `"}`},
		{"base64 at offset 0", base64.StdEncoding.EncodeToString([]byte(secret + "tail"))},
		{"base64 at offset 1", base64.StdEncoding.EncodeToString([]byte("x" + secret + "tail"))},
		{"base64 at offset 2", base64.StdEncoding.EncodeToString([]byte("xy" + secret + "tail"))},
		{"base64url at offset 1", base64.URLEncoding.EncodeToString([]byte("x" + secret))},
		{"basic auth header", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+secret))},
		{"whole multi-line secret", "key:\n" + pem + "\nend"},
		{"one line of it", "MIIEvQIBADANBgkqhkiG9w0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := w.Redact(tt.in)
			if !strings.Contains(got, "***") {
				t.Fatalf("Redact(%q) = %q: nothing redacted", tt.in, got)
			}
			for _, leak := range []string{secret, "S3cr3t", "MIIEvQIBADANBgkqhkiG9w0", "BEGIN KEY-----\nMIIE"} {
				if strings.Contains(got, leak) {
					t.Errorf("Redact(%q) = %q still contains %q", tt.in, got, leak)
				}
			}
			// Decoding what is left must not give the secret back either.
			for _, field := range strings.FieldsFunc(got, func(r rune) bool { return r == '*' || r == ' ' }) {
				for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
					if dec, err := enc.DecodeString(field); err == nil && strings.Contains(string(dec), "S3cr3t") {
						t.Errorf("Redact(%q) leaves %q, which decodes to the secret", tt.in, field)
					}
				}
			}
		})
	}
	if got := w.Redact("nothing secret here"); got != "nothing secret here" {
		t.Errorf("Redact changed text without secrets: %q", got)
	}
	if got := NewWriter(io.Discard, nil).Redact(secret); got != secret {
		t.Errorf("a Writer without masks redacted %q", got)
	}
}

// agentText is output an agent could print to take over the workflow.
const agentText = `working on it
::set-output name=status::completed
::add-mask::hunter2
::endgroup::
::group::fake
::error file=x.go,line=1::forged annotation
  ::warning::indented command
##[set-output name=legacy;]value
plain ##[error]legacy anywhere in a line
carriage return then command` + "\r::notice::after CR\r\n" + `::stop-commands::forged
::set-output name=after::forged-stop
::forged::
::set-output name=after::forged-resume
::pause-logging::
::save-state name=main_started::true
::add-path::/tmp/evil
::set-env name=NODE_OPTIONS::--require=/tmp/evil.js
done`

func TestUntrustedInert(t *testing.T) {
	t.Parallel()
	for _, chunk := range []int{1, 7, 64, len(agentText)} {
		t.Run(fmt.Sprintf("chunks of %d", chunk), func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			w := NewWriter(&out, nil)
			u := w.Untrusted(&out)
			for i := 0; i < len(agentText); i += chunk {
				if _, err := u.Write([]byte(agentText[i:min(i+chunk, len(agentText))])); err != nil {
					t.Fatal(err)
				}
			}
			if err := u.Close(); err != nil {
				t.Fatal(err)
			}
			m := runRunner(out.String())
			if cmds := m.commands(); len(cmds) != 0 {
				t.Errorf("agent text made the runner execute %+v", cmds)
			}
			if m.stopped {
				t.Errorf("command processing was not resumed after Close")
			}
			if len(m.masks) != 0 {
				t.Errorf("agent text registered masks %q", m.masks)
			}
			// Every line of the agent is in the log, unchanged.
			logged := strings.Join(m.lines[1:len(m.lines)-1], "\n")
			if want := strings.Join(runnerLines(agentText), "\n"); logged != want {
				t.Errorf("logged agent text:\n%s\nwant:\n%s", logged, want)
			}
			// Commands issued after Close work again.
			out.Reset()
			w.Annotate("error", "", 0, "", "real")
			if got := runRunner(out.String()).commands(); len(got) != 1 || got[0].Data != "real" {
				t.Errorf("after Close, the Writer's commands: %+v", got)
			}
		})
	}
}

func TestUntrustedWriterCommandsStillWork(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	w := NewWriter(&out, nil)
	u := w.Untrusted(&out)
	io.WriteString(u, "::set-output name=a::1\nthe key is sk-live-ABCDEFGH\n")
	w.Mask("sk-live-ABCDEFGH") // while the agent is streaming
	end := w.Group("iteration 2")
	io.WriteString(u, "::set-output name=b::2\nagain sk-live-ABCDEFGH\n")
	end()
	u.Close()

	m := runRunner(out.String())
	want := []runnerCommand{
		{Name: "add-mask", Props: map[string]string{}, Data: "sk-live-ABCDEFGH"},
		{Name: "group", Props: map[string]string{}, Data: "iteration 2"},
		{Name: "endgroup", Props: map[string]string{}},
	}
	if diff := cmp.Diff(want, m.commands()); diff != "" {
		t.Errorf("runner executed (-want +got):\n%s", diff)
	}
	if m.stopped {
		t.Error("command processing not resumed")
	}
	if !strings.Contains(out.String(), "again ***") {
		t.Errorf("agent text after the mask not redacted:\n%s", out.String())
	}
	// Each stop-commands token is fresh.
	tokens := map[string]bool{}
	for _, line := range m.lines {
		if sm := stopLine.FindStringSubmatch(line); sm != nil {
			if tokens[sm[1]] {
				t.Errorf("stop token %s reused", sm[1])
			}
			tokens[sm[1]] = true
		}
	}
	if len(tokens) != 4 {
		t.Errorf("got %d stop-commands blocks, want 4 (opened, reopened after add-mask, group and endgroup)", len(tokens))
	}
}

func TestUntrustedShared(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	w := NewWriter(&out, nil)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := w.Untrusted(&out)
			for j := range 50 {
				fmt.Fprintf(u, "::set-output name=w%d::%d\n", i, j)
			}
			u.Close()
		}()
	}
	wg.Wait()
	m := runRunner(out.String())
	if cmds := m.commands(); len(cmds) != 0 {
		t.Fatalf("concurrent untrusted writers let through %d commands, first %+v", len(cmds), cmds[0])
	}
	if m.stopped {
		t.Error("command processing not resumed after the last Close")
	}
	if n := strings.Count(out.String(), "name=w"); n != 200 {
		t.Errorf("got %d agent lines, want 200", n)
	}
}

func TestUntrustedOtherWriter(t *testing.T) {
	t.Parallel()
	var stdout, log bytes.Buffer
	w := NewWriter(&stdout, nil)
	w.Mask("topsecret-1")
	u := w.Untrusted(&log)
	io.WriteString(u, "::add-mask::x\ntopsecret-1 no newline at the end")
	u.Close()
	m := runRunner(log.String())
	if cmds := m.commands(); len(cmds) != 0 || m.stopped {
		t.Errorf("commands %+v, stopped %v", cmds, m.stopped)
	}
	if strings.Contains(log.String(), "topsecret-1") {
		t.Errorf("secret not redacted: %q", log.String())
	}
	if !strings.Contains(log.String(), "*** no newline at the end\n::") {
		t.Errorf("last partial line not flushed on its own line before the resume token: %q", log.String())
	}
}

func TestRedactingAcrossWrites(t *testing.T) {
	t.Parallel()
	secret := "sk-ant-api03-0123456789abcdef"
	long := strings.Repeat("a", maxPending-10) // a line longer than maxPending around the secret
	tests := []struct {
		name string
		text string
	}{
		{"split over writes", "before " + secret + " after\n"},
		{"long line, secret at the flush boundary", long + secret + long + "\n"},
		{"long line, no newline at all", long + long + secret},
		{"json transcript", `{"type":"tool","input":"` + secret + `"}` + "\n"},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 5, 4096, maxPending - 3, len(tt.text)} {
			t.Run(fmt.Sprintf("%s/%d", tt.name, chunk), func(t *testing.T) {
				t.Parallel()
				var out bytes.Buffer
				w := NewWriter(io.Discard, nil)
				w.Mask(secret)
				r := w.Redacting(&out)
				for i := 0; i < len(tt.text); i += chunk {
					r.Write([]byte(tt.text[i:min(i+chunk, len(tt.text))]))
				}
				r.Close()
				got := out.String()
				if strings.Contains(got, secret) || strings.Contains(got, secret[3:20]) {
					t.Errorf("secret leaked")
				}
				if strings.ReplaceAll(got, "\n", "") != strings.ReplaceAll(strings.ReplaceAll(tt.text, secret, "***"), "\n", "") {
					t.Errorf("content changed beyond the redaction (%d bytes out, %d in)", len(got), len(tt.text))
				}
			})
		}
	}
}

func newCommandFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "file_command")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSetOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, key, value string
	}{
		{"simple", "status", "completed"},
		{"empty", "pr-url", ""},
		{"multi-line", "report", "line 1\nline 2\n\nline 4"},
		{"fixed delimiter injection", "report", "x\nEOF\nstatus<<EOF\ncompleted\nEOF"},
		{"toolkit-style delimiter injection", "report", "x\nghadelimiter_00000000-0000-4000-8000-000000000000\nstatus=completed"},
		{"key=value injection", "report", "x\nstatus=completed"},
		{"CRLF", "report", "a\r\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := newCommandFile(t)
			w := NewWriter(io.Discard, func(k string) string {
				if k == "GITHUB_OUTPUT" {
					return file
				}
				return ""
			})
			if err := w.SetOutput("other", "kept"); err != nil {
				t.Fatal(err)
			}
			if err := w.SetOutput(tt.key, tt.value); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(file)
			got, err := parseFileCommands(string(data))
			if err != nil {
				t.Fatalf("the runner could not parse GITHUB_OUTPUT: %v\n%s", err, data)
			}
			want := map[string]string{"other": "kept", tt.key: strings.ReplaceAll(tt.value, "\r\n", "\n")}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("outputs the runner sees (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetOutputRefusesDelimiter(t *testing.T) {
	// Not parallel: replaces newDelimiter.
	const fixed = "ghadelimiter_11111111-2222-4333-8444-555555555555"
	saved := newDelimiter
	newDelimiter = func() string { return fixed }
	t.Cleanup(func() { newDelimiter = saved })

	file := newCommandFile(t)
	w := NewWriter(io.Discard, func(string) string { return file })
	err := w.SetOutput("report", "x\n"+fixed+"\nstatus<<"+fixed+"\ncompleted")
	if err == nil || !strings.Contains(err.Error(), "delimiter") {
		t.Fatalf("SetOutput with the delimiter inside: err = %v, want a refusal naming the delimiter", err)
	}
	if err := w.SaveState("s", "a"+fixed); err == nil {
		t.Fatal("SaveState accepted a value containing the delimiter")
	}
	if data, _ := os.ReadFile(file); len(data) != 0 {
		t.Errorf("refused writes still wrote %q", data)
	}
}

func TestFileCommandErrors(t *testing.T) {
	t.Parallel()
	file := newCommandFile(t)
	env := map[string]string{"GITHUB_OUTPUT": file, "GITHUB_STATE": filepath.Join(t.TempDir(), "missing")}
	w := NewWriter(io.Discard, func(k string) string { return env[k] })
	for _, name := range []string{"", "a b", "1st", "a=b", "x<<y", "név", "a\nb"} {
		if err := w.SetOutput(name, "v"); err == nil || !strings.Contains(err.Error(), "invalid") {
			t.Errorf("SetOutput(%q) err = %v, want invalid name", name, err)
		}
	}
	if err := w.SaveState("ok", "v"); err == nil || !strings.Contains(err.Error(), env["GITHUB_STATE"]) {
		t.Errorf("SaveState to a missing file: err = %v, want one naming the file", err)
	}
	bare := NewWriter(io.Discard, func(string) string { return "" })
	if err := bare.SetOutput("status", "x"); err == nil || !strings.Contains(err.Error(), "GITHUB_OUTPUT is not set") {
		t.Errorf("SetOutput without GITHUB_OUTPUT: err = %v", err)
	}
	if err := bare.Summary("x"); err == nil || !strings.Contains(err.Error(), "GITHUB_STEP_SUMMARY is not set") {
		t.Errorf("Summary without GITHUB_STEP_SUMMARY: err = %v", err)
	}
}

func TestSetOutputRedacts(t *testing.T) {
	t.Parallel()
	file := newCommandFile(t)
	w := NewWriter(io.Discard, func(string) string { return file })
	w.Mask("ghp_0123456789")
	if err := w.SetOutput("report", "token ghp_0123456789"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	if strings.Contains(string(data), "ghp_0123456789") {
		t.Errorf("secret written to GITHUB_OUTPUT: %q", data)
	}
}

func TestSaveStateReachesPost(t *testing.T) {
	t.Parallel()
	file := newCommandFile(t)
	w := NewWriter(io.Discard, func(k string) string {
		if k == "GITHUB_STATE" {
			return file
		}
		return ""
	})
	if err := w.MarkMainStarted(); err != nil {
		t.Fatal(err)
	}
	if err := w.SaveState("loop_id", "ralph-fix-tests-0123abcd"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	state, err := parseFileCommands(string(data))
	if err != nil {
		t.Fatal(err)
	}
	// The runner hands saved state to the post step as STATE_<name>.
	env := map[string]string{}
	for k, v := range state {
		env["STATE_"+k] = v
	}
	rt, err := NewRuntime(func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !rt.IsPost() {
		t.Error("IsPost() = false in a process that sees the state main saved")
	}
	if got := rt.State("loop_id"); got != "ralph-fix-tests-0123abcd" {
		t.Errorf("State(loop_id) = %q", got)
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "step_summary")
	if err := os.WriteFile(file, []byte("old content of another step"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := NewWriter(io.Discard, func(k string) string {
		if k == "GITHUB_STEP_SUMMARY" {
			return file
		}
		return ""
	})
	w.Mask("ghp_secretsecret")
	for _, report := range []string{"# iteration 1\n", "# iteration 2\nwith ghp_secretsecret\n"} {
		if err := w.Summary(report); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(file)
	if want := "# iteration 2\nwith ***\n"; string(data) != want {
		t.Errorf("summary file = %q, want %q (overwritten, redacted)", data, want)
	}
	huge := strings.Repeat("| row | é |\n", SummaryLimit/8)
	if err := w.Summary(huge); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(file)
	if len(data) > SummaryLimit || !utf8.Valid(data) || !bytes.Contains(data, []byte("Truncated")) {
		t.Errorf("capped summary: %d bytes, valid UTF-8 %v, has note %v", len(data), utf8.Valid(data), bytes.Contains(data, []byte("Truncated")))
	}
}

func TestCapSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		limit     int
		wantSame  bool
		wantTail  []string // text the capped summary ends with, in order
		forbidden string
	}{
		{name: "under the limit", in: "# ok\n", limit: 1000, wantSame: true},
		{name: "exactly the limit", in: strings.Repeat("x", 1000), limit: 1000, wantSame: true},
		{
			name: "multibyte runes at the cut", in: strings.Repeat("日本語", 2000), limit: 1000,
			wantTail: []string{"Truncated"},
		},
		{
			name: "open code fence is closed", in: "# r\n```text\n" + strings.Repeat("output line\n", 500), limit: 1000,
			wantTail: []string{"output line\n```\n", "Truncated"},
		},
		{
			name: "open details are closed", in: "<details><summary>log</summary>\n\n" + strings.Repeat("line\n", 500), limit: 1000,
			wantTail: []string{"</details>\n", "Truncated"},
		},
		{
			name: "cut on a line", in: strings.Repeat("0123456789abcdef\n", 200), limit: 1000,
			wantTail: []string{"0123456789abcdef\n\n> **Truncated"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := CapSummary(tt.in, tt.limit)
			if tt.wantSame {
				if got != tt.in {
					t.Errorf("CapSummary changed a summary within the limit")
				}
				return
			}
			if len(got) > tt.limit {
				t.Errorf("len = %d, over the limit %d", len(got), tt.limit)
			}
			if !utf8.ValidString(got) {
				t.Errorf("not valid UTF-8 at the end: %q", got[max(0, len(got)-20):])
			}
			rest := got
			for _, want := range tt.wantTail {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("capped summary lacks %q in order; ends with %q", want, got[max(0, len(got)-300):])
				}
				rest = rest[i+len(want):]
			}
		})
	}
}

func FuzzUntrusted(f *testing.F) {
	f.Add(agentText, 3)
	f.Add("::stop-commands::abc\n::abc::\n::set-output name=x::y", 1)
	f.Add("##[add-mask]x\r::error::y\r\n", 2)
	f.Fuzz(func(t *testing.T, text string, chunk int) {
		if chunk <= 0 {
			chunk = 1
		}
		var out bytes.Buffer
		w := NewWriter(&out, nil)
		u := w.Untrusted(&out)
		for i := 0; i < len(text); i += chunk {
			u.Write([]byte(text[i:min(i+chunk, len(text))]))
		}
		u.Close()
		m := runRunner(out.String())
		if cmds := m.commands(); len(cmds) != 0 {
			t.Fatalf("untrusted text %q made the runner execute %+v", text, cmds)
		}
		if m.stopped {
			t.Fatalf("untrusted text %q left command processing stopped", text)
		}
		// The text is logged as escape.Log shows it: colours kept, other
		// control characters and invalid UTF-8 shown instead of sent.
		logged := strings.Join(m.lines[1:len(m.lines)-1], "\n")
		if want := strings.Join(runnerLines(escape.Log(text)), "\n"); logged != want {
			t.Fatalf("logged text differs:\n got %q\nwant %q", logged, want)
		}
	})
}

func FuzzAnnotateRoundTrip(f *testing.F) {
	f.Add("a,b:c.go", "title: x, y", "100%\r\n::set-output name=x::y")
	f.Add("", "", "")
	f.Add("%0A", "%25%3A", "%250A")
	f.Fuzz(func(t *testing.T, file, title, msg string) {
		var out bytes.Buffer
		w := NewWriter(&out, nil)
		w.Annotate("error", file, 7, title, msg)
		m := runRunner(out.String())
		if len(m.executed) != 1 || len(m.lines) != 1 {
			t.Fatalf("annotation gave %d commands on %d lines: %q", len(m.executed), len(m.lines), out.String())
		}
		got := m.executed[0]
		// What an annotation shows is the escaped text (escape.Block for
		// the message, escape.Terminal for the file and title).
		want := runnerCommand{Name: "error", Props: map[string]string{"line": "7"}, Data: escape.Block(msg)}
		if f := escape.Terminal(file); f != "" {
			want.Props["file"] = f
		}
		if tt := escape.Terminal(title); tt != "" {
			want.Props["title"] = tt
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("runner parsed (-want +got):\n%s", diff)
		}
	})
}

func FuzzRedact(f *testing.F) {
	f.Add("ghp_0123456789abcdef", "prefix ", " suffix", 3)
	f.Add("p@ss w/rd+x", "", "\n", 1)
	f.Fuzz(func(t *testing.T, secret, before, after string, chunk int) {
		if len(strings.TrimSpace(secret)) < minMaskLen || strings.ContainsAny(secret, "*\r\n") {
			return // not masked, or "***" could rebuild it
		}
		w := NewWriter(io.Discard, nil)
		w.Mask(secret)
		text := before + secret + after
		if got := w.Redact(text); strings.Contains(got, secret) {
			t.Fatalf("Redact(%q) = %q keeps the secret", text, got)
		}
		if chunk <= 0 {
			chunk = 1
		}
		var out bytes.Buffer
		r := w.Redacting(&out)
		for i := 0; i < len(text); i += chunk {
			r.Write([]byte(text[i:min(i+chunk, len(text))]))
		}
		r.Close()
		if strings.Contains(out.String(), secret) {
			t.Fatalf("Redacting(%q in chunks of %d) = %q keeps the secret", text, chunk, out.String())
		}
	})
}
