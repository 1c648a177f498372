package mcp

import (
	"slices"
	"sort"
)

// ResourceSubscriptions returns the URIs the client subscribed to with
// resources/subscribe (MCP 2025-11-25 server/resources#subscriptions) and
// has not unsubscribed from, sorted. A transport that shares a session
// between processes (mcphttp with replicas) reads it after such a request
// to record the session's state; it is safe to call from any goroutine.
func (ss *ServerSession) ResourceSubscriptions() []string {
	s := ss.server
	s.subMu.Lock()
	out := make([]string, 0, len(ss.subs))
	for uri := range ss.subs {
		out = append(out, uri)
	}
	s.subMu.Unlock()
	sort.Strings(out)
	return slices.Clip(out)
}
