package criteria

import (
	"sort"
	"strings"
)

// Monorepos and polyglot repositories. When the task names a directory,
// the criterion is that directory's; when it does not and CI tests several
// directories in their own jobs with no root command over them all, the
// proposal lists every suite with its evidence (Suites) instead of picking
// one silently.

// manifestFiles mark a directory as a project of its own.
var manifestFiles = []string{"package.json", "go.mod", "Cargo.toml", "pyproject.toml", "setup.py", "setup.cfg", "pom.xml", "build.gradle", "build.gradle.kts", "Gemfile", "composer.json", "mix.exs", "CMakeLists.txt", "meson.build", "Makefile", "deno.json"}

// taskDir returns the repository directory the task names ("fix the
// failing tests in bindings/python", "... of packages/api"): a path with a
// slash that is a directory, or the name of a top-level directory that is
// a project of its own. "" when it names none.
func taskDir(task string, r *repo) string {
	fields := strings.Fields(task)
	for i, f := range fields {
		w := strings.Trim(f, "`'\".,;:()[]{}!?")
		w = strings.TrimSuffix(strings.TrimPrefix(w, "./"), "/")
		if w == "" || w == "." || strings.HasPrefix(w, "..") || strings.HasPrefix(w, "/") || strings.Contains(w, "://") {
			continue
		}
		if !r.isDir(w) {
			continue
		}
		if strings.Contains(w, "/") {
			return clean(w)
		}
		// A bare name only after a word that introduces a place ("in
		// tokenizers", "the api package"): "the failing tests" names no
		// directory even when the repository has tests/.
		prev, next := "", ""
		if i > 0 {
			prev = strings.ToLower(strings.Trim(fields[i-1], "`'\".,;:()"))
		}
		if i+1 < len(fields) {
			next = strings.ToLower(strings.Trim(fields[i+1], "`'\".,;:()"))
		}
		if !placeWords[prev] && !placeNouns[next] {
			continue
		}
		for _, mf := range manifestFiles {
			if r.exists(join(w, mf)) {
				return clean(w)
			}
		}
	}
	return ""
}

// placeWords come before a directory's name; placeNouns after it.
var (
	placeWords = map[string]bool{"in": true, "of": true, "under": true, "inside": true, "within": true, "package": true, "module": true, "crate": true, "directory": true, "dir": true, "folder": true, "workspace": true, "project": true}
	placeNouns = map[string]bool{"package": true, "module": true, "crate": true, "directory": true, "dir": true, "folder": true, "workspace": true, "project": true, "app": true, "service": true, "library": true, "lib": true}
)

// inDirTree reports whether dir is d or lies under it.
func inDirTree(dir, d string) bool {
	return dir == d || strings.HasPrefix(dir, d+"/")
}

// restrictTo keeps the candidates that run in dir or below it.
func restrictTo(pool []candidate, dir string) []candidate {
	var out []candidate
	for _, c := range pool {
		if inDirTree(c.workdir, dir) {
			out = append(out, c)
		}
	}
	return out
}

// peripheralWords name directories that hold something beside the
// project's own code: bindings for other languages, clients, examples,
// documentation sites, front ends.
var peripheralWords = map[string]bool{
	"bindings": true, "binding": true, "wrappers": true, "wrapper": true, "clients": true, "client": true, "sdk": true,
	"sdks": true, "examples": true, "example": true, "docs": true, "doc": true, "website": true, "site": true,
	"web": true, "ui": true, "frontend": true, "playground": true, "benchmarks": true, "bench": true, "tools": true,
	"scripts": true, "e2e": true, "demo": true, "demos": true, "samples": true, "sample": true, "contrib": true,
	"third_party": true, "vendor": true, "extras": true, "fixtures": true,
}

// peripheralDir reports a working directory under one of those.
func peripheralDir(dir string) bool {
	for _, w := range strings.Split(dir, "/") {
		if peripheralWords[strings.ToLower(w)] {
			return true
		}
	}
	return false
}

// suitesOf lists the independent suites CI tests in other directories than
// the chosen one's, when no command at the root runs them all: the gate of
// each directory (its best primary CI job), the chosen one first. Nil when
// the repository has one suite.
func (ev *evidence) suitesOf(chosen candidate, want kind) []Suite {
	best := map[string]candidate{}
	var dirs []string
	pool := append([]candidate(nil), ev.ci...)
	sort.SliceStable(pool, func(i, j int) bool { return score(pool[i], want) < score(pool[j], want) })
	for _, c := range pool {
		if c.unusable != "" || c.variant != "" || !c.kind.Has(kTest) || c.kind.Has(kE2E) {
			continue
		}
		if _, ok := best[c.workdir]; !ok {
			best[c.workdir] = c
			dirs = append(dirs, c.workdir)
		}
	}
	if len(dirs) < 2 {
		return nil
	}
	if _, root := best["."]; root && chosen.workdir == "." {
		return nil // the root has its own suite, and it was chosen
	}
	out := []Suite{{Command: chosen.command, Workdir: chosen.workdir, Source: chosen.source}}
	for _, d := range dirs {
		if d == chosen.workdir {
			continue
		}
		c := best[d]
		out = append(out, Suite{Command: c.command, Workdir: c.workdir, Source: c.source})
	}
	return out
}
