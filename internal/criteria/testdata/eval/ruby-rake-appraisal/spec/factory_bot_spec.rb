describe FactoryBot do
  it "has a version" do
    expect(FactoryBot::VERSION).to match(/\A\d+\.\d+/)
  end
end
