//go:build race

package testreport

// raceEnabled shrinks the largest inputs under the race detector, which runs
// them about twenty times slower.
const raceEnabled = true
