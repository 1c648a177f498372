package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"time"
)

// LoggingHandlerOptions configure a LoggingHandler.
type LoggingHandlerOptions struct {
	// LoggerName is sent as the logger of every message; empty sends none.
	LoggerName string
}

// LoggingHandler is a slog.Handler that sends records to an MCP client as
// notifications/message, honouring the level the client set with
// logging/setLevel (records below it, and all records before the client
// sets a level, are dropped).
//
// slog levels map to the protocol's syslog levels: below Info is debug,
// Info is info, between Info and Warn is notice, Warn is warning, Error is
// error, Error+4 is critical, Error+8 is alert and Error+12 or above is
// emergency. A record's data is a JSON object holding its message under
// "msg", its time under "time" (RFC 3339, omitted if zero) and its
// attributes, groups as nested objects.
type LoggingHandler struct {
	ss     *ServerSession
	opts   LoggingHandlerOptions
	attrs  []slog.Attr // pre-set attributes, already placed inside groups
	groups []string    // open groups
}

// NewLoggingHandler returns a handler that logs to the client of ss. opts
// may be nil.
func NewLoggingHandler(ss *ServerSession, opts *LoggingHandlerOptions) *LoggingHandler {
	h := &LoggingHandler{ss: ss}
	if opts != nil {
		h.opts = *opts
	}
	return h
}

// SlogLevel returns the protocol level a slog level maps to.
func SlogLevel(l slog.Level) LoggingLevel {
	switch {
	case l < slog.LevelInfo:
		return LoggingLevelDebug
	case l == slog.LevelInfo:
		return LoggingLevelInfo
	case l < slog.LevelWarn:
		return LoggingLevelNotice
	case l < slog.LevelError:
		return LoggingLevelWarning
	case l < slog.LevelError+4:
		return LoggingLevelError
	case l < slog.LevelError+8:
		return LoggingLevelCritical
	case l < slog.LevelError+12:
		return LoggingLevelAlert
	}
	return LoggingLevelEmergency
}

// Enabled reports whether the client wants records at level l.
func (h *LoggingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.ss.logEnabled(ctx, SlogLevel(l))
}

// Handle sends r to the client.
func (h *LoggingHandler) Handle(ctx context.Context, r slog.Record) error {
	level := SlogLevel(r.Level)
	if !h.ss.logEnabled(ctx, level) {
		return nil
	}
	root := map[string]any{"msg": r.Message}
	if !r.Time.IsZero() {
		root["time"] = r.Time.Format(time.RFC3339Nano)
	}
	for _, a := range h.attrs {
		addAttr(root, a)
	}
	target := root
	for _, g := range h.groups {
		target = subgroup(target, g)
	}
	r.Attrs(func(a slog.Attr) bool {
		addAttr(target, a)
		return true
	})
	data, err := json.Marshal(root)
	if err != nil {
		return err
	}
	return h.ss.Log(ctx, &LoggingMessageNotificationParams{Level: level, Logger: h.opts.LoggerName, Data: data})
}

// WithAttrs returns a handler whose records carry attrs.
func (h *LoggingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		// nest a under the open groups
		for i := len(h.groups) - 1; i >= 0; i-- {
			a = slog.Attr{Key: h.groups[i], Value: slog.GroupValue(a)}
		}
		c.attrs = append(c.attrs, a)
	}
	return &c
}

// WithGroup returns a handler whose later attributes go into the group.
func (h *LoggingHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = append(slices.Clone(h.groups), name)
	return &c
}

func subgroup(m map[string]any, name string) map[string]any {
	if g, ok := m[name].(map[string]any); ok {
		return g
	}
	g := map[string]any{}
	m[name] = g
	return g
}

// addAttr adds a to m, following slog's rules: empty attributes are
// dropped and a group with an empty key is inlined.
func addAttr(m map[string]any, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		attrs := a.Value.Group()
		if len(attrs) == 0 {
			return
		}
		target := m
		if a.Key != "" {
			target = subgroup(m, a.Key)
		}
		for _, ga := range attrs {
			addAttr(target, ga)
		}
		return
	}
	switch a.Value.Kind() {
	case slog.KindTime:
		m[a.Key] = a.Value.Time().Format(time.RFC3339Nano)
	case slog.KindDuration:
		m[a.Key] = a.Value.Duration().String()
	case slog.KindAny:
		v := a.Value.Any()
		if err, ok := v.(error); ok {
			m[a.Key] = err.Error()
			return
		}
		if _, err := json.Marshal(v); err != nil {
			m[a.Key] = a.Value.String()
			return
		}
		m[a.Key] = v
	default:
		m[a.Key] = a.Value.Any()
	}
}
