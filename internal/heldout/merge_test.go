package heldout

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMergeMixed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, path       string
		deps             CriterionDeps
		base, iter, want string
		changed          bool
	}{
		{
			name: "package.json scripts restored, dependency kept", path: "package.json",
			base:    `{"name":"a","scripts":{"test":"node --test"},"dependencies":{"x":"1"}}`,
			iter:    `{"name":"a","scripts":{"test":"node --test || true"},"dependencies":{"x":"1","y":"2"}}`,
			want:    "{\n  \"name\": \"a\",\n  \"scripts\": {\n    \"test\": \"node --test\"\n  },\n  \"dependencies\": {\n    \"x\": \"1\",\n    \"y\": \"2\"\n  }\n}\n",
			changed: true,
		},
		{
			name: "package.json: only the product changed", path: "package.json",
			base: `{"name":"a","scripts":{"test":"jest"},"version":"1.0.0"}`,
			iter: `{"name":"a","scripts":{"test":"jest"},"version":"1.1.0"}`,
			want: `{"name":"a","scripts":{"test":"jest"},"version":"1.1.0"}`,
		},
		{
			name: "package.json jest config added", path: "package.json",
			base: `{"name":"a"}`,
			iter: `{"name":"a","jest":{"testPathIgnorePatterns":["calc"]}}`,
			want: "{\n  \"name\": \"a\"\n}\n", changed: true,
		},
		{
			name: "composer.json scripts", path: "composer.json",
			base: `{"require":{"php":">=8"},"scripts":{"test":"phpunit"}}`,
			iter: `{"require":{"php":">=8.1"},"scripts":{"test":"true"}}`,
			want: "{\n  \"require\": {\n    \"php\": \">=8.1\"\n  },\n  \"scripts\": {\n    \"test\": \"phpunit\"\n  }\n}\n", changed: true,
		},
		{
			name: "pyproject: pytest section restored, project kept", path: "pyproject.toml",
			base: "[project]\nname = \"a\"\nversion = \"1\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n",
			iter: "[project]\nname = \"a\"\nversion = \"2\"\n\n[tool.pytest.ini_options]\naddopts = \"-q --deselect tests/test_a.py::test_x\"\n",
			want: "[project]\nname = \"a\"\nversion = \"2\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n", changed: true,
		},
		{
			name: "pyproject: new coverage section removed", path: "pyproject.toml",
			base: "[project]\nname = \"a\"\n",
			iter: "[project]\nname = \"a\"\n\n[tool.coverage.run]\nomit = [\"a/*\"]\n",
			want: "[project]\nname = \"a\"\n\n", changed: true,
		},
		{
			name: "setup.cfg", path: "setup.cfg",
			base: "[metadata]\nname = a\n[tool:pytest]\naddopts = -q\n",
			iter: "[metadata]\nname = b\n[tool:pytest]\naddopts = -q -k 'not slow'\n",
			want: "[metadata]\nname = b\n\n[tool:pytest]\naddopts = -q\n", changed: true,
		},
		{
			name: "Cargo.toml: lib test = false and autotests restored", path: "Cargo.toml",
			base: "[package]\nname = \"a\"\nversion = \"0.1.0\"\n\n[lib]\npath = \"src/lib.rs\"\n\n[dependencies]\n",
			iter: "[package]\nname = \"a\"\nversion = \"0.2.0\"\nautotests = false\n\n[lib]\npath = \"src/lib.rs\"\ntest = false\ndoctest = false\n\n[dependencies]\nserde = \"1\"\n",
			want: "[package]\nname = \"a\"\nversion = \"0.2.0\"\n\n[lib]\npath = \"src/lib.rs\"\n\n[dependencies]\nserde = \"1\"\n", changed: true,
		},
		{
			name: "Cargo.toml: dev-dependencies section", path: "Cargo.toml",
			base: "[package]\nname = \"a\"\n\n[dev-dependencies]\nproptest = \"1\"\n",
			iter: "[package]\nname = \"a\"\n",
			want: "[package]\nname = \"a\"\n\n[dev-dependencies]\nproptest = \"1\"\n", changed: true,
		},
		{
			name: "Makefile: the criterion's target and its phony prerequisite", path: "Makefile",
			deps: CriterionDeps{Runner: "make", Targets: []string{"test"}},
			base: "CC = gcc\nTESTFLAGS = -v\n.PHONY: test unit\nbuild:\n\t$(CC) -o app app.c\ntest: unit\nunit:\n\tgo test $(TESTFLAGS) ./...\n",
			iter: "CC = gcc\nTESTFLAGS = -run XXX\n.PHONY: test unit\nbuild:\n\t$(CC) -o app app.c util.c\ntest: unit\nunit:\n\t./scripts/fake.sh\n",
			want: "CC = gcc\nTESTFLAGS = -v\n.PHONY: test unit\nbuild:\n\t$(CC) -o app app.c util.c\ntest: unit\nunit:\n\tgo test $(TESTFLAGS) ./...\n", changed: true,
		},
		{
			name: "Makefile: default goal", path: "Makefile",
			deps: CriterionDeps{Runner: "make"},
			base: "check:\n\tpytest\n",
			iter: "all:\n\ttrue\ncheck:\n\ttrue\n",
			want: "all:\n\ttrue\ncheck:\n\tpytest\n.DEFAULT_GOAL := check\n", changed: true,
		},
		{
			name: "CMake test directives", path: "CMakeLists.txt",
			base: "project(a C)\nadd_executable(app main.c)\nenable_testing()\nadd_test(NAME t COMMAND t)\n",
			iter: "project(a C)\nadd_executable(app main.c util.c)\nenable_testing()\n",
			want: "project(a C)\nadd_executable(app main.c util.c)\nenable_testing()\nadd_test(NAME t COMMAND t)\n", changed: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, changed, err := Merge(tc.path, Mixed, tc.deps, []byte(tc.base), []byte(tc.iter))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(got)); d != "" {
				t.Errorf("merge (-want +got):\n%s", d)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
		})
	}
}

