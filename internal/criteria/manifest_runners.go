package criteria

import (
	"fmt"
	"strings"

	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// runnerCandidates proposes the runners' targets that are gates: make test,
// just lint, task check.
func (m *manifests) runnerCandidates(d *dirManifests) {
	cl := m.classifier()
	for _, r := range []struct {
		tool string
		tf   *shellcmd.TaskFile
	}{{"make", d.make}, {"just", d.just}, {"task", d.task}} {
		if r.tf == nil {
			continue
		}
		var gates []string
		for _, name := range sortedKeys(r.tf.Recipes) {
			nameKind := shellcmd.ClassifyName(name)
			if nameKind.Has(kWatch) || nameKind.Has(kDeploy) || nameKind.Has(kInstall) || nameKind.Has(kBench) {
				continue
			}
			if nameKind == 0 && !shellcmd.IsCompositeName(name) {
				continue // only targets whose name says what they check
			}
			info := cl.classify([]string{r.tool, name}, d.dir)
			if info.kind&gateKinds == 0 || info.kind.Has(kWatch) {
				continue
			}
			gates = append(gates, name)
			rank := scriptRank(name)
			if shellcmd.IsCompositeName(name) {
				rank = 3
			}
			body := strings.ReplaceAll(r.tf.Recipes[name], "\n", "; ")
			c := candidate{command: r.tool + " " + name, kind: info.kind, sig: r.tool + " " + name, source: r.tf.File + " target " + name, rank: rank, strong: true, runner: r.tool, script: name, inner: info.inner, setup: d.setup}
			if body != "" {
				c.evidence = []Finding{finding(LayerManifest, r.tf.File, fmt.Sprintf("target %q runs `%s`", name, body))}
			}
			if info.note != "" {
				c.problems = append(c.problems, info.note)
			}
			d.add(c)
		}
		if len(gates) > 0 {
			d.eco(r.tool)
			d.fact(r.tf.File, "task runner targets: "+strings.Join(limitList(gates, 10), ", "))
		}
	}
}
