//go:build !linux

package gitrepo

// watchFIFOs needs /proc: elsewhere a git child blocked on a FIFO waits
// for its context to end.
func watchFIFOs(int, string, <-chan struct{}, func(string)) {}
