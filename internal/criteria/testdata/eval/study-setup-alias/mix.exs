defmodule Jobs.MixProject do
  use Mix.Project
  def project, do: [app: :jobs, version: "0.1.0", deps: [], aliases: aliases()]
  defp aliases, do: ["test.setup": ["ecto.create", "ecto.migrate"], "test.ci": ["format --check-formatted", "test"]]
end
