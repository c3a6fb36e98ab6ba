package criteria

import (
	"context"
	"strings"
	"testing"
)

func TestUndefinedVars(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]string{
		"cmake --build build --parallel $threads":         "threads",
		"pnpm exec nx test \"$PACKAGE\" -- --coverage":    "PACKAGE",
		"echo '$NOT_EXPANDED' && go test ./...":           "",
		"N=4; go test -p $N ./...":                        "",
		"for f in tests/*.py; do python $f; done":         "",
		"make test HOME=$HOME PATH=$PATH":                 "",
		"go test ${GOFLAGS:-} ./...":                      "",
		"tox -e ${{ matrix.env }}":                        "",
		"make test TARGET=${TARGET_ARCH} && ./run $SUITE": "TARGET_ARCH,SUITE",
		"bundle exec rake \"spec[$SPEC_OPTS]\" || true":   "SPEC_OPTS",
		`sh -c 'echo $INSIDE_SINGLE_QUOTES' && echo "$X"`: "X",
	} {
		if got := strings.Join(undefinedVars(cmd), ","); got != want {
			t.Errorf("undefinedVars(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// unrunnable refuses what a fresh clone cannot run, and lets the rest be.
func TestUnrunnable(t *testing.T) {
	t.Parallel()
	dir := writeRepo(t, map[string]string{
		"go.mod": "module x\n", "runtest": "#!/bin/sh\n", "tests/conf/README": "x", "src/lib.c": "",
	})
	r, err := openRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for _, tc := range []struct{ cmd, workdir, want string }{
		{"go test ./...", ".", ""},
		{"./runtest --verbose", ".", ""},
		{"vendor/bin/phpunit", ".", ""}, // composer install makes it
		{"make test", "src/github.com/org/repo", "does not exist in the repository"},
		{"cd '${{ env.GOPATH }}/src' && make test", ".", "GitHub Actions expression"},
		{"make test", "__AL_EXPR_1__", "GitHub Actions expression"},
		{"cmake --build build --parallel $threads", ".", "$threads"},
		{"./build/tests/unit", ".", "a fresh clone lacks"},
		{"cmake -S . -B build && cmake --build build && ./build/tests/unit", ".", ""},
		{"tests/conf/", ".", "is a directory"},
		{"tox run --installpkg dist/*.whl -e py311", ".", "dist/*.whl, which a left-out step builds"},
		{"git diff --name-only | xargs -0 pytest", ".", "xargs"},
		{`cmake -S . -B build -G "Visual Studio 17 2022" && cmake --build build`, ".", "Visual Studio"},
	} {
		if got := unrunnable(r, tc.cmd, tc.workdir); tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("unrunnable(%q in %s) = %q, want %q", tc.cmd, tc.workdir, got, tc.want)
		}
	}
	for _, tc := range []struct{ setup, command string }{{"", "ctest --test-dir build"}, {"mkdir build", "cd build && ctest"}} {
		if why := needsBuildTree(tc.setup, tc.command); why == "" {
			t.Errorf("needsBuildTree(%q, %q) = \"\": nothing configures the tree", tc.setup, tc.command)
		}
	}
	if why := needsBuildTree("cmake -S . -B build", "cmake --build build && ctest --test-dir build"); why != "" {
		t.Errorf("a configured tree: %q", why)
	}
	kept, dropped, essential := repairSetup(r, "npm ci && cd node-__AL_EXPR_1__ && ./configure --without-intl && make install", ".")
	if !essential {
		t.Errorf("a configure step that cannot run is essential: kept %q dropped %q", kept, dropped)
	}
	kept, dropped, essential = repairSetup(r, "go mod download && curl -sSL $INSTALLER_URL | sh && go install ./cmd/x", ".")
	if essential || kept != "go mod download && go install ./cmd/x" || len(dropped) != 1 {
		t.Errorf("repairSetup: kept %q dropped %q essential %v", kept, dropped, essential)
	}
}

func TestRepairGenerator(t *testing.T) {
	t.Parallel()
	cmd := "cmake -S . -B build -G Ninja && cmake --build build && ctest --test-dir build"
	if got, note := repairGenerator(cmd, StaticHost{}); got != "cmake -S . -B build && cmake --build build && ctest --test-dir build" || !strings.Contains(note, "no ninja") {
		t.Errorf("without ninja: %q %q", got, note)
	}
	if got, note := repairGenerator(cmd, StaticHost{Programs: map[string]bool{"ninja": true}}); got != cmd || note != "" {
		t.Errorf("with ninja: %q %q", got, note)
	}
}

// CI's dotnet test --no-restore (after a restore step) restores locally;
// a CI configure with a generator this machine lacks is repaired.
func TestCIRepairs(t *testing.T) {
	t.Parallel()
	dir := writeRepo(t, map[string]string{
		"App.sln":                  "",
		".github/workflows/ci.yml": "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: dotnet restore\n      - run: dotnet build --no-restore\n      - run: dotnet test --no-restore --no-build --verbosity normal\n",
	})
	p, err := InferWith(context.Background(), dir, "fix the failing tests", Options{Host: StaticHost{}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Command != "dotnet test" || !hasFinding(p, "--no-restore") {
		t.Errorf("got %q\n%s", p.Command, p.Summary())
	}
	dir = writeRepo(t, map[string]string{
		"CMakeLists.txt":           "enable_testing()\nadd_test(NAME t COMMAND t)\n",
		".github/workflows/ci.yml": "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cmake -S . -B build -G Ninja\n      - run: cmake --build build\n      - run: ctest --test-dir build\n",
	})
	p, err = InferWith(context.Background(), dir, "fix the failing tests", Options{Host: StaticHost{}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.Command, "Ninja") || !strings.Contains(p.Command, "ctest --test-dir build") || !hasFinding(p, "no ninja") {
		t.Errorf("got %q\n%s", p.Command, p.Summary())
	}
}
