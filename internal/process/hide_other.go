//go:build !linux

package process

// HideSecrets is a no-op where there is no /proc/<pid>/environ to hide
// (see the Linux version).
func HideSecrets() ([]string, error) { return nil, nil }
