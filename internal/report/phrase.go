package report

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/escape"
)

// A phrase is text built from the report's own words and values from the
// untrusted side, kept apart until it is written for a medium, where each
// piece is escaped once: words and values as prose, names and commands as
// code, links only to http(s) URLs.
type phrase []piece

type piece struct {
	s    string
	code bool   // a literal name or command
	url  string // a link on s
}

// words is report wording or a value shown as prose (agent summaries, task
// text, free-text reasons).
func words(s string) phrase { return phrase{{s: s}} }

// code is a name or a command shown literally.
func code(s string) phrase { return phrase{{s: s, code: true}} }

// link is label linking to u (u empty: the label alone).
func link(label, u string) phrase { return phrase{{s: label, url: u}} }

// then appends the pieces of more.
func (p phrase) then(more ...phrase) phrase {
	for _, m := range more {
		p = append(p, m...)
	}
	return p
}

// add appends report wording.
func (p phrase) add(s string) phrase { return append(p, piece{s: s}) }

// md writes p as inline GitHub Markdown.
func (p phrase) md() string {
	var b strings.Builder
	for _, pc := range p {
		lead, mid, trail := spaces(pc.s)
		b.WriteString(lead)
		switch {
		case mid == "":
		case pc.code:
			b.WriteString(escape.Code(mid))
		case pc.url != "":
			b.WriteString(escape.Link(mid, pc.url))
		default:
			b.WriteString(escape.Text(mid))
		}
		b.WriteString(trail)
	}
	return b.String()
}

// term writes p as one line of terminal text (links are left out: the
// CLI has none). A name or command with a space in it is set off with
// backticks, so "`sub 0 4` and `sub 5 3`" reads as two names.
func (p phrase) term() string {
	var b strings.Builder
	for _, pc := range p {
		lead, mid, trail := spaces(pc.s)
		b.WriteString(lead)
		switch {
		case mid == "":
		case pc.code && strings.ContainsAny(mid, " \t"):
			b.WriteString("`" + escape.Terminal(mid) + "`")
		default:
			b.WriteString(escape.Terminal(mid))
		}
		b.WriteString(trail)
	}
	return b.String()
}

// spaces splits the single spaces around s off, so pieces joined by the
// report keep their word breaks while the escaping trims values.
func spaces(s string) (string, string, string) {
	lead, trail := "", ""
	if strings.HasPrefix(s, " ") {
		lead = " "
	}
	if strings.HasSuffix(s, " ") && len(s) > 1 {
		trail = " "
	}
	return lead, strings.TrimSpace(s), trail
}

// join joins phrases with sep (report wording).
func join(ps []phrase, sep string) phrase {
	var out phrase
	for i, p := range ps {
		if i > 0 {
			out = out.add(sep)
		}
		out = out.then(p)
	}
	return out
}

// andList joins phrases as "a, b and c".
func andList(ps []phrase) phrase {
	switch len(ps) {
	case 0:
		return nil
	case 1:
		return ps[0]
	}
	return join(ps[:len(ps)-1], ", ").add(" and ").then(ps[len(ps)-1])
}

// names lists up to five names as code: "`A`, `B` and 3 more".
func names(list []string) phrase {
	const shown = 5
	var ps []phrase
	for i, n := range list {
		if i == shown {
			ps = append(ps, words(plural(len(list)-shown, "more", "more")))
			break
		}
		ps = append(ps, code(n))
	}
	return andList(ps)
}
