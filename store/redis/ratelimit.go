package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/authserver"
)

var _ authserver.SharedRateLimiter = (*Store)(nil)

// takeRateScript applies the generic cell rate algorithm to one bucket,
// atomically. KEYS: the bucket. ARGV: now, interval, slack, in
// microseconds (exact in Lua's doubles for centuries). It returns {1, 0}
// when an event is spent, else {0, microseconds until one is}.
var takeRateScript = goredis.NewScript(`
local now, interval, slack = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
if tat - now > slack then return {0, tat - now - slack} end
tat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.max(1, math.ceil((tat - now) / 1000)))
return {1, 0}
`)

// TakeRate implements authserver.SharedRateLimiter: the bucket is the key
// rate:KEY, holding its theoretical arrival time in Unix microseconds, and
// expiring when it is full again.
func (s *Store) TakeRate(ctx context.Context, key string, interval, slack time.Duration, now time.Time) (bool, time.Duration, error) {
	res, err := takeRateScript.Run(ctx, s.rdb, []string{s.key("rate", key)},
		now.UnixMicro(), interval.Microseconds(), slack.Microseconds()).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("redis: rate limit: %w", err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("redis: rate limit: unexpected reply %v", res)
	}
	return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
}
