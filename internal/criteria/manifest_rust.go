package criteria

import "strings"

func (m *manifests) readRust(d *dirManifests) {
	file := join(d.dir, "Cargo.toml")
	data, ok := m.r.read(file)
	if !ok {
		return
	}
	d.eco("rust")
	var doc map[string]any
	if err := parseTOML(data, &doc); err != nil {
		m.r.unreadable(LayerManifest, file, err)
		return
	}
	ws, isWorkspace := tomlTable(doc, "workspace")
	_, isPackage := tomlTable(doc, "package")
	flag := ""
	switch {
	case isWorkspace:
		members, _ := ws["members"].([]any)
		var names []string
		for _, mem := range members {
			if s, ok := mem.(string); ok {
				names = append(names, s)
			}
		}
		flag = " --workspace"
		list := strings.Join(limitList(names, 6), ", ")
		if isPackage {
			d.fact(file, "Cargo workspace with a root package; members: "+list)
		} else {
			d.fact(file, "virtual Cargo workspace (members: "+list+"): --workspace tests every member")
		}
	case isPackage:
		d.fact(file, "Cargo package")
	default:
		m.r.unreadable(LayerManifest, file, errString("neither [package] nor [workspace]"))
		return
	}
	add := func(cmd string, k kind, sig string, rank int, why string) {
		c := candidate{command: cmd, kind: k, sig: sig, source: file, rank: rank}
		if why != "" {
			c.evidence = []Finding{finding(LayerManifest, file, why)}
		}
		d.add(c)
	}
	add("cargo test"+flag, kTest, "cargo test", 3, "`cargo test"+flag+"` builds and runs the unit, integration and doc tests")
	add("cargo clippy"+flag+" --all-targets -- -D warnings", kLint, "cargo clippy", 3, "clippy with -D warnings fails on any lint (plain `cargo clippy` exits 0 on warnings)")
	add("cargo fmt --all --check", kFormat, "cargo fmt", 4, "")
	add("cargo check"+flag+" --all-targets", kType, "cargo check", 3, "`cargo check` type-checks without producing binaries")
	add("cargo build"+flag, kBuild, "cargo build", 3, "")
}

type errString string

func (e errString) Error() string { return string(e) }
