module github.com/spf13/cobra

go 1.15

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.2
	github.com/inconshreveable/mousetrap v1.0.1
	github.com/spf13/pflag v1.0.5
	gopkg.in/yaml.v3 v3.0.1
)
