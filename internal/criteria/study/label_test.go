package study

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// studyLabels is the committed study set, relative to this package.
const studyLabels = "../../../testdata/study/repos"

// TestStudyLabelsValid validates every committed label file: the check CI
// runs without any checkout. TestValidateRejects shows each rule failing.
func TestStudyLabelsValid(t *testing.T) {
	labels, err := LoadLabels(studyLabels)
	if err != nil {
		t.Fatalf("label files are invalid:\n%v", err)
	}
	// The issue asks for at least 80 real repositories across the ecosystems.
	if len(labels) < 80 {
		t.Errorf("%d labels, want at least 80", len(labels))
	}
	seen := map[string]int{}
	for _, l := range labels {
		seen[l.Ecosystem]++
	}
	for _, eco := range []string{"go", "node", "python", "rust", "jvm", "ruby", "php", "elixir", "dotnet", "c-cpp"} {
		if seen[eco] == 0 {
			t.Errorf("no label for ecosystem %s", eco)
		}
	}
}

// validLabel is a label that passes; each rejection case breaks one thing.
func validLabel() map[string]any {
	return map[string]any{
		"repo":         "acme/widget",
		"commit":       strings.Repeat("ab", 20),
		"ecosystem":    "go",
		"task":         "fix the failing tests",
		"command":      "go test ./...",
		"workdir":      ".",
		"equivalents":  []any{"go test -race ./...", "cd cmd && go test ../..."},
		"several":      false,
		"alternatives": []any{map[string]any{"command": "make bench", "workdir": ".", "why": "benchmarks"}},
		"evidence":     []any{map[string]any{"file": ".github/workflows/ci.yml", "where": "job test", "text": "go test ./..."}},
		"traps":        []any{},
		"notes":        "plain module",
	}
}

