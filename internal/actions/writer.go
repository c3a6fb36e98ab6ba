package actions

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/aiwg/agent-loop/internal/escape"
	"github.com/aiwg/agent-loop/internal/safefs"
)

// SummaryLimit is the size the runner accepts for a step summary (1 MiB);
// a larger file is refused whole, so Summary truncates to it.
const SummaryLimit = 1 << 20

// minMaskLen is the shortest value Mask registers. A one- or two-character
// "secret" (a "}" line of a JSON key file) would hide every occurrence of
// that text in the log; real credentials are far longer.
const minMaskLen = 4

// minEncodedLen is the shortest encoded form (base64 fragment) Redact looks
// for, so short fragments do not hide unrelated text.
const minEncodedLen = 8

// Writer is the one writer of workflow commands: masks, groups,
// annotations, outputs, state, the step summary, and the stop-commands
// wrapper for untrusted text. It is safe for concurrent use; every line it
// writes to stdout is written whole.
type Writer struct {
	getenv Env

	mu     sync.Mutex // serialises writes to stdout and to wrapped writers
	stdout io.Writer
	stop   *stopBlock // the stop-commands block open on stdout, if any
	err    error      // first write error on stdout

	fmu sync.Mutex // serialises writes to command files

	smu       sync.RWMutex
	secrets   map[string]bool // registered values (raw lines and wholes)
	needles   []string        // every form Redact replaces, longest first
	replacer  *strings.Replacer
	maxNeedle int
}

type stopBlock struct {
	token string
	open  int // Untrusted writers sharing the block
}

// NewWriter returns a Writer that prints workflow commands on stdout and
// finds the command files (GITHUB_OUTPUT, GITHUB_STATE, GITHUB_STEP_SUMMARY)
// through getenv.
func NewWriter(stdout io.Writer, getenv Env) *Writer {
	if stdout == nil {
		stdout = io.Discard
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	return &Writer{stdout: stdout, getenv: getenv, secrets: map[string]bool{}}
}

// Err returns the first error met writing to stdout (commands have no error
// return of their own, like log output).
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// issue prints one workflow command line. When an Untrusted block is open on
// stdout the runner is not processing commands, so the block is closed
// around the command and reopened with a fresh token: a Mask issued while
// an agent is streaming still takes effect.
func (w *Writer) issue(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop == nil {
		w.writeLocked(w.stdout, line+"\n")
		return
	}
	next := randomToken()
	w.writeLocked(w.stdout, "::"+w.stop.token+"::\n"+line+"\n::stop-commands::"+next+"\n")
	w.stop.token = next
}

func (w *Writer) writeLocked(out io.Writer, s string) {
	if _, err := io.WriteString(out, s); err != nil && w.err == nil && sameWriter(out, w.stdout) {
		w.err = err
	}
}

// Mask registers secret with the runner (::add-mask::) so the log shows ***
// instead, and with Redact. A multi-line secret (a PEM key) is masked line
// by line, because the runner masks each log line separately; values
// shorter than 4 bytes are not masked.
func (w *Writer) Mask(secret string) {
	secret = strings.TrimSuffix(secret, "\n")
	lines := strings.Split(secret, "\n")
	var fresh []string
	w.smu.Lock()
	for i, line := range lines {
		lines[i] = strings.TrimSuffix(line, "\r")
	}
	candidates := lines
	if len(lines) > 1 {
		candidates = append([]string{secret}, lines...)
	}
	for _, v := range candidates {
		if len(strings.TrimSpace(v)) < minMaskLen || w.secrets[v] {
			continue
		}
		w.secrets[v] = true
		fresh = append(fresh, v)
	}
	if len(fresh) > 0 {
		w.rebuildLocked()
	}
	w.smu.Unlock()
	for _, v := range fresh {
		if strings.Contains(v, "\n") {
			continue // the whole of a multi-line secret: Redact only
		}
		w.issue("::add-mask::" + escapeData(v))
	}
}

func (w *Writer) rebuildLocked() {
	set := map[string]bool{}
	for s := range w.secrets {
		for _, form := range encodedForms(s) {
			set[form] = true
		}
	}
	needles := make([]string, 0, len(set))
	for n := range set {
		needles = append(needles, n)
	}
	// Longest first: strings.Replacer tries the old strings in argument
	// order at each position, so a secret is replaced whole before any of
	// its lines.
	slices.SortFunc(needles, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(needles))
	for _, n := range needles {
		pairs = append(pairs, n, "***")
	}
	w.needles = needles
	w.replacer = strings.NewReplacer(pairs...)
	w.maxNeedle = 0
	if len(needles) > 0 {
		w.maxNeedle = len(needles[0])
	}
}

// encodedForms returns s and the encodings it may appear under in logs,
// transcripts and reports: JSON string escaping, URL query and path
// escaping, and base64 (standard and URL alphabets) at the three byte
// alignments it can have inside a longer encoded text.
func encodedForms(s string) []string {
	forms := []string{s}
	add := func(f string) {
		if f != "" && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if err := enc.Encode(s); err == nil {
			j := strings.TrimSuffix(b.String(), "\n")
			add(j[1 : len(j)-1])
		}
	}
	add(url.QueryEscape(s))
	add(url.PathEscape(s))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for shift := range 3 {
			if f := base64Fragment(enc, s, shift); len(f) >= minEncodedLen {
				add(f)
			}
		}
	}
	return forms
}

