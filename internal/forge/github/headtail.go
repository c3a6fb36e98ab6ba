package github

import (
	"errors"
	"io"
	"strconv"
)

// headTail keeps the first head bytes and the last tail bytes of a stream
// of any length, and counts what it dropped in between.
type headTail struct {
	head, tail int
	first      []byte
	last       []byte
	omitted    int64
}

func newHeadTail(head, tail int) *headTail {
	if head < 0 {
		head = 0
	}
	if tail < 1 {
		tail = 1
	}
	return &headTail{head: head, tail: tail}
}

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if room := h.head - len(h.first); room > 0 {
		k := min(room, len(p))
		h.first = append(h.first, p[:k]...)
		p = p[k:]
	}
	h.last = append(h.last, p...)
	if over := len(h.last) - h.tail; over > h.tail {
		// Trim in large steps so that appending stays linear.
		h.omitted += int64(over)
		h.last = append(h.last[:0:0], h.last[over:]...)
	}
	return n, nil
}

func (h *headTail) readFrom(r io.Reader) error {
	_, err := io.Copy(h, r)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if over := len(h.last) - h.tail; over > 0 {
		h.omitted += int64(over)
		h.last = h.last[over:]
	}
	return nil
}

// bytes is the kept text; when something was dropped, a line says how much.
func (h *headTail) bytes() []byte {
	out := make([]byte, 0, len(h.first)+len(h.last)+80)
	out = append(out, h.first...)
	if h.omitted > 0 {
		out = append(out, []byte("\n[agent-loop: "+strconv.FormatInt(h.omitted, 10)+" bytes of the log left out here]\n")...)
	}
	return append(out, h.last...)
}
