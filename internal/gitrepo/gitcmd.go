package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// scope says which repository a git invocation sees. Every scope runs git
// with the harness's own configuration (trust.go); none reads the
// repository's .git/config, hooks, info/ or index.
type scope int

const (
	// trusted: the private git directory alone (its objects, index,
	// refs, shallow list). Everything the judge reads and everything that
	// is committed goes through this scope.
	trusted scope = iota
	// withRepo: the private git directory plus the repository's objects
	// as a read-only alternate (through the view, which leaves out the
	// repository's objects/info/), and the repository's shallow list as
	// recorded at the start. Used where an object read from the
	// repository is verified by its hash before anyone relies on it: the
	// import of a commit into the trusted store (index-pack), pushes and
	// fetches (the remote hashes what it receives).
	withRepo
	// inRepo: `git config` in the repository itself, once, when the
	// repository is opened: the remote URL and the credential check read
	// its configuration (includes followed) as git resolves it.
	inRepo
)

// gitCall is one git invocation.
type gitCall struct {
	args   []string
	stdin  io.Reader
	stdout io.Writer   // when set, stdout streams there instead of result.stdout
	env    []string    // extra "KEY=value" entries
	config [][2]string // extra command-scope config (GIT_CONFIG_KEY_n/VALUE_n)
	files  []*os.File  // inherited as fd 3, 4, ...
	scope  scope
	// bare runs git without the work tree (git --bare, in the private git
	// directory): object and network commands never read a work-tree
	// file (.gitattributes, .gitignore).
	bare bool
	// okCodes are non-zero exit codes that are answers, not failures
	// (rev-parse --verify -q, merge-base --is-ancestor, ...).
	okCodes []int
	// maxOut bounds what is kept of stdout (0: maxGitOutput).
	maxOut int
}

// maxGitOutput bounds the stdout kept from one git command (a listing of
// paths, a diff): the agent decides how much its files make git print.
const maxGitOutput = 1 << 30

// result is what a git invocation printed.
type result struct {
	stdout []byte
	code   int
	stderr string
}

// git runs one git command after the repository check (begin has run).
func (r *Repo) git(ctx context.Context, c gitCall) (result, error) {
	return r.exec(ctx, c)
}

// exec runs git in its own process group, killed with the group when ctx
// ends.
func (r *Repo) exec(ctx context.Context, c gitCall) (result, error) {
	if err := ctx.Err(); err != nil {
		return result{}, fmt.Errorf("git %s: %w", strings.Join(c.args, " "), err)
	}
	if c.scope == withRepo {
		c.bare = true // objects and the network only
	}
	args := c.args
	if c.bare {
		args = append([]string{"--bare"}, args...)
	}
	cmd := exec.CommandContext(ctx, r.gitPath, args...)
	cmd.Dir = r.root
	if c.bare && r.p != nil {
		cmd.Dir = r.p.gitDir()
	}
	env, err := r.environ(c)
	if err != nil {
		return result{}, err
	}
	cmd.Env = env
	cmd.Stdin = c.stdin
	var stdout, stderr bytes.Buffer
	max := c.maxOut
	if max == 0 {
		max = maxGitOutput
	}
	out := &limitedBuffer{buf: &stdout, max: max}
	if c.stdout != nil {
		cmd.Stdout = c.stdout
	} else {
		cmd.Stdout = out
	}
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 64 << 10}
	cmd.ExtraFiles = c.files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err = cmd.Start(); err == nil {
		done := make(chan struct{})
		if !r.weak.fifos {
			go watchFIFOs(cmd.Process.Pid, r.root, done, func(p string) { r.fifoFound(p) })
		}
		err = cmd.Wait()
		close(done)
	}
	res := result{stdout: stdout.Bytes(), stderr: r.redact(stderr.String())}
	if err == nil && out.over {
		return res, fmt.Errorf("git %s printed more than %d bytes: the work tree is too large to judge", strings.Join(c.args, " "), max)
	}
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
	return res, &GitError{Args: c.args, ExitCode: res.code, Stderr: res.stderr}
}

