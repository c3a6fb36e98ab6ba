package criteria

import "strings"

func (m *manifests) readElixir(d *dirManifests) {
	file := join(d.dir, "mix.exs")
	data, ok := m.r.read(file)
	if !ok {
		return
	}
	d.eco("elixir")
	text := string(data)
	d.setup = "mix deps.get"
	if strings.Contains(text, "apps_path") {
		d.fact(file, "Elixir umbrella project: `mix test` at the root runs every app's tests")
	} else {
		d.fact(file, "Elixir project: install with `mix deps.get`")
	}
	d.add(candidate{command: "mix test", kind: kTest, sig: "mix test", source: file, setup: d.setup, rank: 3,
		evidence: []Finding{finding(LayerManifest, file, "`mix test` runs the ExUnit suite")}})
	d.add(candidate{command: "mix compile --warnings-as-errors", kind: kBuild | kType, sig: "mix compile", source: file, setup: d.setup, rank: 3})
	for _, db := range []string{":postgrex", ":myxql", ":ecto_sql"} {
		if strings.Contains(text, db) {
			d.trap(file, "depends on "+strings.TrimPrefix(db, ":")+": the test suite most likely needs a database server (mix test runs ecto.create/migrate through its alias)")
			break
		}
	}
	if strings.Contains(text, ":credo") {
		d.add(candidate{command: "mix credo --strict", kind: kLint, sig: "mix credo", source: file + " :credo", setup: d.setup, rank: 2, strong: true})
	}
	if m.r.exists(join(d.dir, ".formatter.exs")) {
		d.add(candidate{command: "mix format --check-formatted", kind: kFormat, sig: "mix format", source: join(d.dir, ".formatter.exs"), setup: d.setup, rank: 3})
	}
	if strings.Contains(text, ":dialyxir") {
		d.add(candidate{command: "mix dialyzer", kind: kType, sig: "mix dialyzer", source: file + " :dialyxir", setup: d.setup, rank: 2, strong: true})
	}
}
