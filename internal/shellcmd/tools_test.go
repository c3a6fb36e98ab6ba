package shellcmd

import "testing"

func TestToolsClassify(t *testing.T) {
	t.Parallel()
	checkClassify(t, nil, []classifyCase{
		{"golangci-lint run", Lint, "golangci-lint", ""},
		{"eslint --fix .", 0, "", ""},
		{"black --check .", Format, "black", ""},
		{"prettier --check .", Format, "prettier", ""},
		{"sudo apt-get install -y libpq-dev", Toolchain, "", ""},
		{"echo hello", CIOnly, "", ""},
		{"docker compose up -d", Service, "docker compose up", ""},
		{"docker compose run --rm app pytest", Service | Test, "docker compose run", ""},
		{"codecov -f coverage.xml", CIOnly | Report, "", ""},
		{"git diff --exit-code", CIOnly, "", ""},
		{"pg_isready -h localhost", Service, "pg_isready", ""},
		{"terraform validate", Lint, "terraform validate", ""},
		{"swift test", Test, "swift test", "swift test"},
		{"zig build test", Test, "zig build test", "zig build test"},
		{"env", CIOnly, "", ""},
		{"command -v pytest", CIOnly, "", ""},
	})
}
