package mcphttp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// Sessions shared by replicas (Options.Replicas): a 2025-11-25 session
// created on one replica is served by every one, behind a plain
// round-robin load balancer.
//
//   - The replica that creates a session (its home) records in the
//     directory what the session needs: the owner digest and the
//     initialize params as the client sent them (see sessionRecord).
//   - A replica that receives a request for a session it does not hold
//     reads the record (503 when the store does not answer), checks the
//     caller against the owner digest (403), and rebuilds a copy of its
//     own through mcp's push seam, replaying initialize with the same
//     params, notifications/initialized, the log level and the resource
//     subscriptions; once per session and replica (see rebuild).
//   - A request that changes the session's state (logging/setLevel,
//     resources/subscribe and unsubscribe, notifications/initialized) is
//     written back to the record, and every replica holding a copy is told
//     to apply it (see writeBack and refresh).
//   - The requests a copy sends to the client (elicitation, sampling,
//     roots) have ids that name the sending replica (requestIDPrefix); a
//     replica that receives the client's response to another's request
//     forwards it to that replica (forwardResponses), which completes the
//     waiting call. A response whose sender is gone is dropped, logged.
//     A notifications/cancelled goes to every replica, and the one running
//     the request cancels it (forwardCancels).
//   - The session's standalone stream has one owner: the replica holding
//     its GET (recorded as Get), else its lead (Lead; at first the
//     home). A lead whose copy idles out lets the stream go (leadVacant),
//     and the first replica holding a copy that hears of it claims it; a
//     lead found dead at a recheck is replaced the same way (see
//     releaseLead, claimLead), so that a session keeps one writer of
//     change notifications while its record lives. A message for that stream
//     produced elsewhere (a log message, a server request not tied to a
//     client request) is sent to the owner, which puts it on its stream
//     (and so in the event store). A change notification (list_changed,
//     resources/updated) is not sent: every replica hears of a change
//     (mcp.Server.ShareChanges) and every copy subscribed would tell the
//     client, so only the owner's copy does, which gives exactly one
//     notification per change and subscriber, on the stream the client
//     reads (or in the store for it to replay).
//   - DELETE on any replica deletes the record and the events, and tells
//     every replica to drop its copy; a later request with the id gets
//     404 everywhere. An idle copy that expires (SessionTimeout) is only
//     dropped from its replica: the session lives on in the others and in
//     the record, which expires with the store's TTL.
//   - The "state" and "end" messages travel at most once: every
//     Options.ReplicaRecheck, each replica re-reads the records of the
//     sessions it holds (see recheck), so that a copy that missed one
//     catches up, or ends, within that bound.
//
// The session on one replica costs nothing more per request: a request
// for a session this replica holds makes no store call (but a TouchSession
// at most once a minute, in the background) and no allocation.

// replicaState is the handler's side of Options.Replicas.
type replicaState struct {
	net  eventstore.Replicas
	dir  eventstore.SessionDirectory
	upd  eventstore.SessionUpdater
	self string
	// tag starts the stream ids of the copies this replica rebuilt, so
	// that they never clash in the store with the home's (which are
	// plain numbers) or another replica's; it names the replica that
	// produced a stream (see streamProducer).
	tag string
	// idPrefix starts the ids of the requests this replica's sessions
	// send to clients (see issuerOf).
	idPrefix string

	stopMu  sync.Mutex
	stopFn  func()
	stopped bool

	mu       sync.Mutex
	building map[string]chan struct{} // sessions being rebuilt (see rebuild)
	// ended holds the sessions being rebuilt whose end another replica
	// announced meanwhile (see endWhileBuilding): the copy, made from a
	// record read before the DELETE, must not be kept.
	ended map[string]bool

	callSeq atomic.Int64 // ids of the requests a rebuild replays

	lost chan struct{} // messages from the others may have been lost: recheck now
}

// sessionReplica is the replica side of one shared session.
type sessionReplica struct {
	rebuilt bool // a copy rebuilt from the record (set at creation)

	mu  sync.Mutex
	rec sessionRecord // as last read or written by this replica

	takenMu sync.Mutex
	taken   *takenStream // the standalone stream a GET here took over, still followed (see followTaken)

	applyMu  sync.Mutex   // one refresh at a time
	touched  atomic.Int64 // the last TouchSession, as time.Since(h.start)
	ending   atomic.Bool  // ended by DELETE: the record and events go too
	gone     atomic.Bool  // ended because the record is gone (deleted elsewhere, expired)
	claiming atomic.Bool  // a claimLead in flight
}

