package action_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The human-gate regression policy in the Action: iteration 1 deletes a test,
// the loop pauses for a decision; a comment "/agent-loop reject" on the
// same issue resumes it, the change is reverted and iteration 2 fixes the
// code.
func TestActionHumanGateFromComment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	mainBin, _ := binary(t)
	w := newWorld(t)
	agent := filepath.Join(w.work, "gate-agent.sh")
	os.WriteFile(agent, []byte(`case "$AGENT_LOOP_ITERATION" in
1) grep -v 'sub' test.sh > t && mv t test.sh && sed -i 's/1\.\.3/1..1/' test.sh ;;
*) printf 'add() { echo $(($1 + $2)); }\nsub() { echo $(($1 - $2)); }\n' > calc.sh ;;
esac
`), 0o755)
	issue := w.gh.AddIssue(repoName, "alice", "calc is broken", "")
	inputs := map[string]string{"agent-command": "sh " + agent, "regression-policy": "human-gate"}

	id1 := w.gh.AddComment(repoName, issue, "alice", "/agent-loop fix the calculator tests")
	s1 := w.step(w.checkout("g1"), "issue_comment", commentEvent(issue, id1, "alice", "/agent-loop fix the calculator tests"), inputs, "1")
	if err := s1.start(t, mainBin, nil).Wait(); exitCode(err) != 1 {
		t.Fatalf("run 1 exit %d, want 1 (paused)\n%s", exitCode(err), s1.stdout.String())
	}
	if out := fileCommands(t, s1.output); out["status"] != "paused" {
		t.Fatalf("run 1 outputs %v\n%s", out, s1.stdout.String())
	}

	// A comment that is no decision is answered with what to do.
	id2 := w.gh.AddComment(repoName, issue, "alice", "/agent-loop keep going")
	s2 := w.step(w.checkout("g2"), "issue_comment", commentEvent(issue, id2, "alice", "/agent-loop keep going"), inputs, "1")
	if err := s2.start(t, mainBin, nil).Wait(); exitCode(err) != 0 {
		t.Fatalf("run 2 exit %d\n%s", exitCode(err), s2.stdout.String())
	}
	cs := w.gh.Comments(repoName, issue)
	if last := cs[len(cs)-1].Body; !strings.Contains(last, "approve") || !strings.Contains(last, "reject") {
		t.Fatalf("no decision request: %q", last)
	}

	id3 := w.gh.AddComment(repoName, issue, "alice", "/agent-loop reject")
	s3 := w.step(w.checkout("g3"), "issue_comment", commentEvent(issue, id3, "alice", "/agent-loop reject"), inputs, "1")
	if err := s3.start(t, mainBin, nil).Wait(); exitCode(err) != 0 {
		t.Fatalf("run 3 exit %d\n%s", exitCode(err), s3.stdout.String())
	}
	out := fileCommands(t, s3.output)
	if out["status"] != "completed" || out["best-iteration"] != "2" {
		t.Fatalf("run 3 outputs %v\n%s", out, s3.stdout.String())
	}
	// The published tree keeps the sub tests.
	if got := git(t, w.bare, "show", out["branch"]+":test.sh"); !strings.Contains(got, "sub") {
		t.Errorf("the published test.sh lost the sub tests:\n%s", got)
	}
}
