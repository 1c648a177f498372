package mcp

import (
	"encoding/json"

	"github.com/mcpstack/mcpstack/internal/clip"
)

// LoggingLevel is the severity of a log message, as in RFC 5424 (syslog):
// MCP 2025-11-25 server/utilities/logging#log-levels.
type LoggingLevel string

// The logging levels, from least to most severe.
const (
	LoggingLevelDebug     LoggingLevel = "debug"
	LoggingLevelInfo      LoggingLevel = "info"
	LoggingLevelNotice    LoggingLevel = "notice"
	LoggingLevelWarning   LoggingLevel = "warning"
	LoggingLevelError     LoggingLevel = "error"
	LoggingLevelCritical  LoggingLevel = "critical"
	LoggingLevelAlert     LoggingLevel = "alert"
	LoggingLevelEmergency LoggingLevel = "emergency"
)

// Severity returns the level's rank, from 0 for debug to 7 for emergency,
// or -1 for an unknown level. A server set to level L sends messages whose
// severity is at least L's.
func (l LoggingLevel) Severity() int {
	switch l {
	case LoggingLevelDebug:
		return 0
	case LoggingLevelInfo:
		return 1
	case LoggingLevelNotice:
		return 2
	case LoggingLevelWarning:
		return 3
	case LoggingLevelError:
		return 4
	case LoggingLevelCritical:
		return 5
	case LoggingLevelAlert:
		return 6
	case LoggingLevelEmergency:
		return 7
	}
	return -1
}

// Validate reports an error unless l is a defined level.
func (l LoggingLevel) Validate() error {
	if l.Severity() < 0 {
		return invalid("LoggingLevel", "", "unknown level "+clip.Quote(string(l)))
	}
	return nil
}

// SetLevelRequestParams is the params of logging/setLevel.
type SetLevelRequestParams struct {
	// Level is the least severe level the client wants to receive.
	Level LoggingLevel `json:"level"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate checks the level.
func (p *SetLevelRequestParams) Validate() error {
	return inField("SetLevelRequestParams", "level", p.Level.Validate())
}

// LoggingMessageNotificationParams is the params of notifications/message.
type LoggingMessageNotificationParams struct {
	// Level is the message's severity.
	Level LoggingLevel `json:"level"`
	// Logger names the logger that issued the message.
	Logger string `json:"logger,omitempty"`
	// Data is the message: any JSON value. nil encodes as null.
	Data json.RawMessage `json:"data"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate checks the level.
func (p *LoggingMessageNotificationParams) Validate() error {
	return inField("LoggingMessageNotificationParams", "level", p.Level.Validate())
}
