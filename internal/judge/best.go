package judge

import (
	"fmt"
	"sort"

	"github.com/aiwg/agent-loop/internal/loop"
)

// Best picks the iteration to publish. An iteration that was rejected or
// has a critical regression never qualifies. Among the rest: one that passed
// the check beats one that failed, then the higher score, then more passing
// tests, then the earlier iteration. It returns (0, "") when nothing
// qualifies; the reason is a sentence for the report.
func (j *Judge) Best(history []loop.Record) (int, string) {
	var cands []loop.Record
	vetoed := 0
	for _, r := range history {
		if r.Rejected || r.Verdict.Critical() {
			vetoed++
			continue
		}
		cands = append(cands, r)
	}
	if len(cands) == 0 {
		return 0, ""
	}
	sort.SliceStable(cands, func(a, b int) bool { return better(cands[a], cands[b]) })
	best := cands[0]
	return best.Iteration, bestReason(best, cands, vetoed)
}

// better orders records best first.
func better(a, b loop.Record) bool {
	if a.Check.Passed != b.Check.Passed {
		return a.Check.Passed
	}
	if sa, sb := round1(a.Verdict.Score), round1(b.Verdict.Score); sa != sb {
		return sa > sb
	}
	if pa, pb := passingCount(a), passingCount(b); pa != pb {
		return pa > pb
	}
	return a.Iteration < b.Iteration
}

func passingCount(r loop.Record) int {
	if !r.Check.Tests.Known {
		return -1
	}
	return r.Check.Tests.Passed
}

func bestReason(best loop.Record, cands []loop.Record, vetoed int) string {
	var what string
	n := len(best.Verdict.Regressions)
	switch {
	case best.Check.Passed && n == 0:
		what = "passed the check with no regression"
	case best.Check.Passed:
		what = fmt.Sprintf("passed the check with %s, none critical,", plural(n, "regression"))
	case n == 0:
		what = "did not pass the check but had no regression"
	default:
		what = fmt.Sprintf("did not pass the check but had no critical regression (%d other)", n)
	}
	score := num(best.Verdict.Score)
	var why string
	switch {
	case len(cands) == 1 && vetoed > 0:
		why = fmt.Sprintf("and is the only iteration without a critical regression (score %s)", score)
	case len(cands) == 1:
		why = fmt.Sprintf("(score %s)", score)
	case best.Check.Passed && !cands[1].Check.Passed:
		why = fmt.Sprintf("and is the only iteration that passed (score %s)", score)
	case round1(best.Verdict.Score) != round1(cands[1].Verdict.Score):
		why = fmt.Sprintf("and the highest score (%s)", score)
	case passingCount(best) != passingCount(cands[1]):
		why = fmt.Sprintf("and, tied on score (%s), the most passing tests (%d)", score, best.Check.Tests.Passed)
	default:
		why = fmt.Sprintf("and is the earliest of the iterations tied at score %s", score)
	}
	s := fmt.Sprintf("Iteration %d: %s %s", best.Iteration, what, why)
	if vetoed > 0 {
		s += fmt.Sprintf("; %s excluded for critical regressions", plural(vetoed, "iteration"))
	}
	return s
}
