// Package refname decides which git reference and branch names are valid:
// the rules of `git check-ref-format`, in one place, used by the loop
// specification (to refuse --branch at preflight) and by gitrepo (before
// any git call). Two validators once disagreed: `--branch fix.` passed the
// first and failed the second after the loop had started.
package refname

import (
	"fmt"
	"strings"
)

// maxComponent is the longest component a loose ref can have: each
// component is a file or directory name, and git cannot create a ref whose
// name is longer than the file system allows (NAME_MAX on Linux).
const maxComponent = 255

// Check reports whether ref is a valid reference name by the rules of
// `git check-ref-format` (one-level names such as "HEAD" are allowed, as
// with --allow-onelevel):
//
//  1. no component begins with "." or ends with ".lock";
//  2. no "..";
//  3. no control character, space, "~", "^", ":", "?", "*", "[" or "\";
//  4. no leading or trailing "/", no "//";
//  5. no trailing ".";
//  6. no "@{";
//  7. not "@" alone, and no leading "-".
//
// It also refuses a component longer than 255 bytes, which git accepts
// here but cannot create as a file.
func Check(ref string) error {
	if cause := problem(ref); cause != "" {
		return fmt.Errorf("%q is not a valid reference name: %s", ref, cause)
	}
	return nil
}

// problem says what breaks Check's rules in ref, "" when nothing does.
func problem(ref string) string {
	if ref == "" {
		return "it is empty"
	}
	if ref == "@" {
		return "@ alone is not a name"
	}
	if strings.HasPrefix(ref, "-") {
		return "it begins with -"
	}
	for _, c := range ref {
		if c < 0x20 || c == 0x7f {
			return "it contains a control character"
		}
		if strings.ContainsRune(" ~^:?*[\\", c) {
			return fmt.Sprintf("it contains %q", c)
		}
	}
	switch {
	case strings.HasPrefix(ref, "/") || strings.HasSuffix(ref, "/"):
		return "it begins or ends with /"
	case strings.Contains(ref, "//"):
		return "it contains //"
	case strings.Contains(ref, ".."):
		return "it contains .."
	case strings.Contains(ref, "@{"):
		return "it contains @{"
	case strings.HasSuffix(ref, "."):
		return "it ends with ."
	}
	for _, comp := range strings.Split(ref, "/") {
		switch {
		case strings.HasPrefix(comp, "."):
			return fmt.Sprintf("the part %q begins with .", comp)
		case strings.HasSuffix(comp, ".lock"):
			return fmt.Sprintf("the part %q ends with .lock", comp)
		case len(comp) > maxComponent:
			return fmt.Sprintf("a part is longer than %d bytes", maxComponent)
		}
	}
	return ""
}

// Branch reports whether name is a valid branch name: what
// `git check-ref-format --branch` accepts (refs/heads/<name> is a valid
// reference, the name does not begin with "-" and is not "HEAD"), without
// its expansion of "@{-N}" (refused, like every "@{"), and with one
// deliberate refusal more: a name beginning with "refs/" would make
// refs/heads/refs/... and ambiguous short names.
//
// The error says what is wrong and what a valid name looks like.
func Branch(name string) error {
	var cause string
	switch {
	case name == "":
		cause = "it is empty"
	case strings.HasPrefix(name, "-"):
		cause = "it begins with -"
	case name == "HEAD":
		cause = "HEAD is not a branch"
	case strings.HasPrefix(name, "refs/"):
		cause = "it begins with refs/ (give the short name: refs/heads/ is added)"
	default:
		cause = problem("refs/heads/" + name)
	}
	if cause == "" {
		return nil
	}
	return &BranchError{Name: name, Cause: cause}
}

// BranchError is an invalid branch name.
type BranchError struct {
	Name  string
	Cause string // what is wrong, e.g. "it ends with ."
}

func (e *BranchError) Error() string {
	return fmt.Sprintf("%q is not a valid branch name (%s): use letters, digits and - _ . / without a trailing . or / "+
		"(for example agent-loop/fix-tests; `git check-ref-format --branch NAME` checks one)", e.Name, e.Cause)
}
