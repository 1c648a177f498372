package mcphttp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// sessionRecord is what a handler puts in a SessionDirectory: the
// SHA-256 of the identity that created the session (so that the directory
// holds no identities in the clear), compared with the caller's before a
// replay.
//
// With Options.Replicas it also holds what another replica needs to
// rebuild the session (see replicas.go): the initialize params as the
// client sent them (Init), whether notifications/initialized arrived
// (Ready), the state that requests changed since (Level, Subs), the
// replica that created the session (Home), the one holding its
// standalone GET stream (Get), and the one that writes that stream while
// no GET is open (Lead: "" for Home, leadVacant while nobody does).
// Readers of version 1 ignore these fields.
type sessionRecord struct {
	V     int              `json:"v"`
	Owner string           `json:"owner"`
	Init  json.RawMessage  `json:"init,omitempty"`
	Ready bool             `json:"ready,omitempty"`
	Level mcp.LoggingLevel `json:"level,omitempty"`
	Subs  []string         `json:"subs,omitempty"`
	Home  string           `json:"home,omitempty"`
	Get   string           `json:"get,omitempty"`
	Lead  string           `json:"lead,omitempty"`
}

const sessionRecordVersion = 1

func ownerDigest(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(sum[:])
}

// recordSession puts a new session in the event store's directory, if it
// has one. A failure is logged: the session works on this replica, only
// its resumption elsewhere will not.
func (h *Handler) recordSession(ctx context.Context, s *httpSession, init json.RawMessage) {
	dir, ok := h.store.(eventstore.SessionDirectory)
	if !ok || s.id == "" {
		return
	}
	r := sessionRecord{V: sessionRecordVersion, Owner: ownerDigest(s.owner)}
	if h.rep != nil { // see replicas.go
		r.Init, r.Home = slices.Clone(init), h.rep.self
	}
	rec, err := json.Marshal(r)
	if err == nil {
		err = dir.PutSession(ctx, s.id, rec)
	}
	if err == nil && h.rep != nil {
		s.rep = &sessionReplica{rec: r}
	}
	if err != nil {
		h.log.Warn("mcphttp: session not recorded in the shared directory; it resumes on this replica only", "session", s.id, "error", err)
	}
}

// resumeElsewhere serves a GET with Last-Event-ID for session id, which
// this handler does not hold, from the event store, if the store's
// directory knows the session. It reports false, having written nothing,
// when it does not: the caller answers 404 as for any unknown session.
func (h *Handler) resumeElsewhere(w http.ResponseWriter, r *http.Request, id, last string) bool {
	dir, ok := h.store.(eventstore.SessionDirectory)
	if !ok || id == "" || !h.sharedID(id) {
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
	if _, refused := h.refuseStranger(w, r, id, rec); refused {
		return true
	}
	streamID, seq, ok := parseEventID(last)
	if !ok {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: malformed "+headerLastEventID+" "+clip.Quote(last))
		return true
	}
	held := func() (bool, error) { return dir.SessionHeld(r.Context(), id) }
	if p := streamProducer(streamID); p != "" && h.rep != nil {
		// A stream of a copy another replica rebuilt: that replica's
		// life, not the home's, says whether more may come.
		held = func() (bool, error) { return h.rep.net.ReplicaAlive(r.Context(), p) }
	}
	h.replayForeign(w, r, id, streamID, seq, held)
	return true
}

// replayForeign answers a GET that resumes a stream produced by another
// process than this one: the stream's events after seq, from the store,
// then an SSE retry field, for the client to come back for what follows;
// or, when there is none and held says the producer is gone, 405: every
// event was delivered, and none will come.
func (h *Handler) replayForeign(w http.ResponseWriter, r *http.Request, id, streamID string, seq int64, held func() (bool, error)) {
	events, err := h.store.After(r.Context(), id, streamID, seq)
	if err != nil {
		h.resumeFailed(w, id, err)
		return
	}
	if len(events) == 0 {
		held, err := held()
		if err != nil {
			h.storeFailed(w, id, err)
			return
		}
		if !held {
			// The client has every event, and the replica that produced
			// them is gone: nothing will follow.
			h.streamOver(w, streamID)
			return
		}
		// The replica that holds the stream may add more: send the
		// client back after the retry interval, below.
	}
	h.clearRead(w)
	c := &answerWriter{w: w, wt: h.opts.WriteTimeout}
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
}

// storeFailed answers a request the event store could not serve: 503 when
// the store says it is unavailable for now, 500 otherwise.
func (h *Handler) storeFailed(w http.ResponseWriter, id string, err error) {
	h.log.Warn("mcphttp: event store failed", "session", id, "error", err)
	if errors.Is(err, eventstore.ErrStoreUnavailable) {
		h.writeUnavailable(w, "Service Unavailable: the event store does not answer; try again")
		return
	}
	writeHTTPError(w, http.StatusInternalServerError, jsonrpc.ID{}, "Internal Server Error: the event store failed")
}

// resumeFailed answers a resumption whose events the store did not return:
// 503 if the store is unavailable for now, else 400 (the events are gone,
// or the stream is unknown: resuming cannot work).
func (h *Handler) resumeFailed(w http.ResponseWriter, id string, err error) {
	if errors.Is(err, eventstore.ErrStoreUnavailable) {
		h.storeFailed(w, id, err)
		return
	}
	writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: cannot resume: "+clip.String(err.Error()))
}

// refuseStranger returns the identity of r's caller, and answers 403 and
// reports refused when it is not the one that created the session rec
// records (compared as digests, in constant time): a session rebuilt or
// resumed on another replica serves only its creator, as on the replica
// that made it.
func (h *Handler) refuseStranger(w http.ResponseWriter, r *http.Request, id string, rec sessionRecord) (caller string, refused bool) {
	if f := h.opts.Identity; f != nil {
		caller = f(r)
	}
	if subtle.ConstantTimeCompare([]byte(ownerDigest(caller)), []byte(rec.Owner)) == 1 {
		return caller, false
	}
	h.log.Warn("mcphttp: session used by another caller; refused", "session", id)
	writeHTTPError(w, http.StatusForbidden, jsonrpc.ID{}, "Forbidden: the session belongs to another caller")
	return caller, true
}
