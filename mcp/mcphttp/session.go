package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// httpSession is the server side of one Streamable HTTP session: the
// jsonrpc.Stream of its ServerSession, whose push connection POSTs deliver
// their messages to; Write routes each outgoing message to the stream it
// belongs to. An idle session has no goroutine, and its maps, channel,
// standalone stream and timer are made on first use.
type httpSession struct {
	h         *Handler
	id        string      // "" in stateless mode
	owner     string      // Identity of the creator, when the handler binds sessions
	srv       *mcp.Server // the server of ss, for its protocol versions
	ss        *mcp.ServerSession
	closeOnce sync.Once
	stateless bool
	// opening is the stream of the initialize that opened the session
	// until it finishes (see outStream.finish).
	opening atomic.Pointer[outStream]
	// rep is the session's side of Options.Replicas (replicas.go), set
	// before the session is shared; nil without replicas.
	rep *sessionReplica

	mu         sync.Mutex
	closed     bool
	armed      bool                  // timer is set to fire (see leave and expire)
	done       chan struct{}         // see doneChan
	requests   requestStreams        // in-flight requests
	streams    map[string]*outStream // live resumable POST streams
	standalone *outStream            // see standaloneLocked
	nextStream int64
	// active and precancelNext are int32, side by side, so that the
	// session fits its 256-byte size class (TestHTTPSessionFits).
	active        int32         // HTTP requests in progress
	precancelNext int32         // see noteCancel
	idleSince     time.Duration // when active fell to 0, as time.Since(h.start)
	timer         *time.Timer

	precancelled []jsonrpc.ID // cancelled before they arrived
}

// SessionID is the session's Mcp-Session-Id, "" for a stateless session;
// ServerSession.ID reports it.
func (s *httpSession) SessionID() string { return s.id }

func (h *Handler) newSession(srv *mcp.Server) (*httpSession, error) {
	s := &httpSession{h: h, srv: srv, id: mintSessionID(h.opts.SessionIDKeys)}
	ss := srv.ConnectPush(s)
	s.ss = ss
	h.mu.Lock()
	if h.closed.Load() {
		h.mu.Unlock()
		ss.Close()
		return nil, errors.New("the handler is closed")
	}
	if max := h.opts.MaxSessions; max > 0 && len(h.sessions) >= max {
		h.mu.Unlock()
		ss.Close()
		return nil, errTooManySessions
	}
	h.sessions[s.id] = s
	h.mu.Unlock()
	return s, nil
}

func (h *Handler) newStatelessSession(srv *mcp.Server) (*httpSession, error) {
	s := &httpSession{h: h, srv: srv, stateless: true}
	s.ss = srv.ConnectPush(s)
	return s, nil
}

// statelessInitID is the id of the implicit initialize of a stateless
// session; the NUL makes a clash with a client's id unlikely.
var statelessInitID = jsonrpc.StringID("\x00mcpstack-implicit-initialize")

// implicitInit initializes a stateless session at version.
func (s *httpSession) implicitInit(ctx context.Context, version string) error {
	params, err := json.Marshal(&mcp.InitializeRequestParams{ProtocolVersion: version, ClientInfo: mcp.Implementation{Name: "unknown", Version: "0"}})
	if err != nil {
		return err
	}
	if err := s.internalCall(ctx, statelessInitID, mcp.MethodInitialize, params); err != nil {
		return err
	}
	s.ss.Deliver(ctx, &jsonrpc.Request{Method: mcp.NotificationInitialized})
	return nil
}

// internalCall delivers a request of the handler's own making to the
// session (an implicit initialize, or the replay of what the client sent
// to another replica: see replicas.go) and reports whether it succeeded;
// its response goes to no client.
func (s *httpSession) internalCall(ctx context.Context, id jsonrpc.ID, method string, params json.RawMessage) error {
	// The stream has a writer, which nothing pumps, only so that send
	// keeps the response.
	st := &outStream{sess: s, pending: 1, w: newStreamWriter(nil)}
	if _, _, ok := s.register([]jsonrpc.ID{id}, st, false); !ok {
		return fmt.Errorf("the id of %s is in use", method)
	}
	s.ss.Deliver(ctx, &jsonrpc.Request{ID: id, Method: method, Params: params})
	st.mu.Lock()
	q := st.queue
	ok := st.done && len(q) > 0 && !q[len(q)-1].errRes
	st.w = nil
	s.h.releaseMsgs(st.takeQueue()) // read, never written: its bytes go back to the budget
	st.mu.Unlock()
	if s.isClosed() {
		return jsonrpc.ErrClosed
	}
	if !ok {
		if method == mcp.MethodInitialize {
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(params, &p)
			return fmt.Errorf("the server refused initialize at version %q", p.ProtocolVersion)
		}
		return fmt.Errorf("the server refused %s", method)
	}
	return nil
}

