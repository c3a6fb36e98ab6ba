package criteria

import (
	"strings"

	"github.com/aiwg/agent-loop/internal/shellcmd"
)

func (m *manifests) readDotnet(d *dirManifests) {
	var slns, projs []string
	for _, n := range m.r.names(d.dir) {
		switch {
		case strings.HasSuffix(n, ".sln") || strings.HasSuffix(n, ".slnx"):
			slns = append(slns, n)
		case strings.HasSuffix(n, ".csproj") || strings.HasSuffix(n, ".fsproj") || strings.HasSuffix(n, ".vbproj"):
			projs = append(projs, n)
		}
	}
	if len(slns) == 0 && len(projs) == 0 {
		return
	}
	d.eco("dotnet")
	target := ""
	source := join(d.dir, firstOf(len(slns) > 0, strings.Join(slns, ", "), strings.Join(projs, ", ")))
	switch {
	case len(slns) == 1 && len(projs) == 0 || len(slns) == 0 && len(projs) == 1:
		// dotnet finds the one solution or project by itself.
	case len(slns) > 0:
		target = " " + shellcmd.Quote(slns[0])
		d.fact(join(d.dir, slns[0]), "several solutions or projects here: the first solution is named explicitly")
	default:
		target = " " + shellcmd.Quote(projs[0])
	}
	d.setup = "dotnet restore" + target
	d.fact(source, ".NET build: restore with `dotnet restore`")
	d.add(candidate{command: "dotnet test" + target, kind: kTest, sig: "dotnet test", source: source, setup: d.setup, rank: 3,
		evidence: []Finding{finding(LayerManifest, source, "`dotnet test` builds and runs the test projects")}})
	d.add(candidate{command: "dotnet build" + target, kind: kBuild | kType, sig: "dotnet build", source: source, setup: d.setup, rank: 3})
	d.add(candidate{command: "dotnet format" + target + " --verify-no-changes", kind: kLint | kFormat, sig: "dotnet format", source: source, setup: d.setup, rank: 4})
}
