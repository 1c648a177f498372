package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/yosida95/uritemplate/v3"
)

// ResourceHandler reads a resource (resources/read). For a resource added
// with AddResource, params.URI is its URI; for a template, it is the URI
// the template matched (MatchURITemplate extracts the variables). Return
// ResourceNotFoundError(uri) when there is no such resource.
type ResourceHandler func(ctx context.Context, ss *ServerSession, params *ReadResourceRequestParams) (*ReadResourceResult, error)

type serverResource struct {
	res     *Resource
	handler ResourceHandler
}

type serverTemplate struct {
	tmpl    *ResourceTemplate
	re      *uritemplate.Template
	handler ResourceHandler
}

// ResourceNotFoundError returns the error resources/read answers for an
// unknown uri: code CodeResourceNotFound (-32002), "Resource not found",
// with the uri in the error data (MCP 2025-11-25
// server/resources#error-handling).
func ResourceNotFoundError(uri string) error {
	return jsonrpc.NewError(CodeResourceNotFound, "Resource not found").WithData(map[string]string{"uri": uri})
}

// MatchURITemplate reports whether uri matches the RFC 6570 template tmpl
// (levels 1 to 4) and returns the values of its variables. A list or
// associative-array value is returned as its comma-separated expansion.
func MatchURITemplate(tmpl, uri string) (map[string]string, bool) {
	t, err := uritemplate.New(tmpl)
	if err != nil {
		return nil, false
	}
	return matchTemplate(t, uri)
}

func matchTemplate(t *uritemplate.Template, uri string) (map[string]string, bool) {
	vals := t.Match(uri)
	if vals == nil {
		return nil, false
	}
	out := make(map[string]string, len(vals))
	for name, v := range vals {
		out[name] = strings.Join(v.V, ",")
	}
	return out, true
}

// AddResource adds or replaces the resource with r.URI; h reads it. The
// resource is checked with Validate first. Running sessions are told with
// notifications/resources/list_changed (MCP 2025-11-25
// server/resources#list-changed-notification).
func (s *Server) AddResource(r *Resource, h ResourceHandler) error {
	if r == nil || h == nil {
		return errors.New("mcp: AddResource needs a resource and a handler")
	}
	if err := r.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	if _, ok := s.resources[r.URI]; !ok {
		s.resourceList = append(s.resourceList, r.URI)
	}
	s.resources[r.URI] = &serverResource{res: r, handler: h}
	sessions := s.sessionList()
	s.mu.Unlock()
	s.notifyAll(sessions, NotificationResourcesListChanged)
	return nil
}

// RemoveResources removes the resources with the given URIs.
func (s *Server) RemoveResources(uris ...string) {
	s.mu.Lock()
	for _, u := range uris {
		delete(s.resources, u)
	}
	s.resourceList = slices.DeleteFunc(s.resourceList, func(u string) bool { return slices.Contains(uris, u) })
	sessions := s.sessionList()
	s.mu.Unlock()
	s.notifyAll(sessions, NotificationResourcesListChanged)
}

// AddResourceTemplate adds or replaces the template with t.URITemplate
// (MCP 2025-11-25 server/resources#resource-templates); h
// reads the resources whose URIs match it (RFC 6570, levels 1 to 4) and
// that no resource added with AddResource claims. Templates are tried in
// the order they were added. A template that does not parse is refused.
func (s *Server) AddResourceTemplate(t *ResourceTemplate, h ResourceHandler) error {
	if t == nil || h == nil {
		return errors.New("mcp: AddResourceTemplate needs a template and a handler")
	}
	if err := t.Validate(); err != nil {
		return err
	}
	re, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return fmt.Errorf("mcp: resource template %q: %w", t.URITemplate, err)
	}
	st := &serverTemplate{tmpl: t, re: re, handler: h}
	s.mu.Lock()
	i := slices.IndexFunc(s.templates, func(x *serverTemplate) bool { return x.tmpl.URITemplate == t.URITemplate })
	if i >= 0 {
		s.templates[i] = st
	} else {
		s.templates = append(s.templates, st)
	}
	sessions := s.sessionList()
	s.mu.Unlock()
	s.notifyAll(sessions, NotificationResourcesListChanged)
	return nil
}

