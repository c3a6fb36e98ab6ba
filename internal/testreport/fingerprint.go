package testreport

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Fingerprint returns a stable id of what is failing, for stall detection:
// two checks with the same fingerprint failed the same way.
//
// When s names failing tests the id is a hash of the sorted names ("t:"
// prefix). Otherwise it is a hash of the output's failure lines ("o:" prefix)
// with what changes from run to run removed: durations, numbers, hex
// addresses, temporary paths, timestamps; the lines are de-duplicated and
// sorted, so parallel runners printing in another order give the same id.
// Output with no failure line is identified by its normalised last 20 lines.
// A passing run with no failure at all gives "t:none".
func Fingerprint(s Summary, output string) string {
	if len(s.Failing) > 0 {
		names := sortedUnique(s.Failing)
		return "t:" + shortHash(strings.Join(names, "\n"))
	}
	lines := prepare(output)
	if s.Known && s.Failed == 0 && len(errorLines(lines, 1)) == 0 {
		return "t:none"
	}
	var picked []string
	for _, l := range lines {
		if len(picked) >= 2000 {
			break
		}
		if errorLineRE.MatchString(l) {
			picked = append(picked, normaliseLine(l))
		}
	}
	if len(picked) == 0 {
		for i := len(lines) - 1; i >= 0 && len(picked) < 20; i-- {
			if strings.TrimSpace(lines[i]) != "" {
				picked = append(picked, normaliseLine(lines[i]))
			}
		}
	}
	slices.Sort(picked)
	picked = slices.Compact(picked)
	return "o:" + shortHash(strings.Join(picked, "\n"))
}

var normalisers = []struct {
	re   *lazyre.Regexp
	with string
}{
	// Temporary directories: /tmp/..., macOS /var/folders/..., Windows %TEMP%.
	{lazyre.New(`(?:/private)?/var/folders/\S*|/tmp/\S*|(?i:[A-Z]:\\Users\\[^\\]+\\AppData\\Local\\Temp)\\\S*`), "<tmp>"},
	{lazyre.New(`0x[0-9a-fA-F]+`), "0x?"},
	{lazyre.New(`\b[0-9a-f]{7,64}\b`), "<hex>"},
	{lazyre.New(`\d+(?:\.\d+)?\s*(?:ns|µs|us|ms|s|sec|secs|seconds|m|min|minutes|h)\b`), "<d>"},
	{lazyre.New(`\d+`), "N"},
	{lazyre.New(`\s+`), " "},
}

// normaliseLine removes what differs between two runs of the same failure.
func normaliseLine(l string) string {
	for _, n := range normalisers {
		l = n.re.ReplaceAllString(l, n.with)
	}
	return strings.TrimSpace(l)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
