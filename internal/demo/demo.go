// Package demo holds the project and the scripted agent of `agent-loop
// demo`: a tiny shell project with a failing test, and a recorded agent that
// first cheats (deletes the failing tests) and then fixes the code.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed project script.yaml
var files embed.FS

// Task and Completion of the demo loop.
const (
	Task       = "make the calculator tests pass"
	Completion = "sh test.sh"
)

// Script returns the scripted agent's recording (YAML).
func Script() []byte {
	b, _ := files.ReadFile("script.yaml")
	return b
}

// WriteProject copies the demo project into dir.
func WriteProject(dir string) error {
	return fs.WalkDir(files, "project", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("project", p)
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return fmt.Errorf("writing demo file %s: %w", rel, err)
		}
		return nil
	})
}
