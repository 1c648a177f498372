package eventstore

import (
	"context"
	"errors"
)

// ErrNoReplica is returned by [Replicas.SendTo] when no process receives
// on the named replica's channel: it stopped or died (or never was). The
// message is lost; the sender decides what to do instead.
var ErrNoReplica = errors.New("eventstore: no such replica is listening")

// SessionUpdater is what a [SessionDirectory] shared by replicas also
// implements so that a session created on one replica is served by every
// one (mcphttp.Options.Replicas): the state that a request changes
// (logging/setLevel, resources/subscribe) is written back to the record,
// which the other replicas read when they rebuild their copy of the
// session.
//
// Methods are called concurrently and must end when ctx ends; an error
// that wraps ErrStoreUnavailable makes the handler answer 503.
type SessionUpdater interface {
	// UpdateSession replaces the record of a session that exists,
	// keeping its holder (see SessionDirectory.SessionHeld), and renews
	// its expiry. It reports false, writing nothing, for a session never
	// recorded, deleted or expired: a deleted session must stay deleted.
	UpdateSession(ctx context.Context, sessionID string, record []byte) (ok bool, err error)
	// TouchSession renews the expiry of a session's record and events, as
	// an append would: the handler calls it now and then (at most once a
	// minute per session and replica) for a session in use whose streams
	// add no events.
	TouchSession(ctx context.Context, sessionID string) error
}

// Replicas carries messages between the processes (replicas) that serve
// one MCP server behind a load balancer without stickiness, so that a
// session created on one of them works on every one: the Streamable HTTP
// handler (mcphttp.Options.Replicas) sends on it the client's responses to
// the requests another replica sent (elicitation, sampling, roots), the
// messages of a session's standalone stream to the replica that holds its
// GET, and the news that a session changed or ended. Messages are opaque
// bytes of the handler's making, each at most a few kilobytes plus one
// JSON-RPC message.
//
// The contract, for implementers and callers:
//   - ReplicaID names this process among the replicas; it is stable for
//     the life of the value and is the id other replicas send to. It is
//     also the holder that SessionDirectory.SessionHeld checks, when the
//     same value implements both.
//   - SendTo hands msg to the replica named, or to every replica listening
//     (this one included) when to is "", and returns once the carrier took
//     it. Delivery is at most once. It returns an error wrapping
//     ErrNoReplica when nobody listens for that replica, and one wrapping
//     ErrStoreUnavailable when the carrier does not answer.
//   - ReplicaAlive tells whether a replica still runs, so that a client
//     resuming a stream the replica produced is told when nothing more
//     will come.
//   - Listen returns once this replica receives what is sent to it (and to
//     every replica); deliver runs on one goroutine, never concurrently
//     with itself, and should return promptly. stop ends the listening and
//     returns once deliver has returned for the last time. deliver(nil)
//     says that messages may have been lost (the carrier reconnected, or
//     overflowed): the handler then re-reads what it holds.
//
// Implementations are safe for concurrent use. store/redis.EventStore
// implements it on Redis Pub/Sub.
type Replicas interface {
	ReplicaID() string
	SendTo(ctx context.Context, to string, msg []byte) error
	Listen(ctx context.Context, deliver func(msg []byte)) (stop func(), err error)
	// ReplicaAlive reports whether the replica named still runs, within a
	// bound of the implementation's (false soon after it stopped or died).
	ReplicaAlive(ctx context.Context, replica string) (bool, error)
}
