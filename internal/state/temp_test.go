package state

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A writer killed between WriteFileAtomic's create and rename leaves its
// temporary file; the owner of the file removes it later (found by the crash
// torture of cmd/agent-loop).

func listAll(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestDirRemoveTemp(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	d := NewDir(root, "ralph-temp-0000abcd")
	files := []string{
		"state.json", ".state.json.tmp-123", ".control.tmp-9", "control",
		"checkpoints/iteration-001.json.gz", "checkpoints/.iteration-002.json.gz.tmp-77",
		"analytics/.analytics.json.tmp-5", "logs/.iteration-001.log.tmp-1", ".hidden",
	}
	for _, f := range files {
		p := d.File(filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d.RemoveTemp()
	want := []string{".control.tmp-9", ".hidden", "checkpoints/iteration-001.json.gz", "control",
		"logs/.iteration-001.log.tmp-1", "state.json"}
	if diff := cmp.Diff(want, listAll(t, d.Path())); diff != "" {
		t.Errorf("files after RemoveTemp (-want +got):\n%s", diff)
	}
}

func TestUpdateRemovesStaleRegistryTemp(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, RootDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{".registry.json.tmp-42", ".other.json.tmp-1"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := NewStore(root)
	if err := s.Update(func(*Registry) error { return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{".other.json.tmp-1", "registry.json", "registry.lock"}
	if diff := cmp.Diff(want, listAll(t, dir)); diff != "" {
		t.Errorf("files after Update (-want +got):\n%s", diff)
	}
}
