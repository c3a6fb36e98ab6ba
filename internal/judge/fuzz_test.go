package judge

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// FuzzParseDiff feeds arbitrary text to the parser and to everything that
// reads its result. Seeds: testdata/fuzz/FuzzParseDiff and the corpus diffs.
func FuzzParseDiff(f *testing.F) {
	diffs, _ := filepath.Glob(filepath.Join(corpusDir, "*.diff"))
	for i, p := range diffs {
		if i%4 != 0 { // a sample keeps the seed run short
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	j := New(Options{Depends: shellcmd.Depends{Files: []string{"Makefile", "package.json", "conftest.py"}, Targets: []string{"Makefile:test", "package.json:test"}}})
	f.Fuzz(func(t *testing.T, s string) {
		files, err := ParseDiff(s)
		for _, fd := range files {
			if fd.Status == "" {
				t.Fatalf("file %q without a status", fd.Path())
			}
			for _, h := range fd.Hunks {
				oldN, newN := h.OldStart, h.NewStart
				for _, l := range h.Lines {
					switch l.Kind {
					case LineContext:
						if l.OldLine != oldN || l.NewLine != newN {
							t.Fatalf("context line numbered %d/%d, want %d/%d", l.OldLine, l.NewLine, oldN, newN)
						}
						oldN++
						newN++
					case LineRemoved:
						if l.OldLine != oldN || l.NewLine != 0 {
							t.Fatalf("removed line numbered %d/%d, want %d/0", l.OldLine, l.NewLine, oldN)
						}
						oldN++
					case LineAdded:
						if l.NewLine != newN || l.OldLine != 0 {
							t.Fatalf("added line numbered %d/%d, want 0/%d", l.OldLine, l.NewLine, newN)
						}
						newN++
					default:
						t.Fatalf("line of unknown kind %q", l.Kind)
					}
				}
				if err == nil && (oldN-h.OldStart != h.OldLines || newN-h.NewStart != h.NewLines) {
					t.Fatalf("hunk %+v holds %d/%d lines without an error", h, oldN-h.OldStart, newN-h.NewStart)
				}
			}
		}
		_ = Detect(files, loop.JudgeInput{Criterion: "make test && npm run test:unit"})
		if _, err := j.Assess(context.Background(), loop.JudgeInput{BaseDiff: s, StepDiff: s}); err != nil {
			t.Fatalf("Assess: %v", err)
		}
	})
}
