package shellcmd

import "strings"

// rustTool classifies cargo and the Rust tools.
func (c *cls) rustTool(k call) (Info, bool) {
	switch k.tool {
	case "cargo":
		return classifyCargo(k.rest), true
	}
	return Info{}, false
}

func classifyCargo(rest []string) Info {
	args := rest
	if len(args) > 0 && strings.HasPrefix(args[0], "+") {
		args = args[1:] // toolchain override: cargo +nightly test
	}
	p := positional(args, set("-p", "--package", "--features", "-F", "--target", "--manifest-path", "-j", "--jobs", "--bin", "--test", "--example", "--exclude", "--profile", "--color", "--config", "-Z", "--target-dir"))
	if len(p) == 0 {
		return Info{}
	}
	switch p[0] {
	case "test", "t":
		if hasFlag(args, "--no-run") {
			return Info{Kind: Build, Sig: "cargo build"}
		}
		return Info{Kind: Test, Sig: "cargo test"}
	case "nextest":
		return Info{Kind: Test, Sig: "cargo nextest"}
	case "clippy":
		if hasFlag(args, "--fix") {
			return Info{}
		}
		return Info{Kind: Lint, Sig: "cargo clippy"}
	case "fmt":
		if hasAny(args, "--check") {
			return Info{Kind: Format, Sig: "cargo fmt"}
		}
		return Info{}
	case "build", "b":
		return Info{Kind: Build | Type, Sig: "cargo build"}
	case "check", "c":
		return Info{Kind: Type, Sig: "cargo check"}
	case "tarpaulin", "llvm-cov":
		return Info{Kind: Test | Coverage, Sig: "cargo " + p[0]}
	case "hack":
		if len(p) > 1 {
			inner := classifyCargo(p[1:])
			return Info{Kind: inner.Kind, Sig: "cargo hack " + strings.TrimPrefix(inner.Sig, "cargo ")}
		}
		return Info{}
	case "miri":
		return Info{Kind: Test, Sig: "cargo miri"}
	case "bench":
		return Info{Kind: Bench, Sig: "cargo bench"}
	case "fetch", "generate-lockfile", "update":
		return Info{Kind: Install, Sig: "cargo fetch"}
	case "install", "binstall":
		return Info{Kind: Toolchain}
	case "publish", "release", "dist":
		return Info{Kind: Deploy}
	case "deny", "audit", "udeps", "machete", "semver-checks", "msrv", "vet", "outdated", "sort", "spellcheck", "shear":
		return Info{Kind: Lint, Sig: "cargo " + p[0]}
	case "doc":
		return Info{Kind: Build, Sig: "cargo doc"}
	case "xtask", "make", "run":
		if len(p) > 1 {
			if k := ClassifyName(p[1]); k != 0 {
				return Info{Kind: k, Sig: "cargo " + p[0] + " " + p[1]}
			}
		}
		return Info{}
	}
	return Info{}
}
