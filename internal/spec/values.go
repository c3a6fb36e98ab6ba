package spec

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind is what a parameter's value is, as the help and the README say it.
func (p *Param) Kind() string {
	switch p.field(&Settings{}).(type) {
	case *int, *int64:
		return "whole number"
	case *float64:
		return "number"
	case *bool:
		return "true or false"
	case *time.Duration:
		return "minutes"
	case *[]string:
		return "list"
	}
	if len(p.Valid) > 0 {
		return "one of " + strings.Join(p.Valid, ", ")
	}
	return "text"
}

// apply parses text and sets the parameter's field in s. The empty text
// sets the zero value of text and list fields and is an error elsewhere
// (callers apply the default instead).
func (p *Param) apply(s *Settings, text string) error {
	switch f := p.field(s).(type) {
	case *string:
		v := text
		if len(p.Valid) > 0 {
			v = strings.ToLower(strings.TrimSpace(v))
			if a, ok := p.Aliases[v]; ok {
				v = a
			}
		}
		*f = v
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("%q is not a whole number", text)
		}
		*f = n
	case *int64:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", text)
		}
		*f = n
	case *float64:
		x, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || x != x {
			return fmt.Errorf("%q is not a number", text)
		}
		*f = x
	case *bool:
		switch strings.ToLower(strings.TrimSpace(text)) {
		case "true", "yes", "1", "on":
			*f = true
		case "false", "no", "0", "off":
			*f = false
		default:
			return fmt.Errorf("%q is not true or false", text)
		}
	case *time.Duration:
		d, err := parseMinutes(text)
		if err != nil {
			return err
		}
		*f = d
	case *[]string:
		*f = nil
		for _, line := range strings.Split(text, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				*f = append(*f, line)
			}
		}
	case credential:
		if f.s.Action.Credentials == nil {
			f.s.Action.Credentials = map[string]string{}
		}
		if text == "" {
			delete(f.s.Action.Credentials, f.env)
		} else {
			f.s.Action.Credentials[f.env] = text
		}
	default:
		return fmt.Errorf("parameter %s has a field of type %T", p.Name, f)
	}
	return nil
}

// parseMinutes reads minutes ("60", "0.5") or a Go duration ("90s").
func parseMinutes(text string) (time.Duration, error) {
	t := strings.TrimSpace(text)
	if x, err := strconv.ParseFloat(t, 64); err == nil && x == x && x < 1e9 && x > -1e9 {
		return time.Duration(x * float64(time.Minute)), nil
	}
	if d, err := time.ParseDuration(t); err == nil {
		return d, nil
	}
	return 0, fmt.Errorf("%q is not a number of minutes", text)
}

// set is apply for a value the user gave at door: it records that the
// parameter was given.
func (p *Param) set(s *Settings, text string) error {
	if err := p.apply(s, text); err != nil {
		return err
	}
	if s.given == nil {
		s.given = map[string]bool{}
	}
	s.given[p.Name] = true
	return nil
}

// Set sets the parameter called name from text, as a user at door would:
// a value that does not parse is recorded as a problem, reported by
// Validate with the others.
func (s *Settings) Set(door Door, name, text string) {
	p := Lookup(name)
	if p == nil {
		s.problems = append(s.problems, fmt.Errorf("unknown parameter %q", name))
		return
	}
	if err := p.set(s, text); err != nil {
		s.problems = append(s.problems, &Problem{Param: p, Door: door, Cause: err.Error(), Fix: p.fixHint()})
	}
}

// FromInputs reads every Action input through getenv (INPUT_<NAME>,
// hyphens kept, trimmed). An empty input keeps its default; a value that
// does not parse is a problem Validate reports.
func FromInputs(getenv func(string) string) Settings {
	s := Defaults(DoorAction)
	for _, p := range Params() {
		if p.Input == "" {
			continue
		}
		v := strings.TrimSpace(getenv(InputEnv(p.Input)))
		if v == "" {
			continue
		}
		if err := p.set(&s, v); err != nil {
			s.problems = append(s.problems, &Problem{Param: p, Door: DoorAction, Cause: err.Error(), Fix: p.fixHint()})
		}
	}
	return s
}

// InputEnv is the variable the runner passes input name in: INPUT_ and the
// name upper-cased, spaces turned into "_", hyphens kept.
func InputEnv(name string) string {
	return "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
}

// fixHint says what a valid value looks like.
func (p *Param) fixHint() string {
	def := p.Default
	switch p.field(&Settings{}).(type) {
	case *int, *int64:
		return "use a whole number, e.g. " + nonEmpty(def, "3")
	case *float64:
		return "use a number, e.g. " + nonEmpty(def, "5") + " (0: none)"
	case *bool:
		return "use true or false"
	case *time.Duration:
		return "use a number of minutes, e.g. " + nonEmpty(def, "30")
	}
	return ""
}

func nonEmpty(s, d string) string {
	if s == "" || s == "0" {
		return d
	}
	return s
}

// Flags registers the flags of params on fs, bound to s: parsing the
// command line fills s and records what was given. A value that does not
// parse is an error of fs.Parse (exit 2 at the CLI).
func Flags(fs *flag.FlagSet, s *Settings, params []*Param) {
	for _, p := range params {
		if p.Flag == "" {
			continue
		}
		fs.Var(&flagValue{p: p, s: s}, p.Flag, p.Help)
	}
}

// flagValue is one parameter as a flag.Value.
type flagValue struct {
	p *Param
	s *Settings
}

func (v *flagValue) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return v.p.Default
}

func (v *flagValue) Set(text string) error {
	switch f := v.p.field(v.s).(type) {
	case *bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("%q is not true or false", text)
		}
		*f = b != v.p.NegatedFlag
		v.mark()
		return nil
	case *[]string:
		// Each occurrence adds one argument, verbatim.
		*f = append(*f, text)
		v.mark()
		return nil
	}
	return v.p.set(v.s, text)
}

func (v *flagValue) mark() {
	if v.s.given == nil {
		v.s.given = map[string]bool{}
	}
	v.s.given[v.p.Name] = true
}

// IsBoolFlag makes a switch of a bool parameter: --push, not --push=true.
func (v *flagValue) IsBoolFlag() bool {
	_, ok := v.p.field(&Settings{}).(*bool)
	return ok
}
