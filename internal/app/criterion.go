package app

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/aiwg/agent-loop/internal/criteria"
	"github.com/aiwg/agent-loop/internal/shellcmd"
	"github.com/aiwg/agent-loop/internal/spec"
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
func resolveCriterion(ctx context.Context, s spec.Settings, door spec.Door, root string, o IO) (resolved, error) {
	c := s.Spec.Criterion
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
	} else if prop.Confidence != criteria.ConfidenceHigh {
		return resolved{}, usagef("the inferred completion check has %s confidence, and without a terminal (or with %s) only high confidence is adopted:\n\n%s\nRe-run with %s %q if it is right, or give the right command.",
			prop.Confidence, door.Ref("auto-criteria"), prop.Summary(), door.Ref("completion"), prop.Command)
	}
	c.Command, c.Workdir, c.Setup = prop.Command, nonEmpty(prop.Workdir, "."), prop.Setup
	c.Source, c.Confidence, c.Evidence = source, prop.Confidence, evidence(prop)
	y, _ := prop.YAML()
	return resolved{criterion: c, yaml: y}, nil
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
