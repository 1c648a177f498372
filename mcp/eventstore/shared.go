package eventstore

import (
	"context"
	"errors"
)

// ErrStoreUnavailable is wrapped by the errors of a Store (or
// SessionDirectory) that cannot answer now, such as one whose database
// does not respond: the handler then answers 503 with Retry-After, for the
// client to try again, rather than 400, which tells it the stream cannot
// be resumed at all.
var ErrStoreUnavailable = errors.New("eventstore: the event store is unavailable")

// A SessionDirectory is what a [Store] shared by the replicas of one server
// (processes behind one address) may also implement, so that a replica
// can replay the streams of a session it does not hold: the client resumes
// (GET with Last-Event-ID) through whichever replica the load balancer
// picks, also after the replica that held the session died. The
// Streamable HTTP handler (mcphttp.Handler) records each session it
// creates with PutSession, before the client learns the session id. A
// replica that receives a resumption for a session it does not know asks
// SessionRecord, checks the caller against the record, and answers with
// the stream's events after the one named, ending the response with an SSE
// retry field: the client comes back for what follows, to that replica or
// another. When none follows and SessionHeld says the replica that holds
// the session is gone, it answers that the stream has ended (405): every
// event was delivered, and none will come. With mcphttp.Options.Replicas
// (and a directory that is also a [SessionUpdater]), every other request
// of the session may reach any replica as well, which rebuilds the
// session from its record; without, they must reach the replica that
// holds it (sticky routing on Mcp-Session-Id).
//
// A record is opaque bytes of the handler's making: a few hundred bytes,
// a few kilobytes with Replicas (it then holds the client's initialize
// params).
// It lives as long as the session's events: Store.DeleteSession deletes
// it, and a store whose events expire lets it expire with them. Methods
// are called concurrently and must end when ctx ends; an error that wraps
// ErrStoreUnavailable makes the handler answer 503.
type SessionDirectory interface {
	// PutSession records a session created by this process.
	PutSession(ctx context.Context, sessionID string, record []byte) error
	// SessionRecord returns a session's record; ok is false for a session
	// never recorded, deleted or expired.
	SessionRecord(ctx context.Context, sessionID string) (record []byte, ok bool, err error)
	// SessionHeld reports whether the process that recorded the session
	// still runs (and may add events to its streams): false once it has
	// stopped or died, within a bound of the implementation's.
	SessionHeld(ctx context.Context, sessionID string) (bool, error)
}