func (r *sessionReplica) record() sessionRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec
}

func (r *sessionReplica) setRecord(rec sessionRecord) {
	r.mu.Lock()
	r.rec = rec
	r.mu.Unlock()
}

// standaloneOwner is the replica whose copy writes the session's
// standalone stream: the one holding its GET, else its lead (see
// rec.standaloneOwner).
func (r *sessionReplica) standaloneOwner() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec.standaloneOwner()
}

// Kinds of routed messages.
const (
	routeResponse   = "response"   // the client's response to a request the receiver sent
	routeStandalone = "standalone" // a message for the standalone stream the receiver owns
	routeState      = "state"      // the session's record changed: apply it
	routeEnd        = "end"        // the session was deleted: drop the copy
	routeCancel     = "cancel"     // the client cancelled a request, which may be in flight here
)

// routed is a message between replicas (eventstore.Replicas).
type routed struct {
	T string          `json:"t"`
	S string          `json:"s"`
	F string          `json:"f"`
	M json.RawMessage `json:"m,omitempty"`
}

// maxRoutedHeader bounds what a routed message holds besides M.
const maxRoutedHeader = 1 << 10

// errBadRouted reports a routed message that is not one of ours.
var errBadRouted = errors.New("mcphttp: malformed message from another replica")

// decodeRouted parses a routed message, which arrives from the carrier
// (and holds, in M, bytes a client sent).
func decodeRouted(b []byte) (routed, error) {
	var e routed
	if err := json.Unmarshal(b, &e); err != nil {
		return routed{}, fmt.Errorf("%w: %w", errBadRouted, err)
	}
	switch e.T {
	case routeResponse, routeStandalone, routeCancel:
		if len(e.M) == 0 {
			return routed{}, fmt.Errorf("%w: %s without a message", errBadRouted, e.T)
		}
	case routeState, routeEnd:
	default:
		return routed{}, fmt.Errorf("%w: kind %q", errBadRouted, e.T)
	}
	if e.S == "" || len(e.S)+len(e.F) > maxRoutedHeader {
		return routed{}, fmt.Errorf("%w: session or sender", errBadRouted)
	}
	return e, nil
}

// maxRecordBytes bounds a record read from the directory.
const maxRecordBytes = 64 << 10

// decodeRecord parses a session record read from the directory.
func decodeRecord(raw []byte) (sessionRecord, error) {
	var rec sessionRecord
	if len(raw) > maxRecordBytes {
		return rec, fmt.Errorf("mcphttp: session record of %d bytes", len(raw))
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return rec, fmt.Errorf("mcphttp: session record: %w", err)
	}
	if rec.V != sessionRecordVersion || len(rec.Owner) != 64 {
		return rec, fmt.Errorf("mcphttp: session record of version %d", rec.V)
	}
	if len(rec.Init) > 0 && (rec.Init[0] != '{' || !json.Valid(rec.Init)) {
		return rec, errors.New("mcphttp: session record: initialize params are not an object")
	}
	// The replicas named are sent messages (see routeStandalone): each
	// must be a replica's id.
	for _, r := range []string{rec.Home, rec.Get, rec.Lead} {
		if r != "" && r != leadVacant && !replicaName(r) || r == leadVacant && r != rec.Lead {
			return rec, fmt.Errorf("mcphttp: session record names replica %s", clip.Quote(r))
		}
	}
	return rec, nil
}

// newReplicas sets up Options.Replicas, which needs an event store that is
// also a SessionDirectory and a SessionUpdater; without one it logs why
// and returns nil (sessions then stay on their replica).
func (h *Handler) newReplicas() *replicaState {
	n := h.opts.Replicas
	if n == nil || h.opts.Stateless {
		return nil
	}
	dir, ok1 := h.store.(eventstore.SessionDirectory)
	upd, ok2 := h.store.(eventstore.SessionUpdater)
	if !ok1 || !ok2 {
		h.log.Error("mcphttp: Options.Replicas needs an EventStore that is a SessionDirectory and a SessionUpdater; sessions stay on the replica that created them")
		return nil
	}
	self := n.ReplicaID()
	rs := &replicaState{net: n, dir: dir, upd: upd, self: self, tag: self + "-", idPrefix: "r." + self + ".", building: make(map[string]chan struct{}), ended: make(map[string]bool), lost: make(chan struct{}, 1)}
	go rs.listen(h)
	go rs.recheck(h, cmp.Or(h.opts.ReplicaRecheck, DefaultReplicaRecheck))
	return rs
}

