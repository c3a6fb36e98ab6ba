package actions

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// There is no Docker engine to build the image in tests; these tests read
// the Dockerfile the way docker does (line continuations, comments, stages,
// ARG defaults) and check what the action depends on.

type dockerInstruction struct {
	Cmd   string // upper-case
	Args  string
	Line  int
	Stage int // index of the FROM it belongs to; -1 before the first
}

// parseDockerfile splits src into instructions: comment lines (also inside
// a continuation) are dropped, "\" at the end of a line continues it.
func parseDockerfile(src string) []dockerInstruction {
	var out []dockerInstruction
	stage := -1
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSpace(strings.TrimSuffix(trimmed, "\\")) + " ")
			continue
		}
		cur.WriteString(trimmed)
		full := strings.TrimSpace(cur.String())
		cur.Reset()
		if full == "" {
			continue
		}
		cmd, args, _ := strings.Cut(full, " ")
		cmd = strings.ToUpper(cmd)
		if cmd == "FROM" {
			stage++
		}
		out = append(out, dockerInstruction{Cmd: cmd, Args: strings.TrimSpace(args), Line: start, Stage: stage})
	}
	return out
}

var (
	argRef        = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
	exactVersion  = regexp.MustCompile(`^(@[a-z0-9-~][a-z0-9-._~]*/)?[a-z0-9-~][a-z0-9-._~]*@\d+\.\d+\.\d+$`)
	requiredCLIs  = []string{"@anthropic-ai/claude-code", "@openai/codex", "@google/gemini-cli", "opencode-ai"}
	shellControls = []string{"&&", "||", ";", "|"}
)

// checkDockerfile returns every problem of the action's Dockerfile.
func checkDockerfile(src string) []string {
	var problems []string
	add := func(line int, format string, a ...any) {
		problems = append(problems, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, a...))
	}
	ins := parseDockerfile(src)
	last := -1
	for _, in := range ins {
		last = max(last, in.Stage)
	}
	if last < 0 {
		return []string{"no FROM"}
	}
	stages := map[string]bool{}
	args := map[int]map[string]string{} // stage -> ARG defaults (-1: global)
	expand := func(stage int, s string) string {
		return argRef.ReplaceAllStringFunc(s, func(ref string) string {
			name := argRef.FindStringSubmatch(ref)[1]
			if v, ok := args[stage][name]; ok {
				return v
			}
			return ref
		})
	}
	var entrypoints, npmPackages []string
	var sawSandbox, sawPostLink, sawStaticBuild bool
	for _, in := range ins {
		switch in.Cmd {
		case "ARG":
			if args[in.Stage] == nil {
				args[in.Stage] = map[string]string{}
			}
			name, def, _ := strings.Cut(in.Args, "=")
			args[in.Stage][name] = strings.Trim(def, `"`)
		case "FROM":
			fields := strings.Fields(expand(-1, in.Args))
			var image, alias string
			for i := 0; i < len(fields); i++ {
				switch {
				case strings.HasPrefix(fields[i], "--"):
				case strings.EqualFold(fields[i], "AS") && i+1 < len(fields):
					alias = fields[i+1]
					i++
				case image == "":
					image = fields[i]
				}
			}
			if !stages[image] && image != "scratch" && !pinnedImage(image) {
				add(in.Line, "FROM %s is not pinned: give a version tag (not latest) or a digest", image)
			}
			if alias != "" {
				stages[alias] = true
			}
		case "ENTRYPOINT", "CMD":
			var argv []string
			if err := json.Unmarshal([]byte(in.Args), &argv); err != nil {
				add(in.Line, "%s %s is in shell form: use exec form [\"...\"] (a /bin/sh entrypoint drops INPUT_ variables with hyphens)", in.Cmd, in.Args)
				continue
			}
			if in.Cmd == "CMD" && in.Stage == last {
				add(in.Line, "CMD in the final stage: the runner passes runs.args, a CMD would be appended when there are none")
			}
			if in.Cmd == "ENTRYPOINT" && in.Stage == last {
				entrypoints = append(entrypoints, strings.Join(argv, " "))
			}
		case "USER":
			if in.Stage == last && in.Args != "root" && in.Args != "0" {
				add(in.Line, "USER %s: GitHub runs container actions as root and mounts the workspace for root", in.Args)
			}
		case "ENV":
			if regexp.MustCompile(`(^|\s)IS_SANDBOX=1(\s|$)`).MatchString(in.Args) && in.Stage == last {
				sawSandbox = true
			}
		case "RUN":
			run := expand(in.Stage, in.Args)
			if strings.Contains(run, "ln -s /agent-loop "+PostEntrypoint) && in.Stage == last {
				sawPostLink = true
			}
			if strings.Contains(run, "CGO_ENABLED=0") && strings.Contains(run, "-trimpath") && strings.Contains(run, "-X main.version=") {
				sawStaticBuild = true
			}
			npmPackages = append(npmPackages, npmGlobalPackages(run)...)
		}
	}
	if len(entrypoints) != 1 || entrypoints[0] != "/agent-loop" {
		add(0, "the final stage's ENTRYPOINT is %q, want exactly one [\"/agent-loop\"]", entrypoints)
	}
	if !sawPostLink {
		add(0, "the final stage does not create %s (ln -s /agent-loop %s), the post-entrypoint of action.yml", PostEntrypoint, PostEntrypoint)
	}
	if !sawSandbox {
		add(0, "ENV IS_SANDBOX=1 missing: Claude Code refuses to skip permissions as root without it")
	}
	if !sawStaticBuild {
		add(0, "no static, reproducible build (CGO_ENABLED=0 go build -trimpath -ldflags \"-X main.version=...\")")
	}
	for _, p := range npmPackages {
		if !exactVersion.MatchString(p) {
			add(0, "npm package %s is not pinned to an exact version (name@1.2.3)", p)
		}
	}
	for _, cli := range requiredCLIs {
		if !slices.ContainsFunc(npmPackages, func(p string) bool { return strings.HasPrefix(p, cli+"@") }) {
			add(0, "agent CLI %s is not installed with npm install --global", cli)
		}
	}
	return problems
}

