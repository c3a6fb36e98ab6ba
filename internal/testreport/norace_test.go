//go:build !race

package testreport

const raceEnabled = false
