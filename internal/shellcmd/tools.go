package shellcmd

import "strings"

// otherTool classifies the tools shared by every ecosystem: linters and
// formatters, containers and services, deployment, CI plumbing and the
// toolchain installers, and the build tools of smaller ecosystems.
func (c *cls) otherTool(k call) (Info, bool) {
	rest := k.rest
	switch k.tool {
	case "golangci-lint", "staticcheck", "revive", "golint", "errcheck", "ineffassign", "shellcheck", "hadolint", "actionlint", "markdownlint", "markdownlint-cli2", "yamllint", "stylelint", "htmlhint", "swiftlint", "ktlint", "detekt", "luacheck", "selene", "tflint", "buf", "eslint", "oxlint", "xo", "standard", "tslint", "flake8", "pylint", "pycodestyle", "pydocstyle", "bandit", "vulture", "rubocop", "standardrb", "phpcs", "phpmd", "credo", "codespell", "typos", "commitlint", "cspell", "semgrep", "brakeman", "erb_lint", "erblint", "haml-lint", "slim-lint", "reek", "bundler-audit":
		return classifyLinter(k.tool, rest), true
	case "clang-format", "rustfmt", "black", "isort", "yapf", "autopep8", "ktfmt", "shfmt", "stylua", "dprint", "taplo", "buildifier":
		return classifyFormatter(k.tool, rest), true
	case "flow":
		return Info{Kind: Type, Sig: k.tool}, true
	case "swift", "stack", "cabal", "dune", "opam", "elm-test", "spago", "lake", "nimble", "crystal", "shards", "julia", "raco", "dart", "flutter", "melos", "gleam", "v", "xcodebuild":
		return classifyNamesCmd(k.tool, rest), true
	case "zig":
		p := positional(rest, nil)
		if len(p) > 1 && p[0] == "build" && p[1] == "test" || len(p) > 0 && p[0] == "test" {
			return Info{Kind: Test, Sig: "zig build test"}, true
		}
		if len(p) > 0 && p[0] == "build" {
			return Info{Kind: Build, Sig: "zig build"}, true
		}
		return Info{}, true
	case "codecov", "coveralls", "goveralls", "gcovr", "lcov", "genhtml", "gcov", "llvm-cov", "grcov", "codacy-coverage-reporter", "coveralls-lcov", "covector", "cc-test-reporter", "go-junit-report", "junit-report", "tparse", "gotestfmt", "reviewdog", "danger", "sonar-scanner", "trunk":
		return Info{Kind: CIOnly | Report}, true
	case "echo", "printf", "cat", "ls", "pwd", "env", "printenv", "set", "true", ":", "tee", "sleep", "rm", "cp", "mv", "chmod", "chown", "tar", "unzip", "zip", "gzip", "sha256sum", "shasum", "md5sum", "which", "type", "whoami", "uname", "date", "df", "free", "nproc", "ulimit", "git", "gh", "curl", "wget", "jq", "yq", "sed", "awk", "grep", "find", "xargs", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "touch", "ln", "export", "unset", "shopt", "trap", "exit", "return", "test", "[", "[[", "read", "eval", "ccache", "sccache", "du", "mkdir", "cd", "pushd", "popd", "hash", "diff", "cmp", "base64", "openssl", "ssh", "ssh-keyscan", "scp", "rsync", "install", "dirname", "basename", "realpath", "readlink", "file", "id", "hostname", "locale", "systemctl", "service", "caffeinate", "python-version", "node-version", "lscpu", "vmstat", "iconv", "pwsh", "powershell", "cmd", "command":
		switch {
		case k.tool == "git" && hasAny(rest, "diff") && hasFlag(rest, "--exit-code", "--quiet"):
			return Info{Kind: CIOnly, Note: "checks that the job left no changes"}, true
		case k.tool == "git" && hasAny(rest, "submodule"):
			return Info{Kind: Install, Sig: "git submodule"}, true
		case k.tool == "mkdir":
			return Info{Kind: Install | CIOnly, Sig: "mkdir"}, true
		case k.tool == "chmod":
			return Info{Kind: CIOnly, Sig: "chmod"}, true
		}
		return Info{Kind: CIOnly}, true
	case "apt-get", "apt", "aptitude", "brew", "choco", "yum", "dnf", "apk", "snap", "pacman", "zypper", "port", "winget", "scoop", "rustup", "nvm", "fnm", "volta", "sdk", "asdf", "mise", "rtx", "pyenv", "rbenv", "corepack", "sdkmanager", "emerge", "nix-env", "add-apt-repository", "update-alternatives", "dpkg", "rpm", "ldconfig", "cpanm", "cpan", "luarocks", "opam-install", "tlmgr", "ghcup", "juliaup", "elan", "xcode-select", "setup-envtest", "cosign":
		return Info{Kind: Toolchain}, true
	case "R", "Rscript":
		if hasAny(rest, "check") || strings.Contains(strings.Join(rest, " "), "test") {
			return Info{Kind: Test, Sig: "R check"}, true
		}
		return Info{}, true
	case "docker", "podman", "docker-compose", "kind", "minikube", "k3d", "helm", "kubectl", "skaffold", "tilt":
		return classifyDocker(k.tool, rest), true
	case "pg_isready", "mysqladmin", "redis-cli", "mongosh", "mongo", "psql", "mysql", "wait-for-it", "wait-for-it.sh", "dockerize", "createdb", "sqlcmd":
		return Info{Kind: Service, Sig: k.tool}, true
	case "firebase", "vercel", "netlify", "wrangler", "fly", "flyctl", "heroku", "aws", "gcloud", "az", "terraform", "pulumi", "cdk", "serverless", "sls", "hugo", "typedoc", "jsdoc", "mdbook", "doxygen":
		if k.tool == "terraform" && hasAny(rest, "validate", "fmt") {
			return Info{Kind: Lint, Sig: "terraform " + positional(rest, nil)[0]}, true
		}
		if k.tool == "mdbook" && hasAny(rest, "test") {
			return Info{Kind: Test, Sig: "mdbook test"}, true
		}
		return Info{Kind: Deploy}, true
	}
	return Info{}, false
}