// base64Fragment returns the characters of the base64 encoding of s that
// depend on s alone when s starts shift bytes after a 3-byte boundary of a
// longer encoded text.
func base64Fragment(enc *base64.Encoding, s string, shift int) string {
	data := make([]byte, shift+len(s))
	copy(data[shift:], s)
	full := enc.EncodeToString(data)
	start := (8*shift + 5) / 6      // first character with no prefix bit
	end := 8 * (shift + len(s)) / 6 // characters made of s's bits only
	if start >= end || end > len(full) {
		return ""
	}
	return full[start:end]
}

// Redact replaces every masked secret, and its JSON-, URL- and
// base64-encoded forms, with ***.
func (w *Writer) Redact(s string) string {
	w.smu.RLock()
	r := w.replacer
	w.smu.RUnlock()
	if r == nil {
		return s
	}
	return r.Replace(s)
}

// Group opens a collapsible group in the log; call the returned function to
// close it (closing twice is harmless).
func (w *Writer) Group(title string) func() {
	w.issue("::group::" + escapeData(escape.Terminal(w.Redact(title))))
	var once sync.Once
	return func() { once.Do(func() { w.issue("::endgroup::") }) }
}

// Annotate adds an annotation to the run (and to file:line in the diff view
// when file is set). level is "error", "warning" or "notice" ("warn" is
// taken as "warning"; anything else as "notice"). line <= 0 means no line.
func (w *Writer) Annotate(level, file string, line int, title, msg string) {
	switch strings.ToLower(level) {
	case "error":
		level = "error"
	case "warning", "warn":
		level = "warning"
	default:
		level = "notice"
	}
	// The runner trims the property list, so edge spaces of the last
	// property would be lost anyway: trim them all alike.
	// File, title and message often hold agent-controlled text (a test
	// name, a path): control sequences are shown, not sent.
	file, title = escape.Terminal(file), escape.Terminal(title)
	msg = escape.Block(msg)
	var props []string
	if file != "" {
		props = append(props, "file="+escapeProperty(w.Redact(file)))
	}
	if line > 0 {
		props = append(props, "line="+strconv.Itoa(line))
	}
	if title != "" {
		props = append(props, "title="+escapeProperty(w.Redact(title)))
	}
	cmd := "::" + level
	if len(props) > 0 {
		cmd += " " + strings.Join(props, ",")
	}
	w.issue(cmd + "::" + escapeData(w.Redact(msg)))
}

