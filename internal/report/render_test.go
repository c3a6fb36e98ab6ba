package report

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/state"
)

// The renderer: testdata/render/render.mjs with the npm packages of
// testdata/render/package.json installed by .ci/install-render.sh (into
// $AGENT_LOOP_RENDER_MODULES, default ~/.cache/agent-loop-render), and
// Debian's Chromium ($AGENT_LOOP_CHROMIUM, default /usr/bin/chromium).
// Screenshots go to $AGENT_LOOP_SCREENSHOTS (default: a temporary
// directory); CI keeps them as an artifact.

// renderedPage is what render.mjs measured of one page at one width and
// colour scheme.
type renderedPage struct {
	Name            string `json:"name"`
	Width           int    `json:"width"`
	Scheme          string `json:"scheme"`
	Viewport        int    `json:"viewport"`
	PageScrollWidth int    `json:"pageScrollWidth"`
	Needles         []struct {
		Needle  string `json:"needle"`
		Found   bool   `json:"found"`
		Visible bool   `json:"visible"`
		Why     string `json:"why"`
	} `json:"needles"`
	Tables []struct {
		Columns int `json:"columns"`
		Cut     []struct {
			Text string `json:"text"`
			Why  string `json:"why"`
		} `json:"cut"`
	} `json:"tables"`
	Headings []string `json:"headings"`
	Images   int      `json:"images"`
	Links    []string `json:"links"`
	Details  int      `json:"details"`
	Text     string   `json:"text"`
	Mermaid  struct {
		Blocks int      `json:"blocks"`
		Drawn  int      `json:"drawn"`
		Errors []string `json:"errors"`
	} `json:"mermaid"`
	Requests   []string `json:"requests"`
	Screenshot string   `json:"screenshot"`
	Expanded   string   `json:"expanded"`
}

type renderJob struct {
	Chromium string       `json:"chromium"`
	OutDir   string       `json:"outDir"`
	Widths   []int        `json:"widths"`
	Schemes  []string     `json:"schemes"`
	Result   string       `json:"result"`
	Pages    []renderPage `json:"pages"`
}

type renderPage struct {
	Name     string   `json:"name"`
	Markdown string   `json:"markdown"`
	Needles  []string `json:"needles"`
}

