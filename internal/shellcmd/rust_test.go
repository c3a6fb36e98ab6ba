package shellcmd

import "testing"

func TestRustClassify(t *testing.T) {
	t.Parallel()
	checkClassify(t, nil, []classifyCase{
		{"cargo +nightly test --workspace", Test, "cargo test", "cargo test"},
		{"cargo nextest run --workspace", Test, "cargo nextest", "cargo nextest"},
		{"cargo clippy --all-targets -- -D warnings", Lint, "cargo clippy", ""},
		{"cargo fmt --all -- --check", Format, "cargo fmt", ""},
		{"cargo fmt --all", 0, "", ""},
		{"cargo llvm-cov --lcov", Test | Coverage, "cargo llvm-cov", "cargo test"},
		{"cargo test --no-run", Build, "cargo build", ""},
		{"cargo bench", Bench, "cargo bench", "cargo bench"},
		{"cargo hack test --each-feature", Test, "cargo hack test", "cargo test"},
		{"cargo publish", Deploy, "", ""},
	})
}

func TestRustAnalyze(t *testing.T) {
	t.Parallel()
	checkAnalyze(t, []analyzeCase{
		{
			name: "justfile recipe with a filter after --",
			cmd:  "just test",
			files: map[string]string{
				"justfile":           "test *args:\n    cargo test --workspace --color always -- --nocapture {{args}}\n",
				"Cargo.toml":         "[workspace]\n",
				".cargo/config.toml": "[build]\n",
			},
			steps: []string{"cargo test --workspace --color always -- --nocapture {{args}} (test cargo test) via justfile:test"},
			deps:  Depends{Files: []string{".cargo/config.toml", "Cargo.toml", "justfile"}, Targets: []string{"justfile:test"}, Runner: "cargo test"},
		},
	})
}
