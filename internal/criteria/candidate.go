package criteria

import "strings"

// candidate is one command some layer proposes as a gate.
type candidate struct {
	command string
	workdir string
	setup   string
	kind    kind
	sig     string
	layer   string
	source  string
	// evidence is added to the rationale when the candidate is chosen.
	evidence []Finding
	// problems are traps that make the candidate worse without ruling it
	// out (needs a database, runs a browser suite).
	problems []string
	// unusable says why the command cannot run locally at all.
	unusable string
	// rank orders candidates of one layer: lower is better.
	rank  int
	order int
	// runner/script: the named script the command runs (npm test -> npm,
	// test), for confirmation by the manifest.
	runner, script string
	// inner is the signature of what the named script runs; inners lists
	// the signatures of every command its body runs.
	inner  string
	inners []string
	// strong is set when the layer states the command outright (a CI step,
	// a script named test), weak for a default guessed from a manifest.
	strong bool
	// origin is where the command was found, when the layer knows it as
	// data (a CI step); originOf derives it otherwise.
	origin *Origin
	// variant says why the candidate runs a variant of the suite (another
	// platform, toolchain or kind of suite, or something else than this
	// repository's code): "" for the project's own suite.
	variant string
	// narrow is how much of the suite the command leaves out (a package,
	// a test name, a group): 0 for the whole suite.
	narrow int
	// ciBacked: the candidate is a canonical target that covers the CI
	// gate (CI's steps are its evidence). ciVariant: CI only runs variants
	// (this command), so the candidate comes from another layer.
	ciBacked  bool
	ciVariant string
	// parts are the other test commands of the same CI job (each in
	// workdir): the job's suite is the command and its parts.
	parts []string
	// pkg is the one workspace package a CI command selects (yarn
	// workspace X, nx test X), "" for none.
	pkg string
	// sameRunner are all the other test commands of the job, variants
	// named so included (for the union of a suite run in parts).
	sameRunner []string
}

func finding(layer, source, text string) Finding {
	return Finding{Layer: layer, Source: source, Finding: text}
}

// originOf is where c's command was found: its own origin (a CI step, a
// command the task names), or else the file its source names first (a
// manifest's, a context file's, an earlier loop's: "package.json
// scripts.test" is package.json).
func originOf(c candidate) *Origin {
	if c.origin != nil {
		o := *c.origin
		return &o
	}
	switch c.layer {
	case LayerManifest, LayerContextFile, LayerAIWGArtifact:
		if f, _, _ := strings.Cut(c.source, " "); f != "" {
			return &Origin{File: f}
		}
	}
	return nil
}
