package criteria

import "github.com/aiwg/agent-loop/internal/shellcmd"

// cmdInfo is what one simple command is, as shellcmd classifies it.
type cmdInfo struct {
	kind kind
	// sig identifies the command for agreement between layers:
	// "go test", "npm test", "pytest", "make test".
	sig string
	// runner and script are set when the command runs a named script of a
	// task runner (runner "npm", script "test").
	runner, script string
	// inner is the signature of what a named script runs, when it runs
	// one command; inners lists the signatures of all the gates its body
	// runs.
	inner  string
	inners []string
	// note explains a trap (watch mode, a script that always fails); fix,
	// when set, is a local equivalent that avoids the trap.
	note, fix string
}

// classifier classifies commands with shellcmd, following named scripts
// through the repository's scripts (nil: by their words alone).
type classifier struct {
	lookup *shellcmd.Tree
}

// classify returns what the command args (already split into words; a
// non-literal word is "") does when run in dir.
func (c classifier) classify(args []string, dir string) cmdInfo {
	var cl shellcmd.Classifier
	if c.lookup != nil {
		cl.Lookup = c.lookup
	}
	i := cl.Classify(args, dir)
	return cmdInfo{kind: i.Kind, sig: i.Sig, runner: i.ScriptTool, script: i.Script, inner: i.Inner, inners: i.Inners, note: i.Note, fix: i.Fix}
}

// script returns the body of a named script of a runner in dir.
func (c classifier) script(runner, dir, name string) (string, bool) {
	if c.lookup == nil {
		return "", false
	}
	body, _, ok := c.lookup.Script(runner, dir, name)
	return body, ok
}

// splitScript parses a shell script into its simple commands.
func splitScript(script string) ([]shellcmd.Command, error) { return shellcmd.Parse(script) }
