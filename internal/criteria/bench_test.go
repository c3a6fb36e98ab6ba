package criteria

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// genMonorepo writes a pnpm monorepo of about 100,000 files: 500 packages
// of 100 source files each, a node_modules of 50,000 files, CI and context
// files. The root package has no test script, so inference reads the
// members' manifests (the worst case). It returns the number of files
// written.
func genMonorepo(tb testing.TB, dir string) int {
	return genMonorepoSized(tb, dir, 500, 9, 11, 50000)
}

// genMonorepoSized writes a monorepo of packages packages, each with dirs
// source directories of files files, and a node_modules of deps files.
func genMonorepoSized(tb testing.TB, dir string, packages, dirs, files, deps int) int {
	tb.Helper()
	n := 0
	write := func(p, content string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
		n++
	}
	write("package.json", `{"name":"mono","private":true,"packageManager":"pnpm@9.0.0","scripts":{"build":"pnpm -r build","lint":"eslint ."}}`)
	write("pnpm-workspace.yaml", "packages:\n  - packages/*\n")
	write("pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
	write("AGENTS.md", "## Testing\n\n```sh\npnpm -r test\n```\n")
	write(".github/workflows/ci.yml", "on: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - uses: pnpm/action-setup@v4\n      - run: pnpm install --frozen-lockfile\n      - run: pnpm -r test\n")
	for i := 0; i < packages; i++ {
		pkg := fmt.Sprintf("packages/pkg-%03d", i)
		write(pkg+"/package.json", fmt.Sprintf(`{"name":"pkg-%03d","scripts":{"test":"vitest run","build":"tsup"}}`, i))
		for d := 0; d < dirs; d++ {
			for f := 0; f < files; f++ {
				write(fmt.Sprintf("%s/src/mod%d/file%d.ts", pkg, d, f), "export const x = 1\n")
			}
		}
	}
	for i := 0; i < deps; i++ {
		write(fmt.Sprintf("node_modules/dep%03d/lib/f%d.js", i/100, i%100), "module.exports = 1\n")
	}
	return n
}

// BenchmarkInferMonorepo infers on a generated 100,000-file monorepo; it
// must read only what it needs (the top level, manifests, workflows,
// context files, workspace members) and stay under 200 ms.
func BenchmarkInferMonorepo(b *testing.B) {
	dir := b.TempDir()
	start := time.Now()
	files := genMonorepo(b, dir)
	b.Logf("generated %d files in %v", files, time.Since(start))
	r, err := openRepo(dir)
	if err != nil {
		b.Fatal(err)
	}
	p, err := inferRepo(b.Context(), r, "fix the failing tests", Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("one inference listed %d directories and read %d files: %s in %s", len(r.dirs), len(r.files), p.Command, p.Workdir)
	r.close()
	if p.Command != "pnpm -r test" {
		b.Errorf("command = %q, want pnpm -r test", p.Command)
	}
	b.ResetTimer()
	var total time.Duration
	runs := 0
	for b.Loop() {
		t0 := time.Now()
		if _, err := Infer(b.Context(), dir, "fix the failing tests"); err != nil {
			b.Fatal(err)
		}
		total += time.Since(t0)
		runs++
	}
	if mean := total / time.Duration(runs); mean > 200*time.Millisecond {
		b.Errorf("mean inference time %v on a %d-file monorepo, want under 200ms", mean, files)
	}
}

// TestMonorepoReadsBounded checks, without timing, that inference on a
// monorepo lists and reads a bounded set of paths, never a walk: the number
// of paths touched does not grow with the number of files. (The benchmark
// runs the same shape at 100,000 files.)
func TestMonorepoReadsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := genMonorepoSized(t, dir, 300, 4, 5, 5000)
	r, err := openRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	start := time.Now()
	p, err := inferRepo(t.Context(), r, "fix the failing tests", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files: %s in %v; listed %d directories, read %d files", files, p.Command, time.Since(start), len(r.dirs), len(r.files))
	if len(r.dirs) > 20 || len(r.files) > maxMembers+10 {
		t.Errorf("listed %d directories and read %d files of %d: that is a walk, not a bounded read", len(r.dirs), len(r.files), files)
	}
	for d := range r.dirs {
		if filepath.Base(d) == "node_modules" || filepath.Dir(d) == "node_modules" {
			t.Errorf("listed %s", d)
		}
	}
}
