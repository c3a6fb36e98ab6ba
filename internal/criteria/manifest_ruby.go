package criteria

import "strings"

func (m *manifests) readRuby(d *dirManifests) {
	hasGemfile := m.r.exists(join(d.dir, "Gemfile"))
	rakeFile := m.firstExisting(d.dir, []string{"Rakefile", "rakefile", "Rakefile.rb"})
	if !hasGemfile && rakeFile == "" {
		return
	}
	d.eco("ruby")
	exec := ""
	if hasGemfile {
		exec = "bundle exec "
		d.setup = "bundle install"
		d.fact(join(d.dir, "Gemfile"), "Ruby project with Bundler: install with `bundle install`, run tools with `bundle exec`")
	}
	d.rake = m.tree.Dir(d.dir).Rake
	rails := m.r.exists(join(d.dir, "bin/rails")) && m.r.exists(join(d.dir, "config/application.rb"))
	hasSpec := m.r.isDir(join(d.dir, "spec"))
	hasTest := m.r.isDir(join(d.dir, "test"))
	cl := m.classifier()
	switch {
	case d.rake != nil && d.rake.First == "default" && cl.classify([]string{"rake"}, d.dir).kind.Has(kTest):
		d.add(candidate{command: exec + "rake", kind: cl.classify([]string{"rake"}, d.dir).kind, sig: "rake default", source: rakeFile + " task default", setup: d.setup, rank: 1, strong: true, runner: "rake", script: "default",
			evidence: []Finding{finding(LayerManifest, rakeFile, "the default rake task runs `"+strings.ReplaceAll(d.rake.Recipes["default"], "\n", "`, `")+"`")}})
	case rails && hasSpec:
		d.add(candidate{command: exec + "rspec", kind: kTest, sig: "rspec", source: join(d.dir, "spec"), setup: d.setup, rank: 2})
	case rails:
		d.add(candidate{command: "bin/rails test", kind: kTest, sig: "rails test", source: join(d.dir, "bin/rails"), setup: d.setup, rank: 2,
			evidence: []Finding{finding(LayerManifest, join(d.dir, "config/application.rb"), "Rails application: `bin/rails test` runs the test suite")}})
	case hasSpec:
		d.add(candidate{command: exec + "rspec", kind: kTest, sig: "rspec", source: join(d.dir, "spec"), setup: d.setup, rank: 2,
			evidence: []Finding{finding(LayerManifest, join(d.dir, "spec"), "RSpec suite in spec/")}})
	case hasTest && d.rake != nil && d.rake.Recipes["test"] != "":
		d.add(candidate{command: exec + "rake test", kind: kTest, sig: "rake test", source: rakeFile, setup: d.setup, rank: 2})
	case d.rake != nil && d.rake.First == "default":
		d.add(candidate{command: exec + "rake", kind: kTest, sig: "rake default", source: rakeFile, setup: d.setup, rank: 3})
	}
	if rails {
		if data, ok := m.r.read(join(d.dir, "config/database.yml")); ok {
			s := string(data)
			for _, db := range []string{"postgresql", "mysql2", "trilogy"} {
				if strings.Contains(s, "adapter: "+db) {
					d.trap(join(d.dir, "config/database.yml"), "the test suite needs a "+db+" database: the loop's machine must run one (bin/rails db:prepare)")
					break
				}
			}
		}
	}
	if f := m.firstExisting(d.dir, []string{".rubocop.yml", ".rubocop.yaml"}); f != "" {
		d.add(candidate{command: exec + "rubocop", kind: kLint, sig: "rubocop", source: f, setup: d.setup, rank: 2, strong: true,
			evidence: []Finding{finding(LayerManifest, f, "RuboCop is configured")}})
	} else if f := m.firstExisting(d.dir, []string{".standard.yml"}); f != "" {
		d.add(candidate{command: exec + "standardrb", kind: kLint, sig: "standardrb", source: f, setup: d.setup, rank: 2, strong: true})
	}
	if m.r.exists(join(d.dir, "sorbet")) {
		d.add(candidate{command: exec + "srb tc", kind: kType, sig: "srb", source: join(d.dir, "sorbet"), setup: d.setup, rank: 2, strong: true})
	} else if m.r.exists(join(d.dir, "Steepfile")) {
		d.add(candidate{command: exec + "steep check", kind: kType, sig: "steep", source: join(d.dir, "Steepfile"), setup: d.setup, rank: 2, strong: true})
	}
}
