// Package calc adds numbers; a fixture for infer --verify.
package calc

// Add returns a plus b.
func Add(a, b int) int { return a + b }
