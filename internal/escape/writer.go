package escape

import (
	"bytes"
	"io"
	"sync"
	"unicode/utf8"
)

// maxLine bounds what a Writer holds while it waits for a line end; past
// it, the line is passed on in pieces.
const maxLine = 64 << 10

// Writer passes text from the untrusted side (the agent's and the check's
// output, progress lines that quote names) to a terminal or a log through
// Log, a line at a time, so that no escape sequence or character is split
// between two writes. Close passes on what is left.
type Writer struct {
	mu  sync.Mutex
	out io.Writer
	buf []byte
}

// NewWriter returns a Writer to out.
func NewWriter(out io.Writer) *Writer { return &Writer{out: out} }

func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := len(w.buf)
	w.buf = append(w.buf, p...)
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		i += old
		if err := w.emit(w.buf[:i+1]); err != nil {
			return 0, err
		}
		w.buf = append(w.buf[:0], w.buf[i+1:]...)
	}
	for len(w.buf) > maxLine {
		cut := safeCut(w.buf, maxLine)
		if err := w.emit(w.buf[:cut]); err != nil {
			return 0, err
		}
		w.buf = append(w.buf[:0], w.buf[cut:]...)
	}
	return len(p), nil
}

// Close passes on the last partial line; it does not close out.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return nil
	}
	err := w.emit(w.buf)
	w.buf = nil
	return err
}

func (w *Writer) emit(b []byte) error {
	_, err := io.WriteString(w.out, Log(string(b)))
	return err
}

// safeCut is where b can be cut at or before limit: not inside a
// character, and before an ESC in the last 64 bytes (a colour sequence
// stays whole; any other is shown either way).
func safeCut(b []byte, limit int) int {
	cut := limit
	if i := bytes.LastIndexByte(b[:cut], 0x1b); i > 0 && cut-i < 64 {
		cut = i
	}
	for k := 0; k < utf8.UTFMax && cut > 0 && !utf8.RuneStart(b[cut]); k++ {
		cut--
	}
	if cut == 0 {
		return limit
	}
	return cut
}
