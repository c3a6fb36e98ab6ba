package gitrepo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"

	"github.com/aiwg/agent-loop/internal/loop"
)

// The harness's git cost of one iteration against the floor (plain
// `git add -A && git commit && git push`) on a generated repository of n
// tracked files with an ignored node_modules of 50,000 files and a 20-file
// change per iteration:
//
//	go test ./internal/gitrepo -run '^$' -bench 'Iteration|Floor|StageAll' -benchtime 20x
//
// Generated repositories are cached under os.TempDir()/agent-loop-bench-<n>.

var benchSizes = []int{1000, 10000, 100000}

const (
	benchIgnored = 50000
	benchChanged = 20
)

// benchRepo returns the cached work repository of n files and its bare
// remote, generating them on first use.
func benchRepo(b *testing.B, n int) (work, remote string) {
	b.Helper()
	root := filepath.Join(os.TempDir(), fmt.Sprintf("agent-loop-bench-%d", n))
	work, remote = filepath.Join(root, "work"), filepath.Join(root, "remote.git")
	if fileExists(filepath.Join(root, "ready")) {
		// Back to the generated state: on main, clean work tree.
		runGit(b, work, "checkout", "-q", "-f", "main")
		runGit(b, work, "clean", "-q", "-f", "-d")
		return work, remote
	}
	b.Logf("generating %s (once)", root)
	if err := os.RemoveAll(root); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		p := filepath.Join(work, "src", fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%06d.go", i))
		if i%100 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("package d\n\n// File %d.\nfunc F%d() int { return %d }\n", i, i, i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < benchIgnored; i++ {
		p := filepath.Join(work, "node_modules", fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("m%05d.js", i))
		if i%100 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte("module.exports = 1\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	writeFiles(b, work, map[string]string{".gitignore": "node_modules/\n"})
	runGit(b, work, "init", "-q", "-b", "main")
	runGit(b, work, "add", "-A")
	runGit(b, work, "commit", "-q", "-m", "generated")
	runGit(b, root, "init", "-q", "--bare", "-b", "main", remote)
	runGit(b, work, "remote", "add", "origin", remote)
	runGit(b, work, "push", "-q", "origin", "main")
	if err := os.WriteFile(filepath.Join(root, "ready"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return work, remote
}

// childCPU is the CPU time used by finished child processes so far; the
// benchmarks report it per iteration because wall time on a shared machine
// is noisy.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter accumulates the child CPU time spent inside the timed region.
type cpuMeter struct {
	total time.Duration
	start time.Duration
}

func (m *cpuMeter) begin() { m.start = childCPU() }
func (m *cpuMeter) end()   { m.total += childCPU() - m.start }
func (m *cpuMeter) report(b *testing.B) {
	b.ReportMetric(float64(m.total.Microseconds())/1000/float64(b.N), "child-cpu-ms/op")
}

// benchChange rewrites the first 20 files (iteration i).
func benchChange(b *testing.B, work string, i int) {
	b.Helper()
	for f := 0; f < benchChanged; f++ {
		p := filepath.Join(work, "src", fmt.Sprintf("d%03d", f/100), fmt.Sprintf("f%06d.go", f))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("package d\n\n// File %d, iteration %d.\nfunc F%d() int { return %d }\n", f, i, f, i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCleanup deletes a benchmark branch locally and on the remote.
func benchCleanup(b *testing.B, work, branch string) {
	runGit(b, work, "checkout", "-q", "-f", "main")
	runGit(b, work, "branch", "-q", "-D", branch)
	runGit(b, work, "push", "-q", "origin", "--delete", branch)
}

func benchSizesFor(b *testing.B) []int {
	if testing.Short() {
		return benchSizes[:2]
	}
	return benchSizes
}

func BenchmarkIteration(b *testing.B) {
	for _, n := range benchSizesFor(b) {
		b.Run("files="+strconv.Itoa(n), func(b *testing.B) {
			work, _ := benchRepo(b, n)
			ctx := context.Background()
			// As a new loop opens it: .git/index was written before any
			// agent ran, so it seeds the trusted index.
			r, err := Open(work, Options{TrustIndex: true})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			branch := "bench-iteration-" + randName(b)
			_, base, err := r.Head(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.StartBranch(ctx, branch, base); err != nil {
				b.Fatal(err)
			}
			iteration := func(i int) {
				if _, err := r.Diff(ctx, base); err != nil {
					b.Fatal(err)
				}
				if _, err := r.Commit(ctx, loop.CommitRequest{Subject: "agent-loop: iteration " + strconv.Itoa(i),
					Trailers: []loop.Trailer{{Key: "Agent-Loop-Id", Value: "ralph-bench-01234567"},
						{Key: "Agent-Loop-Iteration", Value: strconv.Itoa(i)},
						{Key: "Agent-Loop-Check", Value: "fail"}, {Key: "Agent-Loop-Score", Value: "50"}}}); err != nil {
					b.Fatal(err)
				}
				if err := r.Push(ctx, branch); err != nil {
					b.Fatal(err)
				}
			}
			benchChange(b, work, 0)
			iteration(0) // creates the remote branch
			var cpu cpuMeter
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				b.StopTimer()
				benchChange(b, work, i)
				b.StartTimer()
				cpu.begin()
				iteration(i)
				cpu.end()
			}
			b.StopTimer()
			cpu.report(b)
			benchCleanup(b, work, branch)
		})
	}
}

func BenchmarkFloor(b *testing.B) {
	for _, n := range benchSizesFor(b) {
		b.Run("files="+strconv.Itoa(n), func(b *testing.B) {
			work, _ := benchRepo(b, n)
			branch := "bench-floor-" + randName(b)
			runGit(b, work, "checkout", "-q", "-b", branch)
			runGit(b, work, "push", "-q", "-u", "origin", branch)
			plain := func(args ...string) {
				cmd := exec.Command("git", args...)
				cmd.Dir = work
				cmd.Env = gitEnv()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			var cpu cpuMeter
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				b.StopTimer()
				benchChange(b, work, i)
				b.StartTimer()
				cpu.begin()
				plain("add", "-A")
				plain("commit", "-q", "-m", "x")
				plain("push", "-q")
				cpu.end()
			}
			b.StopTimer()
			cpu.report(b)
			benchCleanup(b, work, branch)
		})
	}
}

// BenchmarkStageAll compares staging the 20-file change and reading the
// status with go-git against the git CLI, on the same repositories.
func BenchmarkStageAll(b *testing.B) {
	for _, n := range benchSizesFor(b) {
		b.Run("go-git/files="+strconv.Itoa(n), func(b *testing.B) {
			work, _ := benchRepo(b, n)
			repo, err := git.PlainOpen(work)
			if err != nil {
				b.Fatal(err)
			}
			wt, err := repo.Worktree()
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				b.StopTimer()
				benchChange(b, work, i)
				b.StartTimer()
				if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
					b.Fatal(err)
				}
				if _, err := wt.Status(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			runGit(b, work, "reset", "-q", "--hard")
		})
		b.Run("git-cli/files="+strconv.Itoa(n), func(b *testing.B) {
			work, _ := benchRepo(b, n)
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				b.StopTimer()
				benchChange(b, work, i)
				b.StartTimer()
				runGit(b, work, "add", "-A")
				runGit(b, work, "status", "--porcelain")
			}
			b.StopTimer()
			runGit(b, work, "reset", "-q", "--hard")
		})
	}
}
