package process

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Harness secrets and file-command paths that a child must never see. The
// agent has a shell in the repository, and the completion command runs code
// the agent wrote, so both get the same filtered copy of the environment.
var deniedNames = map[string]bool{
	"GITHUB_TOKEN": true, "GH_TOKEN": true, "GITHUB_PAT": true,
	"GH_ENTERPRISE_TOKEN": true, "GITHUB_ENTERPRISE_TOKEN": true,
	"ACTIONS_RUNTIME_TOKEN": true, "ACTIONS_RUNTIME_URL": true, "ACTIONS_RESULTS_URL": true,
	"ACTIONS_CACHE_URL": true, "ACTIONS_CACHE_SERVICE_V2": true,
	// Workflow command files: writing to them would inject outputs, state,
	// environment or the step summary.
	"GITHUB_OUTPUT": true, "GITHUB_STATE": true, "GITHUB_ENV": true, "GITHUB_PATH": true,
	"GITHUB_STEP_SUMMARY": true,
	// Provider credentials: a provider adds back its own key only.
	"ANTHROPIC_API_KEY": true, "ANTHROPIC_AUTH_TOKEN": true, "CLAUDE_CODE_OAUTH_TOKEN": true,
	"OPENAI_API_KEY": true, "CODEX_API_KEY": true, "GEMINI_API_KEY": true, "GOOGLE_API_KEY": true,
	"FACTORY_API_KEY": true, "OPENCODE_API_KEY": true, "OPENROUTER_API_KEY": true,
	"AGENT_LOOP_GITHUB_TOKEN": true,
}

var deniedPrefixes = []string{"INPUT_", "ACTIONS_ID_TOKEN_REQUEST_", "STATE_", "ACTIONS_RUNTIME_"}

var deniedSuffixes = []string{"_TOKEN", "_SECRET", "_PASSWORD", "_API_KEY", "_ACCESS_KEY",
	"_PRIVATE_KEY", "_CREDENTIALS", "_SECRET_KEY", "_AUTH"}

// Denied reports whether an environment variable name is withheld from children.
func Denied(name string) bool {
	up := strings.ToUpper(name)
	if deniedNames[up] {
		return true
	}
	for _, p := range deniedPrefixes {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	for _, s := range deniedSuffixes {
		if strings.HasSuffix(up, s) {
			return true
		}
	}
	return false
}

// SafeEnv returns a copy of environ without the harness's secrets, then with
// extra ("KEY=value") appended, overriding earlier values of the same key.
// extra is how a provider passes its own key back in.
func SafeEnv(environ []string, extra ...string) []string {
	out := make([]string, 0, len(environ)+len(extra))
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || Denied(k) {
			continue
		}
		out = append(out, kv)
	}
	return Override(out, extra...)
}

// Override sets each "KEY=value" of extra in env, replacing earlier values.
func Override(env []string, extra ...string) []string {
	if len(extra) == 0 {
		return env
	}
	keys := make(map[string]bool, len(extra))
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	out := make([]string, 0, len(env)+len(extra))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// Lookup returns the value of key in env.
func Lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Keys returns the sorted variable names of env (for tests and diagnostics).
func Keys(env []string) []string {
	var ks []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// LookPath finds program in the PATH of env (not of the harness).
func LookPath(program string, env []string) (string, error) {
	pathVar, _ := Lookup(env, "PATH")
	if pathVar == "" {
		pathVar = os.Getenv("PATH")
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, program)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("not in PATH " + pathVar)
}