// listen subscribes to the messages for this replica, retrying every
// RetryInterval until it is in place or the handler closes.
func (rs *replicaState) listen(h *Handler) {
	for {
		stop, err := rs.net.Listen(context.Background(), h.onRouted)
		rs.stopMu.Lock()
		if rs.stopped {
			rs.stopMu.Unlock()
			if err == nil {
				stop()
			}
			return
		}
		if err == nil {
			rs.stopFn = stop
			rs.stopMu.Unlock()
			return
		}
		rs.stopMu.Unlock()
		h.log.Warn("mcphttp: cannot listen to the other replicas; retrying", "error", err)
		select {
		case <-h.modernDone: // closed by Close
			return
		case <-time.After(h.opts.RetryInterval):
		}
	}
}

// close stops listening; rs may be nil.
func (rs *replicaState) close() {
	if rs == nil {
		return
	}
	rs.stopMu.Lock()
	rs.stopped = true
	stop := rs.stopFn
	rs.stopFn = nil
	rs.stopMu.Unlock()
	if stop != nil {
		stop()
	}
}

// send routes a message about session sid to replica to ("" for all).
func (h *Handler) send(ctx context.Context, to, kind, sid string, m json.RawMessage) error {
	b, err := json.Marshal(routed{T: kind, S: sid, F: h.rep.self, M: m})
	if err != nil {
		return err
	}
	return h.rep.net.SendTo(ctx, to, b)
}

// onRouted handles a message from another replica, on the listening
// goroutine.
func (h *Handler) onRouted(b []byte) {
	if b == nil {
		// The carrier reconnected (eventstore.Replicas.Listen): the
		// news published meanwhile is lost; a recheck catches up.
		select {
		case h.rep.lost <- struct{}{}:
		default: // one is pending already
		}
		return
	}
	e, err := decodeRouted(b)
	if err != nil {
		h.log.Warn("mcphttp: message from another replica dropped", "error", err)
		return
	}
	if e.F == h.rep.self && (e.T == routeState || e.T == routeEnd || e.T == routeCancel) {
		return // done here already
	}
	if e.T == routeEnd && h.endWhileBuilding(e.S) {
		return
	}
	s := h.session(e.S)
	if s == nil {
		if e.T == routeResponse || e.T == routeStandalone {
			h.log.Warn("mcphttp: message from another replica for a session not held here dropped", "session", e.S, "kind", e.T)
		}
		return
	}
	switch e.T {
	case routeEnd:
		h.log.Info("mcphttp: session deleted on another replica; its copy here ends", "session", e.S)
		s.endGone() // the record and events are gone already
	case routeState:
		if s.rep != nil {
			go h.refresh(s)
		}
	case routeCancel:
		h.applyCancel(s, e.M)
	case routeResponse, routeStandalone:
		m, err := h.dec.Decode(e.M)
		if err != nil {
			h.log.Warn("mcphttp: message from another replica dropped", "session", e.S, "error", err)
			return
		}
		if e.T == routeResponse {
			if resp, ok := m.(*jsonrpc.Response); ok {
				s.ss.Deliver(context.Background(), resp)
			}
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		st := s.standaloneLocked()
		s.mu.Unlock()
		if err := st.send(m, false); err != nil {
			h.log.Warn("mcphttp: message for the standalone stream dropped", "session", e.S, "error", err)
		}
	}
}

// RequestIDPrefix is the prefix of the ids of the requests the session
// sends to its client (see mcp.Server.ConnectPush): with replicas, it
// names this replica, so that whichever replica receives the client's
// response can route it here; "" otherwise.
func (s *httpSession) RequestIDPrefix() string {
	if rs := s.h.rep; rs != nil && !s.stateless {
		return rs.idPrefix
	}
	return ""
}

// issuerOf returns the replica named by the id of a response, if the id
// is of the form requestIDPrefix makes: "r.<replica>.<count>".
func issuerOf(id jsonrpc.ID) (string, bool) {
	if !id.IsString() {
		return "", false
	}
	return parseIssuer(id.String())
}

func parseIssuer(s string) (string, bool) {
	if len(s) < 5 || s[0] != 'r' || s[1] != '.' {
		return "", false
	}
	rest := s[2:]
	j := -1
	for i := len(rest) - 1; i >= 0; i-- {
		if rest[i] == '.' {
			j = i
			break
		}
	}
	if j <= 0 || j > 64 || j == len(rest)-1 || len(rest)-j-1 > 19 {
		return "", false
	}
	for i := j + 1; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return "", false
		}
	}
	if !replicaName(rest[:j]) {
		return "", false
	}
	return rest[:j], true
}

