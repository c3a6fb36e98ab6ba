//go:build !linux

package process

// AdoptOrphans does nothing where there is no subreaper (see the Linux
// version).
func AdoptOrphans() error { return nil }

// Children returns nothing where there is no /proc (see the Linux version).
func Children() []int { return nil }

// KillStrays does nothing where there is no /proc (see the Linux version).
func KillStrays(keep []int) []int { return nil }
