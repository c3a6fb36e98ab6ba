defmodule Ecto do
  @moduledoc """
  Ecto is split into 4 main components: Repo, Schema, Changeset and Query.
  """
end
