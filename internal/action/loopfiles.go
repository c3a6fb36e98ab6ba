package action

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aiwg/agent-loop/internal/actions"
	"github.com/aiwg/agent-loop/internal/state"
	"github.com/aiwg/agent-loop/internal/weaken"
)

// Limits of the loop files the Action publishes: a file of the state ref
// (state, checkpoints, analytics, report) and one of the state artifact
// (logs and transcripts included). A larger file is left out and named.
const (
	maxStateRefFile = state.MaxStateBytes
	maxArtifactFile = 256 << 20
)

// stateRefFile says whether a loop file goes in the state ref: logs,
// transcripts, the control file and the bundle only go in the artifact.
func stateRefFile(rel string) bool {
	return !strings.HasPrefix(rel, "logs/") && !strings.HasPrefix(rel, "transcripts/") && rel != "control" && rel != bundleFile
}

// binaryFile says whether a loop file is binary: a mask would corrupt it
// (the bundle holds what a push would have published).
func binaryFile(rel string) bool { return strings.HasSuffix(rel, ".gz") || rel == bundleFile }

// loopFiles are the files of the loop directory d (the live copy) kept in
// the state ref, secrets redacted, each read through an open that refuses
// symlinks and FIFOs and none above maxStateRefFile (those are named in the
// log instead).
func loopFiles(d state.Dir, w *actions.Writer) (map[string][]byte, error) {
	if weaken.On("stream") {
		return loopFilesWhole(d, false, w.Redact)
	}
	files := map[string][]byte{}
	skipped, err := d.Files(maxStateRefFile, func(f state.LoopFile, r io.Reader) error {
		if !stateRefFile(f.Rel) {
			return nil
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("reading %s: %w", f.Rel, err)
		}
		if !binaryFile(f.Rel) {
			b = []byte(w.Redact(string(b)))
		}
		files[f.Rel] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	var kept []string
	for _, s := range skipped {
		if rel, _, _ := strings.Cut(s, " ("); stateRefFile(rel) {
			kept = append(kept, s)
		}
	}
	noteSkipped(w, "the state ref", kept)
	return files, nil
}

// loopSource streams the files of the loop directory d (the live copy)
// into the state artifact: each through an open that refuses symlinks and
// FIFOs, text files redacted line by line on the way, a file above
// maxArtifactFile left out and added to skipped.
func loopSource(d state.Dir, w *actions.Writer, skipped *[]string) actions.Source {
	if weaken.On("stream") {
		return func(add func(string, io.Reader) error) error {
			files, err := loopFilesWhole(d, true, w.Redact)
			if err != nil {
				return err
			}
			for name, b := range files {
				if err := add(name, strings.NewReader(string(b))); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return func(add func(string, io.Reader) error) error {
		s, err := d.Files(maxArtifactFile, func(f state.LoopFile, r io.Reader) error {
			if f.Rel == "control" {
				return nil
			}
			if binaryFile(f.Rel) {
				return add(f.Rel, r)
			}
			return add(f.Rel, redacted(w, r))
		})
		*skipped = append(*skipped, s...)
		return err
	}
}

// redacted is r with the secrets w masks redacted, as a stream.
func redacted(w *actions.Writer, r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		rw := w.Redacting(pw)
		_, err := io.Copy(rw, r)
		if cerr := rw.Close(); err == nil {
			err = cerr
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// noteSkipped says in the log which loop files were left out of where.
func noteSkipped(w *actions.Writer, where string, skipped []string) {
	if len(skipped) > 0 {
		w.Annotate("warning", "", 0, "agent-loop", fmt.Sprintf("left out of %s: %s", where, strings.Join(skipped, ", ")))
	}
}

// loopFilesWhole is how the loop files were read before (the weakening
// "stream"): every regular file whole into memory, through plain opens.
func loopFilesWhole(d state.Dir, withLogs bool, redact func(string) string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(d.Path(), func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() || !de.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(d.Path(), p)
		rel = filepath.ToSlash(rel)
		if !withLogs && !stateRefFile(rel) || rel == "control" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !binaryFile(rel) {
			b = []byte(redact(string(b)))
		}
		files[rel] = b
		return nil
	})
	return files, err
}
