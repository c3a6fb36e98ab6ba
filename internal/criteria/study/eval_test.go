package study

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/process"
)

// gitRun runs the real git CLI in dir.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// mirror makes a fetch-style snapshot, <mirrors>/<owner>+<name>/repo as a
// bare git directory, holding files; it returns the commit id.
func mirror(t *testing.T, mirrors, repo string, files map[string]string) string {
	t.Helper()
	work := t.TempDir()
	gitRun(t, work, "init", "-q", "-b", "main")
	for name, body := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, work, "add", "-A")
	gitRun(t, work, "commit", "-q", "-m", "snapshot")
	dest := filepath.Join(mirrors, strings.Replace(repo, "/", "+", 1), "repo")
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, work, "clone", "-q", "--bare", work, dest)
	return gitRun(t, work, "rev-parse", "HEAD")
}

func label(repo, commit, command string) Label {
	return Label{Repo: repo, Commit: commit, Ecosystem: "go", Task: "fix the failing tests", Command: &command, Workdir: "."}
}

func TestPrepare(t *testing.T) {
	ctx := context.Background()
	mirrors, checkouts := t.TempDir(), t.TempDir()
	commit := mirror(t, mirrors, "acme/widget", map[string]string{"go.mod": "module acme\n", "a_test.go": "package a\n"})
	env := process.SafeEnv(os.Environ())
	opts := PrepareOptions{Mirrors: mirrors, Checkouts: checkouts, Env: env}

	good := label("acme/widget", commit, "go test ./...")
	got, err := Prepare(ctx, []Label{good}, opts)
	if err != nil || got[0].State != CheckoutCreated {
		t.Fatalf("first prepare: %+v, %v", got, err)
	}
	dir := filepath.Join(checkouts, "acme__widget")
	if head, isClone, err := CheckoutHead(ctx, dir, env); err != nil || !isClone || head != commit {
		t.Fatalf("checkout head %q clone=%v err=%v, want %s", head, isClone, err, commit)
	}
	if _, err := os.Stat(filepath.Join(dir, "a_test.go")); err != nil {
		t.Fatalf("checkout lacks the snapshot's files: %v", err)
	}
	gitRun(t, dir, "fsck", "--no-progress")

	got, err = Prepare(ctx, []Label{good}, opts)
	if err != nil || got[0].State != CheckoutPresent {
		t.Fatalf("second prepare: %+v, %v (want it skipped as present)", got, err)
	}

	// A label at a commit the mirror does not hold, a repository with no
	// mirror, and a checkout left at another commit: each fails, and the
	// failing clone leaves nothing behind.
	other := strings.Repeat("1", 40)
	stale := good
	stale.Commit = other
	_, err = Prepare(ctx, []Label{label("acme/gadget", other, "x"), stale}, opts)
	if err == nil {
		t.Fatal("prepare of missing mirror and stale checkout succeeded")
	}
	for _, want := range []string{"no mirror of acme/gadget", "fetch github:acme/gadget", "is at " + commit + ", the label at " + other} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	os.RemoveAll(dir)
	if _, err = Prepare(ctx, []Label{stale}, opts); err == nil || !strings.Contains(err.Error(), "lacks commit") {
		t.Fatalf("prepare at a commit the mirror lacks: %v", err)
	}
	entries, _ := os.ReadDir(checkouts)
	if len(entries) != 0 {
		t.Errorf("failed prepare left %v in the checkouts directory", entries)
	}

	// A directory unpacked with git archive (no .git, export-ignore files
	// missing) is replaced by a clone that has every file.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module acme\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err = Prepare(ctx, []Label{good}, opts); err != nil || got[0].State != CheckoutReplaced {
		t.Fatalf("archive checkout: %+v, %v (want it replaced by a clone)", got, err)
	}
	if head, isClone, err := CheckoutHead(ctx, dir, env); err != nil || !isClone || head != commit {
		t.Fatalf("replaced checkout head %q clone=%v err=%v, want %s", head, isClone, err, commit)
	}
	if _, err := os.Stat(filepath.Join(dir, "a_test.go")); err != nil {
		t.Fatalf("the replacing clone lacks the file the snapshot lacked: %v", err)
	}
	for _, leftover := range []string{dir + ".snapshot", dir + ".clone", dir + ".clone.part"} {
		if _, err := os.Stat(leftover); err == nil {
			t.Errorf("replacing the snapshot left %s", leftover)
		}
	}

	// With no mirror to clone from, a snapshot is kept, unverified.
	orphan := label("acme/orphan", commit, "go test ./...")
	if err := os.MkdirAll(filepath.Join(checkouts, orphan.Slug()), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err = Prepare(ctx, []Label{orphan}, opts); err != nil || got[0].State != CheckoutUnproven {
		t.Fatalf("snapshot without a mirror: %+v, %v", got, err)
	}
}

// fakeInfer is a stand-in agent-loop: it prints the checkout's
// .fake-proposal file, or misbehaves as the file says.
const fakeInfer = `#!/bin/sh
[ "$1" = infer ] && [ "$2" = --format ] && [ "$3" = json ] && [ "$4" = -C ] || { echo "bad args: $*" >&2; exit 2; }
f="$5/.fake-proposal"
case "$(head -c 5 "$f")" in
sleep) sleep 30 ;;
exit3) echo "no such thing" >&2; exit 3 ;;
*) cat "$f" ;;
esac
`

