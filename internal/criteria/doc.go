// Package criteria infers the completion criterion of a repository: the shell
// command that the team itself uses to say "this passes", with the evidence
// that led to it, so that agent-loop can run without --completion.
//
// Inference is deterministic, reads files only (it never runs the
// repository's code; it asks the machine which programs and which Python it
// has, through Host) and is built of the five layers of seed 001, each a
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
// finding and every trap it recognised. A CI job's role (the gate, or a
// variant: another platform, toolchain, kind of suite, repository or built
// artifact) is decided from what it runs and its context (rank.go); the
// manifest's canonical target wins when it covers CI's gate steps
// (canonical.go); a candidate that cannot run in a fresh clone is refused
// or repaired (runnable.go); a repository with several independent suites
// lists them (suites.go). The confidence is high only when the evidence is
// direct and nothing is known against it; the reasons it is not are in the
// rationale, and AdoptionComment (comment.go) is what the Action posts
// instead of adopting such a proposal.
//
// Verify (verify.go) is the one part that runs anything: `infer --verify`
// and the Action, before adopting a proposal, run the top candidates once,
// bounded, through a Runner (the harness's own verifier), and refuse those
// that run no test. trigger.go parses the trigger phrases ("ralph this: X",
// "loop until X", "/agent-loop fix until green") that start a loop from a
// comment.
package criteria
