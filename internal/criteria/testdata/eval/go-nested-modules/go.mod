module github.com/charmbracelet/bubbletea

go 1.18

require (
	github.com/charmbracelet/x/ansi v0.1.4
	github.com/muesli/cancelreader v0.2.2
)
