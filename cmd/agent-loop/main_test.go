package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/aiwg/agent-loop/internal/cli"
	"github.com/aiwg/agent-loop/internal/fakemodel"
	"github.com/aiwg/agent-loop/internal/sandbox"
	"github.com/aiwg/agent-loop/internal/sandbox/sandboxtest"
	"github.com/aiwg/agent-loop/internal/schemas"
	"github.com/aiwg/agent-loop/internal/weaken"
)

// The acceptance tests run the real binary (this test binary re-executed as
// agent-loop) in temporary git repositories, with scripted command agents,
// and check the result with the real git CLI and the shared JSON Schemas.
// Scripts: testdata/script/*.txtar at the module root.
func TestMain(m *testing.M) {
	// The sandbox re-executes this binary as its trampoline.
	if code, ok := sandbox.Main(os.Args); ok {
		os.Exit(code)
	}
	testscript.Main(m, map[string]func(){
		"agent-loop": func() { os.Exit(cli.New("v0.0.0-test").Main(os.Args[1:])) },
	})
}

func TestScripts(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("the acceptance tests need the git CLI")
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			// The harness's private state, outside the work tree.
			stateDir, err := os.MkdirTemp("", "agent-loop-state-")
			if err != nil {
				return err
			}
			env.Defer(func() { os.RemoveAll(stateDir) })
			env.Setenv("AGENT_LOOP_STATE_DIR", stateDir)
			env.Setenv("STATEDIR", stateDir)
			// As root the sandbox user must reach the work tree; the
			// scripted agents report what they saw in files of $WORK,
			// outside the work tree: the sandbox may write there
			// (AGENT_LOOP_TEST_WRITABLE, honoured by test builds only),
			// and as root its user too (sticky: it cannot move the repo).
			if err := sandboxtest.Share(env.WorkDir); err != nil {
				return err
			}
			env.Setenv(weaken.WritableVar, env.WorkDir)
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			env.Setenv("AGENT_LOOP_SCHEMAS", schemas.Dir())
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "Test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "Test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
			env.Setenv("GITHUB_TOKEN", "ghs_harnessSecretToken1234")
			env.Setenv("CI", "true")
			// Scripts that run `go test` as the completion command share the
			// build cache of the test run.
			// (As root the sandbox user's go uses caches of its own: the test
			// run's are under root's home, which it cannot enter.)
			if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output(); err == nil && os.Geteuid() != 0 {
				if f := strings.Fields(string(out)); len(f) == 2 {
					env.Setenv("GOCACHE", f[0])
					env.Setenv("GOMODCACHE", f[1])
				}
			}
			// The real agent CLIs, for the scripts that run one ([codex]).
			env.Setenv("AGENT_LOOP_CLI_BIN", os.Getenv("AGENT_LOOP_CLI_BIN"))
			env.Setenv("GOFLAGS", "-mod=mod")
			env.Setenv("GOPROXY", "off")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "go":
				_, err := exec.LookPath("go")
				return err == nil, nil
			case "root":
				// The harness runs as root: the sandbox runs the agent as
				// another user (privilege separation).
				return os.Geteuid() == 0, nil
			case "codex":
				// The real Codex CLI, from $AGENT_LOOP_CLI_BIN.
				dir := os.Getenv("AGENT_LOOP_CLI_BIN")
				_, err := os.Stat(filepath.Join(dir, "codex"))
				if err != nil && os.Getenv("AGENT_LOOP_REQUIRE_CLIS") == "1" {
					return false, fmt.Errorf("codex is not in AGENT_LOOP_CLI_BIN=%q (AGENT_LOOP_REQUIRE_CLIS=1)", dir)
				}
				return dir != "" && err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"schema":    cmdSchema,
			"json":      cmdJSON,
			"jsonvar":   cmdJSONVar,
			"waitfile":  cmdWaitFile,
			"alive":     cmdAlive,
			"mark":      cmdMark,
			"within":    cmdWithin,
			"commits":   cmdCommits,
			"sametree":  cmdSameTree,
			"loopvar":   cmdLoopVar,
			"signal":    cmdSignal,
			"fakeapi":   cmdFakeAPI,
			"fakemodel": cmdFakeModel,
			"privdir":   cmdPrivDir,
		},
	})
}

