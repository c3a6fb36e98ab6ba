package github

import (
	"archive/zip"
	"bytes"
	"path"
	"strings"
	"testing"
)

// FuzzUnzip feeds arbitrary bytes to Unzip: it must never panic, and what it
// accepts must be local, clean paths within the size bound.
func FuzzUnzip(f *testing.F) {
	for _, names := range [][]string{{"state.json"}, {"dir/", "dir/a", "b"}, {"../evil"}, {"/abs"}} {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, n := range names {
			w, err := zw.Create(n)
			if err != nil {
				f.Fatal(err)
			}
			_, _ = w.Write([]byte("content of " + n))
		}
		if err := zw.Close(); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 16
		files, err := Unzip(data, limit)
		if err != nil {
			return
		}
		total := 0
		for name, content := range files {
			total += len(content)
			if name == "" || path.IsAbs(name) || path.Clean(name) != name || name == "." ||
				name == ".." || strings.HasPrefix(name, "../") || strings.ContainsAny(name, "\\\x00") {
				t.Errorf("Unzip accepted the unsafe name %q", name)
			}
		}
		if total > limit {
			t.Errorf("Unzip returned %d bytes, more than the %d bound", total, limit)
		}
	})
}