// closeWhenAnswered ends a stateless session once its POST is answered;
// if the client went away first, the session ends when the answer is
// complete.
func (s *httpSession) closeWhenAnswered() {
	s.mu.Lock()
	pending := s.requests.len()
	s.mu.Unlock()
	if pending == 0 {
		s.terminate()
	}
}

var errNoRead = errors.New("mcphttp: a Streamable HTTP session is not read: its messages are delivered")

// Read is never called: the session is a push session (see
// mcp.Server.ConnectPush), to which POSTs deliver their messages.
func (s *httpSession) Read(context.Context) (jsonrpc.Message, error) {
	return nil, errNoRead
}

// Write routes m: a response, and whatever is sent from the context of a
// request's handler, to that request's stream; anything else to the
// standalone stream.
func (s *httpSession) Write(ctx context.Context, m jsonrpc.Message) error {
	var st *outStream
	isResp := false
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return jsonrpc.ErrClosed
	}
	switch m := m.(type) {
	case *jsonrpc.Response:
		isResp = true
		id := m.ID
		if !id.IsValid() {
			id, _ = jsonrpc.RequestIDFromContext(ctx)
		}
		st = s.requests.remove(id, nil)
	case *jsonrpc.Request:
		if id, ok := jsonrpc.RequestIDFromContext(ctx); ok {
			st = s.requests.get(id)
		}
	}
	if st == nil && !isResp && s.rep == nil {
		st = s.standaloneLocked()
	}
	s.mu.Unlock()
	if st == nil && !isResp && s.rep != nil {
		// A shared session: the stream may be another replica's.
		if s.h.routeStandalone(ctx, s, m) {
			return nil
		}
		s.mu.Lock()
		if !s.closed {
			st = s.standaloneLocked()
		}
		s.mu.Unlock()
	}
	if st == nil {
		s.h.log.Debug("mcphttp: message for no stream dropped", "session", s.id)
		return nil
	}
	return st.send(m, isResp)
}

// Close ends the session's streams, once: it is the stream's Close, which
// ServerSession.Close calls (see mcp.Server.ConnectPush); the handler ends
// a session with terminate, never with Close alone.
func (s *httpSession) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		if s.timer != nil {
			s.timer.Stop()
		}
		open := s.requests.appendStreams(nil)
		for _, st := range s.streams {
			open = append(open, st)
		}
		standalone := s.standalone
		if s.done != nil {
			close(s.done)
		}
		s.mu.Unlock()
		// Streams that no response is attached to will never finish.
		// retire takes each one's lock: an append in progress under it
		// ends first, and later ones see the session closed.
		for _, st := range open {
			st.retire()
		}
		if standalone != nil {
			standalone.mu.Lock()
			//lint:ignore SA2001 a barrier, not a critical section: see appendEvent
			standalone.mu.Unlock()
		}
		if s.id != "" {
			h := s.h
			h.mu.Lock()
			if h.sessions[s.id] == s {
				delete(h.sessions, s.id)
			}
			h.mu.Unlock()
			// A shared session outlives its copy here, unless deleted;
			// the stream this copy wrote needs another writer.
			if s.rep != nil && h.rep != nil && !s.rep.ending.Load() && !s.rep.gone.Load() {
				go h.releaseLead(s)
			}
			if h.store != nil && !h.keepEvents.Load() && (s.rep == nil || s.rep.ending.Load()) {
				if err := h.store.DeleteSession(context.Background(), s.id); err != nil {
					h.log.Warn("mcphttp: event store cleanup failed", "session", s.id, "error", err)
				}
			}
		}
	})
	return nil
}

