package loop

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestHeadTail: whatever the sizes of the writes, the output is the input
// when it fits in head+tail, and otherwise its first head bytes, a line
// saying how many bytes were left out, and its last tail bytes.
func TestHeadTail(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 9, 10, 16, 17, 25, 26, 100, 1000, 5000} {
		in := make([]byte, size)
		for i := range in {
			in[i] = "abcdefghijklmnopqrstuvwxyz\n"[rng.IntN(27)]
		}
		for _, chunk := range []int{1, 3, 7, 10, 64, 1 << 20} {
			for _, ht := range [][2]int{{10, 16}, {0, 16}, {10, 0}, {0, 0}} {
				head, tail := ht[0], ht[1]
				var out bytes.Buffer
				h := newHeadTail(&out, head, tail)
				for p := in; len(p) > 0; {
					k := min(chunk, len(p))
					if n, err := h.Write(p[:k]); n != k || err != nil {
						t.Fatalf("Write = %d, %v; want %d, nil", n, err, k)
					}
					p = p[k:]
				}
				if err := h.Close(); err != nil {
					t.Fatal(err)
				}
				want := string(in)
				if size > head+tail {
					want = string(in[:head]) + fmt.Sprintf("\n[agent-loop: %d bytes of output left out here; the first %d and the last %d bytes are kept]\n",
						size-head-tail, head, tail) + string(in[size-tail:])
				}
				if out.String() != want {
					t.Fatalf("size %d, chunks of %d, head %d, tail %d:\n got %q\nwant %q", size, chunk, head, tail, out.String(), want)
				}
				if err := h.Close(); err != nil || out.String() != want {
					t.Fatalf("a second Close changed the output or failed: %v", err)
				}
			}
		}
	}
}

// TestHeadTailLargeOutput: 100 MiB written through the bound keep it to
// head + tail bytes plus the marker line, and the kept tail is the end.
func TestHeadTailLargeOutput(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	h := newHeadTail(&out, logHead, logTail)
	line := []byte(strings.Repeat("x", 1023) + "\n")
	const total = 100 << 20
	for i := 0; i < total/len(line); i++ {
		h.Write(line)
	}
	h.Write([]byte("the last line\n"))
	h.Close()
	if limit := logHead + logTail + 200; out.Len() > limit {
		t.Fatalf("kept %d bytes, want at most %d", out.Len(), limit)
	}
	if !strings.Contains(out.String(), "bytes of output left out here") || !strings.HasSuffix(out.String(), "x\nthe last line\n") {
		t.Fatalf("no marker or wrong tail: ...%q", out.String()[out.Len()-100:])
	}
}
