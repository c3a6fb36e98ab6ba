Gem::Specification.new do |s|
  s.name = "factory_bot"
  s.version = "6.5.0"
  s.summary = "factory_bot provides a framework and DSL for defining and using model instance factories."
  s.files = Dir["lib/**/*"]
  s.add_dependency("activesupport", ">= 6.1.0")
end
