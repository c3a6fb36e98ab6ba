package shellcmd

import (
	"path"
	"strings"
)

// goTool classifies the go command and the Go tools.
func (c *cls) goTool(k call) (Info, bool) {
	switch k.tool {
	case "go":
		return classifyGo(k.rest), true
	case "gotestsum":
		kind := Test
		if hasArgPrefix(k.rest, "-cover", "-coverprofile") {
			kind |= Coverage
		}
		return Info{Kind: kind, Sig: "go test"}, true
	case "gofmt", "goimports", "gofumpt":
		if hasFlag(k.rest, "-w") {
			return Info{}, true
		}
		return Info{Kind: Format, Sig: k.tool}, true
	case "goreleaser":
		return Info{Kind: Deploy}, true
	}
	return Info{}, false
}

func classifyGo(rest []string) Info {
	p := positional(rest, set("-run", "-tags", "-timeout", "-p", "-count", "-coverprofile", "-covermode", "-coverpkg", "-o", "-bench", "-parallel", "-exec", "-ldflags", "-gcflags", "-mod", "-C", "-skip", "-shuffle"))
	if len(p) == 0 {
		return Info{}
	}
	switch p[0] {
	case "test":
		if hasFlag(rest, "-c") {
			// -c compiles the test binary and runs nothing.
			return Info{Kind: Build, Sig: "go test -c"}
		}
		k := Test
		if hasArgPrefix(rest, "-cover", "-coverprofile", "-covermode", "-coverpkg") {
			k |= Coverage
		}
		if hasArgPrefix(rest, "-bench") && hasFlag(rest, "-run") {
			k = Bench
		}
		return Info{Kind: k, Sig: "go test"}
	case "vet":
		return Info{Kind: Lint | Type, Sig: "go vet"}
	case "build":
		return Info{Kind: Build | Type, Sig: "go build"}
	case "install":
		for _, a := range p[1:] {
			if strings.Contains(a, "@") {
				return Info{Kind: Toolchain}
			}
		}
		return Info{Kind: Build, Sig: "go install"}
	case "mod":
		if len(p) > 1 && p[1] == "verify" {
			return Info{Kind: CIOnly}
		}
		return Info{Kind: Install, Sig: "go mod " + strings.Join(p[1:2], "")}
	case "get", "generate", "work":
		return Info{Kind: Install, Sig: "go " + p[0]}
	case "fmt":
		return Info{}
	case "run":
		if len(p) > 1 {
			name := p[1]
			if i := strings.LastIndex(name, "@"); i > 0 {
				name = name[:i]
			}
			if k := ClassifyName(path.Base(name)); k != 0 {
				return Info{Kind: k, Sig: "go run " + path.Base(name)}
			}
			if strings.Contains(name, "golangci-lint") || strings.Contains(name, "staticcheck") {
				return Info{Kind: Lint, Sig: "golangci-lint"}
			}
		}
		return Info{}
	case "version", "env", "list", "clean", "tool", "doc":
		return Info{Kind: CIOnly}
	}
	return Info{}
}
