package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/aiwg/agent-loop/internal/process"
)

// The probes are hostile programs run inside the sandbox: this test binary,
// started by the harness with probeEnv naming the attack. A probe exits 0
// when its attack succeeded, 1 when it was stopped (saying by what), 2 when
// it could not even try.
const probeEnv = "SANDBOX_TEST_PROBE"

// harnessArg0 starts this test binary as a harness (root, or a dropped
// uid for the mode without root) that runs a scenario and prints its
// results as JSON.
const harnessArg0 = "sandbox-test-harness"

// secretEnv is in the harness's environment (never in the probes'): the
// environ probe looks for its value.
const secretEnv = "SANDBOX_TEST_SECRET"

func probeMain(args []string) (int, bool) {
	if len(args) > 0 && args[0] == harnessArg0 {
		return harnessMain(args), true
	}
	if len(args) > 0 && args[0] == lifelineArg0 {
		return lifelineMain(args), true
	}
	name := os.Getenv(probeEnv)
	if name == "" {
		return 0, false
	}
	ok, msg := runProbe(name, args[1:])
	fmt.Println(msg)
	if ok {
		return 0, true
	}
	return 1, true
}

// runProbe attempts one attack; ok is whether it got through.
func runProbe(name string, a []string) (bool, string) {
	arg := func(i int) string {
		if i < len(a) {
			return a[i]
		}
		return ""
	}
	switch name {
	case "environ": // read the harness's environment: pid, secret
		b, err := os.ReadFile("/proc/" + arg(0) + "/environ")
		if err != nil {
			return false, "environ: " + err.Error()
		}
		return bytes.Contains(b, []byte(arg(1))), fmt.Sprintf("environ: read %d bytes, secret found: %v", len(b), bytes.Contains(b, []byte(arg(1))))
	case "mem": // read the harness's memory
		return readMem(arg(0))
	case "ptrace": // attach to the harness
		runtime.LockOSThread()
		pid, _ := strconv.Atoi(arg(0))
		if err := unix.PtraceSeize(pid); err != nil {
			return false, "ptrace: " + err.Error()
		}
		_ = unix.PtraceDetach(pid)
		return true, "ptrace: attached"
	case "signal": // signal the harness (0: the permission check only; SIGURG: Go's own, harmless)
		pid, _ := strconv.Atoi(arg(0))
		sig := unix.Signal(0)
		if arg(1) == "URG" {
			sig = unix.SIGURG
		}
		if err := unix.Kill(pid, sig); err != nil {
			return false, "kill: " + err.Error()
		}
		return true, "kill: delivered"
	case "write": // append to an existing file, or create it
		f, err := os.OpenFile(arg(0), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return false, "write: " + err.Error()
		}
		_, err = f.WriteString(arg(1) + "\n")
		f.Close()
		if err != nil {
			return false, "write: " + err.Error()
		}
		return true, "write: wrote " + arg(0)
	case "read":
		b, err := os.ReadFile(arg(0))
		if err != nil {
			return false, "read: " + err.Error()
		}
		return true, fmt.Sprintf("read: %d bytes", len(b))
	case "rename": // move a file away (then anything could take its place)
		if err := os.Rename(arg(0), arg(1)); err != nil {
			return false, "rename: " + err.Error()
		}
		return true, "rename: moved " + arg(0)
	case "abstract": // connect to the harness's abstract unix socket
		c, err := net.DialTimeout("unix", "@"+arg(0), time.Second)
		if err != nil {
			return false, "connect: " + err.Error()
		}
		c.Close()
		return true, "connect: connected"
	case "privileges": // any capability left, or no_new_privs off
		b, _ := os.ReadFile("/proc/self/status")
		eff, nnp := "", ""
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
				eff = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(l, "NoNewPrivs:"); ok {
				nnp = strings.TrimSpace(v)
			}
		}
		return strings.Trim(eff, "0") != "" || nnp != "1", "CapEff " + eff + ", NoNewPrivs " + nnp
	case "survive": // leave processes behind: a fork/exit/setsid chain and a daemon that ignores TERM
		return leaveBehind(arg(0))
	case "survive-wait": // the same, and this process stays (its supervisor waits for it)
		if ok, msg := leaveBehind(arg(0)); !ok {
			return ok, msg
		}
		select {}
	}
	return false, "unknown probe " + name
}

