package loop_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/aiwg/agent-loop/internal/gitrepo"
	"github.com/aiwg/agent-loop/internal/judge"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/report"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// The harness's own costs (issue 7), measured against a floor measured in
// the same run. .ci/bench runs these with the binary's measurements and
// prints the table BENCHMARKS.md records:
//
//	go test ./internal/loop -run '^$' -bench . -benchtime 8x
//
// BenchmarkHarnessIteration drives a real Engine (real gitrepo.Repo, real
// judge.Judge, real state directory and registry, pushing to a local bare
// remote) with an in-process agent that rewrites 20 files and a verifier that
// fails at once. The timer runs only while the harness works: it is stopped
// for the agent and the verifier, so ns/op is the harness's cost of one
// iteration (diffs, judgement, commit with trailers, push, state.json,
// checkpoint, analytics, registry heartbeat, prompt and logs). Inside the
// agent's turn, untimed for the harness, the floor runs on a twin
// repository with the same files: `git add -A && git commit -q -m x && git
// push -q` by the git CLI. Interleaving the two cancels most of the noise of a
// shared machine; x-floor is harness/floor (wall) and x-floor-cpu the same
// ratio of CPU time (the harness process plus its git children);
// x-floor-median is the median of the per-iteration wall ratios, which a
// single slow iteration of either side does not move.
//
// Generated repositories are cached under
// os.TempDir()/agent-loop-bench-<n>/loop (100,000 files take a while to
// write); -short skips the sizes above 10,000.

var benchSizes = []int{1000, 10000, 100000}

const (
	benchIgnored = 50000 // files in the ignored node_modules
	benchChanged = 20    // files the agent rewrites each iteration
)

// benchEnv is the environment of the benchmark's own git commands (the
// floor and the fixtures): no user or system configuration, like the
// harness's git.
func benchEnv() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "LANG=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=Bench", "GIT_COMMITTER_EMAIL=bench@example.com",
	}
}

func benchGit(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = benchEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("git %s in %s: %v\n%s%s", strings.Join(args, " "), dir, err, out.Bytes(), errb.Bytes())
	}
	return strings.TrimSpace(out.String())
}

// benchFixture is a generated repository of n tracked files: the harness's
// work tree, the floor's twin (a clone) and their bare remote.
type benchFixture struct {
	n                      int
	harness, floor, remote string
}

