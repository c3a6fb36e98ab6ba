package criteria

import (
	"os"
	"path/filepath"
	"testing"
)

// The parsers of untrusted repository files must never panic. Each target
// has a seed corpus in testdata/fuzz/<Target>/ (generated from the fixture
// repositories) besides the f.Add seeds.

func addFixtureSeeds(f *testing.F, glob string) {
	matches, _ := filepath.Glob(filepath.Join("testdata", "repos", glob))
	for _, m := range matches {
		if data, err := os.ReadFile(m); err == nil {
			f.Add(data)
		}
	}
}

// fuzzRepo writes one file into a fresh repository and infers on it.
func fuzzRepo(t *testing.T, name string, data []byte) Proposal {
	dir := t.TempDir()
	full := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Infer(t.Context(), dir, "fix the failing tests")
	if err != nil {
		t.Fatal(err)
	}
	if p.Class == "" || p.Confidence == "" {
		t.Fatalf("incomplete proposal %+v", p)
	}
	if _, err := p.JSON(); err != nil {
		t.Fatal(err)
	}
	return p
}

func FuzzWorkflow(f *testing.F) {
	addFixtureSeeds(f, "*/.github/workflows/*.yml")
	f.Add([]byte("on: [push]\njobs:\n  t:\n    strategy:\n      matrix:\n        include: [{os: ubuntu-latest}]\n    runs-on: ${{ matrix.os }}\n    steps:\n      - run: go test ${{ matrix.x }} ./...\n"))
	f.Add([]byte("a: &a [*a]\njobs: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := openRepo(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
		jobs, err := parseGitHubWorkflow(r, ".github/workflows/ci.yml", data)
		if err != nil {
			return
		}
		m := newManifests(r)
		for _, j := range jobs {
			_ = analyzeJob(j, m)
		}
		_, _ = ciCandidates(jobs, m)
	})
}

func FuzzGitLabCI(f *testing.F) {
	addFixtureSeeds(f, "*/.gitlab-ci.yml")
	f.Add([]byte(".t: &t {script: [make]}\nj:\n  <<: *t\n  extends: [.t, .t]\n  parallel: {matrix: [{A: [1, 2]}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = parseGitLabCI(".gitlab-ci.yml", data, nil)
	})
}

func FuzzPackageJSON(f *testing.F) {
	addFixtureSeeds(f, "*/package.json")
	addFixtureSeeds(f, "*/*/*/package.json")
	f.Add([]byte(`{"scripts":{"test":"npm run test:unit && npm run lint","test:unit":"npm test"},"workspaces":{"packages":["a/**"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = parsePackageJSON(data)
		fuzzRepo(t, "package.json", data)
	})
}

func FuzzPyproject(f *testing.F) {
	addFixtureSeeds(f, "*/pyproject.toml")
	f.Add([]byte("[tool.tox]\nlegacy_tox_ini = \"[tox]\\nenvlist = py{38,39}\"\n[tool.hatch.envs.default.scripts]\ntest = [\"pytest\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRepo(t, "pyproject.toml", data)
	})
}

func FuzzCargoToml(f *testing.F) {
	addFixtureSeeds(f, "*/Cargo.toml")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRepo(t, "Cargo.toml", data)
	})
}

func FuzzMakefile(f *testing.F) {
	addFixtureSeeds(f, "*/Makefile")
	addFixtureSeeds(f, "*/justfile")
	f.Add([]byte("A := $(B)\nB := $(A)\ntest: a b ; $(A) test\n\t@echo $(A)\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRepo(t, "Makefile", data)
	})
}

func FuzzExpr(f *testing.F) {
	f.Add("matrix.os == 'ubuntu-latest' && (contains(matrix.x, 'a') || !failure())")
	f.Add("format('{0}{1}', 1")
	f.Fuzz(func(t *testing.T, expr string) {
		e := exprEnv{matrix: map[string]string{"os": "ubuntu-latest"}}
		_ = e.eval(expr)
		_ = e.condition(expr)
		_, _ = e.substitute("${{ " + expr + " }}")
	})
}

func FuzzMarkdown(f *testing.F) {
	addFixtureSeeds(f, "*/*.md")
	f.Add([]byte("## Testing\n```console\n$ make test \\\n```\n`npm test` and `` ` ``\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = extractCommands(data, func(string) bool { return true })
		fuzzRepo(t, "AGENTS.md", data)
	})
}

func FuzzTrigger(f *testing.F) {
	for _, s := range []string{"ralph this: fix tests", "/agent-loop fix until green", "keep fixing until lint is clean", "loop until coverage >80%", "> ralph: x", "```\nal: x\n```", "/agent-loop x until y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tr, ok := ParseTrigger(text)
		if !ok && (tr.Task != "" || tr.Hint != "" || tr.Phrase != "") {
			t.Fatalf("no trigger but fields set: %+v", tr)
		}
		if ok && tr.Phrase == "" {
			t.Fatalf("a trigger without a phrase: %+v", tr)
		}
		_ = classifyTask(tr.Task, tr.Hint)
	})
}

func FuzzClassifyTask(f *testing.F) {
	f.Add("fix the failing tests", "")
	f.Add("raise coverage to 101%", "coverage >999%")
	f.Fuzz(func(t *testing.T, task, hint string) {
		in := classifyTask(task, hint)
		if in.class == "" {
			t.Fatal("no class")
		}
		if in.threshold < 0 || in.threshold > 100 {
			t.Fatalf("threshold %d", in.threshold)
		}
	})
}
