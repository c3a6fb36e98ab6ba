package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// A .gitattributes line (`*_test.go -diff`, `binary`) makes git print
// "Binary files a/x and b/x differ" for a text file: the judge would see
// that a test changed, not how. Attributes cannot be switched off in git
// 2.39 (the index's .gitattributes count even with --bare), so the diffs
// the judge reads are mended instead: every file git calls binary is
// diffed again with --text, and the text replaces the binary line when it
// holds no NUL byte (git's own test for binary content). Large files keep
// the binary line.

// maxTextRediff bounds the work-tree size of a file diffed again as text.
const maxTextRediff = 8 << 20

// mendBinary replaces attribute-made binary sections of diff (from commit
// from to the trusted index) with their text.
func (r *Repo) mendBinary(ctx context.Context, from, diff string, state []string) (string, error) {
	if r.weak.attrs || !strings.Contains(diff, "\nBinary files ") {
		return diff, nil
	}
	res, err := r.git(ctx, gitCall{args: append([]string{"diff", "--cached", "-z", "--numstat", "--find-renames", "--no-ext-diff",
		"--no-textconv", "--ignore-submodules=dirty", "--end-of-options", from, "--", "."}, excludeSpecs(state)...)})
	if err != nil {
		return "", err
	}
	var paths []string
	recs := splitZ(res.stdout)
	for i := 0; i < len(recs); i++ {
		f := strings.SplitN(recs[i], "\t", 3)
		if len(f) != 3 {
			continue
		}
		names := []string{f[2]}
		if f[2] == "" && i+2 < len(recs) {
			names = []string{recs[i+1], recs[i+2]}
			i += 2
		}
		if f[0] != "-" || f[1] != "-" {
			continue
		}
		for _, n := range names {
			if fi, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(n))); err == nil && fi.Size() > maxTextRediff {
				names = nil
				break
			}
		}
		paths = append(paths, names...)
	}
	if len(paths) == 0 {
		return diff, nil
	}
	args := append(diffArgs(from, "--text"), includeSpecs(paths)...)
	text, err := r.git(ctx, gitCall{args: args})
	if err != nil {
		return "", err
	}
	mended := map[string]string{}
	for _, sec := range diffSections(string(text.stdout)) {
		if !strings.Contains(sec, "\x00") {
			mended[firstLineOf(sec)] = sec
		}
	}
	var b strings.Builder
	for _, sec := range diffSections(diff) {
		if m, ok := mended[firstLineOf(sec)]; ok && strings.Contains(sec, "\nBinary files ") {
			b.WriteString(m)
			continue
		}
		b.WriteString(sec)
	}
	return b.String(), nil
}

// diffSections splits a unified diff at its "diff --git " headers.
func diffSections(d string) []string {
	var out []string
	for len(d) > 0 {
		i := strings.Index(d[1:], "\ndiff --git ")
		if i < 0 {
			out = append(out, d)
			break
		}
		out = append(out, d[:i+2])
		d = d[i+2:]
	}
	return out
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// diffArgs are the options of the judge's diff from commit from to the
// trusted index, before the pathspecs.
func diffArgs(from string, extra ...string) []string {
	args := []string{"diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames",
		"--diff-algorithm=myers", "--indent-heuristic", "--src-prefix=a/", "--dst-prefix=b/", "--no-relative",
		"-U3", "--inter-hunk-context=0", "--ignore-submodules=dirty", "-O/dev/null"}
	args = append(args, extra...)
	return append(args, "--end-of-options", from, "--")
}
