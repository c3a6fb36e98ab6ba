package gitrepo

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// CredentialError says the repository's git configuration (or a file it
// includes) holds a credential: an http.extraheader (actions/checkout
// persists the token that way by default), the token itself, or a URL with
// a password. The agent can read that configuration, so the harness
// refuses to run it. Callers turn it into exit code 2 (a configuration
// error).
type CredentialError struct {
	What string // what was found
	Key  string // the configuration key
	File string // the file git read it from
}

func (e *CredentialError) Error() string {
	return fmt.Sprintf("refusing to run the agent: the repository's git configuration holds %s (%s, in %s), which the agent "+
		"could read; in a workflow, set `persist-credentials: false` on actions/checkout (agent-loop pushes with its "+
		"github-token input itself, without writing it anywhere the agent can read); elsewhere remove it (`git config "+
		"--file %s --unset-all %s`)", e.What, e.Key, e.File, e.File, e.Key)
}

// tokenPrefixes start GitHub tokens (classic and fine-grained PATs, OAuth,
// app installation and user-to-server tokens, refresh tokens).
var tokenPrefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}

// findCredentials looks for a credential in the configuration read when
// the repository was opened: extraheader keys, the token anywhere (also in
// the raw text of every file the configuration came from, comments
// included), and URLs with a password or a token as user name.
func findCredentials(c *repoConfig, token, configPath string) *CredentialError {
	for _, k := range sortedKeys(c.values) {
		_, section, _, name := canonicalKey(k)
		if section == "http" && name == "extraheader" {
			for i, v := range c.values[k] {
				if strings.TrimSpace(v) != "" {
					return &CredentialError{What: "an HTTP authorization header", Key: k, File: originAt(c, k, i)}
				}
			}
		}
	}
	if len(token) >= 4 {
		for _, k := range sortedKeys(c.values) {
			for i, v := range c.values[k] {
				if strings.Contains(v, token) || strings.Contains(k, token) {
					return &CredentialError{What: "the push token", Key: k, File: originAt(c, k, i)}
				}
			}
		}
		files := map[string]bool{configPath: true}
		for _, list := range c.origins {
			for _, o := range list {
				if o != "" {
					files[o] = true
				}
			}
		}
		for _, f := range sortedKeys(files) {
			if configFileHolds(f, token) {
				return &CredentialError{What: "the push token", Key: "(the file's text)", File: f}
			}
		}
	}
	for _, k := range sortedKeys(c.values) {
		_, section, sub, name := canonicalKey(k)
		var candidates []string
		switch {
		case section == "remote" && (name == "url" || name == "pushurl"):
			candidates = c.values[k]
		case section == "url":
			candidates = append([]string{sub}, c.values[k]...)
		}
		for i, v := range candidates {
			if what := urlCredential(v, token); what != "" {
				return &CredentialError{What: what, Key: k, File: originAt(c, k, max(0, i-1))}
			}
		}
	}
	return nil
}

// urlCredential reports what credential a URL carries ("" for none).
func urlCredential(raw, token string) string {
	if !strings.Contains(raw, "://") {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	if _, ok := u.User.Password(); ok {
		return "a URL with a password"
	}
	name := u.User.Username()
	if token != "" && name == token {
		return "a URL with the push token"
	}
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(name, p) {
			return "a URL with a GitHub token as user name"
		}
	}
	return ""
}

func originAt(c *repoConfig, key string, i int) string {
	if o := c.origins[key]; i < len(o) && o[i] != "" {
		return o[i]
	}
	return c.describeOrigin(key)
}

// CheckCredentials returns a *CredentialError when the repository's git
// configuration (included files too), as read when it was opened, holds
// the token, an http.extraheader or a URL with a password. Call it in the
// preflight, before the agent or the completion command runs; Seal
// refuses too.
func (r *Repo) CheckCredentials() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.creds != nil {
		return r.creds
	}
	return nil
}

// credentialHelper hands the token to git through a pipe inherited as fd 3:
// git runs the helper (a shell function, no file) when the remote asks for
// credentials, and the helper reads one copy of the token from the pipe.
// The token is never written to a file, an argument list or an
// environment; a pipe of another user's process cannot be opened by the
// agent's user. Each invocation of git gets a fresh pipe.
func (r *Repo) credentialHelper() (files []*os.File, cfg [][2]string, cleanup func(), err error) {
	if r.weak.credFile {
		return r.credentialFile()
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating the credential pipe: %w", err)
	}
	// A few copies: git may ask more than once in one run (a fetch and a
	// push, a retried request). Far below the pipe's capacity.
	line := strings.Repeat(r.opts.Token+"\n", 8)
	if _, err := pw.WriteString(line); err != nil {
		pr.Close()
		pw.Close()
		return nil, nil, nil, fmt.Errorf("writing the credential pipe: %w", err)
	}
	pw.Close()
	helper := `!f() { test "$1" = get || exit 0; IFS= read -r t <&3 || exit 0; echo username=x-access-token; ` +
		`printf 'password=%s\n' "$t"; }; f`
	cfg = [][2]string{{"credential.helper", ""}, {"credential.helper", helper}}
	return []*os.File{pr}, cfg, func() { pr.Close() }, nil
}

// credentialFile is the previous harness's hand-over, kept for the test
// that shows a token file is found: the token in a 0600 file in TMPDIR,
// read by a credential helper.
func (r *Repo) credentialFile() (files []*os.File, cfg [][2]string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "agent-loop-cred-")
	if err != nil {
		return nil, nil, nil, err
	}
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte(r.opts.Token), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, nil, nil, err
	}
	helper := `!f() { test "$1" = get || exit 0; echo username=x-access-token; printf 'password='; cat ` + shellQuote(tok) + `; echo; }; f`
	return nil, [][2]string{{"credential.helper", ""}, {"credential.helper", helper}}, func() { os.RemoveAll(dir) }, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// repoConfigPath is the repository's main configuration file.
func (r *Repo) repoConfigPath() string { return filepath.Join(r.commonDir, "config") }
