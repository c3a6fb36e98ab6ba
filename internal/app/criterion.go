package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/criteria"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/shellcmd"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/verify"
)

// resolved is a start's completion criterion, and the inference's proposal
// (for inferred-completion.yaml) when it was inferred.
type resolved struct {
	criterion spec.Criterion
	yaml      []byte
}

// resolveCriterion returns the completion criterion of a start: given
// (--completion, the completion input), or inferred (with the trigger
// comment's hint, when there is one) and adopted as seed 002 says: asked
// at a terminal, only at high confidence without one.
func resolveCriterion(ctx context.Context, s spec.Settings, door spec.Door, root string, o IO, taskFromComment bool) (resolved, error) {
	c := s.Spec.Criterion
	if strings.TrimSpace(c.Command) != "" && c.Source == spec.SourceCI {
		// Taken by the door from a failed CI run, with its evidence.
		c.Workdir = nonEmpty(c.Workdir, ".")
		return resolved{criterion: c}, nil
	}
	if strings.TrimSpace(c.Command) != "" {
		c.Workdir = nonEmpty(c.Workdir, ".")
		c.Source, c.Confidence = spec.SourceFlag, "given"
		if door == spec.DoorAction {
			c.Source = spec.SourceInput
		}
		c.Evidence = []string{fmt.Sprintf("%s: %s: given by the user", criteria.LayerTaskVerb, door.Ref("completion"))}
		return resolved{criterion: c}, nil
	}
	prop, err := criteria.InferWithHint(ctx, root, s.Spec.Task, c.Hint)
	if err != nil {
		return resolved{}, usage(fmt.Errorf("inferring the completion command: %w", err))
	}
	if c.Setup != "" {
		prop.Setup = c.Setup
	}
	give := fmt.Sprintf(`%s "<command that exits 0 when done>"`, door.Ref("completion"))
	if prop.Command == "" {
		return resolved{}, usagef("no completion command could be inferred for %q: %s\n\n%s\nGive one with %s.", s.Spec.Task, prop.RefusalReason, prop.Summary(), give)
	}
	source := spec.SourceInferred
	if c.Hint != "" {
		source = spec.SourceHint
	}
	var origin *spec.Origin
	switch o := prop.Origin; {
	case o == nil:
	case o.Named == "hint" || o.Named == "task" && taskFromComment:
		// The person who wrote the trigger comment named the check.
		source = spec.SourceTrigger
	case o.Named == "task":
		source = spec.SourceTask
	case o.File != "":
		origin = &spec.Origin{File: o.File, Job: o.Job, Step: o.Step}
	}
	if source == spec.SourceTrigger || source == spec.SourceTask {
		// The person who asked named the command in their own words: it is
		// theirs, as a completion input would be (no question, no
		// confidence gate); inference only found its workdir and setup.
		c.Command, c.Workdir, c.Setup = prop.Command, nonEmpty(prop.Workdir, "."), prop.Setup
		c.Source, c.Confidence, c.Evidence = source, "given", evidence(prop)
		y, _ := prop.YAML()
		return resolved{criterion: c, yaml: y}, nil
	}
	if o.Interactive && !s.Start.AutoCriteria {
		fmt.Fprintf(o.Stderr, "agent-loop inferred the completion check:\n\n%s\nUse it? [Y/n/edit] ", prop.Summary())
		in := bufio.NewReader(o.Stdin)
		switch strings.ToLower(strings.TrimSpace(readLine(in))) {
		case "", "y", "yes":
		case "e", "edit":
			fmt.Fprint(o.Stderr, "Completion command: ")
			cmd := strings.TrimSpace(readLine(in))
			if cmd == "" {
				return resolved{}, usagef("no completion command given")
			}
			c.Command, c.Workdir, c.Setup = cmd, nonEmpty(prop.Workdir, "."), prop.Setup
			c.Source, c.Confidence = spec.SourceTyped, "given"
			c.Evidence = []string{criteria.LayerTaskVerb + ": terminal: typed in when asked"}
			return resolved{criterion: c}, nil
		default:
			return resolved{}, usagef("completion check not accepted; re-run with %s", give)
		}
	} else {
		if door == spec.DoorAction && prop.Confidence == criteria.ConfidenceHigh {
			// The Action adopts without asking anyone: the proposal must
			// first show, by running, that it runs the project's tests.
			if prop, err = verifyProposal(ctx, s, root, prop, o); err != nil {
				return resolved{}, err
			}
		}
		if prop.Confidence != criteria.ConfidenceHigh || prop.Command == "" {
			return resolved{}, &UsageError{Err: &NotAdoptedError{Proposal: prop, Err: fmt.Errorf("the inferred completion check has %s confidence, and without a terminal (or with %s) only high confidence is adopted:\n\n%s\nRe-run with %s %q if it is right, or give the right command",
				prop.Confidence, door.Ref("auto-criteria"), prop.Summary(), door.Ref("completion"), prop.Command)}}
		}
	}
	c.Command, c.Workdir, c.Setup = prop.Command, nonEmpty(prop.Workdir, "."), prop.Setup
	c.Source, c.Confidence, c.Evidence, c.Origin = source, prop.Confidence, evidence(prop), origin
	y, _ := prop.YAML()
	return resolved{criterion: c, yaml: y}, nil
}

