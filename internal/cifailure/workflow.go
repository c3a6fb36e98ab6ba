package cifailure

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// workflow is a GitHub Actions workflow file, as much of it as the
// criterion needs. Values that may hold expressions are kept as YAML nodes
// or template strings and evaluated for one job instance.
type workflow struct {
	path     string
	name     string
	env      []kv
	defaults runDefaults
	jobs     []*wfJob
	// callInputs are the inputs of `on: workflow_call` with their defaults.
	callInputs []kv
}

type kv struct {
	key string
	val *yaml.Node
}

type runDefaults struct {
	shell string
	wd    string
}

type wfJob struct {
	id       string
	name     string // a template; "" when the job has no name:
	matrix   *yaml.Node
	runsOn   *yaml.Node
	env      []kv
	defaults runDefaults
	steps    []wfStep
	// uses is the reusable workflow a caller job runs; with its inputs.
	uses       string
	with       []kv
	container  bool
	services   []string
	line       int
	hasMatrix  bool
	timeoutMin string
	// continueOnError is the job's continue-on-error: (a template).
	continueOnError string
}

type wfStep struct {
	index           int // 0-based position in the job
	id, name        string
	uses            string
	run             string
	hasRun          bool
	shell           string
	wd              string
	cond            string
	continueOnError string
	env             []kv
	line            int
}

// parseWorkflow reads a workflow file.
func parseWorkflow(path string, data []byte) (*workflow, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("workflow %s: %w", path, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("workflow %s: empty file", path)
	}
	if err := checkExpansion(&doc); err != nil {
		return nil, fmt.Errorf("workflow %s: %w", path, err)
	}
	root := resolve(doc.Content[0])
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("workflow %s: the top level is not a mapping", path)
	}
	w := &workflow{path: path, name: scalar(get(root, "name"))}
	w.env = pairs(get(root, "env"))
	w.defaults = readDefaults(get(root, "defaults"))
	on := get(root, "on")
	if on == nil {
		on = get(root, "true") // a YAML 1.1 reader's `on`
	}
	w.callInputs = pairs(get(get(get(on, "workflow_call"), "inputs"), ""))
	jobs := get(root, "jobs")
	if jobs == nil || jobs.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("workflow %s: no jobs mapping", path)
	}
	for _, p := range pairs(jobs) {
		jn := resolve(p.val)
		if jn == nil || jn.Kind != yaml.MappingNode {
			continue
		}
		j := &wfJob{id: p.key, name: scalar(get(jn, "name")), runsOn: get(jn, "runs-on"), line: p.val.Line,
			uses: scalar(get(jn, "uses")), with: pairs(get(jn, "with")), env: pairs(get(jn, "env")),
			defaults: readDefaults(get(jn, "defaults")), container: get(jn, "container") != nil,
			timeoutMin: scalar(get(jn, "timeout-minutes")), continueOnError: scalar(get(jn, "continue-on-error"))}
		for _, s := range pairs(get(jn, "services")) {
			j.services = append(j.services, s.key)
		}
		if m := get(get(jn, "strategy"), "matrix"); m != nil {
			j.matrix, j.hasMatrix = m, true
		}
		for i, sn := range items(get(jn, "steps")) {
			sn = resolve(sn)
			s := wfStep{index: i, id: scalar(get(sn, "id")), name: scalar(get(sn, "name")), uses: scalar(get(sn, "uses")),
				shell: scalar(get(sn, "shell")), wd: scalar(get(sn, "working-directory")), cond: scalar(get(sn, "if")),
				continueOnError: scalar(get(sn, "continue-on-error")), env: pairs(get(sn, "env")), line: sn.Line}
			if r := get(sn, "run"); r != nil {
				s.run, s.hasRun = scalar(r), true
			}
			j.steps = append(j.steps, s)
		}
		w.jobs = append(w.jobs, j)
	}
	return w, nil
}

func readDefaults(n *yaml.Node) runDefaults {
	run := get(n, "run")
	return runDefaults{shell: scalar(get(run, "shell")), wd: scalar(get(run, "working-directory"))}
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return resolve(n.Content[0])
	}
	return n
}

// get returns the value of key in a mapping node ("" returns n itself).
func get(n *yaml.Node, key string) *yaml.Node {
	n = resolve(n)
	if key == "" {
		return n
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Value == "<<" && k.Tag == "!!merge" {
			if v := get(n.Content[i+1], key); v != nil {
				return v
			}
			continue
		}
		if k.Value == key {
			return resolve(n.Content[i+1])
		}
	}
	return nil
}

// pairs returns the entries of a mapping node in order.
func pairs(n *yaml.Node) []kv {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out []kv
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Value == "<<" && k.Tag == "!!merge" {
			out = append(out, pairs(n.Content[i+1])...)
			continue
		}
		out = append(out, kv{key: k.Value, val: resolve(n.Content[i+1])})
	}
	return out
}

func items(n *yaml.Node) []*yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// scalar is a scalar node's text ("" for anything else).
func scalar(n *yaml.Node) string {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// nodeValue converts a node to an expression value: numbers are float64,
// as GitHub reads them (an unquoted 3.10 is the number 3.1).
func nodeValue(n *yaml.Node) any {
	n = resolve(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil
		case "!!bool":
			b, err := strconv.ParseBool(strings.ToLower(n.Value))
			if err == nil {
				return b
			}
		case "!!int", "!!float":
			var v any
			if err := n.Decode(&v); err == nil {
				switch x := v.(type) {
				case int:
					return float64(x)
				case int64:
					return float64(x)
				case uint64:
					return float64(x)
				case float64:
					return x
				}
			}
		}
		return n.Value
	case yaml.MappingNode:
		m := map[string]any{}
		for _, p := range pairs(n) {
			m[p.key] = nodeValue(p.val)
		}
		return m
	case yaml.SequenceNode:
		arr := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			arr = append(arr, nodeValue(c))
		}
		return arr
	}
	return nil
}

// errRemoteWorkflow marks a job that calls a reusable workflow of another
// repository, which is not read.
var errRemoteWorkflow = errors.New("calls a reusable workflow of another repository")

// maxExpandedNodes bounds a workflow's size once its aliases are expanded.
const maxExpandedNodes = 200_000

// checkExpansion refuses a document whose aliases refer to themselves or
// expand beyond maxExpandedNodes (the "billion laughs"), so that the rest
// of the package can follow aliases freely.
func checkExpansion(doc *yaml.Node) error {
	count := 0
	onPath := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node, depth int) error
	walk = func(n *yaml.Node, depth int) error {
		if n == nil {
			return nil
		}
		count++
		if count > maxExpandedNodes || depth > 200 {
			return errors.New("its YAML aliases expand too far")
		}
		if n.Kind == yaml.AliasNode {
			if onPath[n.Alias] {
				return errors.New("a YAML alias refers to a node that contains it")
			}
			return walk(n.Alias, depth+1)
		}
		onPath[n] = true
		defer delete(onPath, n)
		for _, c := range n.Content {
			if err := walk(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(doc, 0)
}
