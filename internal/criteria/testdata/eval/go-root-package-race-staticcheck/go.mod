module github.com/rhysd/actionlint

go 1.16

require (
	github.com/fatih/color v1.12.0
	github.com/google/go-cmp v0.5.6
	github.com/mattn/go-colorable v0.1.8
	github.com/mattn/go-runewidth v0.0.13
	gopkg.in/yaml.v3 v3.0.0-20210107192922-496545a6307b
)
