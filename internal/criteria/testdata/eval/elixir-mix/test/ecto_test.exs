defmodule EctoTest do
  use ExUnit.Case, async: true

  test "module is loaded" do
    assert Code.ensure_loaded?(Ecto)
  end
end
