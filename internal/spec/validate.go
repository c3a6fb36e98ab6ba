package spec

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/protected"
	"github.com/aiwg/agent-loop/internal/refname"
)

// protectedDefault is the protected-paths default: the CI workflows,
// CODEOWNERS and the files that configure agents.
var protectedDefault = protected.Default

// Problem is one invalid parameter: which, what is wrong, how to fix it,
// and the valid values where there is a list. It names the parameter as
// the door's user knows it.
type Problem struct {
	Param *Param
	Door  Door
	Cause string
	Fix   string
	Valid []string
}

func (p *Problem) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", p.Door.ref(p.Param), p.Cause)
	if p.Fix != "" {
		fmt.Fprintf(&b, "; %s", p.Fix)
	}
	if len(p.Valid) > 0 {
		fmt.Fprintf(&b, " (valid: %s)", strings.Join(p.Valid, ", "))
	}
	return b.String()
}

// Problems unpacks the problems of a Validate error.
func Problems(err error) []*Problem {
	var out []*Problem
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if p, ok := e.(*Problem); ok {
			out = append(out, p)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	return out
}

// Validated is a Settings that passed Validate: what app.Run takes, so
// nothing after the door checks or defaults a parameter again.
type Validated struct {
	s    Settings
	door Door
}

// Settings returns a copy of the validated settings.
func (v Validated) Settings() Settings { return v.s.Clone() }

// Door is the door the settings came through.
func (v Validated) Door() Door { return v.door }

// Validate checks s, as it came through door, once: every problem at once
// (errors.Join of *Problem, the ones recorded while parsing included), each
// naming the flag or the input. It also completes what follows from what
// was given: --agent-command alone means --provider command.
func Validate(s Settings, door Door) (Validated, error) {
	s = s.Clone()
	if err := check(&s, door, true); err != nil {
		return Validated{}, err
	}
	return Validated{s: s, door: door}, nil
}

// check finds the problems of s; start says whether the choices of a start
// (the loop id, inference, the Action's token) are checked too, or only the
// Spec (a resume's).
func check(s *Settings, door Door, start bool) error {
	if s.Spec.Agent.Command != "" && !s.Given("provider") {
		s.Spec.Agent.Provider = "command"
	}
	errs := append([]error(nil), s.problems...)
	s.problems = nil
	parsed := map[*Param]bool{}
	for _, e := range errs {
		if p, ok := e.(*Problem); ok {
			parsed[p.Param] = true
		}
	}
	add := func(name, cause, fix string, valid ...string) {
		p := Lookup(name)
		if p == nil || parsed[p] {
			return // its value did not parse: that problem is reported already
		}
		errs = append(errs, &Problem{Param: p, Door: door, Cause: cause, Fix: fix, Valid: valid})
	}
	sp := &s.Spec
	if strings.TrimSpace(sp.Task) == "" {
		fix := `give the task as the argument, e.g. agent-loop run --completion "go test ./..." "fix the failing tests"`
		if door == DoorAction {
			fix = "give the task as the `task` input (workflow_dispatch: an input named task), or trigger the loop from a comment or an issue"
		}
		add("task", "missing", fix)
	}
	if sp.Limits.MaxIterations < 1 {
		add("max-iterations", fmt.Sprintf("%d is not a positive number", sp.Limits.MaxIterations), "use 1 or more (default "+Lookup("max-iterations").Default+")")
	}
	if sp.Limits.Timeout <= 0 {
		add("timeout", "must be a positive number of minutes", "use e.g. "+Lookup("timeout").Default)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"iteration-timeout", sp.Limits.IterationTimeout}, {"idle-timeout", sp.Limits.IdleTimeout}, {"check-timeout", sp.Limits.CheckTimeout}} {
		if d.v < 0 {
			add(d.name, "must not be negative", "use minutes, or 0")
		}
	}
	if door.Has(Lookup("provider")) && !slices.Contains(Providers, sp.Agent.Provider) {
		add("provider", fmt.Sprintf("unknown provider %q", sp.Agent.Provider), "choose one of the supported agent CLIs", Providers...)
	} else if sp.Agent.Provider == "command" && strings.TrimSpace(sp.Agent.Command) == "" {
		add("agent-command", "the command provider needs the command to run", fmt.Sprintf(`give it, e.g. %s "./scripts/agent.sh"`, door.Ref("agent-command")))
	} else if sp.Agent.Command != "" && sp.Agent.Provider != "command" {
		add("agent-command", fmt.Sprintf("only used with provider command (provider is %q)", sp.Agent.Provider),
			fmt.Sprintf("drop it, or set %s to command", door.Ref("provider")))
	}
	if sp.Agent.MaxTurns < 0 {
		add("max-turns", "must not be negative", "use 0 for the CLI's own limit")
	}
	if door.Has(Lookup("agent-config")) && !slices.Contains(AgentConfigs, sp.Agent.Config) {
		add("agent-config", fmt.Sprintf("unknown value %q", sp.Agent.Config), "say whose configuration the CLI reads", AgentConfigs...)
	}
	if start && !s.Start.Infer && strings.TrimSpace(sp.Criterion.Command) == "" {
		cause, fix := "--no-infer-completion needs an explicit --completion", `give the command that exits 0 when the task is done, e.g. --completion "npm test"`
		if door == DoorAction {
			cause, fix = "infer-completion is false, so the completion command must be given", `give the command that exits 0 when the task is done as the completion input, e.g. "npm test"`
		}
		add("completion", cause, fix)
	}
	if sp.Limits.BudgetUSD < 0 {
		add("budget-usd", "must not be negative", "use 0 for no budget")
	}
	if sp.Limits.MaxTokens < 0 {
		add("max-tokens", "must not be negative", "use 0 for no limit")
	}
	if sp.Policy.ConfirmRuns < 0 || sp.Policy.ConfirmRuns > 10 {
		add("confirm-runs", fmt.Sprintf("%d is out of range", sp.Policy.ConfirmRuns), "use 0 to 10 extra runs of the check after a pass")
	}
	if !slices.Contains(RegressionPolicies, sp.Policy.Regression) {
		add("regression-policy", fmt.Sprintf("unknown policy %q", sp.Policy.Regression), "choose what happens after a cheating iteration", RegressionPolicies...)
	}
	if start && door == DoorAction && !slices.Contains(PRModes, sp.Publish.PR) {
		add("pr", fmt.Sprintf("unknown value %q", sp.Publish.PR), "say what to publish at the end", PRModes...)
	}
	if sp.Publish.Branch != "" {
		if err := refname.Branch(sp.Publish.Branch); err != nil {
			var be *refname.BranchError
			cause := err.Error()
			if errors.As(err, &be) {
				cause = fmt.Sprintf("%q is not a valid branch name (%s)", be.Name, be.Cause)
			}
			add("branch", cause, "use letters, digits and - _ . / without a trailing . or / (for example agent-loop/fix-tests)")
		}
	}
	if sp.Publish.Base != "" {
		if err := refname.Branch(sp.Publish.Base); err != nil {
			add("base", err.Error(), "")
		}
	}
	if id := s.Start.LoopID; start && id != "" && !ValidLoopID(id) {
		add("loop-id", fmt.Sprintf("%q does not match ralph-<slug>-<8 hex>", id), "e.g. ralph-fix-tests-a1b2c3d4, or leave it out to generate one")
	}
	if wd := sp.Criterion.Workdir; wd != "" && (path.IsAbs(wd) || path.Clean(wd) == ".." || strings.HasPrefix(path.Clean(wd), "../")) {
		add("workdir", fmt.Sprintf("%q must be relative to the repository root and stay inside it", wd), "use e.g. packages/api")
	}
	if start {
		// The patterns as given (one a line, "#" comments, "- " list
		// items, "none"), or the default when none were given.
		if s.Given("protected-paths") {
			sp.Publish.Protected = protected.ParseInput(strings.Join(sp.Publish.Protected, "\n"))
		} else if len(sp.Publish.Protected) == 0 {
			sp.Publish.Protected = append([]string(nil), protectedDefault...)
		}
	}
	if _, err := protected.Compile(sp.Publish.Protected); err != nil {
		add("protected-paths", err.Error(), "")
	}
	if door == DoorAction && !slices.Contains(FixCIModes, s.Action.FixCI) && (start || s.Action.FixCI != "") {
		add("fix-ci", fmt.Sprintf("unknown value %q", s.Action.FixCI), "say where the fix of a pull request's failed CI run goes", FixCIModes...)
	}
	if door == DoorAction && start && s.Action.MaxAttempts < 1 {
		add("max-attempts", fmt.Sprintf("%d is not a positive number", s.Action.MaxAttempts), "use 1 or more (default "+Lookup("max-attempts").Default+")")
	}
	if start && door == DoorAction && strings.TrimSpace(s.Action.Token) == "" {
		add("github-token", "empty", "leave it at its default ${{ github.token }} and grant `permissions: contents: write, pull-requests: write, issues: write`, or pass a GitHub App token")
	}
	return errors.Join(errs...)
}

