package report

import (
	"fmt"
	"strings"

	"github.com/aiwg/agent-loop/internal/escape"
)

// The report is built once as blocks, then written for Markdown (md) or a
// terminal (term): the same structure in both media, each piece escaped
// by the writer of its medium.
type block interface{ isBlock() }

// status is the first line (a heading in Markdown).
type statusBlock struct{ p phrase }

// para is a paragraph with an optional bold lead ("Change:").
type para struct {
	lead string
	p    phrase
}

// quote is up to a few lines of someone else's words (the agent's).
type quote struct{ lines []string }

// list is a bulleted list; an item may have sub-items.
type list struct{ items []item }

type item struct {
	p   phrase
	sub []phrase
}

// table is a small table; cells are phrases.
type table struct {
	head []string
	rows [][]phrase
}

// details is collapsed in Markdown (<details>), a titled section in a
// terminal.
type details struct {
	summary string
	body    []block
}

// chart is a Mermaid chart (Markdown only); its text is built from
// numbers and fixed labels.
type chart struct{ src string }

// commands are shell commands (terminal only).
type commands struct{ lines [][2]string } // command, comment

func (statusBlock) isBlock() {}
func (para) isBlock()        {}
func (quote) isBlock()       {}
func (list) isBlock()        {}
func (table) isBlock()       {}
func (details) isBlock()     {}
func (chart) isBlock()       {}
func (commands) isBlock()    {}

// writeMD writes blocks as GitHub-flavoured Markdown.
func writeMD(doc []block) string {
	var b strings.Builder
	for _, bl := range doc {
		mdBlock(&b, bl)
	}
	return b.String()
}

func mdBlock(b *strings.Builder, bl block) {
	switch x := bl.(type) {
	case statusBlock:
		fmt.Fprintf(b, "### %s\n\n", x.p.md())
	case para:
		line := x.p.md()
		if x.lead != "" {
			line = strings.TrimSpace("**" + escape.Text(x.lead) + "** " + line)
		}
		fmt.Fprintf(b, "%s\n\n", line)
	case quote:
		for _, l := range x.lines {
			fmt.Fprintf(b, "> %s\n", escape.Text(l))
		}
		b.WriteString("\n")
	case list:
		for _, it := range x.items {
			fmt.Fprintf(b, "- %s\n", it.p.md())
			for _, s := range it.sub {
				fmt.Fprintf(b, "  - %s\n", s.md())
			}
		}
		b.WriteString("\n")
	case table:
		b.WriteString("|")
		for _, h := range x.head {
			fmt.Fprintf(b, " %s |", escape.Text(h))
		}
		b.WriteString("\n|")
		for range x.head {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, r := range x.rows {
			b.WriteString("|")
			for _, c := range r {
				fmt.Fprintf(b, " %s |", tableCell(c))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	case details:
		fmt.Fprintf(b, "<details><summary>%s</summary>\n\n", escape.HTML(x.summary))
		for _, inner := range x.body {
			mdBlock(b, inner)
		}
		b.WriteString("</details>\n\n")
	case chart:
		fence := "```"
		for strings.Contains(x.src, fence) {
			fence += "`"
		}
		fmt.Fprintf(b, "%smermaid\n%s%s\n\n", fence, x.src, fence)
	case commands:
		// Terminal only.
	}
}

// tableCell writes a phrase for a GFM table cell: code spans cannot hold
// an escaped "|", so names are written as escaped text there.
func tableCell(p phrase) string {
	q := make(phrase, len(p))
	for i, pc := range p {
		pc.code = false
		q[i] = pc
	}
	return q.md()
}

// writeTerm writes blocks as terminal text: no Markdown, no HTML, every
// value escaped for a terminal.
func writeTerm(doc []block) string {
	var b strings.Builder
	for _, bl := range doc {
		termBlock(&b, bl, "")
	}
	return b.String()
}

func termBlock(b *strings.Builder, bl block, indent string) {
	switch x := bl.(type) {
	case statusBlock:
		fmt.Fprintf(b, "%s%s\n\n", indent, x.p.term())
	case para:
		line := x.p.term()
		if x.lead != "" {
			line = strings.TrimSpace(escape.Terminal(x.lead) + " " + line)
		}
		fmt.Fprintf(b, "%s%s\n\n", indent, line)
	case quote:
		for _, l := range x.lines {
			fmt.Fprintf(b, "%s  │ %s\n", indent, escape.Terminal(l))
		}
		b.WriteString("\n")
	case list:
		for _, it := range x.items {
			fmt.Fprintf(b, "%s- %s\n", indent, it.p.term())
			for _, s := range it.sub {
				fmt.Fprintf(b, "%s    - %s\n", indent, s.term())
			}
		}
		b.WriteString("\n")
	case table:
		cells := [][]string{}
		cells = append(cells, x.head)
		for _, r := range x.rows {
			var line []string
			for _, c := range r {
				line = append(line, c.term())
			}
			cells = append(cells, line)
		}
		widths := make([]int, len(x.head))
		for _, r := range cells {
			for i, c := range r {
				widths[i] = max(widths[i], termWidth(c))
			}
		}
		for _, r := range cells {
			var line strings.Builder
			for i, c := range r {
				line.WriteString(c)
				if i < len(r)-1 {
					line.WriteString(strings.Repeat(" ", widths[i]-termWidth(c)+2))
				}
			}
			fmt.Fprintf(b, "%s  %s\n", indent, strings.TrimRight(line.String(), " "))
		}
		b.WriteString("\n")
	case details:
		fmt.Fprintf(b, "%s%s\n\n", indent, escape.Terminal(x.summary))
		for _, inner := range x.body {
			termBlock(b, inner, indent+"  ")
		}
	case chart:
		// Markdown only.
	case commands:
		w := 0
		for _, c := range x.lines {
			w = max(w, termWidth(escape.Terminal(c[0])))
		}
		for _, c := range x.lines {
			cmd := escape.Terminal(c[0])
			fmt.Fprintf(b, "%s  %s%s  # %s\n", indent, cmd, strings.Repeat(" ", w-termWidth(cmd)), escape.Terminal(c[1]))
		}
		b.WriteString("\n")
	}
}

// termWidth is the number of terminal columns s takes: emoji marks take
// two, everything else one.
func termWidth(s string) int {
	w := 0
	for _, r := range s {
		switch r {
		case '✅', '❌', '⛔', '🔄':
			w += 2
		default:
			w++
		}
	}
	return w
}