func TestEvaluate(t *testing.T) {
	ctx := context.Background()
	mirrors, checkouts, bin := t.TempDir(), t.TempDir(), t.TempDir()
	fake := filepath.Join(bin, "agent-loop")
	if err := os.WriteFile(fake, []byte(fakeInfer), 0o755); err != nil {
		t.Fatal(err)
	}
	proposal := func(cmd, conf string) string {
		return `{"task":"fix the failing tests","criterion_class":"test-pass","command":"` + cmd + `","workdir":".","setup":null,"confidence":"` + conf + `","rationale":[],"refusal_reason":null}`
	}
	repos := []struct {
		repo, fake string
	}{
		{"a/right", proposal("go test ./...", "high")},
		{"b/wrong", proposal("go test -bench .", "high")},
		{"c/refused", `{"task":"t","criterion_class":"refused","command":null,"workdir":".","setup":null,"confidence":"low","rationale":[],"refusal_reason":"none"}`},
		{"d/slow", "sleep"},
		{"e/fails", "exit3"},
		{"f/garbage", "this is not json"},
		{"g/stale", proposal("go test ./...", "high")},
	}
	var labels []Label
	env := process.SafeEnv(os.Environ())
	for _, r := range repos {
		commit := mirror(t, mirrors, r.repo, map[string]string{".fake-proposal": r.fake})
		labels = append(labels, label(r.repo, commit, "go test ./..."))
	}
	if _, err := Prepare(ctx, labels, PrepareOptions{Mirrors: mirrors, Checkouts: checkouts, Env: env}); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(checkouts, "g__stale")
	gitRun(t, stale, "commit", "-q", "--allow-empty", "-m", "moved on")
	labels = append(labels, label("h/missing", strings.Repeat("2", 40), "go test ./..."))

	start := time.Now()
	results := Evaluate(ctx, labels, EvalOptions{Bin: fake, Checkouts: checkouts, Timeout: 2 * time.Second, Env: env})
	if time.Since(start) > 20*time.Second {
		t.Errorf("evaluation took %s: the timeout did not stop the slow infer", time.Since(start))
	}
	want := map[string]string{
		"a/right": VerdictRight, "b/wrong": VerdictWrong, "c/refused": VerdictRefused, "d/slow": VerdictError,
		"e/fails": VerdictError, "f/garbage": VerdictError, "g/stale": VerdictError, "h/missing": VerdictMissing,
	}
	wantErr := map[string]string{
		"d/slow": "did not finish within 2s", "e/fails": "infer exited 3: no such thing",
		"f/garbage": "no JSON proposal", "g/stale": "run prepare", "h/missing": "no checkout at",
	}
	for _, r := range results {
		if r.Verdict != want[r.Repo] {
			t.Errorf("%s: verdict %s (%s), want %s", r.Repo, r.Verdict, r.Error, want[r.Repo])
		}
		if w := wantErr[r.Repo]; w != "" && !strings.Contains(r.Error, w) {
			t.Errorf("%s: error %q lacks %q", r.Repo, r.Error, w)
		}
	}
	if results[0].Confidence != "high" || results[0].Proposed != (Target{"go test ./...", "."}) {
		t.Errorf("a/right result: %+v", results[0])
	}
}

// TestEvaluateRealInfer builds the real agent-loop and scores its proposal
// on a small Go repository whose CI runs go test: the study's pipeline end to
// end against the real output format.
func TestEvaluateRealInfer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agent-loop")
	}
	ctx := context.Background()
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	env := process.SafeEnv(os.Environ())
	bin, err := BuildAgentLoop(ctx, root, t.TempDir(), env)
	if err != nil {
		t.Fatal(err)
	}
	mirrors, checkouts := t.TempDir(), t.TempDir()
	commit := mirror(t, mirrors, "acme/calc", map[string]string{
		"go.mod":                   "module example.com/calc\n\ngo 1.22\n",
		"calc.go":                  "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		"calc_test.go":             "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
		".github/workflows/ci.yml": "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: go test -race ./...\n",
	})
	right := label("acme/calc", commit, "go test ./...")
	right.Equivalents = []string{"go test -race ./...", "go test -v ./..."}
	if _, err := Prepare(ctx, []Label{right}, PrepareOptions{Mirrors: mirrors, Checkouts: checkouts, Env: env}); err != nil {
		t.Fatal(err)
	}
	wrong := right
	wrong.Command, wrong.Equivalents = ptr("make check"), nil // the same checkout, labelled differently
	for _, tc := range []struct {
		l    Label
		want []string
	}{
		{right, []string{VerdictRight, VerdictEquivalent}},
		{wrong, []string{VerdictWrong}},
	} {
		r := Evaluate(ctx, []Label{tc.l}, EvalOptions{Bin: bin, Checkouts: checkouts, Env: env})[0]
		if !contains(tc.want, r.Verdict) {
			t.Errorf("label %q: verdict %s (proposed %s, %s, error %q), want one of %v", *tc.l.Command, r.Verdict, r.Proposed, r.Confidence, r.Error, tc.want)
		}
		if r.Confidence == "" || r.Class == "" {
			t.Errorf("real proposal not decoded: %+v", r)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
