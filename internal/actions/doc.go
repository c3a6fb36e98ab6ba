// Package actions is the GitHub Actions runtime as agent-loop sees it from
// inside its container action: inputs and context (Runtime), the one writer
// of workflow commands (Writer: masks, groups, annotations, outputs, state,
// step summary, and the stop-commands wrapper for untrusted text), and a
// client of the artifacts v4 service (ArtifactClient) that keeps the loop
// state between runs.
//
// Facts this package is built on (checked against the runner and toolkit
// sources, see DESIGN.md "Platform facts"):
//
//   - Inputs arrive as INPUT_<NAME>, upper-cased, spaces turned into "_" and
//     hyphens kept (INPUT_MAX-ITERATIONS). A /bin/sh entrypoint would drop
//     such variables, which is why the image uses an exec-form ENTRYPOINT.
//   - main and post are two separate `docker run`s. The runner passes the
//     post-entrypoint as `docker run --entrypoint "<one word>"` and appends
//     runs.args to every stage, so the post step cannot be told apart by an
//     argument: it is started as /agent-loop-post (a symlink to the binary)
//     and recognised by argv[0], with STATE_ variables as a second signal.
//     See IsPostInvocation and Runtime.IsPost.
//   - Outputs and state are written to files with a heredoc whose delimiter
//     is random per write; a value containing it is refused.
//   - Text that an agent or a completion command produced is echoed inside
//     ::stop-commands::<random token> ... ::<token>:: so the runner executes
//     none of the workflow commands it may contain.
//   - Artifacts v4 speak Twirp JSON to the results service with the runtime
//     token, and upload the zip to a signed Azure blob URL with Put Block and
//     Put Block List. Not available on GHES: callers fall back to the state
//     ref (ErrArtifactsUnavailable says so).
package actions
