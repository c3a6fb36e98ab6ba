package shellcmd

import "testing"

func TestElixirClassify(t *testing.T) {
	t.Parallel()
	checkClassify(t, nil, []classifyCase{
		{"mix test --cover", Test | Coverage, "mix test", "mix test"},
		{"mix format --check-formatted", Format, "mix format", ""},
		{"mix deps.get", Install, "mix deps.get", ""},
		{"mix credo --strict", Lint, "mix credo", ""},
		{"mix dialyzer", Type, "mix dialyzer", ""},
	})
}

func TestElixirAnalyze(t *testing.T) {
	t.Parallel()
	checkAnalyze(t, []analyzeCase{
		{
			name: "a mix alias runs its tasks, then the task itself",
			cmd:  "mix test --only unit",
			files: map[string]string{
				"mix.exs":              "defmodule App.MixProject do\n  def project, do: [aliases: aliases()]\n  defp aliases do\n    [\n      setup: [\"deps.get\"],\n      test: [\"ecto.create --quiet\", \"ecto.migrate --quiet\", \"test\"]\n    ]\n  end\nend\n",
				"test/test_helper.exs": "ExUnit.start()\n",
			},
			steps: []string{
				"mix ecto.create --quiet (setup) via mix.exs:test",
				"mix ecto.migrate --quiet (setup) via mix.exs:test",
				"mix test (test mix test) via mix.exs:test",
			},
			deps: Depends{Files: []string{"mix.exs", "test/test_helper.exs"}, Targets: []string{"mix.exs:test"}, Runner: "mix test"},
		},
	})
}
