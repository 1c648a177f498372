package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// subscriptions/listen (basic/patterns/subscriptions): a modern client
// opens a long-lived response stream and names the change notifications it
// wants; the server acknowledges first, then sends those notifications,
// each tagged with the listen request's id, until the client goes away or
// the server shuts down.

// Default bounds of the modern leg's listen streams (see ServerOptions).
const (
	// DefaultMaxListeners bounds the listen streams open at once: each
	// holds a connection and a goroutine.
	DefaultMaxListeners = 1024
	// DefaultListenKeepAlive is under the 30 s idle timeouts common in
	// proxies and load balancers.
	DefaultListenKeepAlive = 25 * time.Second
	// DefaultListenQueue is far more change notifications than a healthy
	// client leaves unread.
	DefaultListenQueue = 64
	// DefaultMaxListenBytes is room for the MaxListeners streams of
	// clients that listen to a few dozen resources each (a listen request
	// is a few hundred bytes plus its URIs), far less than what
	// MaxListeners streams with the longest filters allowed would hold
	// (MaxSubscriptions URIs of MaxSubscriptionURILength bytes: 1 MiB
	// each).
	DefaultMaxListenBytes = 16 << 20
	// DefaultMaxListenersPerPrincipal is a few streams for each of a
	// user's clients (one listens once, or once per resource set).
	DefaultMaxListenersPerPrincipal = 32
)

// listener is one open subscriptions/listen stream.
type listener struct {
	filter SubscriptionFilter // what the server agreed to honour
	uris   map[string]struct{}
	ch     chan listenerMsg
	behind atomic.Bool // ch overflowed: the stream ends
	// bytes is what the stream holds, counted against MaxListenBytes:
	// its request's params and the filter decoded from them.
	bytes int64
	// principal is the caller's, counted against
	// MaxListenersPerPrincipal; "" for none.
	principal string
}

// listenerMsg is a change for a listener: a notification method and, for
// notifications/resources/updated, the URI.
type listenerMsg struct {
	method, uri string
}

// wants reports whether l asked for method (about uri).
func (l *listener) wants(method, uri string) bool {
	switch method {
	case NotificationToolsListChanged:
		return l.filter.ToolsListChanged
	case NotificationPromptsListChanged:
		return l.filter.PromptsListChanged
	case NotificationResourcesListChanged:
		return l.filter.ResourcesListChanged
	case NotificationResourcesUpdated:
		_, ok := l.uris[uri]
		return ok
	}
	return false
}

// notifyListeners queues a change for every listen stream that asked for
// it. It never blocks: a stream too far behind is ended instead.
func (s *Server) notifyListeners(method, uri string) {
	m := &s.modernMem
	m.lmu.Lock()
	defer m.lmu.Unlock()
	for l := range m.listeners {
		if !l.wants(method, uri) {
			continue
		}
		select {
		case l.ch <- listenerMsg{method, uri}:
		default:
			l.behind.Store(true)
		}
	}
}

// Refusals of a listen stream past the server's bounds (CodeOverloaded:
// the client may retry later).
var (
	errTooManyListeners = jsonrpc.NewError(jsonrpc.CodeOverloaded, "Server overloaded: too many subscriptions/listen streams are open")
	errListenBytes      = jsonrpc.NewError(jsonrpc.CodeOverloaded, "Server overloaded: the open subscriptions/listen streams hold too many bytes; listen with a shorter filter or retry later")
	errCallerListeners  = jsonrpc.NewError(jsonrpc.CodeOverloaded, "Server overloaded: this caller has too many subscriptions/listen streams open; close one first")
)

// addListener registers l within ServerOptions.MaxListeners and
// MaxListenBytes, or returns the refusal.
func (s *Server) addListener(l *listener) *jsonrpc.Error {
	m := &s.modernMem
	m.lmu.Lock()
	defer m.lmu.Unlock()
	if max := cmp.Or(s.opts.MaxListeners, DefaultMaxListeners); max > 0 && len(m.listeners) >= max {
		return errTooManyListeners
	}
	if max := cmp.Or(s.opts.MaxListenBytes, DefaultMaxListenBytes); max > 0 && m.listenBytes+l.bytes > max {
		return errListenBytes
	}
	perCaller := cmp.Or(s.opts.MaxListenersPerPrincipal, DefaultMaxListenersPerPrincipal)
	if l.principal != "" && perCaller > 0 && m.listenersOf[l.principal] >= perCaller {
		return errCallerListeners
	}
	if m.listeners == nil {
		m.listeners = make(map[*listener]struct{})
		m.listenersOf = make(map[string]int)
	}
	m.listeners[l] = struct{}{}
	m.listenBytes += l.bytes
	if l.principal != "" {
		m.listenersOf[l.principal]++
	}
	return nil
}

