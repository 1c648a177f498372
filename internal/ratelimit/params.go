package ratelimit

import "time"

// Params returns the limiter's cell-rate parameters, for a limiter shared
// by several processes (such as one in a database) to apply the same
// algorithm: unlimited reports rate.Inf; otherwise a key spends one event
// if its theoretical arrival time is at most slack ahead of now, and the
// event moves it interval further.
func (l *Limiter) Params() (unlimited bool, interval, slack time.Duration) {
	return l.inf, l.interval, l.slack
}
