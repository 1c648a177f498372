package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpstack/mcpstack/authserver"
)

var _ authserver.SharedRateLimiter = (*Store)(nil)

// TakeRate implements authserver.SharedRateLimiter: one transaction that
// creates the bucket's row if it is missing, locks it (SELECT … FOR
// UPDATE, so that concurrent takers on any connection queue up), and moves
// its time if an event is allowed. Times are kept to the microsecond, as
// TIMESTAMPTZ holds them.
func (s *Store) TakeRate(ctx context.Context, key string, interval, slack time.Duration, now time.Time) (ok bool, wait time.Duration, err error) {
	now = now.UTC().Truncate(time.Microsecond)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO rate_limits (key, tat) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, key, now); err != nil {
			return err
		}
		var tat time.Time
		if err := tx.QueryRow(ctx, `SELECT tat FROM rate_limits WHERE key = $1 FOR UPDATE`, key).Scan(&tat); err != nil {
			return err
		}
		if tat.Before(now) {
			tat = now
		}
		if ahead := tat.Sub(now); ahead > slack {
			wait = ahead - slack
			return nil
		}
		ok = true
		_, err := tx.Exec(ctx, `UPDATE rate_limits SET tat = $2 WHERE key = $1`, key, tat.Add(interval))
		return err
	})
	if err != nil {
		return false, 0, fmt.Errorf("postgres: rate limit: %w", err)
	}
	s.maybePrune(ctx)
	return ok, wait, nil
}