// srcPath is the path of tracked file i.
func srcPath(i int) string {
	return filepath.Join("src", fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%06d.go", i))
}

// srcContent is file i as iteration it leaves it: each iteration rewrites
// two lines and adds one (an agent that goes back and forth would be
// stopped by the judge as oscillating).
func srcContent(i, it int) []byte {
	b := fmt.Appendf(nil, "package d%03d\n\n// F%d is file %d (iteration %d).\nfunc F%d() int {\n", i/100, i, i, it, i)
	for k := 1; k <= it; k++ {
		b = fmt.Appendf(b, "\t_ = %d // step %d\n", i, k)
	}
	return fmt.Appendf(b, "\treturn %d\n}\n", i+it)
}

func benchWrite(tb testing.TB, p string, b []byte) {
	if err := os.WriteFile(p, b, 0o644); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			tb.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func writeIgnored(tb testing.TB, dir string) {
	for i := 0; i < benchIgnored; i++ {
		benchWrite(tb, filepath.Join(dir, "node_modules", fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("m%05d.js", i)), []byte("module.exports = 1\n"))
	}
}

// linkIgnored gives dir an ignored node_modules of 50,000 files: hard links
// to one copy shared by every fixture (ignored files are never written), or
// written files when links cannot be made.
func linkIgnored(tb testing.TB, dir string) {
	master := filepath.Join(os.TempDir(), "agent-loop-bench-node_modules")
	lock := flock.New(master + ".lock")
	if err := lock.Lock(); err != nil {
		tb.Fatal(err)
	}
	defer lock.Unlock()
	if _, err := os.Stat(filepath.Join(master, "ready")); err != nil {
		if err := os.RemoveAll(master); err != nil {
			tb.Fatal(err)
		}
		writeIgnored(tb, master)
		benchWrite(tb, filepath.Join(master, "ready"), nil)
	}
	if out, err := exec.Command("cp", "-al", filepath.Join(master, "node_modules"), dir).CombinedOutput(); err != nil {
		tb.Logf("cp -al: %v: %s; writing the files", err, out)
		writeIgnored(tb, dir)
	}
}

// openFixture returns the cached fixture of n files, generating it on first
// use, reset to a clean main branch. It holds a file lock until the
// benchmark ends, so two benchmark processes never share the work trees.
func openFixture(b *testing.B, n int) benchFixture {
	b.Helper()
	root := filepath.Join(os.TempDir(), fmt.Sprintf("agent-loop-bench-%d", n), "loop")
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		b.Fatal(err)
	}
	lock := flock.New(root + ".lock")
	if err := lock.Lock(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = lock.Unlock() })
	f := benchFixture{n: n, harness: filepath.Join(root, "harness"), floor: filepath.Join(root, "floor"), remote: filepath.Join(root, "remote.git")}
	if _, err := os.Stat(filepath.Join(root, "ready")); err == nil {
		f.reset(b)
		return f
	}
	start := time.Now()
	if err := os.RemoveAll(root); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		benchWrite(b, filepath.Join(f.harness, srcPath(i)), srcContent(i, 0))
	}
	linkIgnored(b, f.harness)
	benchWrite(b, filepath.Join(f.harness, ".gitignore"), []byte("node_modules/\n"))
	benchGit(b, f.harness, "init", "-q", "-b", "main")
	benchGit(b, f.harness, "add", "-A")
	benchGit(b, f.harness, "commit", "-q", "-m", "generated")
	benchGit(b, f.harness, "tag", "generated")
	benchGit(b, root, "init", "-q", "--bare", "-b", "main", f.remote)
	benchGit(b, f.harness, "remote", "add", "origin", f.remote)
	benchGit(b, f.harness, "push", "-q", "origin", "main", "generated")
	// Both work trees get a packed object store, as a clone has.
	benchGit(b, f.harness, "repack", "-a", "-d", "-q")
	benchGit(b, f.harness, "prune")
	benchGit(b, root, "clone", "-q", f.remote, f.floor)
	linkIgnored(b, f.floor)
	benchWrite(b, filepath.Join(root, "ready"), nil)
	b.Logf("generated %s in %s", root, time.Since(start).Round(time.Second))
	f.reset(b)
	return f
}

// reset puts both work trees back on a clean main at the generated commit
// and deletes the branches of earlier runs, here and in the remote.
func (f benchFixture) reset(b *testing.B) {
	b.Helper()
	gen := benchGit(b, f.remote, "rev-parse", "generated^{commit}")
	benchGit(b, f.remote, "update-ref", "refs/heads/main", gen)
	for _, dir := range []string{f.harness, f.floor} {
		benchGit(b, dir, "checkout", "-q", "-f", "-B", "main", gen)
		benchGit(b, dir, "clean", "-q", "-f", "-d")
		for _, br := range strings.Fields(benchGit(b, dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/")) {
			if br != "main" {
				benchGit(b, dir, "branch", "-q", "-D", br)
			}
		}
		if err := os.RemoveAll(filepath.Join(dir, ".aiwg")); err != nil {
			b.Fatal(err)
		}
	}
	for _, ref := range strings.Fields(benchGit(b, f.remote, "for-each-ref", "--format=%(refname)", "refs/heads/")) {
		if ref != "refs/heads/main" {
			benchGit(b, f.remote, "update-ref", "-d", ref)
		}
	}
	// The floor pushes with a plain `git push`: its branch tracks the remote.
	benchGit(b, f.floor, "checkout", "-q", "-b", "floor")
	benchGit(b, f.floor, "push", "-q", "-u", "origin", "floor")
}

// change rewrites 20 tracked files spread over the tree (iteration it).
func (f benchFixture) change(tb testing.TB, dir string, it int) {
	step := max(f.n/benchChanged, 1)
	for k := 0; k < benchChanged; k++ {
		i := k * step
		benchWrite(tb, filepath.Join(dir, srcPath(i)), srcContent(i, it))
	}
}

// cpuNow is the CPU time of this process and its finished children.
func cpuNow() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano())
}

