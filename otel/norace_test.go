//go:build !race

package otel_test

// raceEnabled is set when the race detector runs, which allocates on its own.
const raceEnabled = false
