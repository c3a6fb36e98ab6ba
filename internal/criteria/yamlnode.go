package criteria

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// Helpers to walk a yaml.Node tree without trusting its shape: a workflow
// written by hand can put a string where a map belongs, and none of these
// panics or fails on that.

const maxAliasDepth = 8

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxAliasDepth; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return resolveAlias(n.Content[0])
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// mapPairs returns the key/value pairs of a mapping in source order,
// following merge keys (<<: *anchor); later keys override merged ones.
func mapPairs(n *yaml.Node) [][2]*yaml.Node {
	return mapPairsDepth(n, 0)
}

func mapPairsDepth(n *yaml.Node, depth int) [][2]*yaml.Node {
	n = resolveAlias(n)
	if n == nil || n.Kind != yaml.MappingNode || depth > maxAliasDepth {
		return nil
	}
	var out [][2]*yaml.Node
	seen := map[string]int{}
	put := func(k, v *yaml.Node) {
		if i, ok := seen[k.Value]; ok {
			out[i][1] = v
			return
		}
		seen[k.Value] = len(out)
		out = append(out, [2]*yaml.Node{k, v})
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" {
			v = resolveAlias(v)
			var merged []*yaml.Node
			if v != nil && v.Kind == yaml.SequenceNode {
				merged = v.Content
			} else {
				merged = []*yaml.Node{v}
			}
			for _, mv := range merged {
				for _, kv := range mapPairsDepth(mv, depth+1) {
					if _, ok := seen[kv[0].Value]; !ok {
						put(kv[0], kv[1])
					}
				}
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			continue
		}
		put(k, v)
	}
	return out
}

// mapGet returns the value of key in a mapping, or nil.
func mapGet(n *yaml.Node, key string) *yaml.Node {
	for _, kv := range mapPairs(n) {
		if kv[0].Value == key {
			return resolveAlias(kv[1])
		}
	}
	return nil
}

// scalar returns a scalar's value, or "" for anything else.
func scalar(n *yaml.Node) string {
	n = resolveAlias(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	if n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// seqItems returns a sequence's items; a scalar counts as a one-item
// sequence (`needs: build`).
func seqItems(n *yaml.Node) []*yaml.Node {
	n = resolveAlias(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]*yaml.Node, 0, len(n.Content))
		for _, c := range n.Content {
			if c = resolveAlias(c); c != nil {
				out = append(out, c)
			}
		}
		return out
	case yaml.ScalarNode, yaml.MappingNode:
		return []*yaml.Node{n}
	}
	return nil
}

// scalarList returns the scalars of a sequence (or a lone scalar).
func scalarList(n *yaml.Node) []string {
	var out []string
	for _, it := range seqItems(n) {
		if it.Kind == yaml.ScalarNode {
			out = append(out, it.Value)
		}
	}
	return out
}

// stringMap returns a mapping of scalars as a map (env:, with:).
func stringMap(n *yaml.Node) map[string]string {
	out := map[string]string{}
	for _, kv := range mapPairs(n) {
		v := resolveAlias(kv[1])
		if v != nil && v.Kind == yaml.ScalarNode {
			out[kv[0].Value] = v.Value
		}
	}
	return out
}

// scriptText returns a run:/script: value: a string, or a list of lines
// (GitLab) joined with newlines.
func scriptText(n *yaml.Node) string {
	n = resolveAlias(n)
	if n == nil {
		return ""
	}
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	var lines []string
	for _, it := range seqItems(n) {
		if it.Kind == yaml.SequenceNode { // GitLab allows nested lists via anchors
			lines = append(lines, scriptText(it))
			continue
		}
		if it.Kind == yaml.ScalarNode {
			lines = append(lines, it.Value)
		}
	}
	return strings.Join(lines, "\n")
}

// parseYAMLNode parses a document into a node tree.
func parseYAMLNode(data []byte) (*yaml.Node, error) {
	var n yaml.Node
	if err := parseYAML(data, &n); err != nil {
		return nil, err
	}
	return resolveAlias(&n), nil
}
