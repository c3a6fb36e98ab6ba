defmodule App.MixProject do
  use Mix.Project
  def project, do: [app: :app, version: "0.1.0", deps: deps()]
  defp deps do
    [
      {:credo, "~> 1.7", only: [:dev, :test], runtime: false},
      {:dialyxir, "~> 1.4", only: [:dev], runtime: false}
    ]
  end
end
