require "minitest/autorun"
require_relative "../lib/sidekiq/version"

ENV["REDIS_URL"] ||= "redis://localhost/15"
