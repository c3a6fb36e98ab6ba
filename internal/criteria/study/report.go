package study

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// Result is the outcome for one labelled repository.
type Result struct {
	Repo       string `json:"repo"`
	Ecosystem  string `json:"ecosystem"`
	Commit     string `json:"commit"`
	Verdict    string `json:"verdict"`
	Confidence string `json:"confidence,omitempty"`
	Class      string `json:"criterion_class,omitempty"`
	Proposed   Target `json:"proposed"`
	Setup      string `json:"setup,omitempty"`
	Expected   Target `json:"expected"`
	Several    bool   `json:"several,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// Level is the calibration of one confidence level.
type Level struct {
	Level     string  `json:"level"`
	Count     int     `json:"count"`
	Right     int     `json:"right"` // right or equivalent
	Precision float64 `json:"precision"`
}

// Totals are the study's figures over the scored repositories (every result
// but the missing ones).
type Totals struct {
	Labels          int     `json:"labels"`
	Scored          int     `json:"scored"`
	Missing         int     `json:"missing"`
	Right           int     `json:"right"`
	Equivalent      int     `json:"equivalent"`
	Wrong           int     `json:"wrong"`
	Refused         int     `json:"refused"`
	Errors          int     `json:"errors"`
	Accuracy        float64 `json:"accuracy"`          // (right + equivalent) / scored
	PrecisionAtHigh float64 `json:"precision_at_high"` // right-or-equivalent among high, 0 when none
}

// Report is what eval prints, and what --json writes whole.
type Report struct {
	Task        string   `json:"task,omitempty"`
	Checkouts   string   `json:"checkouts,omitempty"`
	Totals      Totals   `json:"totals"`
	Calibration []Level  `json:"calibration"`
	WrongHigh   []string `json:"wrong_high"` // repos proposed wrongly with high confidence
	Results     []Result `json:"results"`
}

// Good reports whether a verdict counts as right.
func Good(verdict string) bool { return verdict == VerdictRight || verdict == VerdictEquivalent }

// Summarise computes the totals and calibration of results.
func Summarise(results []Result) Report {
	r := Report{Results: results, WrongHigh: []string{}}
	t := &r.Totals
	t.Labels = len(results)
	levels := map[string]*Level{}
	for _, name := range Levels {
		levels[name] = &Level{Level: name}
	}
	for _, res := range results {
		switch res.Verdict {
		case VerdictMissing:
			t.Missing++
			continue
		case VerdictRight:
			t.Right++
		case VerdictEquivalent:
			t.Equivalent++
		case VerdictWrong:
			t.Wrong++
		case VerdictRefused:
			t.Refused++
		case VerdictError:
			t.Errors++
		}
		t.Scored++
		if res.Verdict == VerdictError {
			continue
		}
		lv, ok := levels[res.Confidence]
		if !ok {
			lv = &Level{Level: res.Confidence}
			levels[res.Confidence] = lv
		}
		lv.Count++
		if Good(res.Verdict) {
			lv.Right++
		} else if res.Confidence == "high" {
			r.WrongHigh = append(r.WrongHigh, res.Repo)
		}
	}
	t.Accuracy = ratio(t.Right+t.Equivalent, t.Scored)
	names := slices.Clone(Levels)
	var extra []string
	for name := range levels {
		if !slices.Contains(Levels, name) {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range append(names, extra...) {
		lv := levels[name]
		lv.Precision = ratio(lv.Right, lv.Count)
		r.Calibration = append(r.Calibration, *lv)
	}
	t.PrecisionAtHigh = levels["high"].Precision
	return r
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func pct(n, d int) string {
	if d == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

// WriteText prints the per-repository table, the totals, the calibration and
// the wrong high-confidence proposals.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REPOSITORY\tECOSYSTEM\tVERDICT\tCONFIDENCE\tPROPOSED\tEXPECTED")
	for _, res := range r.Results {
		proposed := res.Proposed.String()
		if res.Verdict == VerdictError || res.Verdict == VerdictMissing {
			proposed = oneLine(res.Error)
		}
		expected := res.Expected.String()
		if res.Several {
			expected += "  [several suites]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", res.Repo, res.Ecosystem, res.Verdict, dash(res.Confidence), dash(proposed), expected)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	t := r.Totals
	good := t.Right + t.Equivalent
	fmt.Fprintf(w, "\nrepositories: %d labelled, %d scored", t.Labels, t.Scored)
	if t.Missing > 0 {
		fmt.Fprintf(w, ", %d without a checkout (not scored: run .ci/infer-study prepare)", t.Missing)
	}
	fmt.Fprintf(w, "\nright %d, equivalent %d, wrong %d, refused %d, infer errors %d\n", t.Right, t.Equivalent, t.Wrong, t.Refused, t.Errors)
	fmt.Fprintf(w, "accuracy (right or equivalent / scored): %s (%d/%d)\n", pct(good, t.Scored), good, t.Scored)
	var high Level
	for _, lv := range r.Calibration {
		if lv.Level == "high" {
			high = lv
		}
	}
	fmt.Fprintf(w, "precision at high: %s (%d/%d)\n", pct(high.Right, high.Count), high.Right, high.Count)
	fmt.Fprintln(w, "\ncalibration:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  LEVEL\tCOUNT\tRIGHT\tPRECISION")
	for _, lv := range r.Calibration {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\n", dash(lv.Level), lv.Count, lv.Right, pct(lv.Right, lv.Count))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	fmt.Fprintf(w, "\nwrong high-confidence proposals: %d\n", len(r.WrongHigh))
	byRepo := map[string]Result{}
	for _, res := range r.Results {
		byRepo[res.Repo] = res
	}
	for _, repo := range r.WrongHigh {
		res := byRepo[repo]
		fmt.Fprintf(w, "  %s: proposed %s", repo, res.Proposed)
		if res.Setup != "" {
			fmt.Fprintf(w, " (setup: %s)", res.Setup)
		}
		fmt.Fprintf(w, "; expected %s\n", res.Expected)
	}
	return nil
}

// WriteJSON writes the whole report, indented.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing JSON report: %w", err)
	}
	return nil
}

// ReadReport reads a report written by WriteJSON.
func ReadReport(rd io.Reader) (Report, error) {
	var r Report
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return r, fmt.Errorf("reading JSON report: %w", err)
	}
	return r, nil
}

// Compare prints how the verdicts and totals moved from an earlier run to a
// later one: repositories that changed verdict, appeared or disappeared.
func Compare(w io.Writer, before, after Report) {
	old := map[string]Result{}
	for _, r := range before.Results {
		old[r.Repo] = r
	}
	seen := map[string]bool{}
	changed := 0
	for _, r := range after.Results {
		seen[r.Repo] = true
		o, ok := old[r.Repo]
		switch {
		case !ok:
			fmt.Fprintf(w, "new      %s: %s (%s) %s\n", r.Repo, r.Verdict, dash(r.Confidence), r.Proposed)
			changed++
		case o.Verdict != r.Verdict || o.Confidence != r.Confidence || o.Proposed != r.Proposed:
			fmt.Fprintf(w, "changed  %s: %s (%s) %s -> %s (%s) %s\n", r.Repo, o.Verdict, dash(o.Confidence), o.Proposed, r.Verdict, dash(r.Confidence), r.Proposed)
			changed++
		}
	}
	for _, o := range before.Results {
		if !seen[o.Repo] {
			fmt.Fprintf(w, "gone     %s (was %s)\n", o.Repo, o.Verdict)
			changed++
		}
	}
	b, a := before.Totals, after.Totals
	fmt.Fprintf(w, "%d repositories changed\n", changed)
	fmt.Fprintf(w, "accuracy: %s -> %s\n", pct(b.Right+b.Equivalent, b.Scored), pct(a.Right+a.Equivalent, a.Scored))
	fmt.Fprintf(w, "precision at high: %.1f%% -> %.1f%%\n", 100*b.PrecisionAtHigh, 100*a.PrecisionAtHigh)
	fmt.Fprintf(w, "wrong high: %d -> %d\n", len(before.WrongHigh), len(after.WrongHigh))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
