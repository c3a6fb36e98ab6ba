package criteria

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// maxAIWGEntries bounds the walk of .aiwg/.
const maxAIWGEntries = 2000

var strategyRe = lazyre.New(`(?i)(test[-_]?strateg|test[-_]?plan|testing[-_]?strateg|quality[-_]?gates?|definition[-_]?of[-_]?done)`)

// aiwgFiles finds the artifacts of layer 5 with a bounded walk of .aiwg/.
func aiwgFiles(r *repo) (strategies, proposals []string) {
	if !r.isDir(".aiwg") {
		return nil, nil
	}
	type item struct {
		dir   string
		depth int
	}
	queue := []item{{".aiwg", 0}}
	seen := 0
	for len(queue) > 0 && seen < maxAIWGEntries {
		it := queue[0]
		queue = queue[1:]
		ents, _ := r.list(it.dir)
		for _, e := range ents {
			seen++
			p := join(it.dir, e.Name())
			switch {
			case e.IsDir():
				if it.depth < 4 && e.Name() != "checkpoints" && e.Name() != "logs" && e.Name() != "analytics" {
					queue = append(queue, item{p, it.depth + 1})
				}
			case e.Name() == "inferred-completion.yaml" || e.Name() == "inferred-completion.yml":
				proposals = append(proposals, p)
			case strings.HasSuffix(e.Name(), ".md") && strategyRe.MatchString(e.Name()):
				strategies = append(strategies, p)
			}
		}
	}
	return strategies, proposals
}

// aiwgCandidates is layer 5: a test strategy's commands and earlier
// proposals.
func aiwgCandidates(r *repo, m *manifests) ([]candidate, []Finding) {
	strategies, proposals := aiwgFiles(r)
	var cands []candidate
	var facts []Finding
	cl := m.classifier()
	for _, s := range strategies {
		data, ok := r.read(s)
		if !ok {
			continue
		}
		n := 0
		for _, mc := range extractCommands(data, func(string) bool { return true }) {
			for _, c := range commandCandidates(cl, mc, s, r) {
				c.layer = LayerAIWGArtifact
				for i := range c.evidence {
					c.evidence[i].Layer = LayerAIWGArtifact
					c.evidence[i].Finding = "the test strategy " + c.evidence[i].Finding
				}
				cands = append(cands, c)
				n++
			}
		}
		facts = append(facts, finding(LayerAIWGArtifact, s, fmt.Sprintf("test strategy naming %d check commands", n)))
	}
	// Newest proposal first: by modification time, then by path.
	type prop struct {
		path string
		mod  int64
	}
	var props []prop
	for _, p := range proposals {
		var mod int64
		if st, err := fs.Stat(r.root.FS(), p); err == nil {
			mod = st.ModTime().UnixNano()
		}
		props = append(props, prop{p, mod})
	}
	sort.SliceStable(props, func(i, j int) bool {
		if props[i].mod != props[j].mod {
			return props[i].mod > props[j].mod
		}
		return props[i].path < props[j].path
	})
	for i, p := range props {
		if i >= 5 {
			break
		}
		data, ok := r.read(p.path)
		if !ok {
			continue
		}
		var prev Proposal
		if err := parseYAML(data, &prev); err != nil {
			r.unreadable(LayerAIWGArtifact, p.path, err)
			continue
		}
		if prev.Command == "" || prev.Class == ClassRefused {
			continue
		}
		wd := clean(prev.Workdir)
		if !r.isDir(wd) {
			facts = append(facts, finding(LayerAIWGArtifact, p.path, "an earlier proposal runs in "+wd+", which no longer exists"))
			continue
		}
		info := cl.classify(strings.Fields(prev.Command), wd)
		k := wantKind(prev.Class)
		if info.kind&gateKinds != 0 {
			k = info.kind & (gateKinds | kE2E)
		}
		cands = append(cands, candidate{command: prev.Command, workdir: wd, setup: prev.Setup, kind: k, sig: info.sig, layer: LayerAIWGArtifact, source: p.path, rank: i, runner: info.runner, script: info.script, strong: prev.Confidence == ConfidenceHigh,
			evidence: []Finding{finding(LayerAIWGArtifact, p.path, fmt.Sprintf("an earlier loop used `%s` for %s (confidence %s)", prev.Command, prev.Class, prev.Confidence))}})
	}
	for i := range cands {
		cands[i].order = i
	}
	return cands, facts
}
