package shellcmd

import "testing"

func TestPythonClassify(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"pyproject.toml": "[tool.hatch.envs.default.scripts]\ncov = \"pytest --cov\"\n[tool.hatch.envs.lint.scripts]\ncheck = \"ruff check .\"\n[tool.pdm.scripts]\ntest = \"pytest -x\"\n[tool.poe.tasks]\ntypes = \"mypy src\"\n",
		"scripts/test":   "#!/bin/sh\nset -e\n${PREFIX}pytest \"$@\"\n",
		"tox.ini":        "[tox]\nenvlist = py3{11,12}, lint\n[testenv]\ncommands = pytest {posargs:tests}\n[testenv:lint]\ncommands = ruff check .\n",
	}
	checkClassify(t, files, []classifyCase{
		{"python -m pytest -x tests", Test, "pytest", "pytest"},
		{"pytest --cov=src", Test | Coverage, "pytest", "pytest"},
		{"python3.12 -m unittest discover -s tests", Test, "python -m unittest", "unittest"},
		{"uv run pytest", Test, "pytest", "pytest"},
		{"uv run --frozen --extra test pytest -q", Test, "pytest", "pytest"},
		{"poetry run mypy src", Type, "mypy", ""},
		{"poetry run poe types", Type, "poe types", ""},
		{"pipenv run pytest", Test, "pytest", "pytest"},
		{"pdm run test", Test, "pdm run test", "pytest"},
		{"hatch run cov", Test | Coverage, "hatch run cov", "pytest"},
		{"hatch run lint:check", Lint, "hatch run lint:check", ""},
		{"hatch test --cover", Test | Coverage, "hatch test", "pytest"},
		{"tox -e py312", Test, "tox", "tox"},
		{"tox -e lint", Lint, "tox", ""},
		{"tox run -f lint", Lint, "tox", ""},
		{"tox run -f py311", Test, "tox", "tox"},
		{"nox -s tests-3.12", Test, "nox", "nox"},
		{"coverage run -m pytest", Test | Coverage, "pytest", "pytest"},
		{"coverage xml", CIOnly | Report, "", ""},
		{"pip install -e .[test]", Install, "pip install", ""},
		{"pip install tox", Toolchain, "pip install", ""},
		{"python -m pip install --upgrade pip", Toolchain, "pip install", ""},
		{"python manage.py test", Test, "python manage.py test", "django"},
		{"scripts/test", Test, "scripts/test", "pytest"},
		{"ruff check .", Lint, "ruff check", ""},
		{"ruff format .", 0, "", ""},
	})
}

func TestPythonAnalyze(t *testing.T) {
	t.Parallel()
	pytestRepo := map[string]string{
		"pyproject.toml":    "[tool.pytest.ini_options]\naddopts = \"-q\"\n",
		"conftest.py":       "import pytest\n",
		"tests/conftest.py": "import pytest\n",
	}
	checkAnalyze(t, []analyzeCase{
		{
			cmd:   "uv run pytest -k 'not slow' --cov=src --junitxml=report.xml tests",
			files: pytestRepo,
			steps: []string{"pytest -k not slow --cov=src --junitxml=report.xml tests (test pytest) wrapped uv run"},
			deps:  Depends{Files: []string{"conftest.py", "pyproject.toml", "tests/conftest.py"}, Runner: "pytest"},
		},
		{
			cmd:   "poetry run python -m pytest",
			files: pytestRepo,
			steps: []string{"python -m pytest (test pytest) wrapped poetry run"},
			deps:  Depends{Files: []string{"conftest.py", "pyproject.toml", "tests/conftest.py"}, Runner: "pytest"},
		},
		{
			name: "tox env followed to its commands",
			cmd:  "tox -e py312",
			files: map[string]string{
				"tox.ini": "[tox]\nenvlist = py312, lint\n[testenv]\ndeps = pytest\ncommands =\n    pytest {posargs:tests} --cov\n[testenv:lint]\ncommands = ruff check .\n",
			},
			steps: []string{"pytest tests --cov (test pytest) via tox.ini:py312"},
			deps:  Depends{Files: []string{"tox.ini"}, Targets: []string{"tox.ini:py312"}, Runner: "pytest"},
		},
		{
			name: "nox session followed to its session.run calls",
			cmd:  "nox -s tests",
			files: map[string]string{
				"noxfile.py": "import nox\n\n@nox.session(python=[\"3.12\"])\ndef tests(session):\n    session.install(\"-e\", \".[test]\")\n    session.run(\"pytest\", \"-x\", *session.posargs, env={\"A\": \"1\"})\n\n@nox.session\ndef lint(session):\n    session.run(\"ruff\", \"check\", \".\")\n",
			},
			steps: []string{"pip install -e .[test] (setup) via noxfile.py:tests", "pytest -x (test pytest) via noxfile.py:tests"},
			deps:  Depends{Files: []string{"noxfile.py"}, Targets: []string{"noxfile.py:tests"}, Runner: "pytest"},
		},
		{
			name:  "python runs a script of the repository",
			cmd:   "python scripts/run_tests.py --fast",
			files: map[string]string{"scripts/run_tests.py": "import pytest\n"},
			steps: []string{"python scripts/run_tests.py --fast (test)"},
			deps:  Depends{Files: []string{"scripts/run_tests.py"}},
		},
	})
}
