//go:build !linux

package main

import "errors"

var errNoAffinity = errors.New("CPU affinity is only set on Linux")

// allowedCPUs is not known outside Linux: the split host then runs
// without pinning.
func allowedCPUs() ([]int, error) { return nil, errNoAffinity }

// pinProcess is not supported outside Linux.
func pinProcess([]int) error { return errNoAffinity }