// fifoFound records a FIFO the watchdog opened for a blocked git child.
func (r *Repo) fifoFound(p string) {
	r.fifoMu.Lock()
	defer r.fifoMu.Unlock()
	rel, err := filepath.Rel(r.root, p)
	if err != nil {
		rel = p
	}
	r.fifos = append(r.fifos, Notice{Kind: NoticeSpecialFile, Path: filepath.ToSlash(rel),
		Detail: filepath.ToSlash(rel) + ": a FIFO where git reads a file; git read it as empty"})
}

// systemPath is the PATH of git's children: the directory of the git the
// harness resolved, then the system's directories. Never the harness's
// PATH, whose user directories (~/.local/bin, ~/go/bin) an agent of the
// same user can write.
func (r *Repo) systemPath() string {
	dirs := []string{filepath.Dir(r.gitPath)}
	for _, d := range safeBinDirs {
		if d != dirs[0] {
			dirs = append(dirs, d)
		}
	}
	return strings.Join(dirs, ":")
}

// safeBinDirs are the directories programs git starts are looked up in.
var safeBinDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
	"/opt/homebrew/bin"}

// environ builds the complete environment of a git child. Nothing of the
// harness's environment reaches it but the proxy settings recorded when
// the repository was opened and SSH_AUTH_SOCK; HOME and TMPDIR are
// directories of the private git directory, so no file an agent can write
// in the user's home (~/.netrc, ~/.config/git/ignore, ~/.gitconfig) is read.
func (r *Repo) environ(c gitCall) ([]string, error) {
	env := make([]string, 0, 32+len(c.env)+2*len(c.config))
	env = append(env, "PATH="+r.systemPath(), "LANG=C", "LC_ALL=C")
	home, tmp := "/nonexistent", os.TempDir()
	if r.p != nil {
		home, tmp = r.p.home(), r.p.tmp()
	}
	if r.weak.home {
		if h := os.Getenv("HOME"); h != "" {
			home = h
		}
		if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
			env = append(env, "XDG_CONFIG_HOME="+x)
		}
	}
	env = append(env, "HOME="+home, "TMPDIR="+tmp)
	env = append(env, r.passEnv...)
	env = append(env,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		"GIT_EDITOR=:",
		"GIT_OPTIONAL_LOCKS=0",
	)
	if !r.weak.home {
		env = append(env, "GIT_CONFIG_GLOBAL=/dev/null")
	}
	if !r.weak.gitDir {
		env = append(env, "GIT_NO_REPLACE_OBJECTS=1")
	}
	switch c.scope {
	case inRepo:
		env = append(env, "GIT_DIR="+r.gitDir)
	default:
		if r.p == nil {
			return nil, errors.New("gitrepo: the private git directory is not open")
		}
		gitDir := r.p.gitDir()
		if r.weak.gitDir {
			gitDir = r.gitDir
		}
		index := filepath.Join(r.p.gitDir(), "index")
		if r.weak.index {
			index = filepath.Join(r.gitDir, "index")
		}
		env = append(env,
			"GIT_DIR="+gitDir,
			"GIT_INDEX_FILE="+index,
			"GIT_OBJECT_DIRECTORY="+r.p.objects(),
		)
		if !c.bare {
			env = append(env, "GIT_WORK_TREE="+r.root)
		}
		var alternates string
		switch {
		case r.weak.objects:
			alternates = filepath.Join(r.commonDir, "objects")
		case c.scope == withRepo:
			alternates = r.p.view()
		}
		if alternates != "" {
			env = append(env, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+alternates)
		}
		if c.scope == withRepo && !r.weak.gitDir {
			env = append(env, "GIT_SHALLOW_FILE="+r.p.repoShallow())
		}
	}
	cfg := make([][2]string, 0, 1+len(c.config))
	cfg = append(cfg, [2]string{"safe.directory", "*"})
	cfg = append(cfg, c.config...)
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(cfg)))
	for i, kv := range cfg {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	return append(env, c.env...), nil
}

// passedEnv are the variables of the harness's own environment (read once,
// when the repository is opened) that git's children get: the network
// proxy the user configured and the ssh agent.
var passedEnv = []string{"SSH_AUTH_SOCK", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
	"NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"}

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
	buf  *bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
			b.over = true
		} else {
			b.buf.Write(p)
		}
	} else if len(p) > 0 {
		b.over = true
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