// escapeData escapes a command's data as the runner unescapes it
// (ActionCommand.UnescapeData): %, CR and LF.
func escapeData(s string) string {
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

// escapeProperty escapes a command property value (UnescapeProperty): as
// data, plus ":" and ",", which separate the properties.
func escapeProperty(s string) string {
	s = escapeData(s)
	s = strings.ReplaceAll(s, ":", "%3A")
	return strings.ReplaceAll(s, ",", "%2C")
}

var fileCommandName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// SetOutput sets the step output name (GITHUB_OUTPUT). The value is written
// in a heredoc whose delimiter is random per call (ghadelimiter_<uuid>), so
// a value cannot end the heredoc early and set other outputs; a value that
// contains the delimiter is refused. Masked secrets are redacted.
func (w *Writer) SetOutput(name, value string) error {
	return w.fileCommand("GITHUB_OUTPUT", "output", name, value)
}

// SaveState saves name=value for the post step, which reads it as
// STATE_<name> (Runtime.State). Same heredoc safety as SetOutput.
func (w *Writer) SaveState(name, value string) error {
	return w.fileCommand("GITHUB_STATE", "state", name, value)
}

// MarkMainStarted saves StateMainStarted; call it first thing in main so the
// post step is recognised even if main dies before doing anything else.
func (w *Writer) MarkMainStarted() error {
	return w.SaveState(StateMainStarted, "true")
}

func (w *Writer) fileCommand(envVar, what, name, value string) error {
	if !fileCommandName.MatchString(name) {
		return fmt.Errorf("%s name %q is invalid: use letters, digits, '_' and '-', starting with a letter or '_'", what, name)
	}
	file := w.getenv(envVar)
	if file == "" {
		return fmt.Errorf("setting %s %q: %s is not set; %ss can only be written inside a GitHub Actions step", what, name, envVar, what)
	}
	value = w.Redact(value)
	delim := newDelimiter()
	if strings.Contains(value, delim) {
		return fmt.Errorf("setting %s %q: the value contains the heredoc delimiter %s; refusing to write it", what, name, delim)
	}
	record := name + "<<" + delim + "\n" + value + "\n" + delim + "\n"
	w.fmu.Lock()
	defer w.fmu.Unlock()
	// No O_CREATE: the runner creates the file; a missing one means the
	// variable points somewhere wrong. Never through a symlink, never a
	// FIFO or device (the agent may have planted one where a runner
	// without root keeps these files).
	f, err := safefs.OpenAppend(file)
	if err != nil {
		return fmt.Errorf("setting %s %q: opening %s (%s): %w", what, name, file, envVar, err)
	}
	_, werr := f.WriteString(record)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("setting %s %q: writing %s (%s): %w", what, name, file, envVar, err)
	}
	return nil
}

// Summary replaces the step summary (GITHUB_STEP_SUMMARY) with markdown:
// it overwrites rather than appends, so calling it after every iteration
// leaves the current report. Masked secrets are redacted; text over the
// 1 MiB limit is cut at a line (UTF-8 safe), open code fences and
// <details> are closed, and a note says so.
func (w *Writer) Summary(markdown string) error {
	file := w.getenv("GITHUB_STEP_SUMMARY")
	if file == "" {
		return errors.New("writing the step summary: GITHUB_STEP_SUMMARY is not set; a summary can only be written inside a GitHub Actions step")
	}
	content := CapSummary(w.Redact(markdown), SummaryLimit)
	w.fmu.Lock()
	defer w.fmu.Unlock()
	f, err := safefs.OpenRewrite(file)
	if err == nil {
		_, err = f.WriteString(content)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		return fmt.Errorf("writing the step summary %s (GITHUB_STEP_SUMMARY): %w", file, err)
	}
	return nil
}

// CapSummary returns markdown cut to at most limit bytes (see Summary),
// with escape.Truncate: on a line, any open code fence and <details>
// closed, and a note saying so.
func CapSummary(markdown string, limit int) string {
	const note = "\n> **Truncated:** the step summary is limited to 1 MiB; the rest of the report was cut. The full report is in the loop's report.md.\n"
	return escape.Truncate(markdown, limit, note)
}

// Untrusted returns a writer for text an agent or a completion command
// produced, echoed to out (normally the same stdout the Writer was made
// with; nil means that one). The text is redacted and wrapped in
// ::stop-commands::<random token> ... ::<token>:: so the runner executes
// none of the workflow commands it contains (::set-output::, ::add-mask::,
// ::endgroup::, a forged ::stop-commands::, the legacy ##[...] form).
// Output is passed on by whole lines; Close flushes the rest and resumes
// command processing. While the block is open, the Writer's own commands
// still work: it closes and reopens the block around them. Several
// Untrusted writers on the Writer's stdout share one block. Do not echo
// untrusted text on stderr: the runner processes commands there too.
func (w *Writer) Untrusted(out io.Writer) io.WriteCloser {
	if out == nil {
		out = w.stdout
	}
	u := &lineWriter{w: w, out: out, wrap: true, shared: sameWriter(out, w.stdout)}
	w.mu.Lock()
	defer w.mu.Unlock()
	if u.shared {
		if w.stop == nil {
			w.stop = &stopBlock{token: randomToken()}
			w.writeLocked(out, "::stop-commands::"+w.stop.token+"\n")
		}
		w.stop.open++
	} else {
		u.token = randomToken()
		w.writeLocked(out, "::stop-commands::"+u.token+"\n")
	}
	return u
}

