package shellcmd

import "testing"

func TestCFamilyClassify(t *testing.T) {
	t.Parallel()
	checkClassify(t, nil, []classifyCase{
		{"cmake -B build -DCMAKE_BUILD_TYPE=Release", Install, "cmake configure", ""},
		{"cmake --build build", Build, "cmake --build", ""},
		{"cmake --build build --target test", Test, "cmake --target test", "ctest"},
		{"ctest --test-dir build", Test, "ctest", "ctest"},
		{"meson test -C build", Test, "meson test", "meson test"},
		{"ninja -C build", Build, "ninja", ""},
		{"bazel test //...", Test, "bazel test", "bazel test"},
		{"clang-tidy src/a.c", Lint, "clang-tidy", ""},
	})
}

func TestCFamilyAnalyze(t *testing.T) {
	t.Parallel()
	checkAnalyze(t, []analyzeCase{
		{
			cmd:   "cmake -S . -B build && cmake --build build && ctest --test-dir build --output-on-failure -R unit",
			files: map[string]string{"CMakeLists.txt": "project(x)\n"},
			steps: []string{
				"cmake -S . -B build (setup)",
				"cmake --build build (build)",
				"ctest --test-dir build --output-on-failure -R unit (test ctest)",
			},
			deps: Depends{Files: []string{"CMakeLists.txt"}, Runner: "ctest"},
		},
	})
}