// renderer finds node, the npm packages and Chromium; it skips the test
// when one is missing, unless AGENT_LOOP_REQUIRE_BROWSER is set (.ci/run
// sets it), where a missing piece fails it.
func renderer(t *testing.T) (node, modules, chromium string) {
	t.Helper()
	missing := func(what string) {
		msg := what + " is missing: run `bash .ci/install-render.sh` (it installs Debian's chromium and the npm packages of internal/report/testdata/render)"
		if os.Getenv("AGENT_LOOP_REQUIRE_BROWSER") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	modules = os.Getenv("AGENT_LOOP_RENDER_MODULES")
	if modules == "" {
		home, _ := os.UserHomeDir()
		modules = filepath.Join(home, ".cache", "agent-loop-render", "node_modules")
	}
	for _, pkg := range []string{"playwright-core", "mermaid", "rehype-sanitize", "remark-gfm", "github-markdown-css"} {
		if _, err := os.Stat(filepath.Join(modules, pkg, "package.json")); err != nil {
			missing("the npm package " + pkg + " (in " + modules + ")")
		}
	}
	chromium = os.Getenv("AGENT_LOOP_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing("Chromium (" + chromium + ")")
	}
	return node, modules, chromium
}

// render runs render.mjs on pages and returns what it measured.
func render(t *testing.T, pages []renderPage, widths []int, schemes []string) []renderedPage {
	t.Helper()
	node, modules, chromium := renderer(t)
	out := os.Getenv("AGENT_LOOP_SCREENSHOTS")
	if out == "" {
		out = t.TempDir()
	}
	out, _ = filepath.Abs(out)
	work := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "render", "render.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// node resolves packages from the script's folder up: put the script
	// beside a link to the installed node_modules.
	if err := os.WriteFile(filepath.Join(work, "render.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	result := filepath.Join(work, "result.json")
	job, _ := json.Marshal(renderJob{Chromium: chromium, OutDir: out, Result: result, Widths: widths, Schemes: schemes, Pages: pages})
	if err := os.WriteFile(filepath.Join(work, "job.json"), job, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "render.mjs", "job.json")
	cmd.Dir = work
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("render.mjs: %v\n%s", err, stderr.String())
	}
	res, err := os.ReadFile(result)
	if err != nil {
		t.Fatalf("render.mjs wrote no result: %v\n%s", err, stderr.String())
	}
	var pagesOut []renderedPage
	if err := json.Unmarshal(res, &pagesOut); err != nil {
		t.Fatalf("render.mjs printed no result: %v\n%s", err, stderr.String())
	}
	t.Logf("screenshots in %s", out)
	return pagesOut
}

// commentNeedles are the texts of a comment that must be visible on a
// phone without scrolling sideways: the status, the change summary, the
// verdict of every iteration, and the first next step (so nothing above
// it swallowed the rest).
func commentNeedles(st *state.State) []string {
	f := newFacts(st)
	out := []string{f.status.icon + " agent-loop " + f.status.word}
	if f.pub != nil {
		out = append(out, sizeText(size(f.pub.it)), fmt.Sprintf("from the starting commit to iteration %d", f.pub.n))
	} else {
		// "none yet: no iteration has qualified so far", "nothing to
		// publish: ...": the words the change line says.
		ch := (&builder{f: f, o: Options{Target: PR}}).change()[0].(para)
		out = append(out, firstWords(ch.p.term(), 4))
	}
	for _, r := range f.rows {
		name := "start"
		if r.n > 0 {
			name = fmt.Sprint(r.n)
		}
		tok := name + " " + r.mark + " " + r.short.term()
		if r.pub {
			tok += " (" + f.pubLabel() + ")"
		}
		out = append(out, tok)
	}
	b := &builder{f: f, o: Options{Target: PR}}
	if rec := b.recommend(); len(rec) > 0 {
		out = append(out, firstWords(strings.ReplaceAll(rec[0].term(), "`", ""), 4))
	}
	return out
}

func bodyNeedles(st *state.State) []string {
	f := newFacts(st)
	out := []string{"Every iteration, the checks on the agent"}
	if f.pub != nil {
		out = append(out, sizeText(size(f.pub.it)), strings.TrimSpace((&builder{f: f}).checkResult().term()))
	}
	return out
}

func firstWords(s string, n int) string {
	w := strings.Fields(s)
	return strings.Join(w[:min(n, len(w))], " ")
}

var mention = regexp.MustCompile(`(^|[^\w])@[A-Za-z0-9]`)

// TestRenderedAsGitHub renders every PR golden (comment and body) as
// GitHub does, light and dark, at 1000 px and on a 430 px phone, and
// checks from the rendered page: every iteration's verdict and the change
// summary are visible without scrolling sideways, the iteration table
// fits, nothing hostile became a heading, an image, a link, a hidden
// section or a mention, and the chart draws. The old eleven-column report
// is rendered too, to show the check failing on it.
func TestRenderedAsGitHub(t *testing.T) {
	all := append(stories(), hostileStory())
	var pages []renderPage
	want := map[string]*state.State{}
	for _, s := range all {
		comment := Render(s.st, Options{Target: PR, Marker: "<!-- agent-loop:sticky loop=" + s.st.LoopID + " -->"})
		body := Render(s.st, Options{Target: PRBody})
		pages = append(pages,
			renderPage{Name: s.name + "-comment", Markdown: comment, Needles: commentNeedles(s.st)},
			renderPage{Name: s.name + "-body", Markdown: body, Needles: bodyNeedles(s.st)})
		want[s.name+"-comment"], want[s.name+"-body"] = s.st, s.st
	}
	old, err := os.ReadFile(filepath.Join("testdata", "render", "eleven-columns.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, renderPage{Name: "eleven-columns", Markdown: string(old), Needles: []string{"rejected; test_deletion (critical)"}})
	markdown := map[string]string{}
	for _, p := range pages {
		markdown[p.Name] = p.Markdown
	}

	results := render(t, pages, []int{1000, 430}, []string{"light", "dark"})
	if len(results) != len(pages)*4 {
		t.Fatalf("render.mjs measured %d pages, want %d", len(results), len(pages)*4)
	}
	for _, r := range results {
		t.Run(fmt.Sprintf("%s/%d/%s", r.Name, r.Width, r.Scheme), func(t *testing.T) {
			if r.Name == "eleven-columns" {
				checkFailsOnOldReport(t, r)
				return
			}
			checkVisible(t, r)
			checkHostileIsText(t, r, markdown[r.Name], want[r.Name])
		})
	}
}

// checkVisible: every needle visible, no sideways scrolling of the page,
// the iteration table whole.
func checkVisible(t *testing.T, r renderedPage) {
	t.Helper()
	for _, n := range r.Needles {
		if !n.Visible {
			t.Errorf("%q is not visible without scrolling sideways: %s (screenshot %s)", n.Needle, n.Why, r.Screenshot)
		}
	}
	if r.PageScrollWidth > r.Viewport {
		t.Errorf("the page scrolls sideways: %d px wide in a %d px viewport", r.PageScrollWidth, r.Viewport)
	}
	for i, tb := range r.Tables {
		if tb.Columns > 5 {
			t.Errorf("table %d has %d columns, at most 5 fit a phone", i+1, tb.Columns)
		}
		for _, c := range tb.Cut {
			t.Errorf("table %d: the cell %q is cut off: %s (screenshot %s)", i+1, c.Text, c.Why, r.Screenshot)
		}
	}
}

// checkHostileIsText: only the report's own heading, <details>, links;
// no image, no request, no mention; the hostile names appear as text.
func checkHostileIsText(t *testing.T, r renderedPage, md string, st *state.State) {
	t.Helper()
	comment := strings.HasSuffix(r.Name, "-comment")
	wantHeadings := 0
	if comment {
		wantHeadings = 1
	}
	if len(r.Headings) != wantHeadings || comment && !strings.HasPrefix(r.Headings[0], "h3 "+newFacts(st).status.icon+" agent-loop") {
		t.Errorf("headings %q, want the status line alone", r.Headings)
	}
	if r.Images != 0 || len(r.Requests) != 0 {
		t.Errorf("%d images drawn and %d requests made (%q): the report has none", r.Images, len(r.Requests), r.Requests)
	}
	for _, l := range r.Links {
		if !strings.HasPrefix(l, "https://github.com/acme/calc/") {
			t.Errorf("a link to %q: the report links only to the repository, its run and its comment", l)
		}
	}
	wantDetails := 0
	for line := range strings.SplitSeq(md, "\n") {
		if strings.HasPrefix(line, "<details><summary>") {
			wantDetails++
		}
	}
	if r.Details != wantDetails {
		t.Errorf("%d <details> rendered, the report writes %d", r.Details, wantDetails)
	}
	text := strings.ReplaceAll(r.Text, "\u2060", "")
	if m := mention.FindString(r.Text); m != "" {
		t.Errorf("the text mentions someone (%q): GitHub would notify them", m)
	}
	if !strings.HasPrefix(r.Name, "hostile_names") {
		want := 0
		if st.BestIteration != nil && len(st.IterationHistory) >= 4 {
			want = 1
		}
		if comment && (r.Mermaid.Blocks != want || r.Mermaid.Drawn != want || len(r.Mermaid.Errors) > 0) {
			t.Errorf("charts: %d written, %d drawn, errors %q; want %d", r.Mermaid.Blocks, r.Mermaid.Drawn, r.Mermaid.Errors, want)
		}
		return
	}
	for _, name := range []string{"heading", "comment", "pipe", "image", "link", "details"} {
		if !strings.Contains(text, hostile[name]) {
			t.Errorf("the hostile %s name %q is not shown as text", name, hostile[name])
		}
	}
	for _, raw := range []string{"\x1b", "\r", "\u202e", "\x07"} {
		if strings.Contains(r.Text, raw) {
			t.Errorf("the page holds the raw control character %q", raw)
		}
	}
}

// checkFailsOnOldReport: the eleven-column table of the old report does
// not fit; the check must say so (at 430 px) or the check cannot fail.
func checkFailsOnOldReport(t *testing.T, r renderedPage) {
	t.Helper()
	if len(r.Tables) == 0 || r.Tables[0].Columns != 11 {
		t.Fatalf("the old report's table was not rendered with its 11 columns: %+v", r.Tables)
	}
	if r.Width != 430 {
		return
	}
	if len(r.Tables[0].Cut) == 0 {
		t.Errorf("the visibility check found no cut cell in an eleven-column table on a phone: it cannot fail")
	}
	if slices.ContainsFunc(r.Needles, func(n struct {
		Needle  string `json:"needle"`
		Found   bool   `json:"found"`
		Visible bool   `json:"visible"`
		Why     string `json:"why"`
	}) bool {
		return n.Visible
	}) {
		t.Errorf("the old report's notes column reads as visible on a phone: the check cannot fail")
	}
}

// readmeImage is the README's picture of a report.
var readmeImage = filepath.Join("..", "..", ".github", "images", "report.png")

// TestREADMEScreenshot renders the report of a real run of the demo (the
// story "a cheat rejected then fixed": `agent-loop demo`'s project and
// scripted agent, run by TestStoriesFromRealRuns) as GitHub shows the
// comment, at 1000 px in the light theme: the README's picture. With
// -update it rewrites .github/images/report.png; without, it fails when
// the picture is not the size the report renders at now (it is out of
// date).
func TestREADMEScreenshot(t *testing.T) {
	var st *state.State
	for _, s := range realRuns() {
		if s.name == "cheat_then_fixed" {
			st = s.st
		}
	}
	if st == nil {
		t.Fatal("no real run of the demo in testdata/runs")
	}
	md := Render(st, Options{Target: PR, Marker: "<!-- agent-loop:sticky loop=" + st.LoopID + " -->"})
	res := render(t, []renderPage{{Name: "readme", Markdown: md, Needles: commentNeedles(st)}}, []int{1000}, []string{"light"})
	if len(res) != 1 {
		t.Fatalf("render.mjs measured %d pages", len(res))
	}
	checkVisible(t, res[0])
	shot, err := os.ReadFile(res[0].Screenshot)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(readmeImage, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(readmeImage)
	if err != nil {
		t.Fatalf("%v (go test ./internal/report -run TestREADMEScreenshot -update)", err)
	}
	gw, gh, err := pngSize(shot)
	if err != nil {
		t.Fatal(err)
	}
	hw, hh, err := pngSize(have)
	if err != nil {
		t.Fatalf("%s: %v", readmeImage, err)
	}
	if gw != hw || gh != hh {
		t.Errorf("%s is %dx%d, the demo's report renders at %dx%d now: the picture is out of date (go test ./internal/report -run TestREADMEScreenshot -update)", readmeImage, hw, hh, gw, gh)
	}
}

// pngSize reads the width and height of a PNG from its IHDR chunk.
func pngSize(b []byte) (int, int, error) {
	if len(b) < 24 || string(b[:8]) != "\x89PNG\r\n\x1a\n" || string(b[12:16]) != "IHDR" {
		return 0, 0, fmt.Errorf("not a PNG")
	}
	be := func(p []byte) int { return int(p[0])<<24 | int(p[1])<<16 | int(p[2])<<8 | int(p[3]) }
	return be(b[16:20]), be(b[20:24]), nil
}