// loopIDPattern is a loop id: ralph-<slug>-<8 hex>.
var loopIDPattern = regexp.MustCompile(`^ralph-[a-z0-9-]+-[a-f0-9]{8}$`)

// ValidLoopID reports whether id is ralph-<slug>-<8 hex>.
func ValidLoopID(id string) bool { return loopIDPattern.MatchString(id) }

// Amend applies to a saved Spec the parameters `resume` takes
// (ResumeParams) that changes holds as given, and checks the result as
// door's user gave them. Nothing else of saved changes; the Start of the
// result holds this resume's own choices (--quiet).
func Amend(saved Spec, changes Settings, door Door) (Settings, error) {
	s := Settings{Spec: saved.Clone(), Start: Start{Infer: true}}
	for _, p := range ResumeParams() {
		if !changes.Given(p.Name) {
			continue
		}
		copyField(p.field(&s), p.field(&changes))
		if s.given == nil {
			s.given = map[string]bool{}
		}
		s.given[p.Name] = true
	}
	s.problems = append(s.problems, changes.problems...)
	if err := check(&s, door, false); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// copyField copies the value src points to into dst (both from the same
// parameter's field).
func copyField(dst, src any) {
	switch d := dst.(type) {
	case *string:
		*d = *src.(*string)
	case *int:
		*d = *src.(*int)
	case *int64:
		*d = *src.(*int64)
	case *float64:
		*d = *src.(*float64)
	case *bool:
		*d = *src.(*bool)
	case *time.Duration:
		*d = *src.(*time.Duration)
	case *[]string:
		*d = append([]string(nil), *src.(*[]string)...)
	}
}
