package actions

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Action outputs, as declared in action.yml.
const (
	OutputStatus               = "status"
	OutputLoopID               = "loop-id"
	OutputIterations           = "iterations"
	OutputBestIteration        = "best-iteration"
	OutputBestSHA              = "best-sha"
	OutputBranch               = "branch"
	OutputPRNumber             = "pr-number"
	OutputPRURL                = "pr-url"
	OutputCompletionCommand    = "completion-command"
	OutputCompletionConfidence = "completion-confidence"
	OutputQualityScore         = "quality-score"
	OutputTotalCostUSD         = "total-cost-usd"
	OutputTotalTokens          = "total-tokens"
	OutputReportPath           = "report-path"
)

var actionOutputs = []string{
	OutputStatus, OutputLoopID, OutputIterations, OutputBestIteration,
	OutputBestSHA, OutputBranch, OutputPRNumber, OutputPRURL,
	OutputCompletionCommand, OutputCompletionConfidence, OutputQualityScore,
	OutputTotalCostUSD, OutputTotalTokens, OutputReportPath,
}

// ActionOutputs lists the outputs the code knows, in action.yml order.
func ActionOutputs() []string { return slices.Clone(actionOutputs) }

// ActionSpec is the part of an action.yml this project reads.
type ActionSpec struct {
	Name        string
	Author      string
	Description string
	Inputs      []InputSpec  // in file order
	Outputs     []OutputSpec // in file order
	Runs        RunsSpec
	Branding    BrandingSpec
}

// InputSpec is one declared input.
type InputSpec struct {
	Name        string
	Description string
	Required    bool
	// HasDefault tells an absent default from an empty one.
	HasDefault bool
	Default    string
}

// OutputSpec is one declared output.
type OutputSpec struct {
	Name        string
	Description string
}

// RunsSpec is the runs: block of a container action.
type RunsSpec struct {
	Using          string            `yaml:"using"`
	Image          string            `yaml:"image"`
	Entrypoint     string            `yaml:"entrypoint"`
	Args           []string          `yaml:"args"`
	Env            map[string]string `yaml:"env"`
	PreEntrypoint  string            `yaml:"pre-entrypoint"`
	PostEntrypoint string            `yaml:"post-entrypoint"`
	PostIf         string            `yaml:"post-if"`
}

// BrandingSpec is the Marketplace icon and colour.
type BrandingSpec struct {
	Icon  string `yaml:"icon"`
	Color string `yaml:"color"`
}

// Input returns the declared input name.
func (s ActionSpec) Input(name string) (InputSpec, bool) {
	for _, in := range s.Inputs {
		if in.Name == name {
			return in, true
		}
	}
	return InputSpec{}, false
}

// InputNames lists the declared inputs in file order.
func (s ActionSpec) InputNames() []string {
	names := make([]string, len(s.Inputs))
	for i, in := range s.Inputs {
		names[i] = in.Name
	}
	return names
}

// OutputNames lists the declared outputs in file order.
func (s ActionSpec) OutputNames() []string {
	names := make([]string, len(s.Outputs))
	for i, out := range s.Outputs {
		names[i] = out.Name
	}
	return names
}

// LoadActionYAML reads an action.yml (the repository's is ../../action.yml
// from this package's directory). Inputs and outputs keep their file order;
// unknown top-level keys are an error, so a misspelt key is caught.
func LoadActionYAML(path string) (ActionSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ActionSpec{}, fmt.Errorf("reading action metadata %s: %w", path, err)
	}
	spec, err := ParseActionYAML(data)
	if err != nil {
		return ActionSpec{}, fmt.Errorf("parsing action metadata %s: %w", path, err)
	}
	return spec, nil
}

// ParseActionYAML parses the content of an action.yml.
func ParseActionYAML(data []byte) (ActionSpec, error) {
	var raw struct {
		Name        string       `yaml:"name"`
		Author      string       `yaml:"author"`
		Description string       `yaml:"description"`
		Inputs      yaml.Node    `yaml:"inputs"`
		Outputs     yaml.Node    `yaml:"outputs"`
		Runs        RunsSpec     `yaml:"runs"`
		Branding    BrandingSpec `yaml:"branding"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		return ActionSpec{}, err
	}
	spec := ActionSpec{
		Name: raw.Name, Author: raw.Author, Description: raw.Description,
		Runs: raw.Runs, Branding: raw.Branding,
	}
	var errs []error
	err := eachPair(&raw.Inputs, "inputs", func(name string, value *yaml.Node) error {
		var in struct {
			Description        string    `yaml:"description"`
			Required           bool      `yaml:"required"`
			Default            yaml.Node `yaml:"default"`
			DeprecationMessage string    `yaml:"deprecationMessage"`
		}
		if err := knownKeys(value, "description", "required", "default", "deprecationMessage"); err != nil {
			return fmt.Errorf("input %q: %w", name, err)
		}
		if err := value.Decode(&in); err != nil {
			return fmt.Errorf("input %q: %w", name, err)
		}
		is := InputSpec{Name: name, Description: in.Description, Required: in.Required}
		if in.Default.Kind != 0 {
			if in.Default.Kind != yaml.ScalarNode {
				return fmt.Errorf("input %q: default must be a string, got a YAML %s", name, kindName(in.Default.Kind))
			}
			is.HasDefault, is.Default = true, in.Default.Value
		}
		spec.Inputs = append(spec.Inputs, is)
		return nil
	})
	errs = append(errs, err)
	err = eachPair(&raw.Outputs, "outputs", func(name string, value *yaml.Node) error {
		var out struct {
			Description string `yaml:"description"`
			Value       string `yaml:"value"`
		}
		if err := knownKeys(value, "description", "value"); err != nil {
			return fmt.Errorf("output %q: %w", name, err)
		}
		if err := value.Decode(&out); err != nil {
			return fmt.Errorf("output %q: %w", name, err)
		}
		spec.Outputs = append(spec.Outputs, OutputSpec{Name: name, Description: out.Description})
		return nil
	})
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return ActionSpec{}, err
	}
	return spec, nil
}

func eachPair(n *yaml.Node, what string, fn func(key string, value *yaml.Node) error) error {
	if n.Kind == 0 {
		return nil // absent
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s must be a mapping, got a YAML %s", what, kindName(n.Kind))
	}
	var errs []error
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		if seen[key] {
			errs = append(errs, fmt.Errorf("%s: %q is declared twice (line %d)", what, key, n.Content[i].Line))
			continue
		}
		seen[key] = true
		if err := fn(key, n.Content[i+1]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// knownKeys reports keys of mapping n that are not in known (Node.Decode
// has no KnownFields).
func knownKeys(n *yaml.Node, known ...string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("must be a mapping, got a YAML %s", kindName(n.Kind))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; !slices.Contains(known, k) {
			return fmt.Errorf("line %d: unknown key %q (valid: %s)", n.Content[i].Line, k, strings.Join(known, ", "))
		}
	}
	return nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.DocumentNode:
		return "document"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.MappingNode:
		return "mapping"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "node"
}
