RSpec.describe "x" do; end
