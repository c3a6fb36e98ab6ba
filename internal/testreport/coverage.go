package testreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// ParseCoverage reads a coverage report and returns its line (or statement)
// coverage as a percentage in [0, 100]. The format is detected from the
// content, not the name: a Go coverprofile (statements), lcov (lines),
// Cobertura XML (lines; coverage.py, gcovr), JaCoCo XML (lines), Clover XML
// (statements), an istanbul coverage-summary.json (lines) or coverage.py's
// JSON report. It returns false for anything else, or for a report that
// covers no line at all. path only names the report: the format is decided
// by the content, since reports are written under any name, and nothing is
// read from disk.
func ParseCoverage(path string, data []byte) (float64, bool) {
	c, ok := coverageOf(data)
	if !ok {
		return 0, false
	}
	return c.percent(), true
}

// cov is covered out of total units; weighted is false when the report only
// gave a rate (then total is 100 and covered the percentage).
type cov struct {
	covered, total float64
	weighted       bool
}

func (c cov) percent() float64 {
	if c.total <= 0 {
		return 0
	}
	return roundCoverage(100 * c.covered / c.total)
}

// roundCoverage rounds to two decimals and clamps to [0, 100].
func roundCoverage(p float64) float64 {
	if math.IsNaN(p) || p < 0 {
		return 0
	}
	return math.Min(100, math.Round(p*100)/100)
}

func coverageOf(data []byte) (cov, bool) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	switch {
	case bytes.HasPrefix(trimmed, []byte("mode:")):
		return goProfileCoverage(trimmed)
	case bytes.HasPrefix(trimmed, []byte("<")):
		return xmlCoverage(trimmed)
	case bytes.HasPrefix(trimmed, []byte("{")):
		return jsonCoverage(trimmed)
	case bytes.Contains(data, []byte("SF:")) || bytes.Contains(data, []byte("end_of_record")):
		return lcovCoverage(data)
	}
	return cov{}, false
}

// goProfileCoverage reads `go test -coverprofile` output. Blocks listed more
// than once (several packages' profiles concatenated, -coverpkg) count once,
// covered if any listing covered them.
func goProfileCoverage(data []byte) (cov, bool) {
	type block struct {
		stmts   int
		covered bool
	}
	blocks := map[string]block{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		// file.go:3.24,4.11 1 0
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		count, err := strconv.ParseInt(line[sp+1:], 10, 64)
		if err != nil {
			continue
		}
		rest := line[:sp]
		sp2 := strings.LastIndexByte(rest, ' ')
		if sp2 < 0 {
			continue
		}
		stmts, err := strconv.Atoi(rest[sp2+1:])
		if err != nil || stmts < 0 {
			continue
		}
		key := rest[:sp2]
		b, seen := blocks[key]
		if !seen {
			order = append(order, key)
		}
		blocks[key] = block{stmts: max(b.stmts, stmts), covered: b.covered || count > 0}
	}
	var c cov
	for _, k := range order {
		b := blocks[k]
		c.total += float64(b.stmts)
		if b.covered {
			c.covered += float64(b.stmts)
		}
	}
	c.weighted = true
	return c, c.total > 0
}

// lcovCoverage sums LH/LF over records; a record without them is counted
// from its DA lines.
func lcovCoverage(data []byte) (cov, bool) {
	var c cov
	var lf, lh, da, daHit float64
	haveLF := false
	flush := func() {
		if haveLF {
			c.total += lf
			c.covered += lh
		} else {
			c.total += da
			c.covered += daHit
		}
		lf, lh, da, daHit, haveLF = 0, 0, 0, 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	records := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "SF:"):
			records++
		case strings.HasPrefix(line, "LF:"):
			lf, haveLF = float64(atoi(line[3:])), true
		case strings.HasPrefix(line, "LH:"):
			lh = float64(atoi(line[3:]))
		case strings.HasPrefix(line, "DA:"):
			fields := strings.Split(line[3:], ",")
			if len(fields) >= 2 {
				da++
				if n, err := strconv.ParseFloat(fields[1], 64); err == nil && n > 0 {
					daHit++
				}
			}
		case line == "end_of_record":
			flush()
		}
	}
	flush()
	c.covered = math.Min(c.covered, c.total)
	c.weighted = true
	return c, records > 0 && c.total > 0
}

