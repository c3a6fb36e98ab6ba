// Package provider runs the real AI coding agent CLIs (Claude Code, Codex,
// opencode, Factory droid, Gemini CLI) as loop.Agent implementations.
//
// Every provider starts its CLI through process.Run (own process group,
// timeouts, no shell), with the engine's filtered environment plus only its
// own credential variables, and a private configuration directory so a run
// never reads or writes the user's CLI settings. The CLI's structured output
// (stream-json, JSONL) is parsed line by line with bounded memory: the raw
// events go to the request's Transcript, a one-line-per-step rendering to
// its Output, and the result (tokens, cost, session, final message) and the
// error class come from the events, not from the exit code.
package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/process"
	"github.com/aiwg/agent-loop/internal/spec"
)

// Config configures one provider.
type Config struct {
	// Model is the model to use ("" leaves the CLI's default); a request's
	// Model overrides it.
	Model string
	// MaxTurns caps the agent's turns per run for CLIs that take it (0: none);
	// a request's MaxTurns overrides it.
	MaxTurns int
	// Binary is the path of the CLI; empty looks it up in PATH.
	Binary string
	// Credentials holds the credential variables the engine has (from the
	// harness environment or action inputs), e.g. ANTHROPIC_API_KEY. A
	// provider passes on only those of CredentialVars(name).
	Credentials map[string]string
	// Extra are extra CLI arguments from the user, placed before the prompt.
	Extra []string
	// StateDir holds the CLI's private configuration directory
	// (<StateDir>/<name>-home: CLAUDE_CONFIG_DIR, CODEX_HOME...), kept across
	// iterations; the engine passes the loop directory. Empty uses a
	// temporary directory per run.
	StateDir string
	// Prices estimates the cost for CLIs that report tokens but no cost;
	// nil uses DefaultPrices.
	Prices Prices
	// AgentConfig says whose configuration the CLI reads (spec.Agent.Config:
	// "user", "private", "auto"; "" is private). Codex honours it: the
	// user's own CODEX_HOME keeps its model providers and login.
	AgentConfig string
}

// cliSpec describes one CLI: its provider name, program and how to install it.
type cliSpec struct {
	name    string
	program string
	install string
	creds   []string
}

var cliSpecs = map[string]cliSpec{
	"claude": {name: "claude", program: "claude", install: "npm install -g @anthropic-ai/claude-code",
		creds: []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"}},
	"codex": {name: "codex", program: "codex", install: "npm install -g @openai/codex",
		creds: []string{"OPENAI_API_KEY", "CODEX_API_KEY"}},
	"opencode": {name: "opencode", program: "opencode", install: "npm install -g opencode-ai",
		creds: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "OPENCODE_API_KEY"}},
	"droid": {name: "droid", program: "droid", install: "npm install -g droid",
		creds: []string{"FACTORY_API_KEY"}},
	"gemini": {name: "gemini", program: "gemini", install: "npm install -g @google/gemini-cli",
		creds: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}},
}

// cliAliases maps other accepted names to a provider.
var cliAliases = map[string]string{"factory": "droid", "claude-code": "claude", "gemini-cli": "gemini"}

