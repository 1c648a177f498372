package mcp

import (
	"context"
	"errors"
)

// Log sends p to the client as notifications/message if the client asked
// for messages of p.Level or above with logging/setLevel. Until the client
// sets a level, nothing is sent: the protocol leaves the default to the
// server, and this one stays silent rather than guess what the client
// wants. (The server must advertise the logging capability, in
// ServerOptions.Capabilities, for a client to set a level.) Pass a
// handler's context to send the message with that request's answer.
func (ss *ServerSession) Log(ctx context.Context, p *LoggingMessageNotificationParams) error {
	if p == nil {
		return errors.New("mcp: Log needs params")
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if !ss.logEnabled(ctx, p.Level) {
		return nil
	}
	if len(p.Data) == 0 {
		c := *p
		c.Data = []byte("null")
		p = &c
	}
	return ss.Notify(ctx, NotificationMessage, p)
}

// LoggingLevel returns the level the client set with logging/setLevel, or
// "" if it has set none.
func (ss *ServerSession) LoggingLevel() LoggingLevel {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.logLevel
}

// logEnabled reports whether a message at level l is sent for the request
// whose handler owns ctx: at or above the level of the request's own _meta
// on the modern leg, of logging/setLevel on the legacy leg.
func (ss *ServerSession) logEnabled(ctx context.Context, l LoggingLevel) bool {
	min := ss.logLevelFor(ctx)
	return min != "" && l.Severity() >= min.Severity()
}
