package cifailure

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func testContexts() contexts {
	return contexts{
		"matrix": map[string]any{"os": "ubuntu-latest", "node-version": 20.0, "python": 3.1, "flag": true,
			"config": map[string]any{"name": "full", "cc": "gcc"}},
		"env":    map[string]any{"MODE": "ci", "EMPTY": ""},
		"github": map[string]any{"event_name": "pull_request", "ref": "refs/heads/main", "token": &exprNeed{Need: "github.token", Why: "never given"}},
		"runner": map[string]any{"os": "Linux"},
		"inputs": map[string]any{"race": true, "flags": "-v"},
	}
}

func TestExpressions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want string
	}{
		{"matrix.os", "ubuntu-latest"},
		{"matrix.node-version", "20"},
		{"matrix['node-version']", "20"},
		{"MATRIX.OS", "ubuntu-latest"},
		{"matrix.python", "3.1"},
		{"matrix.config.name", "full"},
		{"matrix.missing", ""},
		{"matrix.flag && 'yes' || 'no'", "yes"},
		{"!matrix.flag && 'yes' || 'no'", "no"},
		{"env.EMPTY || 'default'", "default"},
		{"github.event_name == 'PULL_REQUEST'", "true"},
		{"runner.os == 'Linux' && matrix.node-version >= 18", "true"},
		{"matrix.node-version == '20'", "true"},
		{"matrix.node-version < '3'", "false"},
		{"null == 0", "true"},
		{"'' == false", "true"},
		{"'abc' == 'x'", "false"},
		{"'x' == NaN", "false"},
		{"contains('Hello World', 'world')", "true"},
		{"contains(fromJSON('[\"a\",\"b\"]'), 'B')", "true"},
		{"startsWith(github.ref, 'refs/heads/')", "true"},
		{"endsWith(github.ref, 'MAIN')", "true"},
		{"format('{0}-{1} {{x}}', matrix.os, 2)", "ubuntu-latest-2 {x}"},
		{"join(fromJSON('[1,2,3]'), '+')", "1+2+3"},
		{"toJSON(matrix.config)", "{\n  \"cc\": \"gcc\",\n  \"name\": \"full\"\n}"},
		{"fromJSON('{\"a\":{\"b\":7}}').a.b", "7"},
		{"0x10 + 0", ""}, // '+' is not an operator: a syntax error, checked below
		{"success() && !failure()", "true"},
		{"1.5e1", "15"},
		{"'it''s'", "it's"},
		{"inputs.race && '-race' || ''", "-race"},
		{"false || github.token", "need:github.token"},
		{"true || github.token", "true"},
		{"false && secrets.X", "false"},
		{"secrets.NPM_TOKEN", "need:secrets.NPM_TOKEN"},
		{"steps.build.outputs.path", "need:steps.build.outputs.path"},
		{"needs.setup.outputs.matrix", "need:needs.setup.outputs.matrix"},
		{"vars.REGION", "need:vars.REGION"},
		{"hashFiles('**/package-lock.json')", "need:hashFiles()"},
		{"format('{0}', secrets.A)", "need:secrets.A"},
	}
	cx := testContexts()
	for _, tt := range tests {
		v, err := cx.evalExpr(tt.expr)
		got := toString(v)
		if err != nil {
			if n, ok := err.(*exprNeed); ok {
				got = "need:" + n.Need
			} else {
				got = ""
				if tt.want != "" {
					t.Errorf("%s: %v", tt.expr, err)
				}
				continue
			}
		} else if tt.want == "" && strings.Contains(tt.expr, "+") {
			t.Errorf("%s: want a syntax error, got %q", tt.expr, got)
			continue
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

func TestTemplates(t *testing.T) {
	t.Parallel()
	cx := testContexts()
	got, err := cx.expand("npm test -- --os=${{ matrix.os }} ${{ inputs.flags }} ${{ '}}' }}")
	if err != nil || got != "npm test -- --os=ubuntu-latest -v }}" {
		t.Errorf("expand: %q, %v", got, err)
	}
	if _, err := cx.expand("echo ${{ secrets.TOKEN }}"); err == nil || !strings.Contains(err.Error(), "${{ secrets.TOKEN }}") {
		t.Errorf("a runner-only reference: %v", err)
	}
	if _, err := cx.expand("echo ${{ matrix.os "); err == nil {
		t.Error("an unclosed ${{ was accepted")
	}
	v, err := cx.value("${{ matrix.flag }}")
	if err != nil || v != true {
		t.Errorf("value keeps the type: %#v, %v", v, err)
	}
	for cond, want := range map[string]bool{
		"":                                  true,
		"matrix.os == 'ubuntu-latest'":      true,
		"${{ runner.os != 'Linux' }}":       false,
		"github.event_name == 'push'":       false,
		"always()":                          true,
		"success() && matrix.flag == false": false,
	} {
		if got, err := cx.condition(cond); err != nil || got != want {
			t.Errorf("condition %q = %v, %v; want %v", cond, got, err, want)
		}
	}
	if _, err := cx.condition("steps.cache.outputs.cache-hit != 'true'"); err == nil {
		t.Error("a condition on a step output must be unknown")
	}
}

func TestExpandMatrix(t *testing.T) {
	t.Parallel()
	parse := func(src string) *yaml.Node {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			t.Fatal(err)
		}
		return n.Content[0]
	}
	tests := []struct {
		name  string
		src   string
		names []string
	}{
		{"cross product in order", "os: [ubuntu-latest, macos-latest]\nnode: [18, 20]",
			[]string{"ubuntu-latest, 18", "ubuntu-latest, 20", "macos-latest, 18", "macos-latest, 20"}},
		{"exclude a combination", "os: [a, b]\nv: [1, 2]\nexclude:\n  - os: b\n    v: 1",
			[]string{"a, 1", "a, 2", "b, 2"}},
		{"exclude on one key", "os: [a, b]\nv: [1, 2]\nexclude:\n  - os: a",
			[]string{"b, 1", "b, 2"}},
		{"include extends matching combinations and appends the rest",
			"os: [a, b]\nv: [1]\ninclude:\n  - os: a\n    extra: x\n  - os: c\n    v: 9\n  - color: green",
			[]string{"a, 1", "b, 1", "c, 9"}},
		{"include only", "include:\n  - name: one\n    cc: gcc\n  - name: two\n    cc: clang",
			[]string{"one, gcc", "two, clang"}},
		{"numbers as GitHub reads them", "python: [3.10, '3.10', 3.9]", []string{"3.1", "3.10", "3.9"}},
		{"objects are shown by their values", "config:\n  - {name: full, cc: gcc}\n  - {name: min, cc: tcc}",
			[]string{"gcc, full", "tcc, min"}},
		{"a matrix given by an expression", "${{ fromJSON('{\"os\":[\"x\",\"y\"]}') }}", []string{"x", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			es, err := expandMatrix(parse(tt.src), testContexts())
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range es {
				names = append(names, strings.Join(e.nameParts, ", "))
			}
			if diff := cmp.Diff(tt.names, names); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
	es, _ := expandMatrix(parse("os: [a, b]\nv: [1]\ninclude:\n  - os: a\n    extra: x"), testContexts())
	if got := es[0].matrixStrings(); got["extra"] != "x" || es[1].matrixStrings()["extra"] != "" {
		t.Errorf("include added a key to the wrong entries: %v %v", got, es[1].matrixStrings())
	}
	if _, err := expandMatrix(parse("${{ fromJSON(needs.plan.outputs.matrix) }}"), testContexts()); err == nil {
		t.Error("a matrix from another job's output must not expand")
	}
}