// xmlCoverage reads Cobertura, JaCoCo and Clover reports.
func xmlCoverage(data []byte) (cov, bool) {
	d := newXMLDecoder(bytes.NewReader(data))
	depth := 0
	root := ""
	inProject := false
	var jacocoLine, jacocoInstr *cov
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			name := t.Name.Local
			if depth == 1 {
				root = name
				if name == "coverage" {
					if c, ok := coberturaRoot(t.Attr); ok {
						return c, true
					}
				}
				if name != "coverage" && name != "report" {
					return cov{}, false
				}
				continue
			}
			switch {
			case root == "report" && depth == 2 && name == "counter":
				c := jacocoCounter(t.Attr)
				switch attr(t.Attr, "type") {
				case "LINE":
					jacocoLine = &c
				case "INSTRUCTION":
					jacocoInstr = &c
				}
			case root == "coverage" && depth == 2 && name == "project":
				inProject = true
			case root == "coverage" && inProject && depth == 3 && name == "metrics":
				total := atof(attr(t.Attr, "statements"))
				covered := atof(attr(t.Attr, "coveredstatements"))
				if total == 0 {
					total, covered = atof(attr(t.Attr, "elements")), atof(attr(t.Attr, "coveredelements"))
				}
				return cov{covered, total, true}, total > 0
			}
		case xml.EndElement:
			depth--
		}
	}
	if jacocoLine != nil && jacocoLine.total > 0 {
		return *jacocoLine, true
	}
	if jacocoInstr != nil && jacocoInstr.total > 0 {
		return *jacocoInstr, true
	}
	return cov{}, false
}

// coberturaRoot reads <coverage lines-covered lines-valid line-rate>.
func coberturaRoot(attrs []xml.Attr) (cov, bool) {
	valid, covered := atof(attr(attrs, "lines-valid")), atof(attr(attrs, "lines-covered"))
	if valid > 0 {
		return cov{math.Min(covered, valid), valid, true}, true
	}
	if s := attr(attrs, "line-rate"); s != "" {
		rate, err := strconv.ParseFloat(s, 64)
		if err == nil && !math.IsNaN(rate) && rate >= 0 && rate <= 1 && valid == 0 && attr(attrs, "lines-valid") == "" {
			return cov{rate * 100, 100, false}, true
		}
	}
	return cov{}, false
}

func jacocoCounter(attrs []xml.Attr) cov {
	missed, covered := atof(attr(attrs, "missed")), atof(attr(attrs, "covered"))
	return cov{covered, missed + covered, true}
}

