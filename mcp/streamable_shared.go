package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// ErrStoreUnavailable is wrapped by the errors of an EventStore (or
// SessionDirectory) that cannot answer now, such as one whose database
// does not respond: the handler then answers 503 with Retry-After, for the
// client to try again, rather than 400, which tells it the stream cannot
// be resumed at all.
var ErrStoreUnavailable = errors.New("mcp: the event store is unavailable")

// A SessionDirectory is what an [EventStore] shared by the replicas of one
// server (processes behind one address) may also implement, so that a
// replica can replay the streams of a session it does not hold: the client
// resumes (GET with Last-Event-ID) through whichever replica the load
// balancer picks, also after the replica that held the session died. The
// handler records each session it creates with PutSession, before the
// client learns the session id. A replica that receives a resumption for
// a session it does not know asks SessionRecord, checks the caller against
// the record (StreamableHTTPOptions.Identity), and answers with the
// stream's events after the one named, from the event store, ending the
// response with an SSE retry field: the client comes back for what
// follows, to that replica or another. When none follows and SessionHeld
// says the replica that holds the session is gone, it answers that the
// stream has ended (405): every event was delivered, and none will come.
// Only resumption crosses replicas this way; every other request of the
// session must reach the replica that holds it (sticky routing on
// Mcp-Session-Id).
//
// A record is opaque bytes of the handler's making, a few hundred at most.
// It lives as long as the session's events: EventStore.DeleteSession
// deletes it, and a store whose events expire lets it expire with them.
// Methods are called concurrently and must end when ctx ends; an error
// that wraps ErrStoreUnavailable makes the handler answer 503.
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

// sessionRecord is what a handler puts in a SessionDirectory: the
// SHA-256 of the identity that created the session (so that the directory
// holds no identities in the clear), compared with the caller's before a
// replay.
type sessionRecord struct {
	V     int    `json:"v"`
	Owner string `json:"owner"`
}

const sessionRecordVersion = 1

func ownerDigest(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(sum[:])
}

// recordSession puts a new session in the event store's directory, if it
// has one. A failure is logged: the session works on this replica, only
// its resumption elsewhere will not.
func (h *StreamableHTTPHandler) recordSession(ctx context.Context, s *httpSession) {
	dir, ok := h.store.(SessionDirectory)
	if !ok || s.id == "" {
		return
	}
	rec, err := json.Marshal(sessionRecord{V: sessionRecordVersion, Owner: ownerDigest(s.owner)})
	if err == nil {
		err = dir.PutSession(ctx, s.id, rec)
	}
	if err != nil {
		h.log.Warn("mcp: session not recorded in the shared directory; it resumes on this replica only", "session", s.id, "error", err)
	}
}

// resumeElsewhere serves a GET with Last-Event-ID for session id, which
// this handler does not hold, from the event store, if the store's
// directory knows the session. It reports false, having written nothing,
// when it does not: the caller answers 404 as for any unknown session.
func (h *StreamableHTTPHandler) resumeElsewhere(w http.ResponseWriter, r *http.Request, id, last string) bool {
	dir, ok := h.store.(SessionDirectory)
	if !ok || id == "" {
		return false
	}
	raw, ok, err := dir.SessionRecord(r.Context(), id)
	if err != nil {
		h.storeFailed(w, id, err)
		return true
	}
	var rec sessionRecord
	if !ok || json.Unmarshal(raw, &rec) != nil || rec.V != sessionRecordVersion {
		return false
	}
	caller := ""
	if f := h.opts.Identity; f != nil {
		caller = f(r)
	}
	if subtle.ConstantTimeCompare([]byte(ownerDigest(caller)), []byte(rec.Owner)) != 1 {
		h.log.Warn("mcp: session used by another caller; refused", "session", id)
		writeHTTPError(w, http.StatusForbidden, jsonrpc.ID{}, "Forbidden: the session belongs to another caller")
		return true
	}
	streamID, seq, ok := parseEventID(last)
	if !ok {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: malformed "+headerLastEventID+" "+strconv.Quote(last))
		return true
	}
	events, err := h.store.After(r.Context(), id, streamID, seq)
	if err != nil {
		h.resumeFailed(w, id, err)
		return true
	}
	if len(events) == 0 {
		held, err := dir.SessionHeld(r.Context(), id)
		if err != nil {
			h.storeFailed(w, id, err)
			return true
		}
		if !held {
			// The client has every event, and the replica that produced
			// them is gone: nothing will follow.
			h.streamOver(w, streamID)
			return true
		}
		// The replica that holds the stream may add more: send the
		// client back after the retry interval, below.
	}
	h.clearRead(w)
	c := &sseConn{w: w, wt: h.opts.WriteTimeout}
	c.start(streamID, seq, true)
	for _, e := range events {
		c.event(streamID, e.Seq, e.Data)
	}
	// The client has not seen the stream end: ask it to come back for
	// what follows, after the retry interval (2025-11-25 clients honour
	// it; older ones reconnect on their own).
	c.buf = appendSSERetry(c.buf[:0], h.opts.RetryInterval)
	c.buf = append(c.buf, '\n')
	c.write(c.buf)
	c.flush()
	return true
}

// storeFailed answers a request the event store could not serve: 503 when
// the store says it is unavailable for now, 500 otherwise.
func (h *StreamableHTTPHandler) storeFailed(w http.ResponseWriter, id string, err error) {
	h.log.Warn("mcp: event store failed", "session", id, "error", err)
	if errors.Is(err, ErrStoreUnavailable) {
		h.writeUnavailable(w, "Service Unavailable: the event store does not answer; try again")
		return
	}
	writeHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, "Internal Server Error: the event store failed")
}

// resumeFailed answers a resumption whose events the store did not return:
// 503 if the store is unavailable for now, else 400 (the events are gone,
// or the stream is unknown: resuming cannot work).
func (h *StreamableHTTPHandler) resumeFailed(w http.ResponseWriter, id string, err error) {
	if errors.Is(err, ErrStoreUnavailable) {
		h.storeFailed(w, id, err)
		return
	}
	writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: cannot resume: "+err.Error())
}
