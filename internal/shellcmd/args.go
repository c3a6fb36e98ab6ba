package shellcmd

import (
	"path"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

var assignmentRe = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*=`)

// IsAssignment reports a shell variable assignment word (NAME=value).
func IsAssignment(s string) bool { return assignmentRe.MatchString(s) }

// positional returns the arguments that are not flags, after skipping flags
// that take values (listed in valued).
func positional(args []string, valued map[string]bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") {
			if valued[a] && !strings.Contains(a, "=") {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// HasFlag reports whether args (before a "--") hold one of the flags, alone
// or as flag=value.
func HasFlag(args []string, flags ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, f := range flags {
			if a == f || strings.HasPrefix(a, f+"=") {
				return true
			}
		}
	}
	return false
}

func hasFlag(args []string, flags ...string) bool { return HasFlag(args, flags...) }

func hasArgPrefix(args []string, prefixes ...string) bool {
	for _, a := range args {
		for _, p := range prefixes {
			if strings.HasPrefix(a, p) {
				return true
			}
		}
	}
	return false
}

func hasAny(args []string, words ...string) bool {
	for _, a := range args {
		for _, w := range words {
			if a == w {
				return true
			}
		}
	}
	return false
}

// dropRunnerFlags skips the flags of a runner (npx -y, uv run --frozen) and
// returns the command it runs.
func dropRunnerFlags(args []string, valued map[string]bool) []string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args[i+1:]
		}
		if strings.HasPrefix(a, "-") {
			if valued[a] {
				i++
			}
			continue
		}
		return args[i:]
	}
	return nil
}

func indexOf(args []string, w string) int {
	for i, a := range args {
		if a == w {
			return i
		}
	}
	return len(args) - 1
}

// ToolName normalises a program name: ./gradlew is gradle, ./mvnw is mvn,
// vendor/bin/phpunit is phpunit, python3.12 is python.
func ToolName(a string) string {
	b := path.Base(a)
	switch {
	case b == "gradlew" || b == "gradlew.bat" || b == "gradle":
		return "gradle"
	case b == "mvnw" || b == "mvnw.cmd" || b == "mvn":
		return "mvn"
	case b == "py.test":
		return "pytest"
	case strings.HasPrefix(b, "python") || b == "py":
		return "python"
	case b == "pip3" || strings.HasPrefix(b, "pip3."):
		return "pip"
	case b == "docker-compose":
		return "docker-compose"
	case b == "bunx":
		return "bunx"
	}
	return b
}
