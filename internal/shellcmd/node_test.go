package shellcmd

import "testing"

// nodeRepo has scripts of every shape the node classifier follows.
var nodeRepo = map[string]string{
	"package.json": `{"scripts": {
		"test": "vitest run",
		"test:ci": "npm run lint && vitest run --coverage",
		"lint": "eslint .",
		"typecheck": "tsc --noEmit",
		"dev": "vite",
		"watch": "jest --watch",
		"test:watch": "jest --watch"
	}}`,
}

func TestNodeClassify(t *testing.T) {
	t.Parallel()
	checkClassify(t, nodeRepo, []classifyCase{
		{"npm test", Test, "npm test", "vitest"},
		{"npm run test", Test, "npm test", "vitest"},
		{"npm run test:ci", Test | Lint | Coverage, "npm test:ci", ""},
		{"pnpm lint", Lint, "pnpm lint", ""},
		{"yarn typecheck", Type, "yarn typecheck", ""},
		{"npm ci", Install, "npm install", ""},
		{"npm install -g pnpm", Toolchain, "", ""},
		{"npm install --save-dev mocha@3", CIOnly, "", ""},
		{"npm publish", Deploy, "", ""},
		{"bun test", Test, "bun test", "bun test"},
		{"bun run test", Test, "bun run test", "vitest"},
		{"npx jest --ci", Test, "jest", "jest"},
		{"npx tsc --noEmit", Type, "tsc", ""},
		{"npx turbo run lint test", Lint | Test, "turbo lint test", ""},
		{"npx nx run-many -t test", Test, "nx test", ""},
		{"jest --watch", Test | Watch, "jest", "jest"},
		{"node --test", Test, "node --test", "node --test"},
		{"pnpm exec vitest run", Test, "vitest", "vitest"},
		{"yarn vitest run", Test, "vitest", "vitest"},
		{"npx playwright merge-reports ./blob", CIOnly | Report, "playwright merge-reports", ""},
		{"npx playwright test", Test | E2E, "playwright", "playwright"},
		{"deno task test", Test, "deno task test", ""},
		{"deno fmt --check", Format, "deno fmt", ""},
		{"deno test -A", Test, "deno test", "deno test"},
		{"cross-env NODE_ENV=test jest", Test, "jest", "jest"},
		{"dotenv -e .env.test -- jest", Test, "jest", "jest"},
		{"nix develop -c jest --ci", Test, "jest", "jest"},
		{"nix-shell --run 'jest --ci'", Test, "jest", "jest"},
		{"devbox run jest", Test, "jest", "jest"},
		{"mise exec -- jest", Test, "jest", "jest"},
		{"xvfb-run -a npm test", Test, "npm test", "vitest"},
	})
}

func TestNodeAnalyze(t *testing.T) {
	t.Parallel()
	checkAnalyze(t, []analyzeCase{
		{
			name: "npm test runs pretest, a script file and posttest",
			cmd:  "npm test",
			files: map[string]string{
				"package.json":    `{"scripts": {"pretest": "tsc --noEmit", "test": "bash scripts/test.sh", "posttest": "c8 report"}}`,
				"scripts/test.sh": "#!/usr/bin/env bash\nset -euo pipefail\nrun() { jest --ci --coverage \"$@\"; }\nrun src\n",
				".npmrc":          "script-shell=/bin/bash\n",
				"jest.config.js":  "module.exports = {}\n",
			},
			steps: []string{
				"tsc --noEmit (lint) via package.json:pretest",
				"jest --ci --coverage  (test jest) via package.json:test > scripts/test.sh",
				"c8 report (report) via package.json:posttest",
			},
			deps: Depends{
				Files:   []string{".npmrc", "jest.config.js", "package.json", "scripts/test.sh"},
				Targets: []string{"package.json:pretest", "package.json:test", "package.json:posttest"},
				Runner:  "jest",
			},
		},
		{
			name:    "a workspace member with --prefix",
			cmd:     "npm --prefix web run test:unit -- --ci",
			files:   map[string]string{"web/package.json": `{"scripts": {"test:unit": "vitest run"}}`, "web/vitest.config.ts": "export default {}\n"},
			steps:   []string{"vitest run (test vitest) via web/package.json:test:unit in web"},
			deps:    Depends{Files: []string{"web/package.json", "web/vitest.config.ts"}, Targets: []string{"web/package.json:test:unit"}, Runner: "vitest"},
			workdir: ".",
		},
		{
			name:  "a checker's configuration is a dependency",
			cmd:   "npm run lint",
			files: map[string]string{"package.json": `{"scripts": {"lint": "eslint . && tsc --noEmit"}}`, "eslint.config.js": "export default []\n", "tsconfig.json": "{}", "web/tsconfig.json": "{}"},
			steps: []string{"eslint . (lint) via package.json:lint", "tsc --noEmit (lint) via package.json:lint"},
			deps:  Depends{Files: []string{"eslint.config.js", "package.json", "tsconfig.json"}, Targets: []string{"package.json:lint"}},
		},
		{
			name:  "one runtime of several is a variant",
			cmd:   "bun run test:bun",
			files: map[string]string{"package.json": `{"scripts": {"test:bun": "bun test"}}`},
			steps: []string{"bun test (variant bun test) via package.json:test:bun"},
			deps:  Depends{Files: []string{"package.json"}, Targets: []string{"package.json:test:bun"}, Runner: "bun test"},
		},
		{
			name:  "npx and pnpm exec are wrappers",
			cmd:   "pnpm exec vitest run --reporter=dot",
			files: map[string]string{"package.json": `{}`, "pnpm-workspace.yaml": "packages: []\n"},
			steps: []string{"vitest run --reporter=dot (test vitest) wrapped pnpm exec"},
			deps:  Depends{Files: []string{"package.json", "pnpm-workspace.yaml"}, Runner: "vitest"},
		},
	})
}