// replicaName reports whether s can be a replica id: 1 to 64 ASCII letters
// and digits.
func replicaName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// streamProducer returns the replica that produced a stream of a shared
// session: the one named in its id, or "" for the session's home.
func streamProducer(streamID string) string {
	for i := len(streamID) - 1; i >= 0; i-- {
		if streamID[i] == '-' {
			if replicaName(streamID[:i]) {
				return streamID[:i]
			}
			return ""
		}
	}
	return ""
}

// forwardResponses sends the responses among msgs to requests another
// replica sent to the producing replica, and returns the rest. A response
// whose sender is gone is dropped, with a log line: the call it answers
// went with its replica.
func (h *Handler) forwardResponses(ctx context.Context, s *httpSession, msgs []jsonrpc.Message) []jsonrpc.Message {
	kept := msgs[:0:0]
	forwarded := false
	for i, m := range msgs {
		resp, ok := m.(*jsonrpc.Response)
		var to string
		if ok {
			to, ok = issuerOf(resp.ID)
		}
		if !ok || to == h.rep.self {
			if forwarded {
				kept = append(kept, m)
			}
			continue
		}
		if !forwarded {
			kept = append(kept, msgs[:i]...)
			forwarded = true
		}
		data, err := jsonrpc.Encode(resp)
		if err == nil {
			err = h.send(ctx, to, routeResponse, s.id, data)
		}
		if err != nil {
			h.log.Warn("mcphttp: response to another replica's request dropped", "session", s.id, "replica", to, "id", resp.ID.String(), "error", err)
		}
	}
	if !forwarded {
		return msgs
	}
	return kept
}

// changesState reports whether msgs hold a request or notification that
// changes the session's recorded state.
func changesState(msgs []jsonrpc.Message) (changes, ready bool) {
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		switch req.Method {
		case mcp.MethodLoggingSetLevel, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
			changes = true
		case mcp.NotificationInitialized:
			changes, ready = true, true
		}
	}
	return changes, ready
}

// writeBack records the state of s that a request changed, and tells the
// replicas holding a copy to apply it. The record is read first, so that
// what another replica wrote meanwhile (the GET's owner) stays; two
// replicas changing one session's state at the same instant may lose one
// change (the last write wins). A session whose record is gone was
// deleted: its copy here ends.
func (h *Handler) writeBack(ctx context.Context, s *httpSession, ready bool) {
	h.updateRecord(ctx, s, func(rec *sessionRecord) bool {
		rec.Level = s.ss.LoggingLevel()
		rec.Subs = s.ss.ResourceSubscriptions()
		if ready {
			rec.Ready = true
		}
		return true
	})
}

// claimStandalone records this replica as the holder of the session's GET
// stream (on), or forgets it (off, if still this one).
func (h *Handler) claimStandalone(ctx context.Context, s *httpSession, on bool) {
	self := h.rep.self
	h.updateRecord(ctx, s, func(rec *sessionRecord) bool {
		switch {
		case on:
			rec.Get = self
		case rec.Get == self:
			// This replica goes on writing the stream, which the
			// client's next Last-Event-ID names: a GET that resumes
			// through another replica then takes over every event
			// written meanwhile (before, the home wrote them to a
			// stream of its own that the take-over never read).
			rec.Get, rec.Lead = "", self
		default:
			return false
		}
		return true
	})
}