// terminate ends the session and its ServerSession.
func (s *httpSession) terminate() {
	if s.ss != nil {
		s.ss.Close()
	}
	s.Close()
}

// handOver hands the POSTed messages to the session's connection in this
// goroutine: notifications and responses in order, the requests of a batch
// concurrently; it returns when every request has been answered.
func (s *httpSession) handOver(ctx context.Context, msgs []jsonrpc.Message) {
	ss := s.ss
	if len(msgs) == 1 {
		ss.Deliver(ctx, msgs[0])
		s.noteCancel(msgs[0])
		return
	}
	// At most MaxBatchConcurrency goroutines: a goroutine per entry
	// would let one POST start as many as its batch is long.
	slots := make(chan struct{}, s.h.opts.MaxBatchConcurrency)
	var wg sync.WaitGroup
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsNotification() {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				ss.Deliver(ctx, m)
			})
			continue
		}
		ss.Deliver(ctx, m)
		s.noteCancel(m)
	}
	wg.Wait()
}

// isClosed reports whether the session has ended.
func (s *httpSession) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// doneChan returns a channel closed when the session ends, made on first
// use.
func (s *httpSession) doneChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		s.done = make(chan struct{})
		if s.closed {
			close(s.done)
		}
	}
	return s.done
}

// standaloneLocked returns the session's standalone stream, made on first
// use. s.mu is held.
func (s *httpSession) standaloneLocked() *outStream {
	if s.standalone == nil {
		s.standalone = &outStream{sess: s, standalone: true, id: s.standaloneID(), sse: true, resumable: true}
	}
	return s.standalone
}

// noteCancel ends the stream of a request that the client cancelled: the
// session will not answer it.
func (s *httpSession) noteCancel(m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != mcp.NotificationCancelled {
		return
	}
	var p mcp.CancelledNotificationParams
	if err := strictjson.Unmarshal(req.Params, &p); err != nil || !p.RequestID.IsValid() {
		return
	}
	s.mu.Lock()
	st := s.requests.remove(p.RequestID, nil)
	if st == nil {
		// The cancellation may have overtaken its request, which travels
		// in another POST: remember it for a while.
		if len(s.precancelled) < maxPrecancelled {
			s.precancelled = append(s.precancelled, p.RequestID)
		} else {
			s.precancelled[s.precancelNext] = p.RequestID
			s.precancelNext = (s.precancelNext + 1) % maxPrecancelled
		}
	}
	s.mu.Unlock()
	if st != nil {
		st.answered()
	}
}

// maxPrecancelled bounds the cancellations a session remembers for
// requests it has not seen yet.
const maxPrecancelled = 16

// dropPrecancelled removes from msgs and ids the requests that the client
// cancelled before they arrived.
func (s *httpSession) dropPrecancelled(msgs []jsonrpc.Message, ids []jsonrpc.ID) ([]jsonrpc.Message, []jsonrpc.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.precancelled) == 0 {
		return msgs, ids
	}
	cancelled := func(id jsonrpc.ID) bool {
		for i, c := range s.precancelled {
			if c == id {
				s.precancelled[i] = jsonrpc.ID{}
				return true
			}
		}
		return false
	}
	var keptMsgs []jsonrpc.Message
	var keptIDs []jsonrpc.ID
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsNotification() && cancelled(req.ID) {
			continue
		}
		keptMsgs = append(keptMsgs, m)
	}
	for _, m := range keptMsgs {
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsNotification() {
			keptIDs = append(keptIDs, req.ID)
		}
	}
	return keptMsgs, keptIDs
}

// register maps request ids to their stream. An id in flight already, in
// this session or earlier in ids, is never mapped twice (a second mapping
// would lose one of the two responses: see requestStreams). With
// perEntry (a batch), such ids are reported by their index in ids, in
// refused, and the others are mapped; otherwise nothing is mapped and
// register fails, naming the id.
func (s *httpSession) register(ids []jsonrpc.ID, st *outStream, perEntry bool) (dup jsonrpc.ID, refused []int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, id := range ids {
		if s.requests.get(id) == nil {
			s.requests.put(id, st)
			continue
		}
		if perEntry {
			refused = append(refused, i)
			continue
		}
		for _, done := range ids[:i] {
			s.requests.remove(done, st)
		}
		return id, nil, false
	}
	if st.sse && st.resumable {
		if s.streams == nil {
			s.streams = make(map[string]*outStream)
		}
		s.streams[st.id] = st
	}
	return jsonrpc.ID{}, refused, true
}