// meter runs the benchmark timer only while the harness itself works, and
// counts the CPU time spent meanwhile.
type meter struct {
	b         *testing.B
	on        bool
	cpuStart  time.Duration
	cpu       time.Duration
	wallStart time.Time
	wall      time.Duration // the timer's time, also kept here per iteration
}

func (m *meter) start() {
	m.b.StartTimer()
	m.cpuStart = cpuNow()
	m.wallStart = time.Now()
	m.on = true
}

func (m *meter) stop() {
	if m.on {
		m.b.StopTimer()
		m.cpu += cpuNow() - m.cpuStart
		m.wall += time.Since(m.wallStart)
		m.on = false
	}
}

// elapsed is the metered wall time so far.
func (m *meter) elapsed() time.Duration {
	if m.on {
		return m.wall + time.Since(m.wallStart)
	}
	return m.wall
}

// pause stops the meter for the agent or the verifier; resume restarts it
// if it was running.
func (m *meter) pause() bool { on := m.on; m.stop(); return on }
func (m *meter) resume(on bool) {
	if on {
		m.start()
	}
}

// benchAgent is the in-process agent: it rewrites 20 files, then runs one
// floor iteration on the twin repository with the same change.
type benchAgent struct {
	tb        testing.TB
	m         *meter
	fix       benchFixture
	floor     bool
	local     bool // the floor does not push (no remote: the loop without --push)
	floorWall time.Duration
	floorCPU  time.Duration
	floorRuns []time.Duration // the floor's wall time, per iteration
}

func (a *benchAgent) Name() string { return "bench" }

func (a *benchAgent) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	on := a.m.pause()
	defer a.m.resume(on)
	start := time.Now()
	a.fix.change(a.tb, req.Dir, req.Iteration)
	if a.floor {
		a.fix.change(a.tb, a.fix.floor, req.Iteration)
		t0, c0 := time.Now(), cpuNow()
		benchGit(a.tb, a.fix.floor, "add", "-A")
		benchGit(a.tb, a.fix.floor, "commit", "-q", "-m", "x")
		if !a.local {
			benchGit(a.tb, a.fix.floor, "push", "-q")
		}
		a.floorWall += time.Since(t0)
		a.floorCPU += cpuNow() - c0
		a.floorRuns = append(a.floorRuns, time.Since(t0))
	}
	return loop.AgentResult{Duration: time.Since(start), Message: fmt.Sprintf("Rewrote %d files.", benchChanged),
		InputTokens: 12000, OutputTokens: 800, CostUSD: 0.02}, nil
}

// benchVerifier fails at once with a short `go test` failure; the failing
// test changes every run, so the judge sees progress, not a stall.
type benchVerifier struct {
	m    *meter
	runs int
}

func (v *benchVerifier) Check(ctx context.Context, req loop.CheckRequest) (loop.CheckResult, error) {
	on := v.m.pause()
	defer v.m.resume(on)
	v.runs++
	return failingCheck(req, v.runs), nil
}

func failingCheck(req loop.CheckRequest, seq int) loop.CheckResult {
	name := fmt.Sprintf("TestCase%d", seq)
	out := fmt.Sprintf("=== RUN   %s\n    d_test.go:12: F7() = 7, want 8\n--- FAIL: %s (0.00s)\nFAIL\nFAIL\texample.com/d\t0.012s\nFAIL\n", name, name)
	if req.Output != nil {
		_, _ = io.WriteString(req.Output, out)
	}
	return loop.CheckResult{ExitCode: 1, Duration: time.Millisecond, Output: out,
		Tests: testreport.Summary{Known: true, Runner: "go", Total: 200, Passed: 199, Failed: 1, Failing: []string{name}}}
}

// benchObserver starts the meter when the baseline is done and stops it
// when the last measured iteration is recorded.
type benchObserver struct {
	b    *testing.B
	m    *meter
	last int
	// runs is the harness's metered wall time per iteration (from one
	// recorded iteration to the next).
	runs []time.Duration
	mark time.Duration
}

