package state

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/aiwg/agent-loop/internal/spec"
)

// ValidLoopID reports whether id matches ralph-<slug>-<8 hex>.
func ValidLoopID(id string) bool { return spec.ValidLoopID(id) }

// Slug turns a task into the slug part of a loop id: lower-case words of
// [a-z0-9], joined by "-", at most 5 words and 32 characters.
func Slug(task string) string {
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for _, r := range strings.ToLower(task) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			cur.WriteRune(r)
		} else {
			flush()
		}
	}
	flush()
	var out []string
	n := 0
	for _, w := range words {
		if len(out) == 5 || n+len(w)+1 > 33 {
			break
		}
		out = append(out, w)
		n += len(w) + 1
	}
	if len(out) == 0 {
		return "loop"
	}
	return strings.Join(out, "-")
}

// NewLoopID returns ralph-<slug>-<8 random hex>.
func NewLoopID(task string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "ralph-" + Slug(task) + "-" + hex.EncodeToString(b[:])
}

// DerivedLoopID returns a loop id that is the same every time for the same
// key (a repository and an issue or PR number, say), so a re-run of a
// workflow finds its own state.
func DerivedLoopID(task, key string) string {
	return "ralph-" + Slug(task) + "-" + shortHash(key)
}
