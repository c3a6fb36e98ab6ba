package shellcmd

// dotnetTool classifies the dotnet CLI and the .NET test consoles.
func (c *cls) dotnetTool(k call) (Info, bool) {
	switch k.tool {
	case "dotnet":
		return classifyDotnet(k.rest), true
	case "msbuild", "xbuild":
		return Info{Kind: Build, Sig: "msbuild"}, true
	case "vstest.console", "xunit.console", "nunit3-console":
		return Info{Kind: Test, Sig: "dotnet test"}, true
	}
	return Info{}, false
}

func classifyDotnet(rest []string) Info {
	p := positional(rest, set("-c", "--configuration", "-f", "--framework", "-v", "--verbosity", "--logger", "-l", "--collect", "-r", "--runtime", "--filter", "-s", "--settings", "--results-directory", "-o", "--output", "-p", "--project", "--arch", "-a", "--blame-hang-timeout", "--blame-crash-dump-type", "--diag", "--source"))
	if len(p) == 0 {
		return Info{}
	}
	switch p[0] {
	case "test", "vstest":
		k := Test
		if hasFlag(rest, "--collect") || hasArgPrefix(rest, "/p:CollectCoverage", "-p:CollectCoverage") {
			k |= Coverage
		}
		return Info{Kind: k, Sig: "dotnet test"}
	case "build", "msbuild", "pack", "publish":
		if p[0] == "publish" && hasFlag(rest, "--no-build") {
			return Info{Kind: Deploy}
		}
		return Info{Kind: Build | Type, Sig: "dotnet build"}
	case "restore":
		return Info{Kind: Install, Sig: "dotnet restore"}
	case "format":
		if hasFlag(rest, "--verify-no-changes") {
			return Info{Kind: Format | Lint, Sig: "dotnet format"}
		}
		return Info{}
	case "tool":
		if len(p) > 1 && p[1] == "restore" {
			return Info{Kind: Install, Sig: "dotnet tool restore"}
		}
		if len(p) > 1 && p[1] == "run" && len(p) > 2 {
			return withSig(ClassifyName(p[2]), "dotnet tool run "+p[2])
		}
		return Info{Kind: Toolchain}
	case "nuget":
		return Info{Kind: Deploy}
	case "workload":
		return Info{Kind: Toolchain}
	case "--info", "--version", "--list-sdks":
		return Info{Kind: CIOnly}
	case "run":
		return Info{}
	}
	return Info{}
}
