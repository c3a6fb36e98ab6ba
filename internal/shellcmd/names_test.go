package shellcmd

import "testing"

func TestClassifyName(t *testing.T) {
	t.Parallel()
	tests := map[string]Kind{
		"test": Test, "test:unit": Test, "test:e2e": Test | E2E, "test:watch": Watch, "lint": Lint,
		"lint:fix": 0, "typecheck": Type, "type-check": Type, "build": Build, "coverage": Test | Coverage,
		"format": 0, "format:check": Format, "dev": Watch, "release": Deploy, "bench": Bench, "docs": 0,
		"setup": Install, "": 0, "precommit": Lint, "prepare": Install,
		"update:snapshots": 0, "test:update": 0, "coverage:combine": Report, "merge-reports": Report, "static": Lint,
		"test.setup": Install,
	}
	for name, want := range tests {
		if got := ClassifyName(name); got != want {
			t.Errorf("ClassifyName(%q) = %s, want %s", name, got, want)
		}
	}
	for _, n := range []string{"ci", "check", "verify", "all", "test:ci"} {
		if !IsCompositeName(n) {
			t.Errorf("%q is composite", n)
		}
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind  Kind
		names []string
		want  Role
	}{
		{Test, nil, RoleTest},
		{Test | Coverage, []string{"test"}, RoleTest},
		{Test, []string{"test:bun"}, RoleVariant},
		{Test, []string{"ci", "test:smoke"}, RoleVariant},
		{Test, []string{"test:docs"}, RoleVariant},
		{Test | E2E, nil, RoleVariant},
		{Install, nil, RoleSetup},
		{Toolchain, nil, RoleSetup},
		{Service, nil, RoleSetup},
		{Build | Type, nil, RoleBuild},
		{Type, nil, RoleLint},
		{Lint | Type, nil, RoleLint},
		{CIOnly | Report, nil, RoleReport},
		{Coverage, nil, RoleReport},
		{Bench, nil, RoleBenchmark},
		{Deploy | Build, nil, RoleDeploy},
		{CIOnly, nil, RoleUnknown},
		{Watch, nil, RoleUnknown},
	}
	for _, tc := range tests {
		if got := roleOf(tc.kind, tc.names); got != tc.want {
			t.Errorf("roleOf(%s, %q) = %s, want %s", tc.kind, tc.names, got, tc.want)
		}
	}
	if Kind(0).String() != "other" || (Test|Report).String() != "test+report" {
		t.Errorf("Kind.String: %q %q", Kind(0), Test|Report)
	}
}