func (o *benchObserver) Observe(ctx context.Context, ev loop.Event) {
	switch ev.Kind {
	case loop.EventBaseline:
		o.b.ResetTimer()
		o.m.cpu, o.m.wall, o.mark = 0, 0, 0
		o.m.start()
	case loop.EventIteration:
		now := o.m.elapsed()
		o.runs = append(o.runs, now-o.mark)
		o.mark = now
		if ev.Record.Iteration >= o.last {
			o.m.stop()
		}
	}
}

// timedRepo attributes the measured time to the Repo calls of an
// iteration.
type timedRepo struct {
	*gitrepo.Repo
	m                  *meter
	diff, commit, push time.Duration
}

func (t *timedRepo) since(d *time.Duration, start time.Time) {
	if t.m.on {
		*d += time.Since(start)
	}
}

func (t *timedRepo) Diff(ctx context.Context, from string) (string, error) {
	defer t.since(&t.diff, time.Now())
	return t.Repo.Diff(ctx, from)
}

func (t *timedRepo) Stage(ctx context.Context, froms ...string) ([]string, error) {
	defer t.since(&t.diff, time.Now())
	return t.Repo.Stage(ctx, froms...)
}

func (t *timedRepo) Commit(ctx context.Context, req loop.CommitRequest) (loop.CommitResult, error) {
	defer t.since(&t.commit, time.Now())
	return t.Repo.Commit(ctx, req)
}

func (t *timedRepo) Push(ctx context.Context, branch string) error {
	defer t.since(&t.push, time.Now())
	return t.Repo.Push(ctx, branch)
}

// newBenchState is a fresh loop's state, as app.Run makes it.
func newBenchState(id, dir string, maxIt int, push bool) *state.State {
	pid := os.Getpid()
	st := &state.State{
		Version: state.Version, LoopID: id, Status: state.Running,
		StartedAt: time.Now().UTC().Truncate(time.Second), PID: &pid, WorkingDirectory: dir,
		Configuration: state.Configuration{AutoTest: true, CheckpointInterval: 1, ExecutionMode: "default"},
		Progress:      state.Progress{CompletionChecks: []state.Check{}}, ReinforcementLevel: "MINIMAL",
		Harness: state.Harness{Host: state.Hostname(), PIDStart: state.ProcessStart(pid), Provider: "bench"},
	}
	sp := spec.Defaults(spec.DoorCLI).Spec
	sp.Task = "make the tests pass"
	sp.Criterion = spec.Criterion{Command: "go test ./...", Workdir: ".", Source: spec.SourceFlag, Confidence: "given"}
	sp.Limits.MaxIterations, sp.Limits.Timeout = maxIt, 24*time.Hour
	sp.Publish.Branch, sp.Publish.Push = spec.DefaultBranch(id), push
	st.SetSpec(sp)
	return st
}

func BenchmarkHarnessIteration(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("files="+strconv.Itoa(n), func(b *testing.B) {
			if testing.Short() && n > 10000 {
				b.Skip("-short: 100,000 files take minutes to generate")
			}
			fix := openFixture(b, n)
			defer fix.reset(b)
			b.StopTimer()
			m := &meter{b: b}
			repo, err := gitrepo.Open(fix.harness, gitrepo.Options{})
			if err != nil {
				b.Fatal(err)
			}
			tr := &timedRepo{Repo: repo, m: m}
			agent := &benchAgent{tb: b, m: m, fix: fix, floor: true}
			id := state.NewLoopID("bench harness iteration")
			obs := &benchObserver{b: b, m: m, last: b.N}
			eng := &loop.Engine{
				Agent: agent, Verifier: &benchVerifier{m: m}, Repo: tr, Judge: judge.New(judge.Options{}),
				Dir: state.NewDir(fix.harness, id), Registry: state.NewStore(fix.harness),
				Observer: obs,
			}
			out, err := eng.Run(context.Background(), newBenchState(id, fix.harness, b.N, true))
			m.stop()
			if err != nil {
				b.Fatal(err)
			}
			if out.Iterations != b.N {
				b.Fatalf("the loop stopped after %d of %d iterations: %s: %s", out.Iterations, b.N, out.Status, out.StopReason)
			}
			perOp := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(perOp(agent.floorWall), "floor-ms/op")
			b.ReportMetric(float64(b.Elapsed())/float64(agent.floorWall), "x-floor")
			b.ReportMetric(medianRatio(obs.runs, agent.floorRuns), "x-floor-median")
			b.ReportMetric(perOp(m.cpu), "cpu-ms/op")
			b.ReportMetric(perOp(agent.floorCPU), "floor-cpu-ms/op")
			b.ReportMetric(float64(m.cpu)/float64(agent.floorCPU), "x-floor-cpu")
			b.ReportMetric(perOp(tr.diff), "diff-ms/op")
			b.ReportMetric(perOp(tr.commit), "commit-ms/op")
			b.ReportMetric(perOp(tr.push), "push-ms/op")
			b.ReportMetric(perOp(b.Elapsed()-tr.diff-tr.commit-tr.push), "rest-ms/op")
		})
	}
}

