package loop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/state"
)

// pendingMerge is a merge of the target branch started and left to the
// next iteration: its conflicts to resolve, or the check it broke.
type pendingMerge struct {
	MergeResult
	// Check is the check's result on the merged tree (clean merges).
	Check *CheckResult
}

// mergeTarget is the branch the result is for, when its new commits are
// merged before publishing: the Spec's Publish.Base, with commits pushed.
func (e *Engine) mergeTarget() (Merger, string) {
	m, ok := e.Repo.(Merger)
	if !ok || !e.spec.Publish.Commit || !e.spec.Publish.Push || e.spec.Publish.Base == "" {
		return nil, ""
	}
	return m, e.spec.Publish.Base
}

// syncBase runs when iteration n passed the check: before the result is
// published, the target branch's new commits are merged into the loop
// branch. A clean merge that keeps the check passing is committed and the
// loop completes; a conflict, or a merge that breaks the check, becomes
// the next iteration's task when iterations are left, else the result is
// published without the merge. Every outcome is recorded for the report.
func (e *Engine) syncBase(ctx context.Context, n int, deadline time.Time, done stopReason) stopReason {
	m, target := e.mergeTarget()
	if m == nil {
		return done
	}
	local := context.WithoutCancel(ctx)
	res, err := m.StartMerge(local, target)
	if err != nil {
		e.logf("could not merge %s into the loop branch (the result is published without it): %v", target, err)
		e.addMerge(state.Merge{Target: target, Iteration: n, Outcome: state.MergeNotMerged, Detail: err.Error()})
		return done
	}
	if res.UpToDate {
		return done
	}
	mg := state.Merge{Target: target, Head: res.Head, Conflicts: res.Conflicts, Iteration: n}
	for _, c := range res.Commits {
		mg.Commits = append(mg.Commits, state.MergedCommit{SHA: c.SHA, Subject: c.Subject})
	}
	what := fmt.Sprintf("%s moved on by %d commit(s) while the loop ran", target, len(res.Commits))
	e.logf("%s: merging them into the loop branch", what)
	var check *CheckResult
	if len(res.Conflicts) == 0 {
		c, err := e.runCheck(ctx, n, deadline)
		if err != nil {
			_ = m.AbortMerge(local)
			return e.fail(err)
		}
		if ctx.Err() != nil {
			_ = m.AbortMerge(local)
			return stopReason{kind: state.StopCancelled, status: state.Paused, reason: "interrupted by a signal while checking the merge of " + target}
		}
		if c.Passed {
			cr, err := m.CommitMerge(local, CommitRequest{
				Subject: oneLine(fmt.Sprintf("agent-loop: merge %s into the loop branch", target), 120),
				Body:    fmt.Sprintf("%s; the check passes on the merge.\n", what),
				Trailers: []Trailer{{Key: "Agent-Loop-Id", Value: e.st.LoopID},
					{Key: "Agent-Loop-Merge", Value: target + " " + res.Head}},
			})
			if err != nil {
				_ = m.AbortMerge(local)
				e.logf("committing the merge of %s failed (the result is published without it): %v", target, err)
				mg.Outcome, mg.Detail = state.MergeNotMerged, err.Error()
				e.addMerge(mg)
				return done
			}
			mg.Commit, mg.Outcome = cr.SHA, state.MergeMerged
			e.st.Harness.HeadSHA = cr.SHA
			e.addMerge(mg)
			e.logf("merged %s (%s); the check passes on the merge", target, short(cr.SHA))
			done.reason += fmt.Sprintf("; %d new commit(s) of %s merged, and the check passes on the merge", len(res.Commits), target)
			return done
		}
		check = &c
		mg.Outcome, mg.Detail = state.MergeBroke, "the check fails on the merge"
	} else {
		mg.Outcome, mg.Detail = state.MergeConflict, "conflicts in "+strings.Join(capList(res.Conflicts, 10), ", ")
	}
	if n >= e.spec.Limits.MaxIterations || deadline.Sub(e.now())-e.Tuning.PublishMargin < 10*time.Second {
		if err := m.AbortMerge(local); err != nil {
			return e.fail(fmt.Errorf("undoing the merge of %s: %w", target, err))
		}
		mg.Outcome = state.MergeNotMerged
		mg.Detail += "; no iteration was left to fix it, so the result is published without the merge"
		e.addMerge(mg)
		e.logf("%s: %s", target, mg.Detail)
		done.reason += fmt.Sprintf("; %s could not be merged (%s)", target, mg.Detail)
		return done
	}
	e.addMerge(mg)
	e.pending = &pendingMerge{MergeResult: res, Check: check}
	e.logf("the merge of %s is left to iteration %d: %s", target, n+1, mg.Detail)
	if err := e.save(); err != nil {
		return e.fail(err)
	}
	return stopReason{}
}

