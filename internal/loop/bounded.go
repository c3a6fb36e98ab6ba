package loop

import (
	"fmt"
	"io"
	"sync"
)

// What one agent run or one check may write, before the middle is left out:
// to logs/iteration-NNN.log, and to the live log and the terminal. A runaway
// agent printing gigabytes costs these bytes of disk and memory, not
// gigabytes (the first and the last part of an output are what a person
// reads; the check's own result is parsed from a separate bounded capture).
const (
	logHead, logTail   = 8 << 20, 8 << 20
	liveHead, liveTail = 1 << 20, 1 << 20
)

// headTail passes the first head bytes written to it through to w and keeps
// only the last tail bytes of the rest; Close writes a line saying how many
// bytes were left out, then the kept tail. It sits after the redacting
// writer, so a cut never splits a secret the redactor has not yet seen.
type headTail struct {
	mu      sync.Mutex
	w       io.Writer
	head    int64  // bytes still to pass through
	kept    int64  // the head's size
	ring    []byte // the last bytes past the head, oldest at pos once full
	tail    int
	pos     int
	dropped int64
	closed  bool
	err     error
}

func newHeadTail(w io.Writer, head, tail int) *headTail {
	return &headTail{w: w, head: int64(head), kept: int64(head), tail: tail}
}

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	if h.err != nil {
		return 0, h.err
	}
	if h.head > 0 {
		k := min(int64(len(p)), h.head)
		if _, err := h.w.Write(p[:k]); err != nil {
			h.err = err
			return 0, err
		}
		h.head -= k
		p = p[k:]
	}
	if len(p) > 0 && !h.closed {
		h.keep(p)
	}
	return n, nil
}

// keep appends p to the ring of the last tail bytes.
func (h *headTail) keep(p []byte) {
	if h.tail <= 0 {
		h.dropped += int64(len(p))
		return
	}
	if len(p) >= h.tail {
		h.dropped += int64(len(h.ring)) + int64(len(p)-h.tail)
		if h.ring == nil {
			h.ring = make([]byte, 0, h.tail)
		}
		h.ring = append(h.ring[:0], p[len(p)-h.tail:]...)
		h.pos = 0
		return
	}
	if free := h.tail - len(h.ring); free > 0 {
		if h.ring == nil {
			h.ring = make([]byte, 0, h.tail)
		}
		k := min(free, len(p))
		h.ring = append(h.ring, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // full: overwrite the oldest bytes
		k := copy(h.ring[h.pos:], p)
		h.dropped += int64(k)
		h.pos = (h.pos + k) % h.tail
		p = p[k:]
	}
}

// Close writes what was left out and the kept tail. It does not close w.
func (h *headTail) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return h.err
	}
	h.closed = true
	if h.err != nil || (len(h.ring) == 0 && h.dropped == 0) {
		return h.err
	}
	if h.dropped > 0 {
		if _, err := fmt.Fprintf(h.w, "\n[agent-loop: %d bytes of output left out here; the first %d and the last %d bytes are kept]\n",
			h.dropped, h.kept, len(h.ring)); err != nil {
			h.err = err
			return err
		}
	}
	for _, part := range [][]byte{h.ring[h.pos:], h.ring[:h.pos]} {
		if _, err := h.w.Write(part); err != nil {
			h.err = err
			return err
		}
	}
	h.ring = nil
	return nil
}