// jsonCoverage reads istanbul's coverage-summary.json and coverage.py's
// coverage.json.
func jsonCoverage(data []byte) (cov, bool) {
	var doc struct {
		Total *struct {
			Lines struct {
				Total   float64 `json:"total"`
				Covered float64 `json:"covered"`
			} `json:"lines"`
		} `json:"total"`
		Totals *struct {
			Covered    float64 `json:"covered_lines"`
			Statements float64 `json:"num_statements"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return cov{}, false
	}
	switch {
	case doc.Total != nil && doc.Total.Lines.Total > 0:
		l := doc.Total.Lines
		return cov{math.Min(l.Covered, l.Total), l.Total, true}, true
	case doc.Totals != nil && doc.Totals.Statements > 0:
		t := doc.Totals
		return cov{math.Min(t.Covered, t.Statements), t.Statements, true}, true
	}
	return cov{}, false
}

func attr(attrs []xml.Attr, name string) string {
	for _, a := range attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func atof(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0
	}
	return f
}

// newXMLDecoder returns a decoder that also accepts documents declared as
// ISO-8859-1/Latin-1/Windows-1252 (older Java tools write them).
func newXMLDecoder(r io.Reader) *xml.Decoder {
	d := xml.NewDecoder(r)
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		switch strings.ToLower(label) {
		case "utf-8", "utf8", "us-ascii", "ascii":
			return in, nil
		case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "windows-1252", "cp1252":
			return &latin1Reader{r: bufio.NewReader(in)}, nil
		}
		return nil, fmt.Errorf("unsupported XML encoding %q: want UTF-8 or ISO-8859-1", label)
	}
	return d
}

// latin1Reader converts ISO-8859-1 bytes to UTF-8.
type latin1Reader struct {
	r   *bufio.Reader
	buf []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(l.buf) > 0 {
			k := copy(p[n:], l.buf)
			l.buf = l.buf[k:]
			n += k
			continue
		}
		b, err := l.r.ReadByte()
		if err != nil {
			if n > 0 && errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		if b < utf8.RuneSelf {
			p[n] = b
			n++
			continue
		}
		l.buf = utf8.AppendRune(l.buf[:0], rune(b))
	}
	return n, nil
}

var (
	goCoverRE      = lazyre.New(`coverage: (\d+(?:\.\d+)?)% of statements`)
	goCoverTotalRE = lazyre.New(`^total:\s+\(statements\)\s+(\d+(?:\.\d+)?)%`)
	pyCoverRE      = lazyre.New(`^TOTAL\s+\d+\s+\d+(?:\s+\d+\s+\d+)?\s+(\d+(?:\.\d+)?)%`)
	istanbulRE     = lazyre.New(`^All files\s*\|\s*(\d+(?:\.\d+)?)\s*\|`)
	lcovSummaryRE  = lazyre.New(`^\s*lines\.+: (\d+(?:\.\d+)?)% \(`)
	tarpaulinRE    = lazyre.New(`^(\d+(?:\.\d+)?)% coverage, \d+/\d+ lines covered`)
)

// outputCoverage finds coverage percentages printed in the output: go test
// -cover ("coverage: 83.4% of statements", one per package; `go tool cover
// -func`'s "total:" line wins), pytest-cov's TOTAL row, istanbul/c8's "All
// files" row (statements), lcov --summary and cargo-tarpaulin. Each tool's
// figures are averaged, then the tools' figures are averaged.
func outputCoverage(lines []string) *float64 {
	sums := map[string][2]float64{}
	var kinds []string
	add := func(kind, s string) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return
		}
		v, seen := sums[kind]
		if !seen {
			kinds = append(kinds, kind)
		}
		sums[kind] = [2]float64{v[0] + f, v[1] + 1}
	}
	goTotal := ""
	for _, l := range lines {
		if !strings.Contains(l, "%") && !strings.HasPrefix(l, "All files") {
			continue
		}
		if m := goCoverRE.FindStringSubmatch(l); m != nil {
			add("go", m[1])
			continue
		}
		if m := goCoverTotalRE.FindStringSubmatch(l); m != nil {
			goTotal = m[1]
			continue
		}
		for _, k := range []struct {
			kind string
			re   *lazyre.Regexp
		}{{"pytest-cov", pyCoverRE}, {"istanbul", istanbulRE}, {"lcov", lcovSummaryRE}, {"tarpaulin", tarpaulinRE}} {
			if m := k.re.FindStringSubmatch(l); m != nil {
				add(k.kind, m[1])
				break
			}
		}
	}
	if goTotal != "" {
		if _, seen := sums["go"]; !seen {
			kinds = append(kinds, "go")
		}
		f, _ := strconv.ParseFloat(goTotal, 64)
		sums["go"] = [2]float64{f, 1}
	}
	if len(kinds) == 0 {
		return nil
	}
	var total float64
	for _, k := range kinds {
		v := sums[k]
		total += v[0] / v[1]
	}
	c := roundCoverage(total / float64(len(kinds)))
	return &c
}