// updateRecord reads the record of s, changes it with f, writes it back
// and tells the other replicas; when f reports no change, it only keeps
// the record read.
func (h *Handler) updateRecord(ctx context.Context, s *httpSession, f func(*sessionRecord) bool) {
	raw, ok, err := h.rep.dir.SessionRecord(ctx, s.id)
	var rec sessionRecord
	if err == nil && ok {
		rec, err = decodeRecord(raw)
	}
	if err == nil && ok {
		if !f(&rec) {
			s.rep.setRecord(rec)
			return
		}
		var b []byte
		if b, err = json.Marshal(rec); err == nil {
			ok, err = h.rep.upd.UpdateSession(ctx, s.id, b)
		}
	}
	if err != nil {
		h.log.Warn("mcphttp: session state not shared with the other replicas", "session", s.id, "error", err)
		return
	}
	if !ok {
		h.endDeleted(s)
		return
	}
	s.rep.setRecord(rec)
	if err := h.send(ctx, "", routeState, s.id, nil); err != nil {
		h.log.Warn("mcphttp: the other replicas were not told of a session's new state", "session", s.id, "error", err)
	}
}

// refresh reads the record of s, which another replica changed, and
// applies it to the copy here.
func (h *Handler) refresh(s *httpSession) {
	s.rep.applyMu.Lock()
	defer s.rep.applyMu.Unlock()
	ctx := context.Background()
	raw, ok, err := h.rep.dir.SessionRecord(ctx, s.id)
	var rec sessionRecord
	if err == nil && ok {
		rec, err = decodeRecord(raw)
	}
	if err != nil {
		h.log.Warn("mcphttp: session state from another replica not applied", "session", s.id, "error", err)
		return
	}
	if !ok {
		h.endDeleted(s)
		return
	}
	s.rep.setRecord(rec)
	h.applyState(ctx, s, rec)
	if rec.standaloneOwner() == "" {
		h.claimLead(s, "")
	}
}

// endGone ends the copy s of a session whose record is gone (deleted
// through another replica, or expired): unlike an idle copy's, its end
// lets nothing go (see releaseLead).
func (s *httpSession) endGone() {
	s.rep.gone.Store(true)
	s.terminate()
}

// applyState brings the log level and resource subscriptions of the copy
// s to those of rec, with requests delivered as the client's would be.
func (h *Handler) applyState(ctx context.Context, s *httpSession, rec sessionRecord) {
	have := s.ss.ResourceSubscriptions()
	for _, uri := range rec.Subs {
		if !slices.Contains(have, uri) {
			h.replay(ctx, s, mcp.MethodResourcesSubscribe, &mcp.SubscribeRequestParams{URI: uri})
		}
	}
	for _, uri := range have {
		if !slices.Contains(rec.Subs, uri) {
			h.replay(ctx, s, mcp.MethodResourcesUnsubscribe, &mcp.UnsubscribeRequestParams{URI: uri})
		}
	}
	if rec.Level != "" && rec.Level != s.ss.LoggingLevel() {
		h.replay(ctx, s, mcp.MethodLoggingSetLevel, &mcp.SetLevelRequestParams{Level: rec.Level})
	}
}

// replay delivers one request to the copy s, as its client once sent it
// to another replica; a failure is logged.
func (h *Handler) replay(ctx context.Context, s *httpSession, method string, params any) {
	b, err := json.Marshal(params)
	if err == nil {
		err = s.internalCall(ctx, h.replayID(), method, b)
	}
	if err != nil {
		h.log.Warn("mcphttp: session state not applied to this replica's copy", "session", s.id, "method", method, "error", err)
	}
}

func (h *Handler) replayID() jsonrpc.ID {
	return jsonrpc.StringID("\x00mcpstack-replay-" + strconv.FormatInt(h.rep.callSeq.Add(1), 10))
}

// rebuild makes this replica's copy of session id, which another replica
// created, from its record, for the request r; it answers r itself (404,
// 403, 503…) and returns nil when it cannot. Concurrent first requests for
// one session build one copy: the others wait for it.
func (h *Handler) rebuild(w http.ResponseWriter, r *http.Request, id string) *httpSession {
	rs := h.rep
	for {
		rs.mu.Lock()
		ch, busy := rs.building[id]
		if !busy {
			ch = make(chan struct{})
			rs.building[id] = ch
		}
		rs.mu.Unlock()
		if !busy {
			defer func() {
				rs.mu.Lock()
				delete(rs.building, id)
				delete(rs.ended, id)
				rs.mu.Unlock()
				close(ch)
			}()
			if s := h.session(id); s != nil {
				return s // built while this request looked
			}
			return h.build(w, r, id)
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			h.writeUnavailable(w, "Service Unavailable: the session is being restored; try again")
			return nil
		}
		if s := h.session(id); s != nil {
			return s
		}
		// The other build failed (another caller's, perhaps): try ours.
	}
}

