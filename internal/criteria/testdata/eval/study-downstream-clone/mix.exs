defmodule Lib.MixProject do
  use Mix.Project
  def project, do: [app: :lib, version: "0.1.0", deps: []]
end
