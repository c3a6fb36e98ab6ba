// Package schemas loads the JSON Schemas of ../shared/schemas (beside the
// checkout) so tests can validate what agent-loop writes against the seeds'
// contracts, not against the code's own idea of them.
package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Names of the schemas.
const (
	LoopState          = "loop-state.schema.json"
	LoopRegistry       = "loop-registry.schema.json"
	CompletionProposal = "completion-proposal.schema.json"
)

// Dir returns the schema directory: $AGENT_LOOP_SCHEMAS, else
// ../shared/schemas beside the checkout (the contracts as the project was
// given them), else the copy in testdata/schemas (kept equal to the shared
// one by TestCopyMatchesShared) so the tests also run in a lone clone.
func Dir() string {
	if d := os.Getenv("AGENT_LOOP_SCHEMAS"); d != "" {
		return d
	}
	if _, err := os.Stat(filepath.Join(SharedDir(), LoopState)); err == nil {
		return SharedDir()
	}
	return CopyDir()
}

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// SharedDir is ../shared/schemas beside the checkout.
func SharedDir() string { return filepath.Join(moduleRoot(), "..", "shared", "schemas") }

// CopyDir is the project's copy, testdata/schemas.
func CopyDir() string { return filepath.Join(moduleRoot(), "testdata", "schemas") }

var (
	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

// Available reports whether the shared schemas are present.
func Available() bool {
	_, err := os.Stat(filepath.Join(Dir(), LoopState))
	return err == nil
}

// Validate checks document (JSON bytes) against the named schema.
func Validate(name string, document []byte) error {
	mu.Lock()
	sch, ok := compiled[name]
	if !ok {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		var err error
		sch, err = c.Compile(filepath.Join(Dir(), name))
		if err != nil {
			mu.Unlock()
			return fmt.Errorf("compiling schema %s: %w", name, err)
		}
		compiled[name] = sch
	}
	mu.Unlock()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(document))
	if err != nil {
		return fmt.Errorf("decoding document: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		return err
	}
	return nil
}

// ValidateValue marshals v and validates it.
func ValidateValue(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return Validate(name, b)
}