// NotAdoptedError is the refusal of an inferred completion check that was
// not adopted (its confidence is below high, or running it showed it runs
// no test): it carries the proposal, so the Action can comment it with
// its evidence and the exact inputs to set.
type NotAdoptedError struct {
	Proposal criteria.Proposal
	Err      error
}

func (e *NotAdoptedError) Error() string { return e.Err.Error() }
func (e *NotAdoptedError) Unwrap() error { return e.Err }

// NotAdopted returns the proposal of a start refused because its inferred
// check was not adopted.
func NotAdopted(err error) (criteria.Proposal, bool) {
	var na *NotAdoptedError
	if errors.As(err, &na) {
		return na.Proposal, true
	}
	return criteria.Proposal{}, false
}

// Bounds of the verification of an inferred check before the Action
// adopts it: one candidate runs at most the check timeout (capped), the
// whole verification twice that.
const (
	maxVerifyCandidate = 10 * time.Minute
	maxVerifyTotal     = 15 * time.Minute
)

// verifyProposal runs the proposal (and, when it runs no test, its next
// candidates) once with the harness's own verifier, in the repository.
// The verifier is the one that runs the check: at integration with the
// sandbox it runs under the same jail (process.WithJail on ctx), since
// verification runs the repository's code.
func verifyProposal(ctx context.Context, s spec.Settings, root string, prop criteria.Proposal, o IO) (criteria.Proposal, error) {
	per := min(s.Spec.Limits.CheckTimeout, maxVerifyCandidate)
	if per <= 0 {
		per = maxVerifyCandidate
	}
	errOut := o.Stderr
	if errOut == nil {
		errOut = io.Discard
	}
	fmt.Fprintf(errOut, "agent-loop: verifying the inferred check by running it once: %s\n", prop.Command)
	got, err := criteria.Verify(ctx, root, prop, criteria.VerifyOptions{
		Runner: &verify.Shell{ScanReports: true}, Env: process.SafeEnv(o.Environ),
		PerCandidate: per, Total: min(2*per, maxVerifyTotal),
	})
	if err != nil {
		return prop, fmt.Errorf("verifying the inferred completion check: %w", err)
	}
	for _, v := range got.Verification {
		fmt.Fprintf(errOut, "agent-loop: `%s`: %s (%s)\n", v.Command, v.Result, v.Verdict)
	}
	return got, nil
}

// readLine reads one line of an answer ("" at the end of the input).
func readLine(r io.Reader) string {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	line, _ := br.ReadString('\n')
	return line
}

func evidence(p criteria.Proposal) []string {
	var out []string
	// What running it showed comes first: it is the strongest evidence.
	for _, v := range p.Verification {
		if v.Command == p.Command && v.Workdir == nonEmpty(p.Workdir, ".") {
			out = append(out, fmt.Sprintf("verified: `%s` %s", v.Command, v.Result))
		}
	}
	for _, f := range p.Rationale {
		out = append(out, fmt.Sprintf("%s: %s: %s", f.Layer, f.Source, f.Finding))
	}
	if len(out) > 8 {
		out = out[:8]
	}
	return out
}

// criterionDepends is what the criterion depends on: the files, targets
// and runner its command reaches in the repository at root, as the one
// shell-command model (internal/shellcmd, shared with the judge and
// inference) follows them. It is resolved once, saved in the Spec, and the
// judge and the prompt read it from there.
func criterionDepends(root string, c spec.Criterion) spec.Depends {
	return spec.Depends(shellcmd.DependsAt(root, c.Command, c.Workdir))
}
