// Package task implements the Task runner.
package task

// DefaultTaskfile is the file name Task looks for.
const DefaultTaskfile = "Taskfile.yml"
