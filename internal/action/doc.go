// Package action is agent-loop's second front door, beside the CLI
// (internal/cli): the GitHub container Action's main and post steps. It
// reads the inputs through the parameter table (internal/spec), decides
// what the event asks for (a comment, a label, a pull request, a dispatch),
// refuses what it must (forks, people without write permission), restores
// an earlier run's state, calls internal/app to run or resume the loop, and
// publishes: the state ref and artifact, the pull request, the sticky
// comment, the step summary and the outputs. Its exit codes are its own
// (internal/exitcode), as the CLI's are.
package action
