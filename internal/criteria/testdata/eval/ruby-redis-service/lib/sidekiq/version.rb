# frozen_string_literal: true

module Sidekiq
  VERSION = "6.5.8"
end