// pinnedImage reports whether an image reference names a digest or a tag
// other than latest.
func pinnedImage(ref string) bool {
	if strings.Contains(ref, "@sha256:") {
		return true
	}
	name := ref[strings.LastIndex(ref, "/")+1:]
	_, tag, ok := strings.Cut(name, ":")
	return ok && tag != "" && tag != "latest" && !strings.Contains(tag, "$")
}

// npmGlobalPackages returns the package arguments of `npm install --global`
// (or npm i -g) commands in a RUN line.
func npmGlobalPackages(run string) []string {
	var out []string
	fields := strings.Fields(run)
	for i := 0; i+1 < len(fields); i++ {
		if fields[i] != "npm" || (fields[i+1] != "install" && fields[i+1] != "i") {
			continue
		}
		var pkgs []string
		global := false
		for j := i + 2; j < len(fields) && !slices.Contains(shellControls, fields[j]); j++ {
			f := strings.Trim(fields[j], `"'`)
			switch {
			case f == "-g" || f == "--global":
				global = true
			case strings.HasPrefix(f, "-"):
			default:
				pkgs = append(pkgs, f)
			}
		}
		if global {
			out = append(out, pkgs...)
		}
	}
	return out
}

func TestDockerfile(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if problems := checkDockerfile(string(src)); len(problems) > 0 {
		t.Errorf("Dockerfile:\n%s", strings.Join(problems, "\n"))
	}
	// The image and action.yml agree on the entrypoints.
	spec := loadActionSpec(t)
	if spec.Runs.Entrypoint != "/agent-loop" || spec.Runs.PostEntrypoint != PostEntrypoint {
		t.Errorf("action.yml runs %+v does not match the image's /agent-loop and %s", spec.Runs, PostEntrypoint)
	}
}

