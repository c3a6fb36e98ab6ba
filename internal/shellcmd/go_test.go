package shellcmd

import "testing"

func TestGoClassify(t *testing.T) {
	t.Parallel()
	checkClassify(t, nil, []classifyCase{
		{"go test -race ./...", Test, "go test", "go test"},
		{"go test -coverprofile=c.out ./...", Test | Coverage, "go test", "go test"},
		{"go test -race -bench . -run ^$ -benchmem", Bench, "go test", "go test"},
		{"go vet ./...", Lint | Type, "go vet", "-"},
		{"go build ./...", Build | Type, "go build", "-"},
		{"go test -v -c -count 1", Build, "go test -c", ""},
		{"go install golang.org/x/tools/cmd/goimports@latest", Toolchain, "", ""},
		{"go mod download", Install, "go mod download", ""},
		{"gotestsum --format testname -- -race ./...", Test, "go test", "go test"},
		{"gofmt -l .", Format, "gofmt", ""},
		{"gofmt -w .", 0, "", ""},
		{"goreleaser release --clean", Deploy, "", ""},
		{"go run ./cmd/lint", Lint, "go run lint", ""},
	})
}

func TestGoAnalyze(t *testing.T) {
	t.Parallel()
	checkAnalyze(t, []analyzeCase{
		{
			cmd:   "CGO_ENABLED=1 go test -v -race -run TestX ./pkg/...",
			files: map[string]string{"go.mod": "module x\n", "go.work": "go 1.22\n"},
			steps: []string{"go test -v -race -run TestX ./pkg/... (test go test)"},
			deps:  Depends{Files: []string{"go.mod", "go.work"}, Runner: "go test"},
		},
		{
			name:  "a benchmark is no test gate",
			cmd:   "go test -race -bench . -run ^$ -benchmem ./...",
			files: map[string]string{"go.mod": "module x\n"},
			steps: []string{"go test -race -bench . -run ^$ -benchmem ./... (benchmark go test)"},
			deps:  Depends{Files: []string{"go.mod"}, Runner: "go test"},
		},
	})
}
