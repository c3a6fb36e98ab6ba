require_relative "lib/sidekiq/version"

Gem::Specification.new do |gem|
  gem.name = "sidekiq"
  gem.version = Sidekiq::VERSION
  gem.summary = "Simple, efficient background processing for Ruby"
  gem.files = Dir["lib/**/*"]
  gem.required_ruby_version = ">= 2.5.0"
  gem.add_dependency "redis", ">= 4.2.0"
end
