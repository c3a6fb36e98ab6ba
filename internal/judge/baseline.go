package judge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
)

// Bounds of the baseline measurement.
const (
	maxBaselineFiles = 200_000
	maxSourceBytes   = 2 << 20 // larger files are data, not code to count
)

// skipDirs are never walked when git cannot list the files.
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, "vendor": true, "target": true, ".aiwg": true,
	"dist": true, "build": true, "__pycache__": true, ".venv": true, "venv": true, ".tox": true,
	"_build": true, "deps": true, ".gradle": true, "bin": true, "obj": true,
}

// Baseline measures the starting point: the number of tracked source files
// and their non-blank lines, with the baseline check result copied. It lists
// files with `git ls-files -z` (hooks, fsmonitor, system and global config
// disabled) and falls back to a bounded walk when git cannot.
func (j *Judge) Baseline(ctx context.Context, dir string, check loop.CheckResult) (loop.BaselineMetrics, error) {
	m := loop.BaselineMetrics{CapturedAt: time.Now().UTC(), Check: check}
	files, err := gitFiles(ctx, dir)
	if err != nil {
		files, err = walkFiles(ctx, dir)
		if err != nil {
			return m, fmt.Errorf("measuring the baseline of %s: %w", dir, err)
		}
	}
	for _, f := range files {
		if ctx.Err() != nil {
			return m, fmt.Errorf("measuring the baseline of %s: %w", dir, ctx.Err())
		}
		if !isSourceFile(f) {
			continue
		}
		n, ok := countLines(filepath.Join(dir, filepath.FromSlash(f)))
		if !ok {
			continue
		}
		m.FileCount++
		m.LinesOfCode += n
	}
	return m, nil
}

// gitEnv is the filtered environment for git: no inherited GIT_* variables,
// no system or global configuration.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GIT_"):
			continue
		case k == "PATH", k == "HOME", k == "LANG", k == "LC_ALL", k == "TMPDIR", k == "SYSTEMROOT":
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0")
}

func gitFiles(ctx context.Context, dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "git",
		"-c", "core.hooksPath="+os.DevNull, "-c", "core.fsmonitor=false", "-c", "safe.directory="+abs,
		"-C", abs, "ls-files", "-z", "--cached")
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w: %s", abs, err, strings.TrimSpace(stderr.String()))
	}
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) == 0 {
			continue
		}
		if len(files) == maxBaselineFiles {
			break
		}
		files = append(files, string(f))
	}
	return files, nil
}

func walkFiles(ctx context.Context, dir string) ([]string, error) {
	var files []string
	errStop := errors.New("enough files")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // unreadable entries are skipped
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if p != dir && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		if len(files) >= maxBaselineFiles {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return files, nil
}

// isSourceFile reports code and scripts (not data, docs, lock files,
// generated or vendored files).
func isSourceFile(p string) bool {
	if isIgnoredPath(p) || isLockFile(p) {
		return false
	}
	switch langOf(p) {
	case langGo, langPython, langJS, langRust, langJava, langKotlin, langCSharp, langRuby, langPHP, langElixir, langShell, langMake:
		return true
	}
	switch strings.ToLower(filepath.Ext(p)) {
	case ".c", ".h", ".cc", ".cpp", ".hpp", ".swift", ".scala", ".m", ".lua", ".dart", ".vue", ".svelte", ".zig", ".hs", ".ml", ".clj", ".erl", ".pl", ".r", ".jl", ".fs", ".sql":
		return true
	}
	return false
}

// countLines counts the non-blank lines of a text file; ok is false for
// unreadable, too large or binary files.
func countLines(p string) (int, bool) {
	f, err := os.Open(p)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxSourceBytes {
		return 0, false
	}
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), maxSourceBytes)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.IndexByte(line, 0) >= 0 {
			return 0, false
		}
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	if sc.Err() != nil {
		return 0, false
	}
	return n, true
}