// finishMerge ends a pending merge once iteration n's changes are staged:
// a conflicted path that still holds a marker undoes the merge (the
// iteration then committed nothing of it), otherwise the iteration's
// commit is the merge commit. It returns why the merge was undone ("").
func (e *Engine) finishMerge(ctx context.Context, n int) (string, error) {
	if e.pending == nil {
		return "", nil
	}
	m, _ := e.mergeTarget()
	if m == nil {
		e.pending = nil
		return "", nil
	}
	left, err := m.MergeMarkers(ctx)
	if err != nil {
		return "", err
	}
	if len(left) == 0 {
		return "", nil
	}
	if err := m.AbortMerge(ctx); err != nil {
		return "", fmt.Errorf("undoing the merge of %s: %w", e.pending.Target, err)
	}
	why := fmt.Sprintf("conflict markers remain in %s: the merge of %s was undone", strings.Join(capList(left, 10), ", "), e.pending.Target)
	e.addMerge(state.Merge{Target: e.pending.Target, Head: e.pending.Head, Conflicts: left, Iteration: n, Outcome: state.MergeUnresolved, Detail: why})
	e.pending = nil
	return why, nil
}

// mergeCommitted records that iteration n's commit is the pending merge.
func (e *Engine) mergeCommitted(n int, sha string) {
	if e.pending == nil {
		return
	}
	mg := state.Merge{Target: e.pending.Target, Head: e.pending.Head, Iteration: n, Commit: sha, Outcome: state.MergeMerged, ByIteration: true}
	for _, c := range e.pending.Commits {
		mg.Commits = append(mg.Commits, state.MergedCommit{SHA: c.SHA, Subject: c.Subject})
	}
	e.addMerge(mg)
	e.mergedAt = n
	e.pending = nil
}

func (e *Engine) addMerge(m state.Merge) {
	e.mu.Lock()
	e.st.Harness.Merges = append(e.st.Harness.Merges, m)
	e.mu.Unlock()
}

// best is the judge's best iteration among those that can be published:
// after a merge made by an iteration, only that iteration and later ones
// (an earlier tree lacks the target's commits the branch now has).
func (e *Engine) best() (int, string) {
	if e.mergedAt == 0 {
		return e.Judge.Best(e.records)
	}
	var after []Record
	for _, r := range e.records {
		if r.Iteration >= e.mergedAt {
			after = append(after, r)
		}
	}
	return e.Judge.Best(after)
}

// mergedAtFromState is the last iteration whose commit is a merge.
func mergedAtFromState(st *state.State) int {
	n := 0
	for _, m := range st.Harness.Merges {
		if m.ByIteration && m.Outcome == state.MergeMerged {
			n = max(n, m.Iteration)
		}
	}
	return n
}

// mergeNote is the prompt's section for a pending merge.
func (p *pendingMerge) note() *MergeNote {
	if p == nil {
		return nil
	}
	mn := &MergeNote{Target: p.Target, Commits: len(p.Commits), Conflicts: p.Conflicts}
	if p.Check != nil {
		mn.Check = p.Check
	}
	return mn
}