// Redacting returns a writer that passes whole lines to out with masked
// secrets redacted: for transcripts and iteration logs written to files.
// It does not stop workflow commands: text for the log goes through
// Untrusted.
func (w *Writer) Redacting(out io.Writer) io.WriteCloser {
	return &lineWriter{w: w, out: out}
}

// maxPending bounds the bytes a lineWriter holds while waiting for a
// newline; past it, what is safe to emit is emitted with a line break.
const maxPending = 64 << 10

type lineWriter struct {
	w      *Writer
	out    io.Writer
	wrap   bool   // inside stop-commands
	shared bool   // the block is the Writer's own (out is its stdout)
	token  string // the block's token when not shared
	buf    []byte
	closed bool
	mu     sync.Mutex
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, errors.New("write to a closed log writer")
	}
	old := len(l.buf)
	l.buf = append(l.buf, p...)
	// Only the new bytes can hold a new line end: searching the whole
	// buffer on every write would be quadratic for byte-sized writes.
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		i += old
		if err := l.emit(string(l.buf[:i+1])); err != nil {
			return 0, err
		}
		l.buf = append(l.buf[:0], l.buf[i+1:]...)
	}
	if len(l.buf) > maxPending {
		cut := l.w.safeCut(l.buf)
		if err := l.emit(string(l.buf[:cut]) + "\n"); err != nil {
			return 0, err
		}
		l.buf = append(l.buf[:0], l.buf[cut:]...)
	}
	return len(p), nil
}

func (l *lineWriter) emit(s string) error {
	s = l.w.Redact(s)
	if l.wrap {
		// Agent and check output for the log: colours stay, every other
		// control sequence (screen clear, OSC title or hyperlink, CR
		// overwrite, bidi override) is shown instead of sent.
		s = escape.Log(s)
	}
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	_, err := io.WriteString(l.out, s)
	return err
}

// Close flushes the last partial line and, for Untrusted, resumes command
// processing.
func (l *lineWriter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var err error
	if len(l.buf) > 0 {
		err = l.emit(string(l.buf) + "\n")
		l.buf = nil
	}
	if !l.wrap {
		return err
	}
	w := l.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if !l.shared {
		_, werr := io.WriteString(l.out, "::"+l.token+"::\n")
		return errors.Join(err, werr)
	}
	w.stop.open--
	if w.stop.open == 0 {
		w.writeLocked(l.out, "::"+w.stop.token+"::\n")
		w.stop = nil
	}
	return err
}

// safeCut returns where buf can be split so that no masked value (in any
// form) straddles the split and at least the longest one's length minus one
// stays behind for the next write to complete; always on a rune boundary.
func (w *Writer) safeCut(buf []byte) int {
	w.smu.RLock()
	needles, longest := w.needles, w.maxNeedle
	w.smu.RUnlock()
	cut := len(buf)
	if longest > 1 {
		cut = len(buf) - (longest - 1)
	}
	s := string(buf)
	for moved := true; moved && cut > 0; {
		moved = false
		for _, n := range needles {
			lo := max(0, cut-len(n)+1)
			hi := min(len(s), cut+len(n)-1)
			if lo >= hi {
				continue
			}
			if i := strings.Index(s[lo:hi], n); i >= 0 && lo+i < cut {
				cut, moved = lo+i, true
			}
		}
	}
	for cut > 0 && cut < len(buf) && !utf8.RuneStart(buf[cut]) {
		cut--
	}
	if cut == 0 {
		return len(buf) // pathological: nothing safe to keep; emit all
	}
	return cut
}

func sameWriter(a, b io.Writer) bool {
	if a == nil || b == nil {
		return false
	}
	ta := reflect.TypeOf(a)
	if ta != reflect.TypeOf(b) || !ta.Comparable() {
		return false
	}
	return a == b
}

// randomToken is a 128-bit random hex string: a stop-commands token agent
// text cannot guess.
func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// newDelimiter returns a heredoc delimiter for one file command (a
// variable so a test can make it known).
var newDelimiter = func() string { return "ghadelimiter_" + newUUID() }

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