func encode(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name   string
		file   string // default acme__widget.json
		change func(m map[string]any)
		want   string // substring of the error; "" means valid
	}{
		{name: "valid control", change: func(map[string]any) {}},
		{name: "several with null command", change: func(m map[string]any) {
			m["several"], m["command"], m["equivalents"] = true, nil, []any{}
		}},
		{name: "short commit", change: func(m map[string]any) { m["commit"] = "abc123" }, want: "40-hex"},
		{name: "upper-case commit", change: func(m map[string]any) { m["commit"] = strings.Repeat("AB", 20) }, want: "40-hex"},
		{name: "unknown ecosystem", change: func(m map[string]any) { m["ecosystem"] = "golang" }, want: "ecosystem \"golang\""},
		{name: "repo not owner/name", change: func(m map[string]any) { m["repo"] = "widget" }, want: "not owner/name"},
		{name: "empty task", change: func(m map[string]any) { m["task"] = " " }, want: "task is empty"},
		{name: "empty command", change: func(m map[string]any) { m["command"] = "" }, want: "command is empty"},
		{name: "null command without several", change: func(m map[string]any) { m["command"] = nil }, want: "allowed only with"},
		{name: "several without alternatives", change: func(m map[string]any) {
			m["several"], m["alternatives"] = true, []any{}
		}, want: "no alternatives"},
		{name: "absolute workdir", change: func(m map[string]any) { m["workdir"] = "/src" }, want: "is absolute"},
		{name: "workdir leaves", change: func(m map[string]any) { m["workdir"] = "../other" }, want: "leaves the repository"},
		{name: "unclean workdir", change: func(m map[string]any) { m["workdir"] = "./web/" }, want: "not clean"},
		{name: "empty workdir", change: func(m map[string]any) { m["workdir"] = "" }, want: "empty (use"},
		{name: "backslash workdir", change: func(m map[string]any) { m["workdir"] = `src\app` }, want: "backslashes"},
		{name: "equivalent cds out", change: func(m map[string]any) {
			m["equivalents"] = []any{"cd .. && go test ./..."}
		}, want: "leaves the repository"},
		{name: "with_setup pairs", change: func(m map[string]any) {
			m["with_setup"] = []any{map[string]any{"setup": "go mod download", "command": "go test ./..."}}
		}},
		{name: "with_setup without setup", change: func(m map[string]any) {
			m["with_setup"] = []any{map[string]any{"setup": "", "command": "go test ./..."}}
		}, want: "with_setup[0] needs a setup and a command"},
		{name: "with_setup cds out", change: func(m map[string]any) {
			m["with_setup"] = []any{map[string]any{"setup": "make", "command": "cd .. && make check"}}
		}, want: "leaves the repository"},
		{name: "empty equivalent", change: func(m map[string]any) { m["equivalents"] = []any{""} }, want: "equivalents[0] is empty"},
		{name: "alternative contradicts command", change: func(m map[string]any) {
			m["alternatives"] = []any{map[string]any{"command": "go  test ./...", "workdir": ".", "why": "x"}}
		}, want: "cannot call it both"},
		{name: "alternative contradicts equivalent through cd", change: func(m map[string]any) {
			m["alternatives"] = []any{map[string]any{"command": "go test ../...", "workdir": "cmd", "why": "x"}}
		}, want: "cannot call it both"},
		{name: "alternative without why", change: func(m map[string]any) {
			m["alternatives"] = []any{map[string]any{"command": "make", "workdir": ".", "why": ""}}
		}, want: "needs a command and a why"},
		{name: "no evidence", change: func(m map[string]any) { m["evidence"] = []any{} }, want: "evidence is empty"},
		{name: "evidence without text", change: func(m map[string]any) {
			m["evidence"] = []any{map[string]any{"file": "Makefile", "where": "test", "text": ""}}
		}, want: "needs file, where and text"},
		{name: "evidence outside", change: func(m map[string]any) {
			m["evidence"] = []any{map[string]any{"file": "../x", "where": "w", "text": "t"}}
		}, want: "inside the repository"},
		{name: "traps null", change: func(m map[string]any) { m["traps"] = nil }, want: "traps is null"},
		{name: "empty notes", change: func(m map[string]any) { m["notes"] = "" }, want: "notes is empty"},
		{name: "missing key", change: func(m map[string]any) { delete(m, "traps") }, want: `missing key "traps"`},
		{name: "unknown key", change: func(m map[string]any) { m["comand"] = "x" }, want: `unknown field "comand"`},
		{name: "file name mismatch", file: "acme__gadget.json", change: func(map[string]any) {}, want: "rename it to acme__widget.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := validLabel()
			tc.change(m)
			file := tc.file
			if file == "" {
				file = "acme__widget.json"
			}
			_, err := ParseLabel(file, encode(t, m))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid label rejected: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("label accepted; want an error containing %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), file+":") {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}

func TestLoadLabelsDuplicateAndErrors(t *testing.T) {
	dir := t.TempDir()
	m := validLabel()
	if err := os.WriteFile(filepath.Join(dir, "acme__widget.json"), encode(t, m), 0o644); err != nil {
		t.Fatal(err)
	}
	m["repo"] = "Acme/Widget"
	if err := os.WriteFile(filepath.Join(dir, "Acme__Widget.json"), encode(t, m), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadLabels(dir)
	if err == nil {
		t.Fatal("duplicate and broken labels accepted")
	}
	for _, want := range []string{"labelled twice", "broken.json: not a JSON object"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := LoadLabels(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no label files") {
		t.Errorf("empty directory: err = %v, want 'no label files'", err)
	}
}

func TestHalf(t *testing.T) {
	var labels []Label
	for _, r := range []string{"a/1", "a/2", "a/3", "a/4", "a/5"} {
		labels = append(labels, Label{Repo: r})
	}
	names := func(ls []Label) string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Repo)
		}
		return strings.Join(out, " ")
	}
	if got := names(Half(labels, true)); got != "a/1 a/3 a/5" {
		t.Errorf("odd half = %q", got)
	}
	if got := names(Half(labels, false)); got != "a/2 a/4" {
		t.Errorf("even half = %q", got)
	}
}
