package criteria

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// maxFileSize bounds every file read: manifests, workflows and context files
// are small; anything bigger is named as unreadable and skipped.
const maxFileSize = 1 << 20

// skipDirs are never listed or read: dependencies, build output, caches and
// VCS metadata. Reading them would be slow and would find other people's
// manifests.
var skipDirs = map[string]bool{
	"node_modules": true, "vendor": true, "target": true, ".git": true, "dist": true,
	"build": true, ".venv": true, "venv": true, "__pycache__": true, ".tox": true, ".nox": true,
	"out": true, "bin": true, "obj": true, ".gradle": true, ".idea": true, ".vscode": true,
	"_build": true, "deps": true, ".next": true, ".nuxt": true, ".turbo": true, ".cache": true,
	"coverage": true, ".mypy_cache": true, ".pytest_cache": true, ".ruff_cache": true,
	"bower_components": true, ".bundle": true, "Pods": true, ".terraform": true, ".svn": true,
	".hg": true, "site-packages": true, ".eggs": true, "zig-cache": true, ".zig-cache": true,
	"cmake-build-debug": true, "cmake-build-release": true, ".dart_tool": true, ".aiwg": true,
}

// isSkippedDir reports whether a directory name is build output,
// dependencies or metadata that inference never looks into.
func isSkippedDir(name string) bool {
	return skipDirs[name] || strings.HasSuffix(name, ".egg-info")
}

// repo reads a repository's files through an os.Root, so no path (nor a
// symlink in the repository) can read outside it. It caches listings and
// files: the layers ask for the same files more than once.
type repo struct {
	root     *os.Root
	dirs     map[string][]fs.DirEntry
	files    map[string]fileResult
	problems []Finding // files that exist but could not be read or parsed
	reported map[string]bool
	// host is the machine the check will run on: the matrix entry it can
	// run is the default one.
	host Host
}

type fileResult struct {
	data []byte
	err  error
}

func openRepo(dir string) (*repo, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("reading repository %q: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("reading repository %q: not a directory; pass the repository root with -C DIR", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("reading repository %q: %w", dir, err)
	}
	r := &repo{root: root, dirs: map[string][]fs.DirEntry{}, files: map[string]fileResult{}, reported: map[string]bool{}, host: defaultHost}
	if _, err := r.list("."); err != nil {
		_ = root.Close()
		return nil, fmt.Errorf("reading repository %q: %w", dir, err)
	}
	return r, nil
}

func (r *repo) close() { _ = r.root.Close() }

func clean(p string) string {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	if p == "" || p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}

// list returns the sorted entries of a directory (relative to the root).
func (r *repo) list(dir string) ([]fs.DirEntry, error) {
	dir = clean(dir)
	if ents, ok := r.dirs[dir]; ok {
		return ents, nil
	}
	f, err := r.root.Open(dir)
	if err != nil {
		r.dirs[dir] = nil
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		r.dirs[dir] = nil
		return nil, err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	r.dirs[dir] = ents
	return ents, nil
}

// entries returns the names in dir, or nil when it cannot be listed.
func (r *repo) names(dir string) []string {
	ents, _ := r.list(dir)
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// subdirs returns the directories in dir that inference may look into.
func (r *repo) subdirs(dir string) []string {
	ents, _ := r.list(dir)
	var out []string
	for _, e := range ents {
		if e.IsDir() && !isSkippedDir(e.Name()) && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// exists reports whether p exists, using the cached listing of its parent.
func (r *repo) exists(p string) bool {
	p = clean(p)
	if p == "." {
		return true
	}
	dir, name := path.Split(p)
	ents, err := r.list(dir)
	if err != nil {
		return false
	}
	i := sort.Search(len(ents), func(i int) bool { return ents[i].Name() >= name })
	return i < len(ents) && ents[i].Name() == name
}

// isDir reports whether p is a directory.
func (r *repo) isDir(p string) bool {
	p = clean(p)
	if p == "." {
		return true
	}
	dir, name := path.Split(p)
	ents, err := r.list(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name() == name {
			if e.IsDir() {
				return true
			}
			if e.Type()&fs.ModeSymlink != 0 {
				st, err := r.root.Stat(p)
				return err == nil && st.IsDir()
			}
			return false
		}
	}
	return false
}

// read returns a file's content; ok is false when it does not exist. A file
// that exists but cannot be read is reported once as unreadable.
func (r *repo) read(p string) ([]byte, bool) {
	p = clean(p)
	if !r.exists(p) {
		return nil, false
	}
	if res, ok := r.files[p]; ok {
		return res.data, res.err == nil
	}
	data, err := r.readFile(p)
	r.files[p] = fileResult{data: data, err: err}
	if err != nil {
		r.unreadable(LayerManifest, p, err)
		return nil, false
	}
	return data, true
}

func (r *repo) readFile(p string) ([]byte, error) {
	return shellcmd.ReadBounded(r.root.FS(), p, maxFileSize)
}

// readDirect reads a file without listing its directory first (for many
// files in many directories: workspace members). A missing file is not a
// problem; one that cannot be read is reported.
func (r *repo) readDirect(p string) ([]byte, bool) {
	p = clean(p)
	if res, ok := r.files[p]; ok {
		return res.data, res.err == nil
	}
	data, err := r.readFile(p)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	r.files[p] = fileResult{data: data, err: err}
	if err != nil {
		r.unreadable(LayerManifest, p, err)
		return nil, false
	}
	return data, true
}

// unreadable records that a file could not be read or parsed; the layer goes
// on without it.
func (r *repo) unreadable(layer, p string, err error) {
	if r.reported[p] {
		return
	}
	r.reported[p] = true
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	r.problems = append(r.problems, Finding{Layer: layer, Source: p, Finding: "unreadable, skipped: " + msg})
}

// join joins a directory and a name relative to the root.
func join(dir, name string) string {
	if dir == "" || dir == "." {
		return clean(name)
	}
	return clean(dir + "/" + name)
}

// repoFS is the repository as an fs.FS for shellcmd, through the cache:
// reads are bounded and a file that cannot be read is named once.
type repoFS struct{ r *repo }

func (f repoFS) Open(name string) (fs.File, error) { return f.r.root.FS().Open(name) }

// ReadFile reads through the cache (fs.ReadFileFS).
func (f repoFS) ReadFile(name string) ([]byte, error) {
	if !f.r.exists(name) {
		return nil, fs.ErrNotExist
	}
	data, ok := f.r.read(name)
	if !ok {
		if res := f.r.files[clean(name)]; res.err != nil {
			return nil, res.err
		}
		return nil, fs.ErrNotExist
	}
	return data, nil
}

// Exists tests a path against the cached listings.
func (f repoFS) Exists(name string) bool { return f.r.exists(name) }
