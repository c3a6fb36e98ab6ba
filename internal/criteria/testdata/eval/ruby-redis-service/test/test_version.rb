require_relative "helper"

class TestVersion < Minitest::Test
  def test_version
    refute_nil Sidekiq::VERSION
  end
end
