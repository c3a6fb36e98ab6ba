package study

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Ecosystems are the valid values of a label's "ecosystem" field.
var Ecosystems = []string{"go", "node", "python", "rust", "jvm", "ruby", "php", "elixir", "dotnet", "c-cpp", "polyglot"}

// Label is one testdata/study/repos/<owner>__<name>.json file.
type Label struct {
	Repo      string `json:"repo"`
	Commit    string `json:"commit"`
	Ecosystem string `json:"ecosystem"`
	Task      string `json:"task"`
	// Command is the best single answer; nil only when Several is true and
	// no single command is acceptable.
	Command *string `json:"command"`
	Workdir string  `json:"workdir"`
	// Equivalents run the same tests as Command. Each is run in Workdir,
	// unless it starts with "cd DIR &&", which moves it to Workdir/DIR.
	Equivalents []string `json:"equivalents"`
	// WithSetup (optional) lists setup-and-command pairs that are right when
	// the setup runs once before the command runs repeatedly: "meson setup
	// build" then "meson test -C build", which rebuilds on every run. A pair
	// is listed only where running the setup once is enough; a chain that
	// must rebuild every time ("make && ./runtest") stays one equivalent.
	WithSetup    []SetupPair   `json:"with_setup,omitempty"`
	Several      bool          `json:"several"`
	Alternatives []Alternative `json:"alternatives"`
	Evidence     []Evidence    `json:"evidence"`
	Traps        []string      `json:"traps"`
	Notes        string        `json:"notes"`

	// File is the path the label was read from; not part of the format.
	File string `json:"-"`
}

// Alternative is a suite or command that exists and is not the answer.
type Alternative struct {
	Command string `json:"command"`
	Workdir string `json:"workdir"`
	Why     string `json:"why"`
}

// SetupPair is a setup run once and the command run after it, in the
// label's workdir (a leading "cd DIR &&" moves the command, as in
// equivalents).
type SetupPair struct {
	Setup   string `json:"setup"`
	Command string `json:"command"`
}

// Evidence says where the labeller read what.
type Evidence struct {
	File  string `json:"file"`
	Where string `json:"where"`
	Text  string `json:"text"`
}

// Slug is the label's file stem and checkout directory name: owner__name.
func (l Label) Slug() string { return strings.Replace(l.Repo, "/", "__", 1) }

// requiredKeys are the top-level keys every label file carries.
var requiredKeys = []string{
	"repo", "commit", "ecosystem", "task", "command", "workdir", "equivalents",
	"several", "alternatives", "evidence", "traps", "notes",
}

