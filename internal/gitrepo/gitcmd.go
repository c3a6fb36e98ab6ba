package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// hardeningArgs come first on every git command line: no hook, no fsmonitor
// daemon, no attributes file from an agent-writable HOME, no ext:: transport,
// no recursion into submodules (whose config and hooks are not sealed), no
// signing program, no pager.
var hardeningArgs = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.attributesFile=/dev/null",
	"-c", "protocol.ext.allow=never",
	"-c", "submodule.recurse=false",
	"-c", "commit.gpgSign=false",
	"-c", "core.pager=cat",
	"-c", "color.ui=false",
}

// gitCall is one git invocation.
type gitCall struct {
	args   []string
	stdin  io.Reader
	env    []string    // extra "KEY=value" entries
	config [][2]string // extra command-scope config (GIT_CONFIG_KEY_n/VALUE_n)
	// okCodes are non-zero exit codes that are answers, not failures
	// (rev-parse --verify -q, merge-base --is-ancestor, ...).
	okCodes []int
}

// result is what a git invocation printed.
type result struct {
	stdout []byte
	code   int
}

// git runs one hardened git command in the work tree. Before it starts, the
// repository is checked against the seal and its trusted files restored.
func (r *Repo) git(ctx context.Context, c gitCall) (result, error) {
	if err := r.guard(); err != nil {
		return result{}, err
	}
	return r.exec(ctx, c)
}

// exec runs git without the guard (Open uses it before the seal exists).
func (r *Repo) exec(ctx context.Context, c gitCall) (result, error) {
	argv := make([]string, 0, len(hardeningArgs)+len(c.args))
	argv = append(argv, hardeningArgs...)
	argv = append(argv, c.args...)
	cmd := exec.CommandContext(ctx, r.gitPath, argv...)
	cmd.Dir = r.root
	cmd.Env = r.environ(c)
	cmd.Stdin = c.stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 64 << 10}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	res := result{stdout: stdout.Bytes()}
	if err == nil {
		return res, nil
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		if ctx.Err() != nil {
			return res, fmt.Errorf("git %s: %w", strings.Join(c.args, " "), ctx.Err())
		}
		return res, fmt.Errorf("running git %s: %w", strings.Join(c.args, " "), err)
	}
	res.code = exitErr.ExitCode()
	for _, ok := range c.okCodes {
		if res.code == ok {
			return res, nil
		}
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("git %s: %w", strings.Join(c.args, " "), ctx.Err())
	}
	return res, &GitError{Args: c.args, ExitCode: res.code, Stderr: r.redact(stderr.String())}
}

// environ builds the complete environment of a git child: nothing of the
// harness's own environment except PATH, HOME and TMPDIR.
func (r *Repo) environ(c gitCall) []string {
	env := make([]string, 0, 24+len(c.env)+2*len(c.config))
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	env = append(env, "PATH="+path, "LANG=C")
	if home := os.Getenv("HOME"); home != "" {
		env = append(env, "HOME="+home)
	} else {
		env = append(env, "HOME=/nonexistent")
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	env = append(env,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_PAGER=cat",
		"GIT_EDITOR=:",
		"GIT_DIR="+r.gitDir,
		"GIT_WORK_TREE="+r.root,
	)
	cfg := make([][2]string, 0, 1+len(r.overrides)+len(c.config))
	cfg = append(cfg, [2]string{"safe.directory", "*"})
	cfg = append(cfg, r.overrides...)
	cfg = append(cfg, c.config...)
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(cfg)))
	for i, kv := range cfg {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	return append(env, c.env...)
}

// redact removes the token from text that may reach a log (a token too
// short to be real would only garble the text).
func (r *Repo) redact(s string) string {
	if len(r.opts.Token) >= 6 {
		s = strings.ReplaceAll(s, r.opts.Token, "***")
	}
	return s
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	}
	return len(p), nil
}

// splitZ splits NUL-terminated records.
func splitZ(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i]))
		b = b[i+1:]
	}
	return out
}

// firstLine returns the trimmed first line of git output.
func firstLine(b []byte) string {
	s := string(b)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
