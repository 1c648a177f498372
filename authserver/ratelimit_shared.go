package authserver

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpstack/mcpstack/internal/ratelimit"
)

// A SharedRateLimiter is what a [Store] shared by replicas may also
// implement, so that the per-address limits (Config.LoginRate,
// RegistrationRate, AuthorizeRate) hold for the replicas together:
// without it each replica counts alone, and behind N replicas an address
// gets N times its budget of password guesses. store/redis and
// store/postgres implement it.
//
// TakeRate applies the generic cell rate algorithm to the bucket key: if
// the bucket's theoretical arrival time (TAT; a bucket never seen is full)
// is at most slack ahead of now, it spends one event, moving the TAT
// interval past max(TAT, now), and reports true; otherwise it changes
// nothing and reports how long until an event will be allowed. Of
// concurrent calls on any number of processes, each sees the others'
// spending (one transaction, or one script). A bucket may be forgotten
// once now has passed its TAT (it is full again). A key is text without
// NUL bytes: the limit's name and the client's address. The server calls it with
// Config.StoreTimeout; on an error it falls back to its own limiter.
type SharedRateLimiter interface {
	TakeRate(ctx context.Context, key string, interval, slack time.Duration, now time.Time) (ok bool, retryAfter time.Duration, err error)
}

// allow takes one event of l for key: from the store's shared limiter if
// it has one, else (or if that fails) from l.
func (s *Server) allow(r *http.Request, l *ratelimit.Limiter, what, key string) (bool, time.Duration) {
	now := s.now()
	unlimited, interval, slack := l.Params()
	if sl, ok := s.store.(SharedRateLimiter); ok && !unlimited {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.StoreTimeout)
		defer cancel()
		ok, wait, err := sl.TakeRate(ctx, what+" "+key, interval, slack, now)
		if err == nil {
			return ok, wait
		}
		s.log.Warn("shared rate limit failed; this replica's own applies", "limit", what, "err", err)
	}
	return l.Allow(key, now)
}