// build does the work of rebuild.
func (h *Handler) build(w http.ResponseWriter, r *http.Request, id string) *httpSession {
	rs := h.rep
	raw, ok, err := rs.dir.SessionRecord(r.Context(), id)
	if err != nil {
		h.storeFailed(w, id, err)
		return nil
	}
	var rec sessionRecord
	if ok {
		rec, err = decodeRecord(raw)
	}
	if !ok || err != nil || len(rec.Init) == 0 {
		if err != nil {
			h.log.Warn("mcphttp: session record unusable", "session", id, "error", err)
		}
		writeHTTPError(w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: unknown or terminated session")
		return nil
	}
	caller, refused := h.refuseStranger(w, r, id, rec)
	if refused {
		return nil
	}
	if h.closing.Load() {
		h.writeUnavailable(w, "Service Unavailable: the server is shutting down")
		return nil
	}
	if h.full() {
		h.writeUnavailable(w, tooManySessions)
		return nil
	}
	srv := h.getServer(r)
	if srv == nil {
		writeHTTPError(w, http.StatusBadRequest, jsonrpc.ID{}, "Bad Request: no server for this request")
		return nil
	}
	s := &httpSession{h: h, srv: srv, id: id, owner: caller, rep: &sessionReplica{rebuilt: true, rec: rec}}
	s.ss = srv.ConnectPush(s)
	ctx := context.Context(httpValues{r})
	if err := s.internalCall(ctx, h.replayID(), mcp.MethodInitialize, rec.Init); err != nil {
		s.ss.Close()
		h.log.Warn("mcphttp: session not restored: its initialize failed here", "session", id, "error", err)
		writeHTTPError(w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: unknown or terminated session")
		return nil
	}
	if rec.Ready {
		s.ss.Deliver(ctx, &jsonrpc.Request{Method: mcp.NotificationInitialized})
	}
	h.applyState(ctx, s, rec)
	// rs.mu around the check and the registration: an end announced
	// meanwhile is either seen here or finds the session registered (see
	// endWhileBuilding).
	h.rep.mu.Lock()
	if h.rep.ended[id] {
		h.rep.mu.Unlock()
		s.ss.Close()
		h.log.Info("mcphttp: session deleted on another replica while being restored here; not restored", "session", id)
		writeHTTPError(w, http.StatusNotFound, jsonrpc.ID{}, "Not Found: unknown or terminated session")
		return nil
	}
	h.mu.Lock()
	if h.closed.Load() || (h.opts.MaxSessions > 0 && len(h.sessions) >= h.opts.MaxSessions) {
		h.mu.Unlock()
		h.rep.mu.Unlock()
		s.ss.Close()
		h.writeUnavailable(w, tooManySessions)
		return nil
	}
	h.sessions[id] = s
	h.mu.Unlock()
	h.rep.mu.Unlock()
	h.log.Debug("mcphttp: session restored from the shared directory", "session", id)
	if rec.standaloneOwner() == "" {
		h.claimLead(s, "")
	}
	return s
}

// endWhileBuilding notes the end of session id, announced by another
// replica, if this one is rebuilding it and does not hold it yet, and
// reports whether it did: build then drops the copy, made from a record
// read before the DELETE, instead of serving a deleted session until the
// recheck. Called on the listening goroutine; takes rs.mu, then h.mu (as
// build does).
func (h *Handler) endWhileBuilding(id string) bool {
	rs := h.rep
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, busy := rs.building[id]; !busy || h.session(id) != nil {
		return false
	}
	rs.ended[id] = true
	return true
}

// touchEvery is how often a replica renews the expiry of a session in
// use in the directory (see eventstore.SessionUpdater.TouchSession).
const touchEvery = time.Minute

// touch renews, in the background and at most once every touchEvery, the
// expiry of the record of s, which a request uses.
func (h *Handler) touch(s *httpSession) {
	now := int64(time.Since(h.start))
	last := s.rep.touched.Load()
	if now-last < int64(touchEvery) || !s.rep.touched.CompareAndSwap(last, now) {
		return
	}
	if last == 0 {
		return // just created or rebuilt: the record is fresh
	}
	go func() {
		if err := h.rep.upd.TouchSession(context.Background(), s.id); err != nil {
			h.log.Warn("mcphttp: session record not renewed", "session", s.id, "error", err)
		}
	}()
}

// routeStandalone sends m, a message for the standalone stream of s, to
// the replica that owns that stream, if another; it reports whether m was
// taken care of (sent, or dropped as a change notification that the owner
// sends itself). A message that cannot be sent stays here.
func (h *Handler) routeStandalone(ctx context.Context, s *httpSession, m jsonrpc.Message) bool {
	owner := s.rep.standaloneOwner()
	if owner == "" && isChangeNotice(m) {
		// Nobody writes the stream for a moment (see leadVacant): the
		// copies would each tell the client; none does.
		return true
	}
	if owner == "" || owner == h.rep.self {
		return false
	}
	if isChangeNotice(m) {
		// Every replica hears of a change, and each copy subscribed
		// would tell the client: only the owner's does (one per change).
		return true
	}
	data, err := jsonrpc.Encode(m)
	if err == nil {
		err = h.send(context.WithoutCancel(ctx), owner, routeStandalone, s.id, data)
	}
	if err != nil {
		h.log.Warn("mcphttp: message for the standalone stream kept on this replica", "session", s.id, "owner", owner, "error", err)
		return false
	}
	return true
}

// isChangeNotice reports whether m is a notification that a change
// causes on every replica.
func isChangeNotice(m jsonrpc.Message) bool {
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsNotification() {
		return false
	}
	switch req.Method {
	case mcp.NotificationToolsListChanged, mcp.NotificationPromptsListChanged, mcp.NotificationResourcesListChanged, mcp.NotificationResourcesUpdated:
		return true
	}
	return false
}

// endEverywhere tells the other replicas that s was deleted.
func (h *Handler) endEverywhere(ctx context.Context, s *httpSession) {
	if err := h.send(ctx, "", routeEnd, s.id, nil); err != nil {
		h.log.Warn("mcphttp: the other replicas were not told of a session's end; their copies end when idle", "session", s.id, "error", err)
	}
}

// resumeShared serves a GET that resumes a stream of the shared session s
// that another replica produced (its home's, or a copy's), which this
// replica cannot continue: it replays the stream's events from the store
// and sends the client back for more while the producer runs (see
// replayForeign). It reports false for a stream of this replica's.
func (h *Handler) resumeShared(w http.ResponseWriter, r *http.Request, s *httpSession, streamID string, seq int64) bool {
	producer := streamProducer(streamID)
	if producer == "" {
		producer = s.rep.record().Home
	}
	if producer == "" || producer == h.rep.self {
		return false
	}
	h.replayForeign(w, r, s.id, streamID, seq, func() (bool, error) { return h.rep.net.ReplicaAlive(r.Context(), producer) })
	return true
}

// forwardCancels tells the other replicas of each notifications/cancelled
// among msgs: the request it cancels may be in flight on another replica
// (the client POSTs the cancellation wherever the load balancer sends it;
// MCP 2025-11-25 basic/utilities/cancellation), which then cancels it and
// ends its stream as this one would (see applyCancel).
func (h *Handler) forwardCancels(ctx context.Context, s *httpSession, msgs []jsonrpc.Message) {
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.Method != mcp.NotificationCancelled {
			continue
		}
		data, ok := h.cancelToForward(s, req)
		if !ok {
			continue
		}
		if err := h.send(ctx, "", routeCancel, s.id, data); err != nil {
			h.log.Warn("mcphttp: cancellation not sent to the other replicas", "session", s.id, "error", err)
		}
	}
}

// maxForwardedCancel bounds a cancellation sent to the other replicas:
// a request id of any sane length and a clipped reason.
const maxForwardedCancel = 1 << 10

// cancelToForward returns what the other replicas need of req, a
// notifications/cancelled from the client: the request id and the reason,
// clipped, rebuilt by us, so that what the client sent (up to the body
// limit, of any shape) is not what every replica receives and decodes. It
// reports false when there is nothing to forward: no valid request id (no
// replica would cancel anything), the request is in flight here (this
// replica cancels it), or the id is absurdly long (no replica holds it).
func (h *Handler) cancelToForward(s *httpSession, req *jsonrpc.Request) ([]byte, bool) {
	var p mcp.CancelledNotificationParams
	if json.Unmarshal(req.Params, &p) != nil || !p.RequestID.IsValid() {
		return nil, false
	}
	s.mu.Lock()
	here := s.requests.get(p.RequestID) != nil
	s.mu.Unlock()
	if here {
		return nil, false
	}
	params, err := json.Marshal(mcp.CancelledNotificationParams{RequestID: p.RequestID, Reason: clip.String(p.Reason)})
	if err != nil || len(params) > maxForwardedCancel {
		h.log.Warn("mcphttp: cancellation not sent to the other replicas: request id too long", "session", s.id)
		return nil, false
	}
	data, err := jsonrpc.Encode(&jsonrpc.Request{Method: mcp.NotificationCancelled, Params: params})
	return data, err == nil
}

// applyCancel delivers a cancellation another replica received to the
// copy s, if the request it names is in flight here.
func (h *Handler) applyCancel(s *httpSession, raw json.RawMessage) {
	m, err := h.dec.Decode(raw)
	req, ok := m.(*jsonrpc.Request)
	if err != nil || !ok || req.Method != mcp.NotificationCancelled {
		h.log.Warn("mcphttp: cancellation from another replica dropped", "session", s.id)
		return
	}
	var p mcp.CancelledNotificationParams
	if json.Unmarshal(req.Params, &p) != nil || !p.RequestID.IsValid() {
		return
	}
	s.mu.Lock()
	here := s.requests.get(p.RequestID) != nil
	s.mu.Unlock()
	if here {
		s.ss.Deliver(context.Background(), req)
		s.noteCancel(req)
	}
}

// isStandaloneID reports whether a stream id names a session's standalone
// stream: "0", or a copy's "<replica>-0" (see httpSession.standaloneID).
func isStandaloneID(streamID string) bool {
	return streamID == standaloneStreamID || len(streamID) > 2 && streamID[len(streamID)-2:] == "-0" && streamProducer(streamID) != ""
}

// takesOver reports whether a GET with Last-Event-ID last takes the
// session's standalone stream over on this replica (see takeOver), rather
// than replaying it from the store for a session not held here.
func (h *Handler) takesOver(last string) bool {
	if h.rep == nil {
		return false
	}
	streamID, _, ok := parseEventID(last)
	return ok && isStandaloneID(streamID)
}

// priorEvents are the events of another replica's standalone stream that a
// GET taking it over sends first.
type priorEvents struct {
	stream string
	after  int64
	events []eventstore.Event
}

// write sends the events on c, which it starts; p may be nil.
func (p *priorEvents) write(c *answerWriter) {
	if p == nil {
		return
	}
	c.start(p.stream, p.after, true)
	for _, e := range p.events {
		c.event(p.stream, e.Seq, e.Data)
	}
}

// takeOver serves a GET that resumes the standalone stream streamID of the
// shared session s, written by another replica (the one that held the
// client's GET before, or the session's home): this replica becomes the
// stream's writer, as for a new GET, after sending the events of the old
// stream after seq. Messages then come here, wherever they are produced
// (routeStandalone), instead of the client polling a stream whose writer
// has moved on. It reports false for any other resumption, which the
// caller serves as before, and a nil prior when it answered the request
// itself (the store failed).
func (h *Handler) takeOver(w http.ResponseWriter, r *http.Request, s *httpSession, streamID string, seq int64) (prior *priorEvents, ok bool) {
	if s.rep == nil || !isStandaloneID(streamID) || streamID == s.standaloneID() {
		return nil, false
	}
	events, err := h.takenAfter(r.Context(), s.id, streamID, seq)
	if err != nil {
		h.resumeFailed(w, s.id, err)
		return nil, true
	}
	return &priorEvents{stream: streamID, after: seq, events: events}, true
}

// takenAfter returns the events of another replica's standalone stream
// after seq, as the store's After, but none, rather than ErrUnavailable,
// after the priming event alone (seq 0, which no store keeps): a stream
// that wrote nothing yet is unknown to the store, and nothing was missed.
func (h *Handler) takenAfter(ctx context.Context, sid, streamID string, seq int64) ([]eventstore.Event, error) {
	events, err := h.store.After(ctx, sid, streamID, seq)
	if err != nil && seq == 0 && errors.Is(err, eventstore.ErrUnavailable) {
		return nil, nil
	}
	return events, err
}

// endDeleted ends the copy here of a session whose record is gone: it was
// deleted on another replica (or expired there).
func (h *Handler) endDeleted(s *httpSession) {
	h.log.Info("mcphttp: session deleted on another replica; its copy here ends", "session", s.id)
	s.endGone()
}
