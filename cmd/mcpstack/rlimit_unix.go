//go:build unix

package main

import "syscall"

// fdReserve is how many file descriptors the limit on connections leaves
// for everything else: the listener, files served, the database, fetches.
const fdReserve = 64

// connLimit is max lowered to fit the open-file limit (which the Go
// runtime raises to its hard maximum at start), so that accepting
// connections cannot exhaust the descriptors. Zero means no limit.
func connLimit(max int) int {
	var rl syscall.Rlimit
	if max <= 0 || syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return max
	}
	if fit := int64(rl.Cur) - fdReserve; fit > 0 && int64(max) > fit {
		return int(fit)
	}
	return max
}
