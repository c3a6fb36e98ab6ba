// Package report renders a loop's state as what a person reads, in four
// media with one structure: the sticky PR comment (the loop's report), the
// PR body (the description of the change, without the report), the
// workflow step summary (the report, for the run page), and the CLI report
// (a terminal: plain text, no Markdown, no HTML).
//
// The report answers, in this order: did it succeed (one status line and
// why), what changed (from the starting commit to the published result,
// with the agent's own summary), with which check (and where it came
// from), how each iteration went (one line, verdict first), can it be
// trusted (plain sentences: rejected iterations, the held-out check, test
// edits), what now (a recommendation and links). Figures come from one
// place (facts.go): an iteration's size is its tree against the starting
// commit, Δ is against the best score so far and never against a rejected
// iteration, and a score breakdown adds up.
//
// Everything that came from the agent, the repository or the task is
// escaped for its medium by internal/escape, in the two writers (md.go,
// term.go) and nowhere else.
package report

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/aiwg/agent-loop/internal/escape"
	"github.com/aiwg/agent-loop/internal/state"
)

// Target says where a report goes.
type Target string

const (
	CLI     Target = "cli"     // the terminal: plain text
	PR      Target = "pr"      // the sticky PR (or issue) comment: the loop's report
	PRBody  Target = "pr-body" // the pull request's description: the change, not the report
	Summary Target = "summary" // the workflow step summary and report.md: the report
)

// Options adjust a report to its target.
type Options struct {
	Target Target
	// Marker is a hidden line the PR comment starts with (the forge adds
	// its own; leave it empty when the forge does).
	Marker string
	// Links to the run, the repository and the report; empty fields are
	// taken from the state (Harness.RepoURL, RunURL, ReportURL, PRNumber).
	Links Links
	// TriggerPhrase is how a person answers the loop in a comment
	// ("/agent-loop"): the Action's wording of a human gate. Empty: the
	// CLI's wording for CLI, "/agent-loop" otherwise.
	TriggerPhrase string
}

// Links are the places a maintainer goes next.
type Links struct {
	Repo   string // https://github.com/owner/repo: commits, compare view, branch
	Run    string // the workflow run (its log)
	Report string // the sticky comment, for the PR body and the notification
	PR     int    // the pull request, for its checks
}

func (o Options) links(st *state.State) Links {
	l := o.Links
	h := st.Harness
	l.Repo = strings.TrimRight(nonEmpty(l.Repo, h.RepoURL), "/")
	l.Run = nonEmpty(l.Run, h.RunURL)
	l.Report = nonEmpty(l.Report, h.ReportURL)
	if l.PR == 0 {
		l.PR = h.PRNumber
	}
	for _, u := range []*string{&l.Repo, &l.Run, &l.Report} {
		if !escape.SafeURL(*u) {
			*u = ""
		}
	}
	return l
}

func (l Links) commit(sha string) string {
	if l.Repo == "" || validSHA(sha) == "" {
		return ""
	}
	return l.Repo + "/commit/" + sha
}

func (l Links) compare(base, head string) string {
	if l.Repo == "" || validSHA(base) == "" || validSHA(head) == "" || base == "" || head == "" {
		return ""
	}
	return l.Repo + "/compare/" + base + "..." + head
}

func (l Links) branch(name string) string {
	if l.Repo == "" || name == "" {
		return ""
	}
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return l.Repo + "/tree/" + strings.Join(segs, "/")
}

func (l Links) checks() string {
	if l.Repo == "" || l.PR <= 0 {
		return ""
	}
	return fmt.Sprintf("%s/pull/%d/checks", l.Repo, l.PR)
}

// Render returns the report of st for o.Target.
func Render(st *state.State, o Options) string {
	f := newFacts(st)
	b := &builder{f: f, o: o, l: o.links(st)}
	var doc []block
	switch o.Target {
	case PRBody:
		doc = b.body()
	default:
		doc = b.report()
	}
	if o.Target == CLI {
		return writeTerm(doc)
	}
	md := writeMD(doc)
	if o.Marker != "" {
		md = o.Marker + "\n" + md
	}
	return md
}

// OneLine is a one-line summary for logs and outputs: the status line.
func OneLine(st *state.State) string {
	f := newFacts(st)
	return f.status.icon + " " + f.status.word + ": " + f.status.why.term()
}

// CommitSubject is the subject of iteration n's commit: "agent-loop:
// iteration 1 (rejected: deleted 2 tests)", "agent-loop: iteration 2
// (check pass)". rejection is Rejection(...) for a rejected iteration and
// "" otherwise. The engine also adds the trailer CommitTrailer returns.
func CommitSubject(n int, passed bool, rejection string) string {
	switch {
	case rejection == "rejected":
		return fmt.Sprintf("agent-loop: iteration %d (rejected)", n)
	case rejection != "":
		return fmt.Sprintf("agent-loop: iteration %d (rejected: %s)", n, escape.Terminal(rejection))
	case passed:
		return fmt.Sprintf("agent-loop: iteration %d (check pass)", n)
	}
	return fmt.Sprintf("agent-loop: iteration %d (check fail)", n)
}

// CommitWords is the subject and the Agent-Loop-Verdict trailer of
// iteration n's commit, from the regression events the iteration records
// and its held-out check: the engine's CommitWords (loop.Engine).
func CommitWords(n int, passed, rejected bool, events []state.RegressionEvent, held *state.HeldOut) (subject, verdict string) {
	rejection := ""
	if rejected {
		rejection = Rejection(events, held)
	}
	return CommitSubject(n, passed, rejection), CommitTrailer(passed, rejection)
}

// CommitTrailer is the value of the trailer Agent-Loop-Verdict of an
// iteration's commit: "rejected (deleted 2 tests)", "pass" or "fail".
func CommitTrailer(passed bool, rejection string) string {
	switch {
	case rejection == "rejected":
		return rejection
	case rejection != "":
		return "rejected (" + escape.Terminal(rejection) + ")"
	case passed:
		return "pass"
	}
	return "fail"
}

var loginPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`)

// Notification is the short comment posted once when a loop ends, so that
// the person who started it is notified (the sticky report comment is
// edited in place, which notifies nobody). login is that person's GitHub
// login; a value that is not a valid login (a bot, an empty actor) is not
// mentioned.
func Notification(st *state.State, o Options, login string) string {
	f := newFacts(st)
	l := o.links(st)
	var b strings.Builder
	if loginPattern.MatchString(login) {
		// The one mention the report makes on purpose: written as it is,
		// since escaping would (rightly) break it.
		b.WriteString("@" + login + " ")
	}
	b.WriteString(words(f.status.icon + " agent-loop " + f.status.word + ": ").then(f.status.why).add(".").md())
	if g := st.Harness.PendingGate; g != nil && g.Decision == "" {
		// The loop waits for this person: say how to answer.
		o.Target = PR
		if rec := (&builder{f: f, o: o, l: l}).recommend(); len(rec) > 0 {
			b.WriteString(" " + rec[0].md())
		}
	}
	if l.Report != "" {
		b.WriteString(" " + words("The report: ").then(link("the agent-loop comment", l.Report)).add(".").md())
	}
	b.WriteString("\n")
	return b.String()
}
