package criteria

import (
	"encoding/json"
	"fmt"
)

func (m *manifests) readDeno(d *dirManifests) {
	file := m.firstExisting(d.dir, []string{"deno.json", "deno.jsonc"})
	if file == "" {
		return
	}
	data, ok := m.r.read(file)
	if !ok {
		return
	}
	d.eco("deno")
	var raw map[string]json.RawMessage
	if err := parseJSON(data, &raw); err != nil {
		m.r.unreadable(LayerManifest, file, err)
		return
	}
	d.deno = m.tree.Dir(d.dir).Deno
	d.fact(file, "Deno project")
	cl := m.classifier()
	for _, name := range sortedKeys(d.deno) {
		info := cl.classify([]string{"deno", "task", name}, d.dir)
		if info.kind&gateKinds == 0 || info.kind.Has(kWatch) {
			continue
		}
		d.add(candidate{command: "deno task " + name, kind: info.kind, sig: info.sig, source: file + " tasks." + name, rank: scriptRank(name), strong: true, runner: "deno", script: name,
			evidence: []Finding{finding(LayerManifest, file+" tasks."+name, fmt.Sprintf("task %q runs `%s`", name, d.deno[name]))}})
	}
	d.add(candidate{command: "deno test -A", kind: kTest, sig: "deno test", source: file, rank: 4,
		evidence: []Finding{finding(LayerManifest, file, "`deno test -A` runs the tests with every permission")}})
	d.add(candidate{command: "deno lint", kind: kLint, sig: "deno lint", source: file, rank: 4})
	d.add(candidate{command: "deno check .", kind: kType, sig: "deno check", source: file, rank: 4})
}
