package mcp

import (
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
// with the uri in the error data.
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
// notifications/resources/list_changed.
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

// AddResourceTemplate adds or replaces the template with t.URITemplate; h
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
// session that subscribed to it, and to no other. It returns the first
// error a send met.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) error {
	s.mu.RLock()
	sessions := s.sessionList()
	s.mu.RUnlock()
	var first error
	for _, ss := range sessions {
		if !ss.subscribed(uri) {
			continue
		}
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

func (ss *ServerSession) subscribed(uri string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	_, ok := ss.subs[uri]
	return ok
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
	res, err := h(ctx, ss, &p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, ResourceNotFoundError(p.URI)
	}
	return res, nil
}

func (ss *ServerSession) subscribe(_ context.Context, method string, params json.RawMessage) (any, error) {
	s := ss.server
	var p SubscribeRequestParams
	if err := parseParams(params, &p); err != nil {
		return nil, err
	}
	if caps := s.capabilities(); caps.Resources == nil || !caps.Resources.Subscribe {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s (the server offers no subscriptions)", method)
	}
	ss.mu.Lock()
	if ss.subs == nil {
		ss.subs = make(map[string]struct{})
	}
	ss.subs[p.URI] = struct{}{}
	ss.mu.Unlock()
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
	ss.mu.Lock()
	delete(ss.subs, p.URI)
	ss.mu.Unlock()
	return emptyResult, nil
}
