package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// repoConfig is what the harness reads from the (sealed) repository
// configuration, as git itself resolves it (includes followed).
type repoConfig struct {
	drivers        []string // filter/diff/merge driver names defined in config
	extraHeaders   []string // http.extraheader keys (reset when a token is given)
	urls, pushURLs map[string][]string
	hasIncludes    bool
	worktreeConfig bool
	partialClone   bool
	sparse         bool
	objectFormat   string
	// values holds every key (canonical case) and its values, in order.
	values map[string][]string
}

// parseConfigList reads `git config -z --list`: "key\nvalue" records
// separated by NUL ("key" alone for a valueless boolean).
func parseConfigList(out []byte) *repoConfig {
	c := &repoConfig{urls: map[string][]string{}, pushURLs: map[string][]string{}, values: map[string][]string{}}
	drivers := map[string]bool{}
	for _, rec := range splitZ(out) {
		key, val, _ := strings.Cut(rec, "\n")
		lower := strings.ToLower(key)
		section, rest, _ := strings.Cut(key, ".")
		section = strings.ToLower(section)
		sub, name := "", rest
		if i := strings.LastIndexByte(rest, '.'); i >= 0 {
			sub, name = rest[:i], strings.ToLower(rest[i+1:])
		} else {
			name = strings.ToLower(rest)
		}
		canon := section + "." + name
		if sub != "" {
			canon = section + "." + sub + "." + name
		}
		c.values[canon] = append(c.values[canon], val)
		switch {
		case (section == "filter" || section == "diff" || section == "merge") && sub != "":
			drivers[sub] = true
		case section == "http" && name == "extraheader":
			c.extraHeaders = append(c.extraHeaders, key)
		case section == "remote" && sub != "" && name == "url":
			c.urls[sub] = append(c.urls[sub], val)
		case section == "remote" && sub != "" && name == "pushurl":
			c.pushURLs[sub] = append(c.pushURLs[sub], val)
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
		case section == "include" || section == "includeif":
			c.hasIncludes = true
		}
	}
	for d := range drivers {
		c.drivers = append(c.drivers, d)
	}
	sort.Strings(c.drivers)
	return c
}

func isTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "yes", "on", "1":
		return true
	}
	return false
}

// readConfig asks git for the repository configuration (system and global
// configuration are disabled, so this is .git/config, its includes and the
// worktree configuration).
func (r *Repo) readConfig(ctx context.Context, guarded bool) (*repoConfig, error) {
	c := gitCall{args: []string{"config", "-z", "--list", "--includes"}, okCodes: []int{1}}
	var res result
	var err error
	if guarded {
		res, err = r.git(ctx, c)
	} else {
		res, err = r.exec(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	return parseConfigList(res.stdout), nil
}

// keyRule says how a command-running key changed through an included file
// is neutralised: overridden with def, reset (multi-valued keys whose empty
// value clears the list), or refused (multi-valued keys that cannot be
// cleared from the command line).
type keyRule struct {
	def    string
	multi  bool
	refuse bool
}

// commandKeyRule returns the rule for keys that make git run a program or
// send data elsewhere.
func commandKeyRule(key string) (keyRule, bool) {
	section, rest, _ := strings.Cut(key, ".")
	name := rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		name = rest[i+1:]
	}
	switch section + "." + name {
	case "core.sshcommand":
		return keyRule{def: "ssh"}, true
	case "core.gitproxy", "core.askpass", "core.alternaterefscommand", "diff.external", "http.proxy",
		"remote.proxy", "http.extraheader":
		return keyRule{def: "", multi: name == "extraheader"}, true
	case "core.editor", "sequence.editor":
		return keyRule{def: ":"}, true
	case "remote.receivepack":
		return keyRule{def: "git-receive-pack"}, true
	case "remote.uploadpack":
		return keyRule{def: "git-upload-pack"}, true
	case "credential.helper":
		return keyRule{multi: true}, true
	case "url.insteadof", "url.pushinsteadof", "protocol.allow", "core.sshcommandvariant", "ssh.variant":
		return keyRule{refuse: true}, true
	}
	return keyRule{}, false
}

// includedOverrides compares the command-running keys of the current
// configuration with the sealed one (both with includes followed) and
// returns the overrides that put the sealed values back, or an error for a
// change that cannot be undone from the command line.
func includedOverrides(sealed, cur *repoConfig) ([][2]string, error) {
	keys := map[string]bool{}
	for k := range sealed.values {
		keys[k] = true
	}
	for k := range cur.values {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out [][2]string
	for _, k := range sorted {
		rule, ok := commandKeyRule(k)
		if !ok || slices.Equal(sealed.values[k], cur.values[k]) {
			continue
		}
		switch {
		case rule.refuse:
			return nil, fmt.Errorf("refusing to run git: %s was changed in a file the repository configuration "+
				"includes since the seal (the agent tampered with it); restore that file and resume", k)
		case rule.multi:
			out = append(out, [2]string{k, ""})
			for _, v := range sealed.values[k] {
				out = append(out, [2]string{k, v})
			}
		case len(sealed.values[k]) > 0:
			out = append(out, [2]string{k, sealed.values[k][len(sealed.values[k])-1]})
		default:
			out = append(out, [2]string{k, rule.def})
		}
	}
	return out, nil
}

// attributeDrivers adds to into every driver a .gitattributes text names
// (filter=, diff=, merge=), anywhere on a line: over-approximating is
// harmless, missing one is not.
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

// maxAttributeDrivers bounds the driver names taken from attribute files
// that are not defined in the configuration (those cannot run anything, they
// are neutralised only for good measure).
const maxAttributeDrivers = 256

// readAttributesFile reads a work-tree attributes file without following a
// symlink (git does not follow them either) and with a size bound.
func readAttributesFile(path string) []byte {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return b
}

// driverOverrides neutralises every driver: the ones the configuration
// defines and the ones the attribute files name.
func driverOverrides(defined []string, named map[string]bool) [][2]string {
	set := map[string]bool{}
	for _, d := range defined {
		set[d] = true
	}
	extra := make([]string, 0, len(named))
	for d := range named {
		if !set[d] {
			extra = append(extra, d)
		}
	}
	sort.Strings(extra)
	if len(extra) > maxAttributeDrivers {
		extra = extra[:maxAttributeDrivers]
	}
	names := append(append([]string(nil), defined...), extra...)
	sort.Strings(names)
	out := make([][2]string, 0, 7*len(names))
	for _, n := range names {
		out = append(out,
			[2]string{"filter." + n + ".clean", ""},
			[2]string{"filter." + n + ".smudge", ""},
			[2]string{"filter." + n + ".process", ""},
			[2]string{"filter." + n + ".required", "false"},
			[2]string{"diff." + n + ".textconv", ""},
			[2]string{"diff." + n + ".command", ""},
			[2]string{"merge." + n + ".driver", ""},
		)
	}
	return out
}

// attributesPaths are the attribute files git reads for the work tree that
// the harness can find without walking it.
func (r *Repo) attributesPaths(indexed []string) []string {
	paths := []string{filepath.Join(r.root, ".gitattributes"), filepath.Join(r.commonDir, "info", "attributes")}
	for _, p := range indexed {
		if p != ".gitattributes" {
			paths = append(paths, filepath.Join(r.root, filepath.FromSlash(p)))
		}
	}
	return paths
}
