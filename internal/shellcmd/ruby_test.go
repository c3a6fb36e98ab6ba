package shellcmd

import "testing"

func TestRubyClassify(t *testing.T) {
	t.Parallel()
	files := map[string]string{"Rakefile": "require 'rspec/core/rake_task'\nRSpec::Core::RakeTask.new(:spec)\ntask default: :spec\n"}
	checkClassify(t, files, []classifyCase{
		{"bundle exec rake", Test, "rake default", "rspec"},
		{"bundle exec rspec", Test, "rspec", "rspec"},
		{"bundle exec rubocop", Lint, "rubocop", ""},
		{"bin/rails db:prepare test", Test | Service | Install, "rails test", "rails test"},
		{"bundle install", Install, "bundle install", ""},
		{"ruby -Itest test/foo_test.rb", Test, "ruby test", "minitest"},
	})
}

func TestRubyAnalyze(t *testing.T) {
	t.Parallel()
	checkAnalyze(t, []analyzeCase{
		{
			cmd: "bundle exec rake",
			files: map[string]string{
				"Gemfile":             "source 'https://rubygems.org'\n",
				"Rakefile":            "require 'rspec/core/rake_task'\nRSpec::Core::RakeTask.new(:spec)\nRuboCop::RakeTask.new\ntask default: %i[spec rubocop]\n",
				".rspec":              "--require spec_helper\n",
				"spec/spec_helper.rb": "RSpec.configure {}\n",
			},
			steps: []string{"rspec (test rspec) via Rakefile:default > Rakefile:spec", "rubocop (lint) via Rakefile:default > Rakefile:rubocop"},
			deps:  Depends{Files: []string{".rspec", "Rakefile", "spec/spec_helper.rb"}, Targets: []string{"Rakefile:default", "Rakefile:spec", "Rakefile:rubocop"}, Runner: "rspec"},
		},
		{
			cmd:   "bundle exec rspec spec/models --format documentation",
			files: map[string]string{".rspec": "--color\n"},
			steps: []string{"rspec spec/models --format documentation (test rspec) wrapped bundle exec"},
			deps:  Depends{Files: []string{".rspec"}, Runner: "rspec"},
		},
	})
}