// BenchmarkLocalIteration is the harness's marginal cost of one iteration
// without a remote (no --push), at 10,000 tracked files: a whole loop of 8
// iterations minus a whole loop of 2 (so the baseline, the branch and the
// publishing at the end, which every loop pays once, cancel), divided by
// 6, with the agent and the check excluded. The floor is the same for `git
// add -A && git commit` on the twin repository, run inside each agent turn
// (interleaved, so a busy neighbour slows both). x-floor is the ratio of
// the marginal costs; the target is 1.2x. Each of the b.N repetitions runs
// both loops on a reset fixture.
func BenchmarkLocalIteration(b *testing.B) {
	const n, short, long = 10000, 2, 8
	fix := openFixture(b, n)
	defer fix.reset(b)
	b.StopTimer()
	// One repetition: both loops on a reset fixture; its marginal costs.
	type measured struct{ harness, floor, stage, commit, fixed time.Duration }
	var reps []measured
	// Each iteration of the loops of 8 (from the third: the first two pay
	// the loop's start), and the floor's iteration beside it.
	var itHarness, itFloor []time.Duration
	for rep := 0; rep < b.N; rep++ {
		var loops [2]measured
		for k, iters := range []int{short, long} {
			fix.reset(b)
			m := &meter{b: b}
			repo, err := gitrepo.Open(fix.harness, gitrepo.Options{})
			if err != nil {
				b.Fatal(err)
			}
			tr := &timedRepo{Repo: repo, m: m}
			agent := &benchAgent{tb: b, m: m, fix: fix, floor: true, local: true}
			id := state.NewLoopID("bench local iteration")
			eng := &loop.Engine{
				Agent: agent, Verifier: &benchVerifier{m: m}, Repo: tr, Judge: judge.New(judge.Options{}),
				Dir: state.NewDir(fix.harness, id), Registry: state.NewStore(fix.harness),
			}
			st := newBenchState(id, fix.harness, iters, false)
			var marks []time.Duration
			eng.Observer = observerFunc(func(ev loop.Event) {
				if ev.Kind == loop.EventIteration {
					marks = append(marks, m.elapsed())
				}
			})
			m.start()
			out, err := eng.Run(context.Background(), st)
			m.stop()
			if err != nil {
				b.Fatal(err)
			}
			if out.Iterations != iters {
				b.Fatalf("the loop stopped after %d of %d iterations: %s: %s", out.Iterations, iters, out.Status, out.StopReason)
			}
			loops[k] = measured{harness: m.wall, floor: agent.floorWall, stage: tr.diff, commit: tr.commit}
			if iters == long {
				for i := short; i < long; i++ {
					itHarness, itFloor = append(itHarness, marks[i]-marks[i-1]), append(itFloor, agent.floorRuns[i])
				}
			}
		}
		per := func(f func(measured) time.Duration) time.Duration {
			return (f(loops[1]) - f(loops[0])) / (long - short)
		}
		reps = append(reps, measured{
			harness: per(func(x measured) time.Duration { return x.harness }),
			floor:   per(func(x measured) time.Duration { return x.floor }),
			stage:   per(func(x measured) time.Duration { return x.stage }),
			commit:  per(func(x measured) time.Duration { return x.commit }),
			// What every loop pays once: the loop of 2 less its 2 iterations.
			fixed: loops[0].harness - short*per(func(x measured) time.Duration { return x.harness }),
		})
	}
	ms := func(f func(measured) time.Duration) float64 {
		var sum time.Duration
		for _, r := range reps {
			sum += f(r)
		}
		return float64(sum.Microseconds()) / 1000 / float64(len(reps))
	}
	h, f := ms(func(r measured) time.Duration { return r.harness }), ms(func(r measured) time.Duration { return r.floor })
	b.ReportMetric(h, "ms/iteration")
	b.ReportMetric(f, "floor-ms/iteration")
	b.ReportMetric(h/f, "x-floor")
	var hs, fs []time.Duration
	for _, r := range reps {
		hs, fs = append(hs, r.harness), append(fs, r.floor)
	}
	// A busy neighbour during one repetition moves the mean, not this.
	b.ReportMetric(medianRatio(hs, fs), "x-floor-median")
	// The same question asked of each iteration: a noisy start of one loop
	// (the judge's baseline reads every file) does not move it.
	b.ReportMetric(medianRatio(itHarness, itFloor), "x-floor-per-iteration")
	b.ReportMetric(ms(func(r measured) time.Duration { return r.stage }), "stage-ms/iteration")
	b.ReportMetric(ms(func(r measured) time.Duration { return r.commit }), "commit-ms/iteration")
	b.ReportMetric(ms(func(r measured) time.Duration { return r.fixed }), "fixed-ms/loop")
}

