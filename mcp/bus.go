package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// A Bus carries change notices between the processes (replicas) that serve
// one logical MCP server behind a load balancer: a change caused on one
// replica (a tool added, a resource updated) must reach the clients whose
// streams another replica holds, as notifications/tools/list_changed or
// notifications/resources/updated (MCP 2025-11-25, Server Features; the
// subscriptions/listen stream of revision 2026-07-28 likewise). Messages are
// opaque bytes, so that a bus implementation needs nothing of this package;
// [Change] is what an MCP server puts on it. [MemoryBus] is the in-process
// default; store/redis offers one on Redis Pub/Sub.
//
// The contract, for implementers and callers:
//   - Publish hands msg to every subscription open when it is published, in
//     every process on the bus, the publishing one included, and returns
//     once the bus has taken it, or an error; it gives up when ctx ends. The
//     bus may refuse a message over its size bound.
//   - Delivery is at most once: a message may be lost (a subscriber that
//     disconnected, or fell too far behind), never delivered twice to one
//     subscription. Messages of one publisher arrive in the order
//     published; nothing orders those of different publishers.
//   - Subscribe returns once the subscription is in place: every message
//     published after it returns is delivered unless lost as above. ctx
//     bounds only the subscribing. deliver runs on one goroutine of the
//     subscription's own, never concurrently with itself, and should return
//     promptly: a slow deliver delays the messages behind it and may make
//     the bus drop some. deliver(nil) says that messages may have been lost
//     (the bus lost its connection and resubscribed, or the subscriber fell
//     behind): the subscriber should act as if everything had changed.
//   - The returned stop ends the subscription and returns once deliver has
//     returned for the last time; it may be called more than once.
//
// Implementations are safe for concurrent use.
type Bus interface {
	Publish(ctx context.Context, msg []byte) error
	Subscribe(ctx context.Context, deliver func(msg []byte)) (stop func(), err error)
}

// A Change is what an MCP server publishes on a [Bus]: one notification
// that every replica sends to its own clients, if they asked for it.
type Change struct {
	// Origin names the publishing process, so that a replica can skip the
	// changes it published and already told its own clients about.
	Origin string `json:"origin,omitempty"`
	// Method is the notification the change causes:
	// NotificationToolsListChanged, NotificationPromptsListChanged,
	// NotificationResourcesListChanged or NotificationResourcesUpdated.
	Method string `json:"method"`
	// URI is the updated resource, with NotificationResourcesUpdated only.
	URI string `json:"uri,omitempty"`
}

// MaxChangeBytes bounds an encoded [Change]: DecodeChange refuses a longer
// message, whoever put it on the bus.
const MaxChangeBytes = 16 << 10

// ErrBadChange reports a bus message that is not a valid [Change].
var ErrBadChange = errors.New("mcp: not a valid change message")

// Encode returns the change as a bus message (JSON).
func (c Change) Encode() ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxChangeBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrBadChange, len(b), MaxChangeBytes)
	}
	return b, nil
}

// DecodeChange parses a bus message made by [Change.Encode]. A message
// longer than MaxChangeBytes, with unknown fields, or naming another
// notification is refused with an error wrapping ErrBadChange.
func DecodeChange(msg []byte) (Change, error) {
	if len(msg) > MaxChangeBytes {
		return Change{}, fmt.Errorf("%w: %d bytes, more than %d", ErrBadChange, len(msg), MaxChangeBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.DisallowUnknownFields()
	var c Change
	if err := dec.Decode(&c); err != nil {
		return Change{}, fmt.Errorf("%w: %w", ErrBadChange, err)
	}
	if dec.More() {
		return Change{}, fmt.Errorf("%w: trailing data", ErrBadChange)
	}
	if err := c.check(); err != nil {
		return Change{}, err
	}
	return c, nil
}

func (c Change) check() error {
	switch c.Method {
	case NotificationToolsListChanged, NotificationPromptsListChanged, NotificationResourcesListChanged:
		if c.URI != "" {
			return fmt.Errorf("%w: %s carries no URI", ErrBadChange, c.Method)
		}
	case NotificationResourcesUpdated:
		if c.URI == "" {
			return fmt.Errorf("%w: %s without a URI", ErrBadChange, c.Method)
		}
	default:
		return fmt.Errorf("%w: method %q", ErrBadChange, c.Method)
	}
	return nil
}

// DefaultBusQueue is the default of MemoryBus.Queue.
const DefaultBusQueue = 256

// MemoryBus is a [Bus] within one process: the default when a server runs
// as a single process, and a stand-in for a shared bus in tests. Each
// subscription has a queue of Queue messages; a message published while
// the queue is full is dropped for that subscription, which then gets
// deliver(nil) once it has caught up. The zero value is ready to use.
type MemoryBus struct {
	// Queue bounds the messages waiting for each subscription's deliver;
	// zero means DefaultBusQueue. Set it before first use.
	Queue int

	mu   sync.Mutex
	subs map[*memSub]struct{}
}

type memSub struct {
	ch   chan []byte
	lost chan struct{} // holds a token when messages were dropped
	done chan struct{} // closed by stop
}

var _ Bus = (*MemoryBus)(nil)

// Publish queues msg for every subscription; it never blocks. The
// subscribers get their own copy.
func (b *MemoryBus) Publish(ctx context.Context, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	msg = bytes.Clone(msg)
	if msg == nil {
		msg = []byte{} // nil is the loss signal
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		select {
		case s.ch <- msg:
		default:
			select {
			case s.lost <- struct{}{}:
			default:
			}
		}
	}
	return nil
}

// Subscribe adds a subscription, served by a goroutine of its own until
// stop is called.
func (b *MemoryBus) Subscribe(ctx context.Context, deliver func(msg []byte)) (stop func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q := b.Queue
	if q <= 0 {
		q = DefaultBusQueue
	}
	s := &memSub{ch: make(chan []byte, q), lost: make(chan struct{}, 1), done: make(chan struct{})}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = make(map[*memSub]struct{})
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-s.done:
				return
			case m := <-s.ch:
				deliver(m)
			case <-s.lost:
				// Deliver what was queued before the loss first, so that
				// the loss signal comes after every message it concerns.
				for len(s.ch) > 0 {
					deliver(<-s.ch)
				}
				deliver(nil)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, s)
			b.mu.Unlock()
			close(s.done)
		})
		<-finished
	}, nil
}
