package shellcmd

// cTool classifies CMake, CTest, Meson, Ninja, Bazel and the autotools.
func (c *cls) cTool(k call) (Info, bool) {
	rest := k.rest
	switch k.tool {
	case "cmake":
		return classifyCMake(rest), true
	case "ctest":
		return Info{Kind: Test, Sig: "ctest"}, true
	case "ninja", "samu":
		p := positional(rest, set("-C", "-j", "-f", "-l", "-k"))
		if hasAny(p, "test", "check") {
			return Info{Kind: Test, Sig: "ninja test"}, true
		}
		return Info{Kind: Build, Sig: "ninja"}, true
	case "meson":
		p := positional(rest, nil)
		if len(p) > 0 {
			switch p[0] {
			case "test":
				return Info{Kind: Test, Sig: "meson test"}, true
			case "compile":
				return Info{Kind: Build, Sig: "meson compile"}, true
			}
			return Info{Kind: Install, Sig: "meson setup"}, true
		}
		return Info{}, true
	case "configure", "autogen.sh", "autoreconf", "bootstrap", "bootstrap.sh", "vcpkg", "conan", "autoconf", "aclocal", "automake", "libtoolize":
		return Info{Kind: Install, Sig: k.tool}, true
	case "bazel", "bazelisk", "buck2", "pants", "please":
		p := positional(rest, nil)
		if len(p) > 0 {
			switch p[0] {
			case "test":
				return Info{Kind: Test, Sig: k.tool + " test"}, true
			case "build":
				return Info{Kind: Build, Sig: k.tool + " build"}, true
			case "lint":
				return Info{Kind: Lint, Sig: k.tool + " lint"}, true
			}
		}
		return Info{}, true
	case "clang-tidy", "cppcheck", "cpplint":
		return classifyLinter(k.tool, rest), true
	}
	return Info{}, false
}

func classifyCMake(rest []string) Info {
	switch {
	case hasFlag(rest, "--build"):
		if hasAny(rest, "--target") {
			for i := 0; i < len(rest)-1; i++ {
				if (rest[i] == "--target" || rest[i] == "-t") && (rest[i+1] == "test" || rest[i+1] == "check") {
					return Info{Kind: Test, Sig: "cmake --target test", Runner: "ctest"}
				}
			}
		}
		return Info{Kind: Build, Sig: "cmake --build"}
	case hasFlag(rest, "--install"):
		return Info{Kind: Install}
	case hasFlag(rest, "-E") && hasAny(rest, "make_directory"):
		return Info{Kind: Install | CIOnly, Sig: "mkdir"}
	case hasFlag(rest, "-E", "-P", "--version", "--help"):
		return Info{Kind: CIOnly}
	case hasFlag(rest, "--workflow"):
		return Info{Kind: Test | Build, Sig: "cmake --workflow", Runner: "ctest"}
	}
	return Info{Kind: Install, Sig: "cmake configure"}
}