// medianRatio is the median of h[i]/f[i]: one slow push on a shared
// machine moves the ratio of the totals, not this.
func medianRatio(h, f []time.Duration) float64 {
	var rs []float64
	for i := range min(len(h), len(f)) {
		if f[i] > 0 {
			rs = append(rs, float64(h[i])/float64(f[i]))
		}
	}
	if len(rs) == 0 {
		return 0
	}
	slices.Sort(rs)
	if n := len(rs); n%2 == 0 {
		return (rs[n/2-1] + rs[n/2]) / 2
	}
	return rs[len(rs)/2]
}

// failingGoOutput is `go test -v` output of a large suite: mostly passing
// tests logging as they go, one in seven failing with an assertion, padded
// to size bytes.
func failingGoOutput(size int) string {
	var b strings.Builder
	b.Grow(size + 4096)
	fails := 0
	for i := 0; b.Len() < size; i++ {
		name := fmt.Sprintf("TestParse/case_%05d", i)
		fmt.Fprintf(&b, "=== RUN   %s\n", name)
		for k := 0; k < 12; k++ {
			fmt.Fprintf(&b, "    parser_test.go:%d: step %d: token %q at offset %d consumed, state %08x\n", 40+k, k, "ident", i*31+k, i*7919+k)
		}
		if i%7 == 3 {
			fails++
			fmt.Fprintf(&b, "    parser_test.go:88: Parse(\"a + b * %d\") = %d tokens, want %d\n        got:  [ident plus ident star number]\n        want: [ident plus ident star number eof]\n", i, 5, 6)
			fmt.Fprintf(&b, "--- FAIL: %s (0.01s)\n", name)
		} else {
			fmt.Fprintf(&b, "--- PASS: %s (0.00s)\n", name)
		}
	}
	fmt.Fprintf(&b, "--- FAIL: TestParse (12.34s)\nFAIL\nFAIL\texample.com/parser\t12.345s\nFAIL\n")
	return b.String()
}