func readMem(pid string) (bool, string) {
	maps, err := os.ReadFile("/proc/" + pid + "/maps")
	if err != nil {
		return false, "maps: " + err.Error()
	}
	var start uint64
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 1 && strings.HasPrefix(f[1], "r") {
			lo, _, _ := strings.Cut(f[0], "-")
			start, _ = strconv.ParseUint(lo, 16, 64)
			break
		}
	}
	mem, err := os.Open("/proc/" + pid + "/mem")
	if err != nil {
		return false, "mem: " + err.Error()
	}
	defer mem.Close()
	buf := make([]byte, 16)
	if _, err := mem.ReadAt(buf, int64(start)); err != nil {
		return false, "mem: " + err.Error()
	}
	return true, fmt.Sprintf("mem: read 16 bytes at %#x", start)
}

// leaveBehind starts, in dir, a chain in which each generation starts the
// next in a new session and exits at once (one pid after another, never
// in the run's group), and a daemon (double fork, setsid, TERM and INT
// ignored). Each writes its pid to dir/pids; both stop when dir/stop
// appears.
func leaveBehind(dir string) (bool, string) {
	scripts := map[string]string{
		"gen.sh": `[ -e "$1/stop" ] && exit 0
echo $$ >> "$1/pids"
setsid sh "$1/gen.sh" "$1" </dev/null >/dev/null 2>&1 &
`,
		"daemon.sh": `trap '' TERM INT HUP
while [ ! -e "$1/stop" ]; do echo $$ >> "$1/pids"; sleep 0.02; done
`,
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			return false, "survive: " + err.Error()
		}
	}
	for _, c := range [][]string{
		{"sh", filepath.Join(dir, "gen.sh"), dir},
		{"sh", "-c", `setsid sh "$0/daemon.sh" "$0" </dev/null >/dev/null 2>&1 &`, dir},
	} {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Run(); err != nil {
			return false, "survive: " + err.Error()
		}
	}
	// Wait until both write.
	for i := 0; i < 200; i++ {
		if b, _ := os.ReadFile(filepath.Join(dir, "pids")); bytes.Count(b, []byte("\n")) > 4 {
			return true, "survive: chain and daemon started"
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false, "survive: they did not start"
}

// scenario is what a harness child runs: New with these options, then
// each probe in the sandbox through process.Run.
type scenario struct {
	WorkTree    string
	PrivateBase string
	Protect     []string
	Weak        []string // weakening fields: sameUser noSweep noLandlock noPIDNS noProtect
	Probes      []probeCall
	// Claude, when set, is the path of the Claude Code CLI to run in the
	// sandbox against the fake model (runClaude) instead of the probes.
	Claude string
}

// probeCall is one probe run; args may hold {pid} (the harness's pid),
// {secret}, {private} (the harness's private directory), {socket} (its
// abstract socket) and {survive} (a fresh directory for "survive").
type probeCall struct {
	Name string
	Args []string
}

type probeResult struct {
	Name   string
	Exit   int
	Output string
	Err    string
	// Alive: after the run, a process "survive" started was still
	// running (its pids file kept growing).
	Alive bool
}

type harnessResult struct {
	Layers  string
	Log     string
	Private string
	Results []probeResult
	Err     string
}

func (sc scenario) weakening() weakening {
	var w weakening
	for _, n := range sc.Weak {
		switch n {
		case "sameUser":
			w.sameUser = true
		case "noSweep":
			w.noSweep = true
		case "noLandlock":
			w.noLandlock = true
		case "noPIDNS":
			w.noPIDNS = true
		case "noProtect":
			w.noProtect = true
		case "noLifeline":
			w.noLifeline = true
		default:
			panic("unknown weakening " + n)
		}
	}
	return w
}

func harnessMain(args []string) int {
	var sc scenario
	res := harnessResult{}
	defer func() {
		b, _ := json.Marshal(res)
		os.Stdout.Write(append(b, '\n'))
	}()
	if err := json.Unmarshal([]byte(args[1]), &sc); err != nil {
		res.Err = err.Error()
		return 0
	}
	var log bytes.Buffer
	sb, err := New(Options{WorkTree: sc.WorkTree, PrivateBase: sc.PrivateBase, Protect: sc.Protect, Log: &log, weak: sc.weakening()})
	if err != nil {
		res.Err = "New: " + err.Error()
		res.Log = log.String()
		return 0
	}
	res.Layers, res.Private = sb.String(), sb.PrivateDir()
	// State the probes attack.
	stateFile := filepath.Join(sb.PrivateDir(), ".aiwg", "ralph", "loops", "l1", "state.json")
	_ = os.MkdirAll(filepath.Dir(stateFile), 0o755)
	_ = os.WriteFile(stateFile, []byte(`{"loop_id":"l1"}`), 0o644)
	socket := fmt.Sprintf("agent-loop-test-%d", os.Getpid())
	if l, err := net.Listen("unix", "@"+socket); err == nil {
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	if sc.Claude != "" {
		secret := filepath.Join(sb.PrivateDir(), "secret")
		_ = os.WriteFile(secret, []byte("ghs_token"), 0o600)
		out, err := runClaude(sb, sc.Claude, sc.WorkTree, secret)
		pr := probeResult{Name: "claude", Output: out}
		if err != nil {
			pr.Err = err.Error()
		}
		res.Results = append(res.Results, pr)
	}
	ctx := process.WithJail(context.Background(), sb)
	for i, pc := range sc.Probes {
		survive := ""
		repl := func(s string) string {
			if strings.Contains(s, "{survive}") && survive == "" {
				survive = filepath.Join(sc.WorkTree, fmt.Sprintf("survive-%d-%d", os.Getpid(), i))
			}
			return strings.NewReplacer("{pid}", strconv.Itoa(os.Getpid()), "{secret}", os.Getenv(secretEnv),
				"{private}", sb.PrivateDir(), "{socket}", socket, "{survive}", survive).Replace(s)
		}
		var a []string
		for _, s := range pc.Args {
			a = append(a, repl(s))
		}
		if survive != "" {
			if err := os.MkdirAll(survive, 0o777); err == nil {
				_ = os.Chmod(survive, 0o777)
			}
		}
		var out bytes.Buffer
		r, err := process.Run(ctx, process.Spec{Path: "/proc/self/exe", Args: a, Dir: sc.WorkTree,
			Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", probeEnv + "=" + pc.Name, "GORACE=" + os.Getenv("GORACE")}, Stdout: &out, Stderr: &out, Timeout: 30 * time.Second})
		pr := probeResult{Name: pc.Name, Exit: r.ExitCode, Output: strings.TrimSpace(out.String())}
		if err != nil {
			pr.Err = err.Error()
		}
		if survive != "" {
			pr.Alive = stillGrowing(filepath.Join(survive, "pids"))
			stopSurvivors(survive)
		}
		res.Results = append(res.Results, pr)
	}
	if err := sb.Close(); err != nil {
		res.Err = "Close: " + err.Error()
	}
	res.Log = log.String()
	return 0
}

// stillGrowing reports whether a pids file gets new lines within 300 ms:
// something started by the probe is still running.
func stillGrowing(p string) bool {
	size := func() int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	before := size()
	for i := 0; i < 30; i++ {
		time.Sleep(10 * time.Millisecond)
		if size() != before {
			return true
		}
	}
	return false
}

// stopSurvivors ends what a weakened sandbox let live: the stop file ends
// the chain and the daemon at their next step.
func stopSurvivors(dir string) {
	_ = os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644)
	for i := 0; i < 100 && stillGrowing(filepath.Join(dir, "pids")); i++ {
	}
}

// runHarness starts this binary as a harness with sc, as uid (-1: as this
// process's), with env added, and returns its result.
func runHarness(sc scenario, uid int, env []string) (harnessResult, error) {
	b, _ := json.Marshal(sc)
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{harnessArg0, string(b)}, Env: append(env, "GORACE="+os.Getenv("GORACE"))}
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return harnessResult{}, err
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return harnessResult{}, fmt.Errorf("harness: %v: %s", err, errb.String())
		}
	case <-ctx.Done():
		cmd.Process.Kill()
		return harnessResult{}, errors.New("harness timed out: " + errb.String())
	}
	var res harnessResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return res, fmt.Errorf("harness output %q: %v (stderr %s)", out.String(), err, errb.String())
	}
	if res.Err != "" {
		return res, fmt.Errorf("harness: %s\nlog: %s", res.Err, res.Log)
	}
	return res, nil
}
