package shellcmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	t.Parallel()
	type cmd struct {
		Text, Dir  string
		Or         bool
		Pipe       string
		Compound   bool
		DirUnknown bool
		Piped      []string
	}
	tests := []struct {
		name   string
		script string
		want   []cmd
	}{
		{"lines", "npm ci\nnpm test", []cmd{{Text: "npm ci", Dir: "."}, {Text: "npm test", Dir: "."}}},
		{"cd chain", "cd frontend && npm ci && npm test", []cmd{{Text: "npm ci", Dir: "frontend"}, {Text: "npm test", Dir: "frontend"}}},
		{"subshell scope", "(cd a && make)\nmake test", []cmd{{Text: "make", Dir: "a"}, {Text: "make test", Dir: "."}}},
		{"pushd popd", "pushd build\nctest\npopd\nls", []cmd{{Text: "ctest", Dir: "build"}, {Text: "ls", Dir: "."}}},
		{"or fallback", "npm test || true", []cmd{{Text: "npm test", Dir: ".", Or: true}}},
		{"pipe", "go test ./... 2>&1 | tee out.txt", []cmd{{Text: "go test ./...", Dir: ".", Pipe: "tee", Piped: []string{"tee out.txt"}}}},
		{"xargs in a pipe", "git ls-files '*.sh' | xargs shellcheck", []cmd{{Text: "git ls-files '*.sh'", Dir: ".", Pipe: "xargs", Piped: []string{"xargs shellcheck"}}}},
		{"continuation", "cmake -B build \\\n  -DX=1", []cmd{{Text: "cmake -B build -DX=1", Dir: "."}}},
		{"export and set", "set -eux\nexport GOFLAGS=-mod=mod\ngo test ./...", []cmd{{Text: "set -eux", Dir: "."}, {Text: "go test ./...", Dir: "."}}},
		{"compound", "for d in a b; do (cd $d && go test ./...); done", []cmd{{Text: "for d in a b; do (cd $d && go test ./...); done", Dir: ".", Compound: true}}},
		{"workspace var", "cd $GITHUB_WORKSPACE/app && make", []cmd{{Text: "make", Dir: "app"}}},
		{"cd to a variable", "cd \"$DIR\" && make", []cmd{{Text: "make", Dir: ".", DirUnknown: true}}},
		{"cd up", "cd a/b && cd ../c && make", []cmd{{Text: "make", Dir: "a/c"}}},
		{"functions are expanded where called", "t() { go test \"$@\"; }\necho start\nt ./...", []cmd{{Text: "echo start", Dir: "."}, {Text: "go test \"$@\"", Dir: "."}}},
		{"recursive functions stop", "f() { f; make; }\nf", []cmd{{Text: "f", Dir: "."}, {Text: "make", Dir: "."}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tc.script)
			if err != nil {
				t.Fatal(err)
			}
			var out []cmd
			for _, c := range got {
				oc := cmd{Text: c.Text, Dir: c.Dir, Or: c.OrFallback, Pipe: c.PipedTo, Compound: c.Compound, DirUnknown: c.DirUnknown}
				for _, p := range c.Piped {
					oc.Piped = append(oc.Piped, p.Text)
				}
				out = append(out, oc)
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.script, diff)
			}
		})
	}
	if _, err := Parse("if then fi ((("); err == nil {
		t.Error("a broken script parsed without error")
	}
}

func TestParseWords(t *testing.T) {
	t.Parallel()
	got, err := Parse(`${PREFIX}pytest "$@" -k 'a b' $X "--cov=$PKG"`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pytest", "", "-k", "a b", "", "--cov="}
	if d := cmp.Diff(want, got[0].Args); d != "" {
		t.Errorf("args (-want +got):\n%s", d)
	}
}

func TestQuoteAndPaths(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "''", "a-b/c.d": "a-b/c.d", "a b": "'a b'", "it's": `'it'\''s'`} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range [][3]string{{".", "a", "a"}, {"a", "../b", "b"}, {"a", "./c/", "a/c"}, {"", "/abs", "abs"}, {".", "..", ".."}} {
		if got := Join(tc[0], tc[1]); got != tc[2] {
			t.Errorf("Join(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}
