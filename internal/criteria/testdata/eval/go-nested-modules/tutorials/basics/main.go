package main

import tea "github.com/charmbracelet/bubbletea"

func main() { _ = tea.Quit() }
