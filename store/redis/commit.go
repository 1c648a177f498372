package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Defaults of the group commit of an [EventStore] (see
// EventStoreOptions.MaxBatch, MaxBatchBytes and MaxQueued).
const (
	DefaultMaxBatch      = 128
	DefaultMaxBatchBytes = 1 << 20
	DefaultMaxQueued     = 4096
)

// ErrClosed is returned by [EventStore.Append] once the store is closed.
var ErrClosed = errors.New("store/redis: the event store is closed")

// appendReq is one event on its way to Redis: Append fills it in and
// waits on done; the committer's goroutine owns it from the moment it is
// queued until it sends on done. A request whose caller gave up (its
// context ended) is left to the garbage collector rather than pooled,
// since the committer may still be writing its data.
type appendReq struct {
	sessionID, streamID string
	seq                 int64
	data                []byte
	deadline            time.Time // past it the committer fails it unsent
	err                 error
	done                chan struct{} // capacity 1
	hdr                 []byte        // "KEY SEQ STREAM" for the script, reused
}

// appendBatchSHA is the script's hash as an argument, boxed once.
var appendBatchSHA any = appendBatchScript.Hash()

// hdrArg and dataArg are an appendReq as the two script arguments of its
// event. A pointer implementing encoding.BinaryMarshaler is written by
// go-redis as the bytes it returns, without the allocation that boxing a
// string or a slice into an interface would cost per event.
type (
	hdrArg  appendReq
	dataArg appendReq
)

func (a *hdrArg) MarshalBinary() ([]byte, error)  { return a.hdr, nil }
func (a *dataArg) MarshalBinary() ([]byte, error) { return a.data, nil }

// committer is the group commit of an EventStore: one goroutine takes the
// events that Append queues and writes them in batches, each batch one
// script call (per session, on a Redis Cluster or a Ring; one for all on a
// single Redis), one round trip, while the next batch gathers. Events
// leave the queue in the order they entered it and one batch is in flight
// at a time, so the events of a stream, which the handler appends in
// order, reach Redis in order.
type committer struct {
	s     *EventStore
	queue chan *appendReq
	pool  sync.Pool
	start sync.Once
	stop  chan struct{} // closed by close
	done  chan struct{} // closed when run returns
	once  sync.Once

	// Owned by run's goroutine.
	batch  []*appendReq
	groups []commitGroup
	metas  map[string]any // session id → its key, boxed for args; a cache
	index  map[string]int // session id → its group, per batch
}

// commitGroup is the events of one script call: args is the whole
// command, reused from batch to batch.
type commitGroup struct {
	args []any
	reqs []*appendReq
	keys map[string]int // session id → its key's position in KEYS, from 1
	cmd  *goredis.Cmd   // the call, once sent
}

func newCommitter(s *EventStore) *committer {
	return &committer{
		s:     s,
		queue: make(chan *appendReq, s.opts.MaxQueued),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		metas: make(map[string]any),
		index: make(map[string]int),
	}
}

func (c *committer) get() *appendReq {
	if r, ok := c.pool.Get().(*appendReq); ok {
		return r
	}
	return &appendReq{done: make(chan struct{}, 1)}
}

func (c *committer) put(r *appendReq) {
	r.sessionID, r.streamID, r.data, r.err = "", "", nil, nil
	c.pool.Put(r)
}

// add queues an event and waits until it is kept in Redis, the store's
// Timeout passes, ctx ends or the store closes.
func (c *committer) add(ctx context.Context, sessionID, streamID string, seq int64, data []byte) error {
	c.start.Do(func() { go c.run() })
	r := c.get()
	r.sessionID, r.streamID, r.seq, r.data = sessionID, streamID, seq, data
	r.deadline = time.Now().Add(c.s.opts.Timeout)
	select {
	case c.queue <- r:
	default:
		if err := c.addSlow(ctx, r); err != nil {
			return err
		}
	}
	select {
	case <-r.done:
		err := r.err
		c.put(r)
		return err
	case <-ctx.Done():
		// The event may still be kept: it is queued, or in the batch
		// being written.
		return fmt.Errorf("store/redis: append: %w", ctx.Err())
	case <-c.done:
		return ErrClosed
	}
}

// addSlow queues r when the queue is full: Redis is slower than the
// appends, and the caller waits for room, up to the store's Timeout.
func (c *committer) addSlow(ctx context.Context, r *appendReq) error {
	t := time.NewTimer(time.Until(r.deadline))
	defer t.Stop()
	select {
	case c.queue <- r:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("store/redis: append: %w", ctx.Err())
	case <-c.stop:
		return ErrClosed
	case <-t.C:
		return fmt.Errorf("%w: append: %d events queued for Redis, none left in %v", ErrDown, cap(c.queue), c.s.opts.Timeout)
	}
}

// closed reports whether close was called.
func (c *committer) closed() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// close stops the committer: what is queued fails with ErrClosed.
func (c *committer) close() {
	c.once.Do(func() {
		close(c.stop)
		c.start.Do(func() { close(c.done) }) // never started
		<-c.done
	})
}

// run writes batches until close.
func (c *committer) run() {
	defer close(c.done)
	for {
		select {
		case <-c.stop: // before anything queued
			c.failQueued()
			return
		default:
		}
		var first *appendReq
		select {
		case first = <-c.queue:
		case <-c.stop:
			c.failQueued()
			return
		}
		c.batch = append(c.batch[:0], first)
		n := len(first.data)
	fill:
		for len(c.batch) < c.s.opts.MaxBatch && n < c.s.opts.MaxBatchBytes {
			select {
			case r := <-c.queue:
				c.batch = append(c.batch, r)
				n += len(r.data)
			default:
				break fill
			}
		}
		c.commit(c.batch)
		for i, r := range c.batch {
			r.done <- struct{}{} // r is its caller's again
			c.batch[i] = nil
		}
	}
}

func (c *committer) failQueued() {
	for {
		select {
		case r := <-c.queue:
			r.err = ErrClosed
			r.done <- struct{}{}
		default:
			return
		}
	}
}

// commit writes a batch and sets the error of each request.
func (c *committer) commit(batch []*appendReq) {
	now := time.Now()
	live := 0
	deadline := time.Time{}
	for _, r := range batch {
		if !now.Before(r.deadline) {
			// It waited its whole Timeout behind slower batches.
			r.err = fmt.Errorf("%w: append: queued for %v without reaching Redis", ErrDown, c.s.opts.Timeout)
			continue
		}
		if deadline.IsZero() || r.deadline.Before(deadline) {
			deadline = r.deadline
		}
		live++
	}
	if live == 0 {
		return
	}
	bg := context.Background()
	err := c.s.breaker.admit(bg, "append")
	groups := c.group(batch)
	if err == nil {
		ctx, cancel := context.WithDeadline(bg, deadline)
		err = c.s.breaker.judge(bg, c.s.opts.Timeout, "append", c.exec(ctx, groups))
		cancel()
	}
	for i := range groups {
		g := &groups[i]
		for _, r := range g.reqs {
			if r.err == nil {
				r.err = err
			}
		}
		clear(g.args)
		g.args = g.args[:0]
		clear(g.reqs)
		g.reqs = g.reqs[:0]
		g.cmd = nil
	}
}

// group sorts the requests still within their deadline into script calls:
// one on a single Redis, one per session where keys are spread over
// nodes (every key of a session shares its hash tag).
func (c *committer) group(batch []*appendReq) []commitGroup {
	_, single := c.s.rdb.(*goredis.Client)
	clear(c.index)
	if len(c.metas) > 4*c.s.opts.MaxQueued {
		clear(c.metas) // a cache, bounded
	}
	groups := c.groups[:0]
	for _, r := range batch {
		if r.err != nil {
			continue
		}
		gi := 0
		if !single {
			var ok bool
			if gi, ok = c.index[r.sessionID]; !ok {
				gi = len(groups)
				c.index[r.sessionID] = gi
			}
		}
		if gi == len(groups) {
			if len(groups) < cap(groups) {
				groups = groups[:gi+1]
			} else {
				groups = append(groups, commitGroup{})
			}
			g := &groups[gi]
			if g.keys == nil {
				g.keys = make(map[string]int)
			}
			clear(g.keys)
		}
		g := &groups[gi]
		k, ok := g.keys[r.sessionID]
		if !ok {
			k = len(g.keys) + 1
			g.keys[r.sessionID] = k
		}
		r.hdr = strconv.AppendInt(r.hdr[:0], int64(k), 10)
		r.hdr = append(r.hdr, ' ')
		r.hdr = strconv.AppendInt(r.hdr, r.seq, 10)
		r.hdr = append(r.hdr, ' ')
		r.hdr = append(r.hdr, r.streamID...)
		g.reqs = append(g.reqs, r)
	}
	for i := range groups {
		g := &groups[i]
		// EVALSHA sha numkeys KEYS... limits... (hdr data)...
		g.args = append(g.args[:0], "evalsha", appendBatchSHA, len(g.keys))
		for range g.keys {
			g.args = append(g.args, nil)
		}
		for sessionID, k := range g.keys {
			meta, ok := c.metas[sessionID]
			if !ok {
				meta = c.s.key(sessionID) // boxed once per session, not per batch
				c.metas[sessionID] = meta
			}
			g.args[2+k] = meta
		}
		g.args = append(g.args, c.s.limitArgs[:]...)
		for _, r := range g.reqs {
			g.args = append(g.args, (*hdrArg)(r), (*dataArg)(r))
		}
	}
	c.groups = groups
	return groups
}

// exec runs the groups' script calls, pipelined when there are several,
// loading the script once if Redis does not have it, and sets each
// request's outcome from the script's answer. It returns an error only
// when Redis did not answer (the breaker's concern); an error reply fails
// the events of its call alone.
func (c *committer) exec(ctx context.Context, groups []commitGroup) error {
	if err := c.send(ctx, groups); err != nil && !isReply(err) {
		return err
	}
	retry := 0
	for i := range groups {
		if isNoScript(groups[i].cmd.Err()) {
			groups[retry], groups[i] = groups[i], groups[retry]
			retry++
			continue
		}
		c.results(&groups[i])
	}
	if retry == 0 {
		return nil
	}
	// The script is not cached (Redis restarted, or SCRIPT FLUSH): load it
	// and write again only the calls it refused, which kept nothing.
	if err := appendBatchScript.Load(ctx, c.s.rdb).Err(); err != nil {
		return err
	}
	if err := c.send(ctx, groups[:retry]); err != nil && !isReply(err) {
		return err
	}
	for i := range retry {
		c.results(&groups[i])
	}
	return nil
}

// send sends the groups' script calls, in one round trip, and returns
// the first error.
func (c *committer) send(ctx context.Context, groups []commitGroup) error {
	if len(groups) == 1 {
		groups[0].cmd = c.s.rdb.Do(ctx, groups[0].args...)
		return groups[0].cmd.Err()
	}
	p := c.s.rdb.Pipeline()
	for i := range groups {
		groups[i].cmd = p.Do(ctx, groups[i].args...)
	}
	_, err := p.Exec(ctx)
	return err
}

// isReply reports whether err is an error reply of Redis (it answered).
func isReply(err error) bool {
	var rerr goredis.Error
	return errors.As(err, &rerr)
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// results sets the outcome of each request of a script call from its
// answer: 1 for an event kept, "ORDER ..." for one refused as out of
// order, "ERR ..." for one on which a command failed.
func (c *committer) results(g *commitGroup) {
	reqs := g.reqs
	res, err := g.cmd.Slice()
	if err == nil && len(res) != len(reqs) {
		err = fmt.Errorf("store/redis: append: %d answers for %d events", len(res), len(reqs))
	}
	for i, r := range reqs {
		switch {
		case err != nil:
			r.err = fmt.Errorf("%w: append: %w", ErrDown, err)
		case res[i] == int64(1):
		default:
			msg, _ := res[i].(string)
			if m, ok := strings.CutPrefix(msg, "ORDER "); ok {
				r.err = fmt.Errorf("%w: stream %q: %s", errOrder, r.streamID, m)
			} else {
				r.err = fmt.Errorf("%w: append to stream %q: %s", ErrDown, r.streamID, msg)
			}
		}
	}
}
