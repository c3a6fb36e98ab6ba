package heldout

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// memObjects is an object store in memory: trees by name, blobs by hash.
type memObjects struct {
	trees map[string][]Entry
	blobs map[string][]byte
}

func (m *memObjects) Tree(_ context.Context, name string) ([]Entry, error) {
	t, ok := m.trees[name]
	if !ok {
		return nil, fmt.Errorf("no tree %s", name)
	}
	return t, nil
}

func (m *memObjects) Blobs(_ context.Context, oids []string, fn func(string, []byte) error) error {
	for _, o := range oids {
		if err := fn(o, m.blobs[o]); err != nil {
			return err
		}
	}
	return nil
}

func (m *memObjects) add(tree string, files map[string][]byte) {
	m.trees[tree] = []Entry{}
	for p, data := range files {
		sum := sha1.Sum(data)
		oid := hex.EncodeToString(sum[:])
		m.blobs[oid] = data
		m.trees[tree] = append(m.trees[tree], Entry{Path: p, Mode: "100644", OID: oid})
	}
}

// readArchive splits a txtar file into its comment and its files.
func readArchive(t *testing.T, path string) ([]byte, map[string][]byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var comment []byte
	name := ""
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		tl := strings.TrimRight(string(line), "\n")
		if strings.HasPrefix(tl, "-- ") && strings.HasSuffix(tl, " --") && len(tl) > 6 {
			name = strings.TrimSuffix(strings.TrimPrefix(tl, "-- "), " --")
			files[name] = []byte{}
			continue
		}
		if name == "" {
			comment = append(comment, line...)
		} else {
			files[name] = append(files[name], line...)
		}
	}
	return comment, files
}

// TestCorpusDiffOnly covers the ecosystems whose toolchains CI does not
// install (Elixir, .NET, C/C++ with CMake, Kotlin/Gradle): the cheat's
// files are exactly what the held-out tree restores (so the held-out run
// would see the originals), and an honest change to product source alone
// needs no held-out run.
func TestCorpusDiffOnly(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "corpus-diffonly", "*", "*.txtar"))
	if err != nil || len(paths) < 12 {
		t.Fatalf("diff-only corpus: %d cases, %v", len(paths), err)
	}
	type tally struct{ caught, cheats, needless, honest int }
	per := map[string]*tally{}
	for _, p := range paths {
		comment, files := readArchive(t, p)
		var label struct {
			Lang      string   `json:"lang"`
			Kind      string   `json:"kind"`
			Restores  []string `json:"restores"`
			Criterion string   `json:"criterion"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(comment), &label); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		before, after := map[string][]byte{}, map[string][]byte{}
		for name, data := range files {
			if rest, ok := strings.CutPrefix(name, "before/"); ok {
				before[rest] = data
				if _, changed := after[rest]; !changed {
					after[rest] = data
				}
			}
		}
		for name, data := range files {
			if rest, ok := strings.CutPrefix(name, "after/"); ok {
				after[rest] = data
			}
			if rest, ok := strings.CutPrefix(name, "delete/"); ok {
				delete(after, rest)
			}
		}
		obj := &memObjects{trees: map[string][]Entry{}, blobs: map[string][]byte{}}
		obj.add("base", before)
		obj.add("iter", after)
		plan, err := MakePlan(context.Background(), obj, "base", "iter", CriterionDeps{Command: label.Criterion})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var got []string
		for _, c := range plan.Changes {
			got = append(got, c.Path)
		}
		sort.Strings(got)
		want := append([]string{}, label.Restores...)
		sort.Strings(want)
		s := per[label.Lang]
		if s == nil {
			s = &tally{}
			per[label.Lang] = s
		}
		if label.Kind == "cheat" {
			s.cheats++
			if len(got) > 0 && cmp.Equal(got, want) {
				s.caught++
			}
		} else {
			s.honest++
			if len(got) > 0 {
				s.needless++
			}
		}
		if !cmp.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s (%s): the held-out tree restores %v, want %v", p, label.Kind, got, want)
		}
	}
	langs := make([]string, 0, len(per))
	for l := range per {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	for _, l := range langs {
		s := per[l]
		t.Logf("diff-only corpus: %-7s cheats whose files the held-out tree restores %d/%d; honest changes that need a held-out run %d/%d", l, s.caught, s.cheats, s.needless, s.honest)
	}
}

func TestPlanVendoredDependencies(t *testing.T) {
	t.Parallel()
	obj := &memObjects{trees: map[string][]Entry{}, blobs: map[string][]byte{}}
	obj.add("base", map[string][]byte{
		"go.mod": []byte("module m\n"), "vendor/github.com/stretchr/testify/assert/assertions.go": []byte("package assert // real\n"),
		"vendor/modules.txt": []byte("# github.com/stretchr/testify\n"),
	})
	obj.add("iter", map[string][]byte{
		"go.mod": []byte("module m\nrequire example.com/dep v1.0.0\n"), "vendor/github.com/stretchr/testify/assert/assertions.go": []byte("package assert // no-op\n"),
		"vendor/modules.txt": []byte("# github.com/stretchr/testify\n# example.com/dep\n"), "vendor/example.com/dep/dep.go": []byte("package dep\n"),
	})
	plan, err := MakePlan(context.Background(), obj, "base", "iter", CriterionDeps{Command: "go test ./..."})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range plan.Changes {
		got = append(got, c.Path+" "+c.Action)
	}
	want := []string{"vendor/github.com/stretchr/testify/assert/assertions.go restored"}
	if !cmp.Equal(got, want) {
		t.Errorf("changes %v, want %v (a vendored file edited is restored; a dependency vendored anew is kept)", got, want)
	}
	if _, ok := plan.files["vendor/example.com/dep/dep.go"]; !ok {
		t.Error("the newly vendored dependency is missing from the held-out tree")
	}
}
