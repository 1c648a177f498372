//go:build unix

package jsonschema

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used,
// so that benchmarks report CPU rather than wall time, which a loaded
// machine inflates.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
