package gitrepo

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
)

// repoConfig is what the harness reads from the repository's configuration
// once, when it opens the repository, as git itself resolves it (includes
// followed, no system or global file). The harness's own git never reads
// that configuration (trust.go); these values are all it takes from it.
type repoConfig struct {
	urls, pushURLs map[string][]string
	// insteadOf and pushInsteadOf map a URL prefix to its replacement.
	insteadOf, pushInsteadOf map[string]string
	worktreeConfig           bool
	partialClone             bool
	sparse                   bool
	objectFormat             string
	// values holds every key (canonical case) and its values, in order;
	// origins the file each value came from.
	values  map[string][]string
	origins map[string][]string
}

// last returns the last value of key (canonical case).
func (c *repoConfig) last(key string) (string, bool) {
	v := c.values[key]
	if len(v) == 0 {
		return "", false
	}
	return v[len(v)-1], true
}

// canonicalKey lower-cases the section and the name of a key, keeping the
// subsection's case ("url.HTTPS://x/.insteadOf" -> "url.HTTPS://x/.insteadof").
func canonicalKey(key string) (canon, section, sub, name string) {
	section, rest, _ := strings.Cut(key, ".")
	section = strings.ToLower(section)
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		sub, name = rest[:i], strings.ToLower(rest[i+1:])
	} else {
		name = strings.ToLower(rest)
	}
	canon = section + "." + name
	if sub != "" {
		canon = section + "." + sub + "." + name
	}
	return canon, section, sub, name
}

// parseConfigList reads `git config -z --list --show-origin`: records of
// "origin" NUL "key\nvalue" NUL ("key" alone for a valueless boolean).
// Without --show-origin (origins false) every record is "key\nvalue".
func parseConfigList(out []byte, origins bool) *repoConfig {
	c := &repoConfig{urls: map[string][]string{}, pushURLs: map[string][]string{}, values: map[string][]string{},
		origins: map[string][]string{}, insteadOf: map[string]string{}, pushInsteadOf: map[string]string{}}
	recs := splitZ(out)
	for i := 0; i < len(recs); i++ {
		origin := ""
		if origins {
			origin = strings.TrimPrefix(recs[i], "file:")
			i++
			if i >= len(recs) {
				break
			}
		}
		key, val, _ := strings.Cut(recs[i], "\n")
		canon, section, sub, name := canonicalKey(key)
		lower := strings.ToLower(canon)
		c.values[canon] = append(c.values[canon], val)
		c.origins[canon] = append(c.origins[canon], origin)
		switch {
		case section == "remote" && sub != "" && name == "url":
			c.urls[sub] = append(c.urls[sub], val)
		case section == "remote" && sub != "" && name == "pushurl":
			c.pushURLs[sub] = append(c.pushURLs[sub], val)
		case section == "url" && sub != "" && name == "insteadof":
			c.insteadOf[val] = sub
		case section == "url" && sub != "" && name == "pushinsteadof":
			c.pushInsteadOf[val] = sub
		case section == "remote" && sub != "" && name == "promisor" && isTrue(val):
			c.partialClone = true
		case lower == "extensions.partialclone":
			c.partialClone = true
		case lower == "extensions.worktreeconfig" && isTrue(val):
			c.worktreeConfig = true
		case lower == "extensions.objectformat":
			c.objectFormat = strings.ToLower(val)
		case lower == "core.sparsecheckout" && isTrue(val):
			c.sparse = true
		}
	}
	return c
}

func isTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "yes", "on", "1":
		return true
	}
	return false
}

// readConfig asks git for the repository's configuration: .git/config, the
// files it includes and the worktree configuration (no system or global
// file). It runs once, when the repository is opened.
func (r *Repo) readConfig(ctx context.Context) (*repoConfig, error) {
	res, err := r.exec(ctx, gitCall{scope: inRepo, args: []string{"config", "-z", "--list", "--includes", "--show-origin"},
		okCodes: []int{1}, maxOut: 64 << 20})
	if err != nil {
		return nil, err
	}
	return parseConfigList(res.stdout, true), nil
}

// rewriteURL applies git's url.<base>.insteadOf rules: the longest
// matching prefix is replaced.
func rewriteURL(url string, rules map[string]string) (string, bool) {
	best := ""
	for prefix := range rules {
		if strings.HasPrefix(url, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best == "" {
		return url, false
	}
	return rules[best] + strings.TrimPrefix(url, best), true
}

// resolveRemote returns the fetch and push URLs of a remote name (or URL)
// as git would: url.*.insteadOf applied to both, pushInsteadOf to a push
// URL taken from remote.<name>.url. ok is false for a name that is not
// configured.
func (c *repoConfig) resolveRemote(name string) (fetch, push string, ok bool) {
	var urls, pushURLs []string
	if isURL(name) {
		urls = []string{name}
	} else {
		urls, pushURLs = c.urls[name], c.pushURLs[name]
	}
	if len(urls) == 0 {
		return "", "", false
	}
	fetch, _ = rewriteURL(urls[0], c.insteadOf)
	if len(pushURLs) > 0 {
		push, _ = rewriteURL(pushURLs[0], c.insteadOf)
	} else if p, ok := rewriteURL(urls[0], c.pushInsteadOf); ok {
		push = p
	} else {
		push = fetch
	}
	return fetch, push, true
}

// attributeDrivers adds to into every driver a .gitattributes text names
// (filter=, diff=, merge=), anywhere on a line. It reports whether the text
// routes files through Git LFS.
func attributeDrivers(b []byte, into map[string]bool) (lfs bool) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		for _, f := range bytes.Fields(line) {
			for _, p := range [][]byte{[]byte("filter="), []byte("diff="), []byte("merge=")} {
				if name, ok := bytes.CutPrefix(f, p); ok && len(name) > 0 && validDriverName(name) {
					into[string(name)] = true
					if string(p) == "filter=" && string(name) == "lfs" {
						lfs = true
					}
				}
			}
		}
	}
	return lfs
}

// validDriverName reports whether name can be a config subsection git could
// define a driver under (no NUL, no newline).
func validDriverName(name []byte) bool {
	return bytes.IndexByte(name, 0) < 0 && bytes.IndexByte(name, '\n') < 0
}

// readAttributesFile reads a work-tree attributes file without following a
// symlink (git does not follow them either) and with a size bound.
func readAttributesFile(path string) []byte {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return nil
	}
	b, err := readSmall(path, 1<<20)
	if err != nil {
		return nil
	}
	return b
}

// configFileHolds reports whether a configuration file (read raw, bounded)
// contains s, case-insensitively.
func configFileHolds(path, s string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 16<<20))
	return bytes.Contains(bytes.ToLower(b), []byte(strings.ToLower(s)))
}

// describeOrigin names the file a key came from, for messages.
func (c *repoConfig) describeOrigin(key string) string {
	for _, o := range c.origins[key] {
		if o != "" {
			return o
		}
	}
	return "the repository's git configuration"
}
