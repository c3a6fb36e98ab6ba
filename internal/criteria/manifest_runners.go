package criteria

import (
	"fmt"
	"strings"
)

// readRunners reads the task runners of a directory: Makefile, justfile,
// Taskfile.
func (m *manifests) readRunners(d *dirManifests) {
	if f := m.firstExisting(d.dir, []string{"GNUmakefile", "Makefile", "makefile"}); f != "" {
		if data, ok := m.r.read(f); ok {
			d.make = parseMakefile(f, data)
		}
	}
	if f := m.firstExisting(d.dir, []string{"justfile", "Justfile", ".justfile"}); f != "" {
		if data, ok := m.r.read(f); ok {
			d.just = parseJustfile(f, data)
		}
	}
	if f := m.firstExisting(d.dir, []string{"Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "taskfile.yaml", "Taskfile.dist.yml"}); f != "" {
		if data, ok := m.r.read(f); ok {
			tf, err := parseTaskfile(f, data)
			if err != nil {
				m.r.unreadable(LayerManifest, f, err)
			} else {
				d.task = tf
			}
		}
	}
}

// runnerCandidates proposes the runners' targets that are gates: make test,
// just lint, task check.
func (m *manifests) runnerCandidates(d *dirManifests) {
	cl := m.classifier()
	for _, r := range []struct {
		tool string
		tf   *taskFile
	}{{"make", d.make}, {"just", d.just}, {"task", d.task}} {
		if r.tf == nil {
			continue
		}
		var gates []string
		for _, name := range sortedKeys(r.tf.recipes) {
			nameKind := classifyName(name)
			if nameKind.has(kWatch) || nameKind.has(kDeploy) || nameKind.has(kInstall) || nameKind.has(kBench) {
				continue
			}
			if nameKind == 0 && !isCompositeName(name) {
				continue // only targets whose name says what they check
			}
			info := cl.classify([]string{r.tool, name}, d.dir)
			if info.kind&gateKinds == 0 || info.kind.has(kWatch) {
				continue
			}
			gates = append(gates, name)
			rank := scriptRank(name)
			if isCompositeName(name) {
				rank = 3
			}
			body := strings.ReplaceAll(r.tf.recipes[name], "\n", "; ")
			c := candidate{command: r.tool + " " + name, kind: info.kind, sig: r.tool + " " + name, source: r.tf.file + " target " + name, rank: rank, strong: true, runner: r.tool, script: name, inner: info.inner, setup: d.setup}
			if body != "" {
				c.evidence = []Finding{finding(LayerManifest, r.tf.file, fmt.Sprintf("target %q runs `%s`", name, body))}
			}
			if info.note != "" {
				c.problems = append(c.problems, info.note)
			}
			d.add(c)
		}
		if len(gates) > 0 {
			d.eco(r.tool)
			d.fact(r.tf.file, "task runner targets: "+strings.Join(limitList(gates, 10), ", "))
		}
	}
}