// Names lists the providers of this package.
func Names() []string {
	names := make([]string, 0, len(cliSpecs))
	for n := range cliSpecs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CredentialVars lists the environment variables a provider takes its
// credentials from (it needs at least one); nil for an unknown name.
func CredentialVars(name string) []string {
	s, ok := lookupCLI(name)
	if !ok {
		return nil
	}
	return append([]string(nil), s.creds...)
}

// CredentialVarsFor lists the variables a provider takes credentials from
// with the configuration agentConfig: CredentialVars, and for Codex with the
// user's configuration, the env_key of the model provider it selects. The
// harness's environment environ locates that configuration.
func CredentialVarsFor(name, agentConfig string, environ []string) []string {
	vars := CredentialVars(name)
	if s, ok := lookupCLI(name); ok && s.name == "codex" {
		if uc := userCodexConfig(agentConfig, environ); uc != nil && uc.envKey != "" && !slices.Contains(vars, uc.envKey) {
			vars = append(vars, uc.envKey)
		}
	}
	return vars
}

// CredentialInput is the action input that carries a credential variable
// (ANTHROPIC_API_KEY -> anthropic-api-key), "" when the Action has none for it.
func CredentialInput(variable string) string { return spec.CredentialInput(variable) }

func lookupCLI(name string) (cliSpec, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if a, ok := cliAliases[n]; ok {
		n = a
	}
	s, ok := cliSpecs[n]
	return s, ok
}

// New returns the provider called name (claude, codex, opencode, droid or
// its alias factory, gemini).
func New(name string, cfg Config) (loop.Agent, error) {
	s, ok := lookupCLI(name)
	if !ok {
		return nil, fmt.Errorf("unknown agent provider %q: valid providers are %s (and command)", name, strings.Join(Names(), ", "))
	}
	b := cliBase{cliSpec: s, cfg: cfg}
	switch s.name {
	case "claude":
		return &Claude{cliBase: b}, nil
	case "codex":
		return &Codex{cliBase: b}, nil
	case "opencode":
		return &Opencode{cliBase: b}, nil
	case "droid":
		return &Droid{cliBase: b}, nil
	default:
		return &Gemini{cliBase: b}, nil
	}
}

// cliBase is what every CLI provider shares.
type cliBase struct {
	cliSpec
	cfg Config
}

// Name is the provider name.
func (b *cliBase) Name() string { return b.name }

func (b *cliBase) model(req loop.AgentRequest) string {
	if req.Model != "" {
		return req.Model
	}
	return b.cfg.Model
}

func (b *cliBase) maxTurns(req loop.AgentRequest) int {
	if req.MaxTurns > 0 {
		return req.MaxTurns
	}
	return b.cfg.MaxTurns
}

// credentialEnv returns "KEY=value" for this provider's own credentials.
func (b *cliBase) credentialEnv() []string {
	var out []string
	for _, k := range b.creds {
		if v := b.cfg.Credentials[k]; v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// binary resolves the CLI's path in env's PATH (or Config.Binary).
func (b *cliBase) binary(env []string) (string, error) {
	if b.cfg.Binary != "" {
		fi, err := os.Stat(b.cfg.Binary)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", &MissingCLIError{Provider: b.name, Program: b.cfg.Binary, Install: b.install}
		}
		return b.cfg.Binary, nil
	}
	p, err := process.LookPath(b.program, env)
	if err != nil {
		return "", &MissingCLIError{Provider: b.name, Program: b.program, Install: b.install}
	}
	return p, nil
}

// Program is the path of the CLI a run starts (env's PATH, or
// Config.Binary): the harness checks that its sandbox can run it.
func (b *cliBase) Program(env []string) (string, error) { return b.binary(env) }

// home returns the CLI's private configuration directory and a cleanup.
func (b *cliBase) home() (string, func(), error) {
	if b.cfg.StateDir != "" {
		dir := filepath.Join(b.cfg.StateDir, b.name+"-home")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", nil, fmt.Errorf("creating %s configuration directory %s: %w", b.name, dir, err)
		}
		return dir, func() {}, nil
	}
	return b.scratchHome()
}

// scratchHome is a configuration directory for a preflight (`--version`):
// temporary, so a preflight that fails leaves nothing in the repository.
func (b *cliBase) scratchHome() (string, func(), error) {
	dir, err := os.MkdirTemp("", "agent-loop-"+b.name+"-")
	if err != nil {
		return "", nil, fmt.Errorf("creating %s configuration directory: %w", b.name, err)
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// MissingCLIError says a provider's CLI is not installed.
type MissingCLIError struct {
	Provider, Program, Install string
}

func (e *MissingCLIError) Error() string {
	return fmt.Sprintf("%s provider: the %s CLI %q is not installed or not executable: install it with `%s`, or give its full path",
		e.Provider, e.Provider, e.Program, e.Install)
}

// MissingCredentialError says none of a provider's credential variables is set.
type MissingCredentialError struct {
	Provider string
	Vars     []string
}

func (e *MissingCredentialError) Error() string {
	var inputs []string
	for _, v := range e.Vars {
		if in := CredentialInput(v); in != "" {
			inputs = append(inputs, in)
		}
	}
	msg := fmt.Sprintf("%s provider: no credential: set one of %s", e.Provider, strings.Join(e.Vars, ", "))
	if len(inputs) > 0 {
		msg += fmt.Sprintf(" (in the Action: the input %s)", strings.Join(inputs, " or "))
	}
	return msg
}

// preflight checks the binary, the credentials and that the model API
// answers, then runs `--version` (10 s at most) with extraEnv and returns
// the first line it printed.
func (b *cliBase) preflight(ctx context.Context, env []string, extraEnv ...string) (string, error) {
	var errs []error
	bin, err := b.binary(env)
	if err != nil {
		errs = append(errs, err)
	}
	// With the user's own Codex configuration, its login or its model
	// provider's key variable is what Codex uses.
	ownConfig := b.name == "codex" && userCodexConfig(b.cfg.AgentConfig, env) != nil
	if len(b.credentialEnv()) == 0 && !ownConfig {
		errs = append(errs, &MissingCredentialError{Provider: b.name, Vars: b.creds})
	}
	// The model API must answer: a CLI that cannot reach it waits (Codex:
	// "Reconnecting... waiting for network") until the idle timeout.
	if err := b.checkReachable(ctx, env); err != nil {
		errs = append(errs, err)
	}
	if bin == "" {
		return "", errors.Join(errs...)
	}
	stdout, stderr := process.NewTail(4096), process.NewTail(4096)
	res, err := process.Run(ctx, process.Spec{Path: bin, Args: []string{"--version"}, Env: process.Override(env, extraEnv...),
		Stdout: stdout, Stderr: stderr, Stdin: strings.NewReader(""), Timeout: 10 * time.Second, Grace: time.Second})
	// The version is on stdout; warnings (codex) go to stderr.
	version := firstLine(stdout.String())
	out := stderr
	if strings.TrimSpace(stderr.String()) == "" {
		out = stdout
	}
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("%s provider: running %s --version: %w", b.name, bin, err))
	case res.TimedOut:
		errs = append(errs, fmt.Errorf("%s provider: %s --version did not answer within 10 s", b.name, bin))
	case res.Cancelled:
		errs = append(errs, fmt.Errorf("%s provider: %s --version: %w", b.name, bin, ctx.Err()))
	case res.ExitCode != 0 || version == "":
		errs = append(errs, fmt.Errorf("%s provider: %s --version failed (exit %d): %s; reinstall it with `%s`",
			b.name, bin, res.ExitCode, lastLine(out.String()), b.install))
	}
	return version, errors.Join(errs...)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
