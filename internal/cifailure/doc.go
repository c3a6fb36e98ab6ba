// Package cifailure turns a failed GitHub Actions workflow run into a loop:
// whether the workflow_run event should start one (Decide), the failed
// steps themselves as the completion criterion (Resolve, Criterion.Command),
// and the material of the first prompt: the failing step's log trimmed like
// the check's output and the commit that broke the build (Prompt, Culprit).
//
// The criterion is taken from the workflow file at the run's head commit:
// the failed job is found by its name as GitHub renders it (a matrix entry
// "test (ubuntu-latest, 20)" among the matrix's expansion, include and
// exclude applied; a job of a reusable workflow of the repository as
// "caller / job"), its failed steps by their names, and each run: is taken
// with its working-directory, shell and env, expressions evaluated from the
// run and the matrix entry. What only the runner knows (secrets, step
// outputs, needs, hashFiles) is refused with a message naming the step and
// the expression. A failed step that runs an action falls back to inference
// with the job as context.
//
// The package reads nothing itself: the caller gives it the event, the
// jobs, the workflow file and the log (internal/forge/github reads them).
package cifailure