// privdir VAR sets VAR to the harness's private directory of the
// repository in the current directory (under $AGENT_LOOP_STATE_DIR), where
// the live state is.
func cmdPrivDir(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: privdir VAR")
	}
	root, err := exec.Command("git", "-C", ts.MkAbs("."), "rev-parse", "--show-toplevel").Output()
	ts.Check(err)
	dir, err := sandbox.PrivateDir(ts.Getenv("AGENT_LOOP_STATE_DIR"), strings.TrimSpace(string(root)))
	ts.Check(err)
	ts.Check(os.MkdirAll(filepath.Join(dir, ".aiwg", "ralph"), 0o700))
	ts.Setenv(args[0], dir)
}

// schema NAME FILE... validates JSON files against a shared schema.
func cmdSchema(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: schema loop-state|loop-registry|completion-proposal FILE...")
	}
	name := args[0] + ".schema.json"
	for _, pat := range args[1:] {
		files, _ := filepath.Glob(ts.MkAbs(pat))
		if len(files) == 0 {
			ts.Fatalf("no file matches %s", pat)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			ts.Check(err)
			err = schemas.Validate(name, b)
			if neg && err == nil {
				ts.Fatalf("%s validates against %s, want failure", f, name)
			}
			if !neg && err != nil {
				ts.Fatalf("%s does not validate against %s: %v", f, name, err)
			}
		}
	}
}

func lookup(ts *testscript.TestScript, file, path string) (any, bool) {
	b, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		ts.Fatalf("%s: %v", file, err)
	}
	for _, part := range strings.Split(path, ".") {
		if part == "" {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[part]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(part)
			if part == "len" {
				return float64(len(x)), true
			}
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// json FILE PATH WANT checks a value (dotted path, array indices, .len).
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: json FILE PATH WANT")
	}
	v, ok := lookup(ts, args[0], args[1])
	got := str(v)
	if !ok {
		got = "<missing>"
	}
	if (got == args[2]) == neg {
		ts.Fatalf("%s %s = %s, want %s%s", args[0], args[1], got, map[bool]string{true: "not ", false: ""}[neg], args[2])
	}
}

// jsonvar FILE PATH VAR sets $VAR to a value.
func cmdJSONVar(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: jsonvar FILE PATH VAR")
	}
	v, ok := lookup(ts, args[0], args[1])
	if !ok {
		ts.Fatalf("%s has no %s", args[0], args[1])
	}
	ts.Setenv(args[2], str(v))
}

// loopvar VAR sets $VAR to the only loop id under .aiwg/ralph/loops.
func cmdLoopVar(ts *testscript.TestScript, neg bool, args []string) {
	ents, _ := os.ReadDir(ts.MkAbs(".aiwg/ralph/loops"))
	if len(ents) != 1 {
		ts.Fatalf("want exactly one loop directory, have %d", len(ents))
	}
	ts.Setenv(args[0], ents[0].Name())
}

// waitfile FILE [SECONDS] waits until FILE exists.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	limit := 30 * time.Second
	if len(args) == 2 {
		s, _ := strconv.Atoi(args[1])
		limit = time.Duration(s) * time.Second
	}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("%s did not appear within %s", args[0], limit)
}

// alive PIDFILE checks that the process whose pid is in PIDFILE lives.
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	alive := func() bool {
		if syscall.Kill(pid, 0) != nil {
			return false
		}
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err != nil || !strings.Contains(string(st), ") Z ")
	}
	// A process being killed needs a moment to go.
	deadline := time.Now().Add(2 * time.Second)
	for neg && alive() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive() == neg {
		ts.Fatalf("process %d alive=%v", pid, !neg)
	}
}

// marks are the scripts' marks (the scripts run in parallel).
var (
	marksMu sync.Mutex
	marks   = map[string]time.Time{}
)