func classifyLinter(tool string, rest []string) Info {
	if tool == "buf" && !hasAny(rest, "lint", "breaking") {
		return Info{Kind: Build, Sig: "buf"}
	}
	if hasFlag(rest, "--fix") {
		return Info{}
	}
	return Info{Kind: Lint, Sig: tool}
}

func classifyFormatter(tool string, rest []string) Info {
	if hasFlag(rest, "--check", "-check", "--dry-run", "-d", "--diff", "-l", "--verify", "--list-different", "-n") || hasAny(rest, "check", "--check") {
		return Info{Kind: Format, Sig: tool}
	}
	return Info{}
}

func classifyDocker(tool string, rest []string) Info {
	p := positional(rest, set("-f", "--file", "-p", "--project-name", "--profile", "--env-file", "-t", "--tag", "--name", "-e", "-v", "-w", "--network", "--platform"))
	if tool == "docker" && len(p) > 0 && p[0] == "compose" {
		p = p[1:]
		tool = "docker-compose"
	}
	if len(p) == 0 {
		return Info{Kind: CIOnly}
	}
	switch p[0] {
	case "up", "start", "create":
		return Info{Kind: Service, Sig: "docker compose up"}
	case "run", "exec":
		if tool == "docker-compose" && len(p) > 2 {
			// What runs inside the container is not followed further.
			return Info{Kind: Service | (Classifier{}.Classify(p[2:], ".").Kind & (GateKinds | E2E)), Sig: "docker compose run"}
		}
		if hasFlag(rest, "-d", "--detach") {
			return Info{Kind: Service, Sig: "docker run"}
		}
		return Info{Kind: CIOnly}
	case "push", "login", "tag", "buildx":
		if p[0] == "buildx" && len(p) > 1 && p[1] == "build" && !hasFlag(rest, "--push") {
			return Info{Kind: CIOnly}
		}
		return Info{Kind: Deploy}
	}
	return Info{Kind: CIOnly}
}