// RemoveResourceTemplates removes the templates with the given URI
// templates.
func (s *Server) RemoveResourceTemplates(uriTemplates ...string) {
	s.mu.Lock()
	s.templates = slices.DeleteFunc(s.templates, func(x *serverTemplate) bool { return slices.Contains(uriTemplates, x.tmpl.URITemplate) })
	sessions := s.sessionList()
	s.mu.Unlock()
	s.notifyAll(sessions, NotificationResourcesListChanged)
}

// ResourceUpdated sends notifications/resources/updated for uri to every
// session that subscribed to it, and to every subscriptions/listen stream
// (revision 2026-07-28) that named it, and to no other. It returns the first
// error a send met. After ShareChanges it also publishes the change on the
// bus, for the sessions and listen streams of the other replicas; a failure
// to publish is returned too (joined), the local ones having been told
// anyway.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) error {
	pubErr := s.publishChange(ctx, Change{Method: NotificationResourcesUpdated, URI: uri}) // see bus.go
	return errors.Join(s.resourceUpdatedHere(ctx, uri), pubErr)
}

// resourceUpdatedHere tells this server's sessions subscribed to uri and
// its listen streams that named it.
func (s *Server) resourceUpdatedHere(ctx context.Context, uri string) error {
	s.notifyListeners(NotificationResourcesUpdated, uri)
	s.subMu.Lock()
	subs := s.subscribers[uri]
	if len(subs) == 0 {
		s.subMu.Unlock()
		return nil
	}
	sessions := make([]*ServerSession, 0, len(subs))
	for ss := range subs {
		sessions = append(sessions, ss)
	}
	s.subMu.Unlock()
	var first error
	for _, ss := range sessions {
		err := ss.Notify(ctx, NotificationResourcesUpdated, &ResourceUpdatedNotificationParams{URI: uri})
		if err != nil && first == nil && !errors.Is(err, jsonrpc.ErrClosed) {
			first = err
		}
	}
	return first
}

func (s *Server) hasResources() bool {
	return len(s.resources) > 0 || len(s.templates) > 0 || (s.opts.Capabilities != nil && s.opts.Capabilities.Resources != nil)
}

// subscribe records a subscription of ss to uri, within the bounds of
// ServerOptions; a subscription ss holds already is kept as it is.
func (s *Server) subscribe(ss *ServerSession, uri string) error {
	if n := s.opts.MaxSubscriptionURILength; n >= 0 && len(uri) > cmp.Or(n, DefaultMaxSubscriptionURILength) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: the uri is %d bytes long, more than the %d this server accepts in resources/subscribe", len(uri), cmp.Or(n, DefaultMaxSubscriptionURILength))
	}
	// Under mu, so that a session that has ended (and whose subscriptions
	// unsubscribeAll has dropped) cannot subscribe again.
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, live := s.sessions[ss]; !live {
		return jsonrpc.ErrClosed
	}
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if _, ok := ss.subs[uri]; ok {
		return nil
	}
	if n := s.opts.MaxSubscriptions; n >= 0 && len(ss.subs) >= cmp.Or(n, DefaultMaxSubscriptions) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: the session holds %d subscriptions, the most this server allows; unsubscribe from some first", len(ss.subs))
	}
	if ss.subs == nil {
		ss.subs = make(map[string]struct{})
	}
	ss.subs[uri] = struct{}{}
	if s.subscribers == nil {
		s.subscribers = make(map[string]map[*ServerSession]struct{})
	}
	set := s.subscribers[uri]
	if set == nil {
		set = make(map[*ServerSession]struct{})
		s.subscribers[uri] = set
	}
	set[ss] = struct{}{}
	return nil
}

// unsubscribe drops the subscription of ss to uri, if any.
func (s *Server) unsubscribe(ss *ServerSession, uri string) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if _, ok := ss.subs[uri]; !ok {
		return
	}
	delete(ss.subs, uri)
	s.dropSubscriberLocked(ss, uri)
}

