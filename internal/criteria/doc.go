// Package criteria infers the completion criterion of a repository: the shell
// command that the team itself uses to say "this passes", with the evidence
// that led to it, so that agent-loop can run without --completion.
//
// Inference is deterministic, reads files only (it never runs the
// repository's code) and is built of the five layers of seed 001, each a
// separate unit:
//
//  1. the task verb gives the criterion class (taskverb.go), or a refusal
//     for a task with no measurable criterion;
//  2. context files (AGENTS.md, CLAUDE.md, CONTRIBUTING.md, README
//     development sections) give the commands people are told to run
//     (context.go);
//  3. manifests and task runners (package.json, go.mod, Cargo.toml,
//     pyproject.toml, pom.xml, Makefile, ...) give the local commands
//     (manifest_*.go);
//  4. CI configuration (GitHub Actions and GitLab CI) gives the team's own
//     definition of "passes" (ci.go, ci_analyze.go);
//  5. .aiwg/ artifacts (a test strategy, an earlier inferred-completion.yaml)
//     give project-specific gates (aiwg.go).
//
// What one command is (test, lint, setup, ...), what wrappers it has and
// what the named scripts of the task runners run is internal/shellcmd's
// model, which the judge shares (classify.go adapts it; the runners'
// scripts are read through shellcmd.Tree).
//
// synth.go weighs the layers: CI usually wins, a manifest or context file
// confirms it or supplies the local equivalent, and the rationale names every
// finding and every trap it recognised. trigger.go parses the trigger phrases
// ("ralph this: X", "loop until X", "/agent-loop fix until green") that start
// a loop from a comment.
package criteria
