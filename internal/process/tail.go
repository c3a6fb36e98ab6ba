package process

import "sync"

// Tail is an io.Writer that keeps only the last Max bytes written, so a child
// that prints a gigabyte costs the harness Max bytes of memory.
type Tail struct {
	Max int

	mu      sync.Mutex
	buf     []byte
	dropped int64
}

// NewTail returns a Tail keeping the last max bytes.
func NewTail(max int) *Tail { return &Tail{Max: max} }

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.Max {
		t.dropped += int64(len(t.buf) + len(p) - t.Max)
		t.buf = append(t.buf[:0], p[len(p)-t.Max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.Max; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the kept bytes, prefixed by a note when some were dropped.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	// Do not start in the middle of a UTF-8 sequence.
	for i := 0; i < len(s) && i < 4; i++ {
		if s[i]&0xC0 != 0x80 {
			s = s[i:]
			break
		}
	}
	return s
}

// Dropped is the number of bytes that no longer fit.
func (t *Tail) Dropped() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dropped
}
