package provider

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// Bounds on what a CLI's output can cost the harness.
const (
	// MaxLine is the longest stdout line parsed; longer lines are skipped
	// (counted, never buffered past this size).
	MaxLine = 1 << 20
	// MaxOutput is how many bytes of a run are passed on to the request's
	// Output; the rest is dropped with one note.
	MaxOutput = 64 << 20
	// MaxTranscript is how many bytes of structured events one run may
	// write to the request's Transcript.
	MaxTranscript = 256 << 20
)

// splitter is the stdout writer of a CLI run. It cuts the stream into lines
// with bounded memory: a line that starts with '{' is a JSON event and is
// handed to onJSON whole (at most MaxLine bytes, else skipped); any other
// text is handed to onText as it comes, in runs of whole lines where it can,
// so a flood of short lines costs few calls.
type splitter struct {
	max    int
	onJSON func(line []byte)
	onText func(text []byte)

	state   int
	buf     []byte
	skipped int
}

const (
	atStart = iota
	inJSON
	inText
	skipping
)

var jsonStart = []byte("\n{")

func newSplitter(max int, onJSON func([]byte), onText func([]byte)) *splitter {
	return &splitter{max: max, onJSON: onJSON, onText: onText}
}

func (s *splitter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		switch s.state {
		case skipping:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				return n, nil
			}
			p = p[i+1:]
			s.state = atStart
		case inText:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				s.onText(p)
				return n, nil
			}
			s.onText(p[:i+1])
			p = p[i+1:]
			s.state = atStart
		case inJSON:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				if len(s.buf)+len(p) > s.max {
					s.buf = s.buf[:0]
					s.skipped++
					s.state = skipping
					return n, nil
				}
				s.buf = append(s.buf, p...)
				return n, nil
			}
			if len(s.buf)+i > s.max {
				s.skipped++
			} else if len(s.buf) == 0 {
				s.emitJSON(p[:i])
			} else {
				s.buf = append(s.buf, p[:i]...)
				s.emitJSON(s.buf)
			}
			s.buf = s.buf[:0]
			p = p[i+1:]
			s.state = atStart
		case atStart:
			if p[0] == '{' {
				s.state = inJSON
				continue
			}
			// Text up to the next line that starts a JSON event.
			if j := bytes.Index(p, jsonStart); j >= 0 {
				s.onText(p[:j+1])
				p = p[j+1:]
				continue
			}
			// No JSON event in this chunk: its whole lines in one call, the
			// unfinished last line as text to be continued.
			if k := bytes.LastIndexByte(p, '\n'); k >= 0 {
				s.onText(p[:k+1])
				p = p[k+1:]
			}
			if len(p) > 0 {
				s.state = inText
			}
		}
	}
	return n, nil
}

func (s *splitter) emitJSON(line []byte) {
	s.onJSON(bytes.TrimSuffix(line, []byte("\r")))
}

// Close hands on a last line that had no newline.
func (s *splitter) Close() {
	if s.state == inJSON && len(s.buf) > 0 {
		s.emitJSON(s.buf)
	}
	s.buf = nil
	s.state = atStart
}

// Skipped is the number of JSON lines longer than the maximum.
func (s *splitter) Skipped() int { return s.skipped }

// cappedWriter passes on at most max bytes to w, safe for concurrent use
// (a CLI's stdout and stderr are copied by two goroutines), then drops the
// rest and says so once.
type cappedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	max     int64
	written int64
	dropped int64
	what    string
}

func newCappedWriter(w io.Writer, max int64, what string) *cappedWriter {
	if w == nil {
		w = io.Discard
	}
	return &cappedWriter{w: w, max: max, what: what}
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written >= c.max {
		c.dropped += int64(len(p))
		return len(p), nil
	}
	q := p
	if room := c.max - c.written; int64(len(q)) > room {
		q = q[:room]
	}
	_, err := c.w.Write(q)
	c.written += int64(len(q))
	if len(q) < len(p) {
		c.dropped += int64(len(p) - len(q))
		fmt.Fprintf(c.w, "\n[agent-loop: %s truncated after %d MB; the rest is dropped]\n", c.what, c.max>>20)
	}
	if err != nil {
		// A broken log writer must not stop the agent: drop from now on.
		c.written = c.max
	}
	return len(p), nil
}

// Dropped is the number of bytes not passed on.
func (c *cappedWriter) Dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}
