package loop

import (
	"context"
	"fmt"

	"github.com/aiwg/agent-loop/internal/protected"
	"github.com/aiwg/agent-loop/internal/state"
)

// revertProtected undoes the agent's changes to the Spec's protected paths
// in the index Stage just wrote and in the work tree: each is put back as
// it is in the loop's last commit (or, while a merge is pending, in the
// merged tree), an added one removed. It returns what it undid (nil for
// nothing, or when the repository cannot do it).
func (e *Engine) revertProtected(ctx context.Context) ([]protected.Revert, error) {
	p, ok := e.Repo.(Protector)
	if !ok || e.protect == nil {
		return nil, nil
	}
	from := e.headSHA()
	if e.pending != nil && e.pending.Tree != "" {
		from = e.pending.Tree
	}
	changes, err := p.StagedChanges(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("listing the iteration's changes: %w", err)
	}
	_, revert := e.protect.Split(changes)
	if len(revert) == 0 {
		return nil, nil
	}
	restore, remove := protected.Restore(revert)
	if err := p.RestorePaths(ctx, from, restore, remove); err != nil {
		return nil, fmt.Errorf("reverting the changes to protected paths: %w", err)
	}
	return revert, nil
}

// protectedReverts is the state's record of reverts.
func protectedReverts(rs []protected.Revert) []state.ProtectedRevert {
	var out []state.ProtectedRevert
	for _, r := range rs {
		out = append(out, state.ProtectedRevert{Status: string(r.Status), Path: r.Path, OldPath: r.OldPath, Pattern: r.Pattern})
	}
	return out
}

// revertsFromState rebuilds the reverts of a saved iteration.
func revertsFromState(rs []state.ProtectedRevert) []protected.Revert {
	var out []protected.Revert
	for _, r := range rs {
		var st byte
		if r.Status != "" {
			st = r.Status[0]
		}
		out = append(out, protected.Revert{Change: protected.Change{Status: st, Path: r.Path, OldPath: r.OldPath}, Pattern: r.Pattern})
	}
	return out
}
