module examples

go 1.18

require github.com/charmbracelet/bubbletea v0.26.6

replace github.com/charmbracelet/bubbletea => ../
