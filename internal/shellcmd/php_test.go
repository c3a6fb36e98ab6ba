package shellcmd

import "testing"

func TestPHPClassify(t *testing.T) {
	t.Parallel()
	files := map[string]string{"composer.json": `{"scripts": {"test": "phpunit", "check": ["@cs", "@test"], "cs": "php-cs-fixer fix --dry-run"}}`}
	checkClassify(t, files, []classifyCase{
		{"composer test", Test, "composer test", "phpunit"},
		{"composer check", Test | Format | Lint, "composer check", "phpunit"},
		{"vendor/bin/phpunit --colors=always", Test, "phpunit", "phpunit"},
		{"php -d memory_limit=-1 vendor/bin/phpunit", Test, "phpunit", "phpunit"},
		{"php artisan test", Test, "artisan test", "phpunit"},
		{"composer install --prefer-dist", Install, "composer install", ""},
		{"vendor/bin/phpstan analyse", Type, "phpstan", ""},
	})
}

func TestPHPAnalyze(t *testing.T) {
	t.Parallel()
	checkAnalyze(t, []analyzeCase{
		{
			cmd: "composer test -- --filter Foo",
			files: map[string]string{
				"composer.json":    `{"scripts": {"test": ["@php vendor/bin/phpunit --testdox"]}}`,
				"phpunit.xml.dist": "<phpunit/>",
			},
			steps: []string{"php vendor/bin/phpunit --testdox (test phpunit) via composer.json:test"},
			deps:  Depends{Files: []string{"composer.json", "phpunit.xml.dist"}, Targets: []string{"composer.json:test"}, Runner: "phpunit"},
		},
	})
}
