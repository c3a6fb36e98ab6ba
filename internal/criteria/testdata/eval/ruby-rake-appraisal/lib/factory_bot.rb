module FactoryBot
  VERSION = "6.5.0".freeze
end