// unsubscribeAll drops the subscriptions of a session that has ended.
func (s *Server) unsubscribeAll(ss *ServerSession) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	for uri := range ss.subs {
		s.dropSubscriberLocked(ss, uri)
	}
	ss.subs = nil
}

func (s *Server) dropSubscriberLocked(ss *ServerSession, uri string) {
	set := s.subscribers[uri]
	delete(set, ss)
	if len(set) == 0 {
		delete(s.subscribers, uri)
	}
}

func (ss *ServerSession) noResources(method string) error {
	return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s (the server has no resources)", method)
}

func (ss *ServerSession) listResources(_ context.Context, method string, params json.RawMessage) (any, error) {
	s := ss.server
	var p PaginatedRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	if !s.hasResources() {
		s.mu.RUnlock()
		return nil, ss.noResources(method)
	}
	all := make([]Resource, 0, len(s.resourceList))
	for _, u := range s.resourceList {
		all = append(all, *s.resources[u].res)
	}
	s.mu.RUnlock()
	items, next, err := page("resources", all, p.Cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	return &ListResourcesResult{Resources: items, NextCursor: next}, nil
}

func (ss *ServerSession) listResourceTemplates(_ context.Context, method string, params json.RawMessage) (any, error) {
	s := ss.server
	var p PaginatedRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	if !s.hasResources() {
		s.mu.RUnlock()
		return nil, ss.noResources(method)
	}
	all := make([]ResourceTemplate, 0, len(s.templates))
	for _, t := range s.templates {
		all = append(all, *t.tmpl)
	}
	s.mu.RUnlock()
	items, next, err := page("templates", all, p.Cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	return &ListResourceTemplatesResult{ResourceTemplates: items, NextCursor: next}, nil
}

func (ss *ServerSession) readResource(ctx context.Context, method string, params json.RawMessage) (any, error) {
	s := ss.server
	var p ReadResourceRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	if !s.hasResources() {
		s.mu.RUnlock()
		return nil, ss.noResources(method)
	}
	var h ResourceHandler
	if r, ok := s.resources[p.URI]; ok {
		h = r.handler
	} else {
		for _, t := range s.templates {
			if _, ok := matchTemplate(t.re, p.URI); ok {
				h = t.handler
				break
			}
		}
	}
	s.mu.RUnlock()
	if h == nil {
		return nil, ResourceNotFoundError(p.URI)
	}
	run := func(ctx context.Context) (any, error) {
		res, err := h(ctx, ss, &p)
		if err != nil {
			return nil, err
		}
		if res == nil {
			return nil, ResourceNotFoundError(p.URI)
		}
		return res, nil
	}
	if mr := modernFromContext(ctx); mr != nil {
		target := mrtrTarget{method: MethodResourcesRead, name: p.URI, principal: principalFromContext(ctx)}
		return s.runRound(ctx, target, mr.meta.ClientCapabilities, p.InputResponses, p.RequestState, run)
	}
	return run(ctx)
}

// subscribe answers resources/subscribe, for a server that declared
// resources.subscribe (MCP 2025-11-25 server/resources#capabilities and
// server/resources#subscriptions); the subscription lasts until
// resources/unsubscribe or the session's end.
func (ss *ServerSession) subscribe(_ context.Context, method string, params json.RawMessage) (any, error) {
	s := ss.server
	var p SubscribeRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	if caps := s.capabilities(); caps.Resources == nil || !caps.Resources.Subscribe {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s (the server offers no subscriptions)", method)
	}
	if err := s.subscribe(ss, p.URI); err != nil {
		return nil, err
	}
	return emptyResult, nil
}

func (ss *ServerSession) unsubscribe(_ context.Context, method string, params json.RawMessage) (any, error) {
	s := ss.server
	var p UnsubscribeRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	if caps := s.capabilities(); caps.Resources == nil || !caps.Resources.Subscribe {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s (the server offers no subscriptions)", method)
	}
	s.unsubscribe(ss, p.URI)
	return emptyResult, nil
}
