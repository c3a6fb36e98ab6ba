package shellcmd

import "testing"

// FuzzAnalyze: no command and no repository file makes Analyze panic or
// run without end. Every task file of the repository holds the same fuzzed
// bytes.
func FuzzAnalyze(f *testing.F) {
	f.Add("nice -n 10 make test", []byte("test: lint\n\tgo test ./...\nlint:\n\t$(MAKE) test\n"))
	f.Add("cd sub && npm test", []byte(`{"scripts": {"test": "bash scripts/t.sh", "pretest": "npm test"}}`))
	f.Add("sh -c 'env -u CI timeout 10m just test' || true", []byte("test:\n    just test\n"))
	f.Add("uv run pytest -k x | tee o", []byte("[tox]\nenvlist=py\n[testenv]\ncommands = tox -e py\n"))
	f.Add("nox -s tests", []byte("@nox.session\ndef tests(session):\n    session.run(\"nox\", \"-s\", \"tests\")\n"))
	f.Add("mix test", []byte("defp aliases do\n  [test: [\"test\", \"test\"]]\nend\n"))
	f.Add("bundle exec rake", []byte("task default: %i[default default]\n"))
	f.Add("task", []byte("tasks:\n  default:\n    deps: [default]\n"))
	f.Add("echo $((", []byte("A := $(A)$(A)\nt:\n\t$(A)\n"))
	f.Fuzz(func(t *testing.T, cmd string, data []byte) {
		files := map[string]string{}
		for _, p := range []string{"Makefile", "sub/Makefile", "justfile", "Taskfile.yml", "Rakefile", "package.json", "sub/package.json", "composer.json", "deno.json", "pyproject.toml", "tox.ini", "noxfile.py", "mix.exs", "scripts/t.sh", "sub/scripts/t.sh"} {
			files[p] = string(data)
		}
		a := Analyze(repo(files), cmd, ".")
		for _, s := range a.Steps {
			if s.Role == "" {
				t.Fatalf("a step without a role: %+v", s)
			}
		}
		for _, p := range a.Depends.Files {
			if len(p) == 0 || p[0] == '/' || len(p) > 1 && p[:2] == ".." {
				t.Fatalf("a dependency outside the repository: %q", p)
			}
		}
		_ = Classifier{}.Classify(StripWrappers([]string{cmd}).Args, ".")
	})
}