// mark NAME remembers the time; within NAME DURATION checks the time since.
func cmdMark(ts *testscript.TestScript, neg bool, args []string) {
	marksMu.Lock()
	defer marksMu.Unlock()
	marks[ts.Getenv("WORK")+args[0]] = time.Now()
}

func cmdWithin(ts *testscript.TestScript, neg bool, args []string) {
	d, err := time.ParseDuration(args[1])
	ts.Check(err)
	marksMu.Lock()
	at := marks[ts.Getenv("WORK")+args[0]]
	marksMu.Unlock()
	el := time.Since(at)
	if el > d {
		ts.Fatalf("%s after %s, want within %s", args[0], el.Round(time.Millisecond), d)
	}
	ts.Logf("%s: %s", args[0], el.Round(time.Millisecond))
}

// commits BRANCH N checks, with the real git CLI, that BRANCH has exactly N
// iteration commits numbered 1..N (each once), and that git fsck is clean.
func cmdCommits(ts *testscript.TestScript, neg bool, args []string) {
	out, err := exec.Command("git", "-C", ts.MkAbs("."), "log", "--format=%(trailers:key=Agent-Loop-Iteration,valueonly)%x00", args[0]).Output()
	if err != nil {
		ts.Fatalf("git log %s: %v", args[0], err)
	}
	var its []int
	for _, rec := range strings.Split(string(out), "\x00") {
		s := bufio.NewScanner(strings.NewReader(rec))
		for s.Scan() {
			if l := strings.TrimSpace(s.Text()); l != "" {
				n, err := strconv.Atoi(l)
				ts.Check(err)
				its = append(its, n)
			}
		}
	}
	sort.Ints(its)
	want, _ := strconv.Atoi(args[1])
	ok := len(its) == want
	for i, n := range its {
		if n != i+1 {
			ok = false
		}
	}
	if !ok {
		ts.Fatalf("iteration commits on %s: %v, want 1..%d each once", args[0], its, want)
	}
	if out, err := exec.Command("git", "-C", ts.MkAbs("."), "fsck", "--strict").CombinedOutput(); err != nil {
		ts.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// sametree A B checks that two revisions have the same tree.
func cmdSameTree(ts *testscript.TestScript, neg bool, args []string) {
	tree := func(rev string) string {
		out, err := exec.Command("git", "-C", ts.MkAbs("."), "rev-parse", rev+"^{tree}").Output()
		if err != nil {
			ts.Fatalf("git rev-parse %s^{tree}: %v", rev, err)
		}
		return strings.TrimSpace(string(out))
	}
	a, b := tree(args[0]), tree(args[1])
	if (a == b) == neg {
		ts.Fatalf("tree of %s = %s, tree of %s = %s (neg=%v)", args[0], a, args[1], b, neg)
	}
}

// signal SIG STATEFILE sends SIGTERM or SIGINT to the harness whose pid a
// loop's state.json records (testscript's kill knows only INT and KILL).
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	sigs := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT}
	sig, ok := sigs[args[0]]
	if !ok || len(args) != 2 {
		ts.Fatalf("usage: signal TERM|INT STATEFILE")
	}
	v, ok := lookup(ts, args[1], "pid")
	pid, isNum := v.(float64)
	if !ok || !isNum {
		ts.Fatalf("%s records no pid", args[1])
	}
	ts.Check(syscall.Kill(int(pid), sig))
}

// fakeapi VAR starts an HTTP server that answers every request with 404 (a
// model API that answers a preflight) and sets $VAR to its address.
func cmdFakeAPI(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: fakeapi VAR")
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL)
}

// fakemodel VAR SCRIPT starts internal/fakemodel with the JSON Script in
// the file SCRIPT and sets $VAR to its address and $VAR_OPENAI to its
// OpenAI base URL.
func cmdFakeModel(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: fakemodel VAR SCRIPT")
	}
	b, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	var script fakemodel.Script
	if err := json.Unmarshal(b, &script); err != nil {
		ts.Fatalf("%s: %v", args[1], err)
	}
	srv := fakemodel.Start(script)
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL)
	ts.Setenv(args[0]+"_OPENAI", srv.OpenAIBaseURL())
}
