package shellcmd

// elixirTool classifies mix and rebar3.
func (c *cls) elixirTool(k call) (Info, bool) {
	switch k.tool {
	case "mix":
		return c.classifyMix(k.rest, k.dir, k.depth), true
	case "rebar3":
		return classifyNamesCmd("rebar3", k.rest), true
	}
	return Info{}, false
}

func (c *cls) classifyMix(rest []string, dir string, depth int) Info {
	p := positional(rest, set("--only", "--exclude", "--include", "--seed", "--max-failures", "--partitions"))
	if len(p) == 0 {
		return Info{Kind: Build, Sig: "mix"}
	}
	// An alias in mix.exs (test: ["ecto.create --quiet", "test"]) runs its
	// commands; inside it, the alias's own name is the task itself.
	c.followOnly("mix", dir, p[0], depth)
	switch p[0] {
	case "test":
		k := Test
		if hasFlag(rest, "--cover") {
			k |= Coverage
		}
		return Info{Kind: k, Sig: "mix test"}
	case "coveralls", "coveralls.json", "coveralls.github", "coveralls.html", "coveralls.lcov":
		return Info{Kind: Test | Coverage, Sig: "mix coveralls", Runner: "mix test"}
	case "format":
		if hasFlag(rest, "--check-formatted") {
			return Info{Kind: Format, Sig: "mix format"}
		}
		return Info{}
	case "credo", "sobelow", "hex.audit", "deps.unlock", "xref", "deps.audit", "doctor":
		if p[0] == "deps.unlock" && !hasFlag(rest, "--check-unused") {
			return Info{Kind: Install}
		}
		return Info{Kind: Lint, Sig: "mix " + p[0]}
	case "dialyzer":
		if hasFlag(rest, "--plt") {
			return Info{Kind: Install, Sig: "mix dialyzer --plt"}
		}
		return Info{Kind: Type, Sig: "mix dialyzer"}
	case "compile":
		return Info{Kind: Build | Type, Sig: "mix compile"}
	case "deps.get", "deps.compile", "local.hex", "local.rebar", "archive.install", "setup", "ecto.create", "ecto.setup", "ecto.migrate", "assets.setup":
		if len(p[0]) > 5 && p[0][:5] == "ecto." {
			return Info{Kind: Install | Service, Sig: "mix " + p[0]}
		}
		if p[0] == "local.hex" || p[0] == "local.rebar" || p[0] == "archive.install" {
			return Info{Kind: Toolchain}
		}
		return Info{Kind: Install, Sig: "mix " + p[0]}
	case "hex.publish", "hex.build", "docs":
		return Info{Kind: Deploy}
	}
	return withSig(ClassifyName(p[0])&^Watch, "mix "+p[0])
}