// noisyBuildOutput is output no runner recognises: a long build log with
// warnings and, near the end, the errors that failed it.
func noisyBuildOutput(size int) string {
	var b strings.Builder
	b.Grow(size + 4096)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "[%6d/%d] CC src/module_%04d/file_%03d.c\n", i, 99999, i/50, i%50)
		if i%40 == 0 {
			fmt.Fprintf(&b, "src/module_%04d/file_%03d.c:%d:9: warning: unused variable 'tmp%d' [-Wunused-variable]\n", i/50, i%50, 100+i%300, i)
		}
	}
	b.WriteString("src/parser/lexer.c:212:5: error: implicit declaration of function 'next_tokn'; did you mean 'next_token'? [-Werror=implicit-function-declaration]\n")
	b.WriteString("src/parser/lexer.c:240:12: error: 'EOF_TOKEN' undeclared (first use in this function)\n")
	b.WriteString("make[2]: *** [Makefile:412: src/parser/lexer.o] Error 1\nmake: *** [Makefile:90: all] Error 2\n")
	return b.String()
}

// section returns the prompt's section that starts with heading, up to the
// next top-level heading.
func section(prompt, heading string) string {
	i := strings.Index(prompt, heading)
	if i < 0 {
		return ""
	}
	rest := prompt[i:]
	if j := strings.Index(rest[1:], "\n# "); j >= 0 {
		return rest[:j+2]
	}
	return rest
}

// BenchmarkPromptFeedback measures the feedback of a 5 MB failing check:
// testreport.Feedback's text and the whole prompt of the next iteration
// (loop.BuildPrompt with the engine's default budget), in bytes; ns/op is
// the time to condense 5 MB. The feedback section must stay under 8 KB.
func BenchmarkPromptFeedback(b *testing.B) {
	const size = 5 << 20
	for _, tc := range []struct {
		name string
		out  string
	}{{"go-test-v", failingGoOutput(size)}, {"unrecognised-build-log", noisyBuildOutput(size)}} {
		b.Run(tc.name, func(b *testing.B) {
			sum := testreport.Parse(tc.out)
			var fb string
			for b.Loop() {
				fb = testreport.Feedback(tc.out, sum, 8<<10)
			}
			rec := loop.Record{Iteration: 3, Check: loop.CheckResult{ExitCode: 1, Output: tc.out, Tests: sum},
				Agent: loop.AgentResult{Message: "I fixed the tokenizer's end-of-input handling."}, Stat: loop.DiffStat{Files: 2}}
			prompt := loop.BuildPrompt(loop.PromptInput{Task: "Make the parser tests pass", Criterion: spec.Criterion{Command: "go test ./...", Workdir: "."},
				Iteration: 4, MaxIterations: 10, Records: []loop.Record{rec}, Guidance: loop.Guidance{Level: "MINIMAL"}, FeedbackBytes: 8 << 10})
			sec := section(prompt, "# Result of the check")
			b.ReportMetric(float64(len(tc.out)), "output-bytes")
			b.ReportMetric(float64(len(fb)), "feedback-bytes")
			b.ReportMetric(float64(len(sec)), "section-bytes")
			b.ReportMetric(float64(len(prompt)), "prompt-bytes")
			if len(fb) > 8<<10 || len(sec) > 8<<10 || sec == "" {
				b.Errorf("feedback %d bytes, prompt section %d bytes: want both under 8 KB", len(fb), len(sec))
			}
			if !sum.Known || len(sum.Failing) == 0 {
				if tc.name == "go-test-v" {
					b.Errorf("the go test output was not recognised: %+v", sum)
				}
			}
			if tc.name == "go-test-v" && !strings.Contains(fb, "parser_test.go:88") {
				b.Errorf("the feedback lost the failing assertion:\n%s", fb)
			}
			if tc.name == "unrecognised-build-log" && !strings.Contains(fb, "lexer.c:212") {
				b.Errorf("the feedback lost the build error:\n%s", fb)
			}
		})
	}
}

