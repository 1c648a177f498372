package mcp

import (
	"context"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
)

// peekCallHead finds, without allocating, what Tasks.Middleware needs of
// tools/call params: the name (its JSON text without the quotes, when it
// holds no escape and is valid UTF-8, so that decoding would not change it) and whether a task member is present. ok is false for
// anything else (an escaped name, a malformed object, duplicate members),
// which the middleware then decodes in full: the common call of a tool
// that cannot run as a task costs the middleware no allocation.
func peekCallHead(params []byte) (name []byte, task, ok bool) {
	if len(params) == 0 {
		return nil, false, false
	}
	seenName := false
	end, ok := jsonfast.ScanObject(params, jsonfast.SkipSpace(params, 0), func(key []byte, v int) (int, bool) {
		e, ok := jsonfast.SkipValue(params, v, 1, maxFastDepth)
		if !ok {
			return e, false
		}
		switch string(key) {
		case "name":
			if seenName || params[v] != '"' {
				return e, false
			}
			if _, escaped, _ := jsonfast.ScanString(params, v); escaped || !utf8.Valid(params[v+1:e-1]) {
				return e, false // decoding would change it
			}
			name, seenName = params[v+1:e-1], true
		case "task":
			if task {
				return e, false
			}
			task = true
		}
		return e, true
	})
	if !ok || jsonfast.SkipSpace(params, end) != len(params) || !seenName {
		return nil, false, false
	}
	return name, task, true
}

// plainCall reports whether a tools/call with params goes straight to the
// next handler as far as tasks are concerned: no task member, and a tool
// that does not require one (or that the server does not have).
func plainCall(ctx context.Context, params []byte) bool {
	name, task, ok := peekCallHead(params)
	if !ok || task {
		return false
	}
	support, found := toolTaskSupportBytes(ctx, name)
	return !found || support != TaskSupportRequired
}

// toolTaskSupportBytes is toolTaskSupport for a name given as bytes (the
// map lookup does not copy them).
func toolTaskSupportBytes(ctx context.Context, name []byte) (TaskSupport, bool) {
	ss := ServerSessionFromContext(ctx)
	if ss == nil {
		return "", false
	}
	s := ss.server
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.tools[string(name)]
	if !ok {
		return "", false
	}
	if st.tool.Execution == nil || st.tool.Execution.TaskSupport == "" {
		return TaskSupportForbidden, true
	}
	return st.tool.Execution.TaskSupport, true
}