var (
	commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)
	repoRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$`)
)

// ParseLabel decodes one label file's bytes and validates it. name is the
// file's base name (owner__name.json), checked against the repo field.
// Every problem is reported, joined.
func ParseLabel(name string, data []byte) (Label, error) {
	var l Label
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return l, fmt.Errorf("%s: not a JSON object: %w", name, err)
	}
	var errs []error
	for _, k := range requiredKeys {
		if _, ok := keys[k]; !ok {
			errs = append(errs, fmt.Errorf("%s: missing key %q (every label has %s)", name, k, strings.Join(requiredKeys, ", ")))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return l, errors.Join(append(errs, fmt.Errorf("%s: %w (valid keys: %s, and the optional with_setup)", name, err, strings.Join(requiredKeys, ", ")))...)
	}
	l.File = name
	if err := Validate(l); err != nil {
		errs = append(errs, err)
	}
	if want := l.Slug() + ".json"; l.Repo != "" && name != want {
		errs = append(errs, fmt.Errorf("%s: file name does not match repo %q: rename it to %s", name, l.Repo, want))
	}
	return l, errors.Join(errs...)
}

// Validate checks a decoded label: the pure part of ParseLabel.
func Validate(l Label) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{l.File}, args...)...))
	}
	if !repoRE.MatchString(l.Repo) {
		bad("repo %q is not owner/name", l.Repo)
	}
	if !commitRE.MatchString(l.Commit) {
		bad("commit %q is not a 40-hex lowercase commit id (take it from git log -1 --format=%%H)", l.Commit)
	}
	if !slices.Contains(Ecosystems, l.Ecosystem) {
		bad("ecosystem %q is not one of %s", l.Ecosystem, strings.Join(Ecosystems, ", "))
	}
	if strings.TrimSpace(l.Task) == "" {
		bad("task is empty (the study uses \"fix the failing tests\")")
	}
	switch {
	case l.Command == nil && !l.Several:
		bad("command is null, which is allowed only with \"several\": true")
	case l.Command != nil && strings.TrimSpace(*l.Command) == "":
		bad("command is empty: give the command, or null with \"several\": true")
	}
	if err := checkWorkdir(l.Workdir); err != nil {
		bad("workdir: %v", err)
	}
	seen := map[Target]bool{}
	if l.Command != nil {
		seen[NewTarget(*l.Command, l.Workdir)] = true
	}
	for i, e := range l.Equivalents {
		if strings.TrimSpace(e) == "" {
			bad("equivalents[%d] is empty", i)
			continue
		}
		t := NewTarget(e, l.Workdir)
		if err := checkWorkdir(t.Workdir); err != nil {
			bad("equivalents[%d] %q: its cd leaves the repository: %v", i, e, err)
		}
		seen[t] = true // a repeat is harmless; a contradiction (below) is not
	}
	for i, w := range l.WithSetup {
		if strings.TrimSpace(w.Setup) == "" || strings.TrimSpace(w.Command) == "" {
			bad("with_setup[%d] needs a setup and a command", i)
			continue
		}
		if err := checkWorkdir(NewTarget(w.Command, l.Workdir).Workdir); err != nil {
			bad("with_setup[%d] %q: its cd leaves the repository: %v", i, w.Command, err)
		}
	}
	if l.Command == nil && len(l.Equivalents) > 0 {
		bad("equivalents without a command: with \"command\": null list the suites as alternatives")
	}
	if l.Several && len(l.Alternatives) == 0 {
		bad("\"several\": true but no alternatives list the other suites")
	}
	for i, a := range l.Alternatives {
		if strings.TrimSpace(a.Command) == "" || strings.TrimSpace(a.Why) == "" {
			bad("alternatives[%d] needs a command and a why", i)
		}
		if err := checkWorkdir(a.Workdir); err != nil {
			bad("alternatives[%d] workdir: %v", i, err)
		}
		if seen[NewTarget(a.Command, a.Workdir)] {
			bad("alternatives[%d] %q is also the command or an equivalent: a label cannot call it both right and not right", i, a.Command)
		}
	}
	if len(l.Evidence) == 0 {
		bad("evidence is empty: say which file (CI workflow, manifest, contributor doc) shows the command")
	}
	for i, e := range l.Evidence {
		if strings.TrimSpace(e.File) == "" || strings.TrimSpace(e.Where) == "" || strings.TrimSpace(e.Text) == "" {
			bad("evidence[%d] needs file, where and text", i)
		}
		if path.IsAbs(e.File) || strings.HasPrefix(path.Clean(e.File), "../") {
			bad("evidence[%d] file %q must be a path inside the repository", i, e.File)
		}
	}
	if l.Traps == nil {
		bad("traps is null: use [] when there are none")
	}
	if strings.TrimSpace(l.Notes) == "" {
		bad("notes is empty: one or two sentences on what makes the choice non-obvious")
	}
	return errors.Join(errs...)
}

// checkWorkdir accepts a clean, relative, forward-slash path inside the
// repository ("." for the root).
func checkWorkdir(w string) error {
	switch {
	case w == "":
		return errors.New(`empty (use "." for the repository root)`)
	case strings.Contains(w, `\`):
		return fmt.Errorf("%q uses backslashes (use forward slashes)", w)
	case path.IsAbs(w):
		return fmt.Errorf("%q is absolute (give it relative to the repository root)", w)
	case path.Clean(w) != w:
		return fmt.Errorf("%q is not clean (write %q)", w, path.Clean(w))
	case w == ".." || strings.HasPrefix(w, "../"):
		return fmt.Errorf("%q leaves the repository", w)
	}
	return nil
}

// ErrNoLabels says a labels directory holds no label file.
var ErrNoLabels = errors.New("no labels")

// LoadLabels reads and validates every *.json file in dir, sorted by repo.
// Problems in any file are all reported, joined.
func LoadLabels(dir string) ([]Label, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("listing labels in %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no label files (*.json) in %s: pass --labels DIR with the study's testdata/study/repos: %w", dir, ErrNoLabels)
	}
	var labels []Label
	var errs []error
	byRepo := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading label %s: %w", f, err))
			continue
		}
		l, err := ParseLabel(filepath.Base(f), data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		key := strings.ToLower(l.Repo)
		if prev, dup := byRepo[key]; dup {
			errs = append(errs, fmt.Errorf("%s: repo %s is labelled twice (also in %s)", l.File, l.Repo, prev))
			continue
		}
		byRepo[key] = l.File
		labels = append(labels, l)
	}
	sort.Slice(labels, func(i, j int) bool { return strings.ToLower(labels[i].Repo) < strings.ToLower(labels[j].Repo) })
	return labels, errors.Join(errs...)
}

// Half returns the odd-numbered labels (1st, 3rd, ...) of labels, or the
// even-numbered ones: a fixed split of the study set, so that inference can
// be developed on one half and checked on the other.
func Half(labels []Label, odd bool) []Label {
	var out []Label
	for i, l := range labels {
		if (i%2 == 0) == odd {
			out = append(out, l)
		}
	}
	return out
}