// BenchmarkStateGrowth runs one loop of 200 iterations (50 with -short)
// through the real engine, git repository and judge, with an agent that
// rewrites three files and a check that fails at once, and measures the
// files the loop keeps after 10, 50, 100 and 200 iterations: state.json,
// report.md (report.Render of the state), the last checkpoint, all
// checkpoints and analytics.json. B/it is the growth per iteration from the
// first to the last measurement; x-late/early compares the growth per
// iteration of the second half with the first (1 is linear).
func BenchmarkStateGrowth(b *testing.B) {
	iterations := 200
	points := []int{10, 50, 100, 200}
	if testing.Short() {
		iterations, points = 50, []int{10, 25, 50}
	}
	for b.Loop() {
		sizes := stateGrowth(b, iterations, points)
		first, mid, last := points[0], points[len(points)/2], points[len(points)-1]
		for _, k := range []string{"state", "report", "checkpoints", "checkpoint", "analytics"} {
			for _, p := range points {
				b.ReportMetric(float64(sizes[p][k]), fmt.Sprintf("%s-B@%d", k, p))
			}
			if k == "checkpoint" {
				continue // one file per iteration: it should stay flat
			}
			early := float64(sizes[mid][k]-sizes[first][k]) / float64(mid-first)
			late := float64(sizes[last][k]-sizes[mid][k]) / float64(last-mid)
			b.ReportMetric(float64(sizes[last][k]-sizes[first][k])/float64(last-first), k+"-B/it")
			if early > 0 {
				b.ReportMetric(late/early, k+"-x-late/early")
			}
		}
	}
}

func stateGrowth(b *testing.B, iterations int, points []int) map[int]map[string]int64 {
	dir := b.TempDir()
	const files = 40
	for i := 0; i < files; i++ {
		benchWrite(b, filepath.Join(dir, srcPath(i)), srcContent(i, 0))
	}
	benchGit(b, dir, "init", "-q", "-b", "main")
	benchGit(b, dir, "add", "-A")
	benchGit(b, dir, "commit", "-q", "-m", "start")
	repo, err := gitrepo.Open(dir, gitrepo.Options{})
	if err != nil {
		b.Fatal(err)
	}
	m := &meter{b: b}
	fix := benchFixture{n: files}
	agent := &growthAgent{tb: b, fix: fix}
	id := state.NewLoopID("state growth")
	d := state.NewDir(dir, id)
	sizes := map[int]map[string]int64{}
	obs := observerFunc(func(ev loop.Event) {
		if ev.Kind != loop.EventIteration || !slices.Contains(points, ev.Record.Iteration) {
			return
		}
		n := ev.Record.Iteration
		sizes[n] = map[string]int64{
			"state":       fileSize(d.StatePath()),
			"report":      int64(len(report.Render(ev.State, report.Options{Target: report.CLI, Resume: "`agent-loop resume " + id + "`"}))),
			"checkpoint":  fileSize(filepath.Join(dir, d.CheckpointRel(n))),
			"checkpoints": dirSize(d.File("checkpoints")),
			"analytics":   fileSize(d.AnalyticsPath()),
		}
	})
	eng := &loop.Engine{
		Agent: agent, Verifier: &benchVerifier{m: m}, Repo: repo, Judge: judge.New(judge.Options{}),
		Dir: d, Registry: state.NewStore(dir), Observer: obs,
	}
	out, err := eng.Run(context.Background(), newBenchState(id, dir, iterations, false))
	if err != nil {
		b.Fatal(err)
	}
	if out.Iterations != iterations {
		b.Fatalf("the loop stopped after %d of %d iterations: %s: %s", out.Iterations, iterations, out.Status, out.StopReason)
	}
	return sizes
}

// growthAgent rewrites three of the files each iteration, in turn.
type growthAgent struct {
	tb  testing.TB
	fix benchFixture
}

func (a *growthAgent) Name() string { return "bench" }
func (a *growthAgent) Run(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
	for k := 0; k < 3; k++ {
		i := (req.Iteration*3 + k) % a.fix.n
		benchWrite(a.tb, filepath.Join(req.Dir, srcPath(i)), srcContent(i, req.Iteration))
	}
	return loop.AgentResult{Duration: time.Second, Message: "Rewrote three files; the tokenizer now handles end of input.",
		InputTokens: 12000, OutputTokens: 800, CostUSD: 0.02}, nil
}

type observerFunc func(loop.Event)

func (f observerFunc) Observe(ctx context.Context, ev loop.Event) { f(ev) }

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.Size()
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			n += fileSize(p)
		}
		return nil
	})
	return n
}