func TestMergeInline(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, path       string
		base, iter, want string
	}{
		{
			name: "rust: the test module's expected value restored, the fix kept", path: "src/lib.rs",
			base: "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n}\n",
			iter: "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), -1);\n    }\n}\n",
			want: "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n}\n",
		},
		{
			name: "rust: tests moved out come back at the end", path: "src/lib.rs",
			base: "pub fn f() -> u8 { 1 }\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { assert_eq!(super::f(), 1); }\n}\n",
			iter: "pub fn f() -> u8 { 1 }\n",
			want: "pub fn f() -> u8 { 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { assert_eq!(super::f(), 1); }\n}\n",
		},
		{
			name: "rust: braces in strings and chars", path: "src/lib.rs",
			base: "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { let s = \"}\"; let c = '{'; assert_eq!(s.len(), 1); }\n}\npub fn g() {}\n",
			iter: "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { let s = \"}\"; let c = '{'; }\n}\npub fn g() { let _ = 1; }\n",
			want: "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { let s = \"}\"; let c = '{'; assert_eq!(s.len(), 1); }\n}\npub fn g() { let _ = 1; }\n",
		},
		{
			name: "rust: doc test restored where the doc comment was removed", path: "src/lib.rs",
			base: "/// Adds.\n/// ```\n/// assert_eq!(a::add(1, 1), 2);\n/// ```\npub fn add(a: i32, b: i32) -> i32 { a - b }\n",
			iter: "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
			want: "/// Adds.\n/// ```\n/// assert_eq!(a::add(1, 1), 2);\n/// ```\npub fn add(a: i32, b: i32) -> i32 { a + b }\n",
		},
		{
			name: "python: doctest expected value restored", path: "calc.py",
			base: "def add(a, b):\n    \"\"\"Add.\n\n    >>> add(2, 3)\n    5\n    \"\"\"\n    return a - b\n",
			iter: "def add(a, b):\n    \"\"\"Add.\n\n    >>> add(2, 3)\n    -1\n    \"\"\"\n    return a - b\n",
			want: "def add(a, b):\n    \"\"\"Add.\n\n    >>> add(2, 3)\n    5\n    \"\"\"\n    return a - b\n",
		},
		{
			name: "python: docstring deleted, baseline's back", path: "pkg/calc.py",
			base: "class C:\n    def m(self):\n        '''\n        >>> C().m()\n        1\n        '''\n        return 2\n",
			iter: "class C:\n    def m(self):\n        return 1\n",
			want: "class C:\n    def m(self):\n        '''\n        >>> C().m()\n        1\n        '''\n        return 1\n",
		},
		{
			name: "python: new doctest held out, new plain docstring kept", path: "calc.py",
			base: "def a():\n    return 1\n",
			iter: "def a():\n    \"\"\"\n    >>> a()\n    1\n    \"\"\"\n    return 1\n\ndef b():\n    \"\"\"Plain.\"\"\"\n    return 2\n",
			want: "def a():\n    \"\"\"(doctest held out)\"\"\"\n    return 1\n\ndef b():\n    \"\"\"Plain.\"\"\"\n    return 2\n",
		},
		{
			name: "elixir: doctest restored", path: "lib/calc.ex",
			base: "defmodule Calc do\n  @doc \"\"\"\n  iex> Calc.add(2, 3)\n  5\n  \"\"\"\n  def add(a, b), do: a - b\nend\n",
			iter: "defmodule Calc do\n  @doc \"\"\"\n  iex> Calc.add(2, 3)\n  -1\n  \"\"\"\n  def add(a, b), do: a - b\nend\n",
			want: "defmodule Calc do\n  @doc \"\"\"\n  iex> Calc.add(2, 3)\n  5\n  \"\"\"\n  def add(a, b), do: a - b\nend\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := Merge(tc.path, Inline, CriterionDeps{}, []byte(tc.base), []byte(tc.iter))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(got)); d != "" {
				t.Errorf("merge (-want +got):\n%s", d)
			}
		})
	}
}

func TestMergeDeleted(t *testing.T) {
	t.Parallel()
	got, changed, err := Merge("package.json", Mixed, CriterionDeps{}, []byte(`{"scripts":{}}`), nil)
	if err != nil || !changed || !strings.Contains(string(got), "scripts") {
		t.Errorf("a deleted package.json: %q %v %v", got, changed, err)
	}
	got, _, _ = Merge("src/lib.rs", Inline, CriterionDeps{}, []byte("fn a() {}\n"), nil)
	if got != nil {
		t.Errorf("a deleted source file came back: %q", got)
	}
}
