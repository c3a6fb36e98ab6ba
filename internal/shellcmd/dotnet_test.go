package shellcmd

import "testing"

func TestDotnetClassify(t *testing.T) {
	t.Parallel()
	checkClassify(t, nil, []classifyCase{
		{"dotnet test --no-build", Test, "dotnet test", "dotnet test"},
		{"dotnet test --collect 'XPlat Code Coverage'", Test | Coverage, "dotnet test", "dotnet test"},
		{"dotnet restore", Install, "dotnet restore", ""},
		{"dotnet build -c Release", Build | Type, "dotnet build", ""},
		{"dotnet format --verify-no-changes", Format | Lint, "dotnet format", ""},
	})
}

func TestDotnetAnalyze(t *testing.T) {
	t.Parallel()
	checkAnalyze(t, []analyzeCase{
		{
			cmd:   "dotnet test App.sln --filter Category!=Slow --logger trx -v minimal",
			files: map[string]string{"Directory.Build.props": "<Project/>", "App.sln": ""},
			steps: []string{"dotnet test App.sln --filter Category!=Slow --logger trx -v minimal (test dotnet test)"},
			deps:  Depends{Files: []string{"Directory.Build.props"}, Runner: "dotnet test"},
		},
	})
}