func (s *Server) removeListener(l *listener) {
	m := &s.modernMem
	m.lmu.Lock()
	if _, ok := m.listeners[l]; ok {
		delete(m.listeners, l)
		m.listenBytes -= l.bytes
		if l.principal != "" {
			if m.listenersOf[l.principal]--; m.listenersOf[l.principal] <= 0 {
				delete(m.listenersOf, l.principal) // the map holds open callers only
			}
		}
	}
	m.lmu.Unlock()
}

// listenerBytes is what a listen stream whose request had params holds
// while it is open: the params, and the URIs decoded from them with the
// map that indexes them.
func listenerBytes(params json.RawMessage, uris []string) int64 {
	n := int64(len(params))
	for _, u := range uris {
		n += 2*int64(len(u)) + 64 // the string, the map's key, their headers
	}
	return n
}

// honoured is the part of f the server can deliver: the list-changed
// notifications of the features it offers, and resource updates if it
// offers resources (the acknowledgement lists only these).
func (s *Server) honoured(f *SubscriptionFilter) SubscriptionFilter {
	caps := s.modernCapabilities()
	var out SubscriptionFilter
	out.ToolsListChanged = f.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	out.PromptsListChanged = f.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	out.ResourcesListChanged = f.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
	if caps.Resources != nil && caps.Resources.Subscribe {
		out.ResourceSubscriptions = f.ResourceSubscriptions
	}
	return out
}

// listen serves subscriptions/listen on the modern leg.
func (ss *ServerSession) listen(ctx context.Context, method string, params json.RawMessage) (any, error) {
	m := modernFromContext(ctx)
	if m == nil {
		return nil, errMethodNotFound(method) // not part of the legacy revisions
	}
	s := ss.server
	var p SubscriptionsListenRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	if err := s.checkListenURIs(p.Notifications.ResourceSubscriptions); err != nil {
		return nil, err
	}
	l := &listener{filter: s.honoured(p.Notifications), ch: make(chan listenerMsg, cmp.Or(s.opts.ListenQueue, DefaultListenQueue))}
	l.bytes = listenerBytes(params, l.filter.ResourceSubscriptions)
	l.principal = principalFromContext(ctx)
	if n := len(l.filter.ResourceSubscriptions); n > 0 {
		l.uris = make(map[string]struct{}, n)
		for _, u := range l.filter.ResourceSubscriptions {
			l.uris[u] = struct{}{}
		}
	}
	if e := s.addListener(l); e != nil {
		return nil, e
	}
	defer s.removeListener(l)
	tag := Meta{MetaKeySubscriptionID: m.id}
	ack, err := json.Marshal(&SubscriptionsAcknowledgedNotificationParams{Notifications: l.filter, Meta: tag})
	if err != nil {
		return nil, err
	}
	// The acknowledgement is the stream's first message (schema:
	// SubscriptionsAcknowledgedNotification).
	if err := m.sink.Notify(ctx, NotificationSubscriptionsAcknowledged, ack); err != nil {
		return nil, err
	}
	var tick <-chan time.Time
	if every := cmp.Or(s.opts.ListenKeepAlive, DefaultListenKeepAlive); every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	done := &SubscriptionsListenResult{Meta: tag}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-m.sink.Done():
			return done, nil // ended gracefully: the result says so
		case <-tick:
			if err := m.sink.KeepAlive(); err != nil {
				return nil, err
			}
		case msg := <-l.ch:
			if err := m.sink.Notify(ctx, msg.method, changeParams(msg, tag)); err != nil {
				return nil, err
			}
			if l.behind.Load() && len(l.ch) == 0 {
				// Changes were dropped: end the stream so that the client
				// listens again and re-fetches what it caches.
				return done, nil
			}
		}
	}
}

// changeParams are the params of a change notification on a listen
// stream: the subscription id in _meta and, for a resource update, the
// URI.
func changeParams(msg listenerMsg, tag Meta) json.RawMessage {
	var raw []byte
	if msg.method == NotificationResourcesUpdated {
		raw, _ = json.Marshal(&ResourceUpdatedNotificationParams{URI: msg.uri, Meta: tag})
	} else {
		raw, _ = json.Marshal(&NotificationParams{Meta: tag})
	}
	return raw
}

// checkListenURIs applies the bounds of resources/subscribe
// (MaxSubscriptions, MaxSubscriptionURILength) to a listen filter.
func (s *Server) checkListenURIs(uris []string) error {
	if max := cmp.Or(s.opts.MaxSubscriptions, DefaultMaxSubscriptions); max > 0 && len(uris) > max {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %d resourceSubscriptions, more than the %d this server accepts", len(uris), max)
	}
	if max := cmp.Or(s.opts.MaxSubscriptionURILength, DefaultMaxSubscriptionURILength); max > 0 {
		for _, u := range uris {
			if len(u) > max {
				return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: a resourceSubscriptions uri is %d bytes long, more than the %d this server accepts", len(u), max)
			}
		}
	}
	return nil
}
