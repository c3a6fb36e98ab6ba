//go:build race

package judge

// raceEnabled is true when the race detector slows everything down.
const raceEnabled = true
