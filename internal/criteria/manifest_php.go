package criteria

import (
	"encoding/json"
	"fmt"
	"strings"
)

func (m *manifests) readPHP(d *dirManifests) {
	file := join(d.dir, "composer.json")
	data, ok := m.r.read(file)
	if !ok {
		return
	}
	d.eco("php")
	var raw map[string]json.RawMessage
	if err := parseJSON(data, &raw); err != nil {
		m.r.unreadable(LayerManifest, file, err)
		return
	}
	d.setup = "composer install"
	d.fact(file, "PHP project with Composer: install with `composer install`")
	d.composer = m.tree.Dir(d.dir).Composer
	var requireDev map[string]json.RawMessage
	_ = json.Unmarshal(raw["require-dev"], &requireDev)
	var require map[string]json.RawMessage
	_ = json.Unmarshal(raw["require"], &require)
	cl := m.classifier()
	for _, name := range sortedKeys(d.composer) {
		if strings.HasPrefix(name, "pre-") || strings.HasPrefix(name, "post-") {
			continue
		}
		info := cl.classify([]string{"composer", name}, d.dir)
		if info.kind&gateKinds == 0 || info.kind.Has(kWatch) {
			continue
		}
		d.add(candidate{command: "composer " + name, kind: info.kind, sig: "composer " + name, source: file + " scripts." + name, setup: d.setup, rank: scriptRank(name), strong: true, runner: "composer", script: name,
			evidence: []Finding{finding(LayerManifest, file+" scripts."+name, fmt.Sprintf("script %q runs `%s`", name, strings.ReplaceAll(d.composer[name], "\n", "; ")))}})
	}
	if f := m.firstExisting(d.dir, []string{"phpunit.xml.dist", "phpunit.xml", "phpunit.dist.xml"}); f != "" || requireDev["phpunit/phpunit"] != nil || requireDev["pestphp/pest"] != nil {
		cmd := "vendor/bin/phpunit"
		if requireDev["pestphp/pest"] != nil {
			cmd = "vendor/bin/pest"
		}
		if m.r.exists(join(d.dir, "artisan")) && require["laravel/framework"] != nil {
			cmd = "php artisan test"
		}
		if f == "" {
			f = file + " require-dev"
		}
		d.add(candidate{command: cmd, kind: kTest, sig: "phpunit", source: f, setup: d.setup, rank: 2, strong: true,
			evidence: []Finding{finding(LayerManifest, f, "PHPUnit configuration")}})
	}
	if f := m.firstExisting(d.dir, []string{"phpstan.neon", "phpstan.neon.dist", "phpstan.dist.neon"}); f != "" {
		d.add(candidate{command: "vendor/bin/phpstan analyse", kind: kType | kLint, sig: "phpstan", source: f, setup: d.setup, rank: 2, strong: true})
	} else if f := m.firstExisting(d.dir, []string{"psalm.xml", "psalm.xml.dist"}); f != "" {
		d.add(candidate{command: "vendor/bin/psalm", kind: kType, sig: "psalm", source: f, setup: d.setup, rank: 2, strong: true})
	}
	if f := m.firstExisting(d.dir, []string{".php-cs-fixer.dist.php", ".php-cs-fixer.php", ".php_cs.dist"}); f != "" {
		d.add(candidate{command: "vendor/bin/php-cs-fixer fix --dry-run --diff", kind: kLint | kFormat, sig: "php-cs-fixer", source: f, setup: d.setup, rank: 2, strong: true})
	} else if f := m.firstExisting(d.dir, []string{"phpcs.xml", "phpcs.xml.dist", ".phpcs.xml", ".phpcs.xml.dist"}); f != "" {
		d.add(candidate{command: "vendor/bin/phpcs", kind: kLint, sig: "phpcs", source: f, setup: d.setup, rank: 2, strong: true})
	} else if f := m.firstExisting(d.dir, []string{"pint.json"}); f != "" {
		d.add(candidate{command: "vendor/bin/pint --test", kind: kLint | kFormat, sig: "pint", source: f, setup: d.setup, rank: 2, strong: true})
	}
}