// TestCheckDockerfile shows the checker catches each mistake it is for.
func TestCheckDockerfile(t *testing.T) {
	t.Parallel()
	good := `# syntax=docker/dockerfile:1
ARG GO=1.26
FROM --platform=$BUILDPLATFORM golang:${GO}-bookworm AS builder
RUN CGO_ENABLED=0 go build -trimpath \
    # a comment inside a continuation
    -ldflags "-X main.version=v1" -o /out/agent-loop .
FROM node:22-bookworm-slim@sha256:` + strings.Repeat("a", 64) + `
ARG CODEX=0.169.0
RUN npm install --global "@anthropic-ai/claude-code@2.1.330" "@openai/codex@${CODEX}" \
      @google/gemini-cli@0.61.0 opencode-ai@1.18.33 && npm cache clean --force
COPY --from=builder /out/agent-loop /agent-loop
RUN ln -s /agent-loop /agent-loop-post
ENV IS_SANDBOX=1 OTHER=x
ENTRYPOINT ["/agent-loop"]
`
	tests := []struct {
		name string
		edit func(string) string
		want []string // substrings, one per expected problem
	}{
		{"good", func(s string) string { return s }, nil},
		{
			"shell-form entrypoint", func(s string) string {
				return strings.Replace(s, `ENTRYPOINT ["/agent-loop"]`, `ENTRYPOINT /agent-loop`, 1)
			},
			[]string{"shell form", `want exactly one ["/agent-loop"]`},
		},
		{
			"shell wrapper entrypoint", func(s string) string {
				return strings.Replace(s, `ENTRYPOINT ["/agent-loop"]`, `ENTRYPOINT ["/bin/sh", "-c", "/agent-loop"]`, 1)
			},
			[]string{`want exactly one ["/agent-loop"]`},
		},
		{"latest base image", func(s string) string { return strings.Replace(s, "golang:${GO}-bookworm", "golang:latest", 1) }, []string{"FROM golang:latest is not pinned"}},
		{"untagged base image", func(s string) string { return strings.Replace(s, "golang:${GO}-bookworm", "golang", 1) }, []string{"FROM golang is not pinned"}},
		{"unpinned CLI", func(s string) string { return strings.Replace(s, "opencode-ai@1.18.33", "opencode-ai", 1) }, []string{"opencode-ai is not pinned", "opencode-ai is not installed"}},
		{"range-pinned CLI", func(s string) string {
			return strings.Replace(s, "@google/gemini-cli@0.61.0", "@google/gemini-cli@^0.61.0", 1)
		}, []string{"gemini-cli@^0.61.0 is not pinned"}},
		{"missing CLI", func(s string) string { return strings.Replace(s, `"@openai/codex@${CODEX}"`, "", 1) }, []string{"@openai/codex is not installed"}},
		{"no post entrypoint", func(s string) string { return strings.Replace(s, "RUN ln -s /agent-loop /agent-loop-post\n", "", 1) }, []string{"/agent-loop-post"}},
		{"non-root user", func(s string) string { return strings.Replace(s, "ENV IS_SANDBOX", "USER node\nENV IS_SANDBOX", 1) }, []string{"USER node"}},
		{"no sandbox env", func(s string) string { return strings.Replace(s, "IS_SANDBOX=1 ", "", 1) }, []string{"IS_SANDBOX=1 missing"}},
		{"shell CMD", func(s string) string { return s + "CMD agent-loop run\n" }, []string{"CMD agent-loop run is in shell form"}},
		{"cgo build", func(s string) string { return strings.Replace(s, "CGO_ENABLED=0 ", "", 1) }, []string{"no static"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := checkDockerfile(tt.edit(good))
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to mention %q", i, got[i], w)
				}
			}
		})
	}
}

func TestParseDockerfile(t *testing.T) {
	t.Parallel()
	got := parseDockerfile("# c\nFROM a:1 AS b\nRUN x \\\n  # inner\n  y\n\nentrypoint [\"z\"]\n")
	want := []dockerInstruction{
		{Cmd: "FROM", Args: "a:1 AS b", Line: 2, Stage: 0},
		{Cmd: "RUN", Args: "x y", Line: 3, Stage: 0},
		{Cmd: "ENTRYPOINT", Args: `["z"]`, Line: 7, Stage: 0},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
