// Package tea provides a framework for building rich terminal user interfaces.
package tea

// Msg contain data from the result of a IO operation.
type Msg interface{}

// Cmd is an IO operation that returns a message when it's complete.
type Cmd func() Msg

// Quit is a special command that tells the Bubble Tea program to exit.
func Quit() Msg { return QuitMsg{} }

// QuitMsg signals that the program should quit.
type QuitMsg struct{}
