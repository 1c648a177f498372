package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
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

// sharedChanges is a server's connection to a Bus (see ShareChanges).
type sharedChanges struct {
	bus    Bus
	origin string
}

// ErrAlreadyShared is returned by ShareChanges for a server that already
// shares its changes.
var ErrAlreadyShared = errors.New("mcp: the server already shares its changes on a bus")

// ShareChanges makes the server one replica of a logical server whose
// replicas share bus. From then on ResourceUpdated publishes the change
// (after telling this server's own subscribers, as always), and the
// changes other replicas publish reach this server's sessions:
// notifications/resources/updated to the sessions subscribed to the URI,
// a list_changed to every session. A message that says changes may have
// been lost (deliver(nil)) is answered as if everything had changed: an
// update for every URI with subscribers here, and list_changed for each
// feature the server offers. An application whose tools, prompts or
// resource lists change on every replica at once (from shared
// configuration) publishes that itself: Change{Method:
// NotificationToolsListChanged}.Encode() on the bus.
//
// It returns once the subscription is in place, or the bus's error. stop
// ends the sharing; it waits until no change is being delivered.
func (s *Server) ShareChanges(ctx context.Context, bus Bus) (stop func(), err error) {
	origin := make([]byte, 12)
	if _, err := rand.Read(origin); err != nil {
		return nil, err
	}
	sc := &sharedChanges{bus: bus, origin: hex.EncodeToString(origin)}
	if !s.shared.CompareAndSwap(nil, sc) {
		return nil, ErrAlreadyShared
	}
	unsubscribe, err := bus.Subscribe(ctx, func(msg []byte) { s.applyChange(sc, msg) })
	if err != nil {
		s.shared.CompareAndSwap(sc, nil)
		return nil, err
	}
	return func() {
		s.shared.CompareAndSwap(sc, nil)
		unsubscribe()
	}, nil
}

// publishChange puts c on the bus, if the server shares its changes.
func (s *Server) publishChange(ctx context.Context, c Change) error {
	sc := s.shared.Load()
	if sc == nil {
		return nil
	}
	c.Origin = sc.origin
	msg, err := c.Encode()
	if err != nil {
		return err
	}
	return sc.bus.Publish(ctx, msg)
}

// applyChange tells this server's sessions about a change another replica
// published; it runs on the bus's delivery goroutine.
func (s *Server) applyChange(sc *sharedChanges, msg []byte) {
	ctx := context.Background()
	if msg == nil {
		s.everythingChanged(ctx)
		return
	}
	c, err := DecodeChange(msg)
	if err != nil {
		s.log.Warn("mcp: bus message dropped", "error", err)
		return
	}
	if c.Origin == sc.origin {
		return // told here already, when it was published
	}
	if c.Method == NotificationResourcesUpdated {
		_ = s.resourceUpdatedHere(ctx, c.URI)
		return
	}
	s.mu.RLock()
	sessions := s.sessionList()
	s.mu.RUnlock()
	s.notifyAll(sessions, c.Method)
}

// everythingChanged answers a loss on the bus: every subscribed URI is
// updated, and every list the server offers changed.
func (s *Server) everythingChanged(ctx context.Context) {
	s.subMu.Lock()
	uris := make([]string, 0, len(s.subscribers))
	for uri := range s.subscribers {
		uris = append(uris, uri)
	}
	s.subMu.Unlock()
	for _, uri := range uris {
		_ = s.resourceUpdatedHere(ctx, uri)
	}
	s.mu.RLock()
	sessions := s.sessionList()
	tools, prompts, resources := len(s.tools) > 0, len(s.prompts) > 0, s.hasResources()
	s.mu.RUnlock()
	if tools {
		s.notifyAll(sessions, NotificationToolsListChanged)
	}
	if prompts {
		s.notifyAll(sessions, NotificationPromptsListChanged)
	}
	if resources {
		s.notifyAll(sessions, NotificationResourcesListChanged)
	}
}
