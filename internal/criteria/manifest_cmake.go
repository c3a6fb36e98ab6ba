package criteria

import "github.com/aiwg/agent-loop/internal/lazyre"

var ctestRe = lazyre.New(`(?i)\b(enable_testing\s*\(|include\s*\(\s*CTest|add_test\s*\(|gtest_discover_tests|catch_discover_tests|doctest_discover_tests)`)

func (m *manifests) readCMake(d *dirManifests) {
	if data, ok := m.r.read(join(d.dir, "CMakeLists.txt")); ok {
		d.eco("cmake")
		src := join(d.dir, "CMakeLists.txt")
		configure := "cmake -S . -B build"
		build := "cmake --build build"
		d.add(candidate{command: build, kind: kBuild, sig: "cmake --build", source: src, setup: configure, rank: 3,
			evidence: []Finding{finding(LayerManifest, src, "CMake project: configure with `"+configure+"`, build with `"+build+"`")}})
		if ctestRe.Match(data) {
			d.add(candidate{command: configure + " && " + build + " && ctest --test-dir build", kind: kTest, sig: "ctest", source: src, rank: 3,
				evidence: []Finding{
					finding(LayerManifest, src, "CMake registers tests with CTest: configure, build, then `ctest --test-dir build`; ctest runs what was last built, so every check rebuilds first"),
				}})
		} else {
			d.trap(src, "CMakeLists.txt registers no CTest test (no enable_testing/add_test)")
		}
		return
	}
	if data, ok := m.r.read(join(d.dir, "meson.build")); ok {
		d.eco("meson")
		src := join(d.dir, "meson.build")
		d.add(candidate{command: "meson compile -C build", kind: kBuild, sig: "meson compile", source: src, setup: "meson setup build", rank: 3})
		if mesonTestRe.Match(data) {
			d.add(candidate{command: "meson test -C build", kind: kTest, sig: "meson test", source: src, setup: "meson setup build", rank: 3,
				evidence: []Finding{finding(LayerManifest, src, "Meson project with tests: `meson setup build` once, then `meson test -C build` (it rebuilds first)")}})
		}
		return
	}
	if m.r.exists(join(d.dir, "configure.ac")) {
		d.eco("autotools")
		setup := "./configure"
		if !m.r.exists(join(d.dir, "configure")) {
			setup = "autoreconf -fi && ./configure"
		}
		d.add(candidate{command: "make check", kind: kTest, sig: "make check", source: join(d.dir, "configure.ac"), setup: setup, rank: 3,
			evidence: []Finding{finding(LayerManifest, join(d.dir, "configure.ac"), "Autotools project: `make check` builds and runs the tests")}})
	}
}

// mesonTestRe finds a test() call in a meson.build.
var mesonTestRe = lazyre.New(`\btest\s*\(`)