// refuse answers, on st, each request of a batch whose id register
// refused (by index in ids, the ids of msgs' requests in order) with an
// invalid request error, and returns msgs without them.
func (s *httpSession) refuse(st *outStream, msgs []jsonrpc.Message, ids []jsonrpc.ID, refused []int) []jsonrpc.Message {
	kept := make([]jsonrpc.Message, 0, len(msgs)-len(refused))
	k, r := 0, 0 // index in ids of the next request; in refused of the next refusal
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsNotification() {
			k++
			if r < len(refused) && refused[r] == k-1 {
				r++
				continue
			}
		}
		kept = append(kept, m)
	}
	for _, i := range refused {
		id := ids[i]
		resp := &jsonrpc.Response{ID: id, Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: id "+string(id.AppendJSON(nil))+" is already in use")}
		if err := st.send(resp, true); err != nil {
			s.h.log.Warn("mcphttp: cannot answer a batch entry", "session", s.id, "error", err)
		}
	}
	return kept
}

func (s *httpSession) addStream(st *outStream) {
	s.mu.Lock()
	if s.streams == nil {
		s.streams = make(map[string]*outStream)
	}
	s.streams[st.id] = st
	s.mu.Unlock()
}

func (s *httpSession) newStreamID() string {
	s.mu.Lock()
	s.nextStream++
	n := s.nextStream
	s.mu.Unlock()
	if s.rep != nil && s.rep.rebuilt {
		// Unique among the replicas' copies (see replicaState.tag).
		return s.h.rep.tag + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// standaloneID is the stream id of the session's standalone stream: "0",
// or in a copy rebuilt by a replica, one that names it.
func (s *httpSession) standaloneID() string {
	if s.rep != nil && s.rep.rebuilt {
		return s.h.rep.tag + standaloneStreamID
	}
	return standaloneStreamID
}

// checkVersion checks the MCP-Protocol-Version header of a request in the
// session. An absent header means the negotiated version, the server's
// only other way to know it; a present one must be the negotiated one (MCP
// 2025-11-25 basic/transports#protocol-version-header: an invalid or
// unsupported version gets 400).
func (s *httpSession) checkVersion(v string) string {
	if v == "" {
		return ""
	}
	neg := s.ss.ProtocolVersion()
	if neg == "" {
		if slices.Contains(s.srv.ProtocolVersions(), v) {
			return ""
		}
		return "Bad Request: unsupported " + headerProtocolVersion + " " + clip.Quote(v)
	}
	if v != neg {
		return "Bad Request: " + headerProtocolVersion + " " + clip.Quote(v) + " is not the session's protocol version"
	}
	return ""
}

// enter counts an HTTP request in progress; it reports false if the
// session has ended.
func (s *httpSession) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.active++
	return true
}

// leave ends an HTTP request; the last one starts the idle clock.
func (s *httpSession) leave() {
	d := s.h.opts.SessionTimeout
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.active > 0 || s.closed || d < 0 || s.stateless {
		return
	}
	s.idleSince = time.Since(s.h.start)
	if s.armed {
		// The timer will fire at or before idleSince+d, and expire then
		// waits out the rest: no need to reset it at every request.
		return
	}
	s.armed = true
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.expire)
	} else {
		s.timer.Reset(d)
	}
}

// expire ends the session if it is still idle.
func (s *httpSession) expire() {
	d := s.h.opts.SessionTimeout
	s.mu.Lock()
	s.armed = false
	if s.closed || s.active > 0 {
		s.mu.Unlock()
		return
	}
	if rest := d - (time.Since(s.h.start) - s.idleSince); rest > 0 {
		s.armed = true
		s.timer.Reset(rest)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.h.log.Info("mcphttp: idle session expired", "session", s.id)
	s.terminate()
}
