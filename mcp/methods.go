package mcp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// Protocol revisions. A session speaks the one its initialize exchange
// negotiated.
const (
	ProtocolVersion20251125 = "2025-11-25"
	ProtocolVersion20250618 = "2025-06-18"
	ProtocolVersion20250326 = "2025-03-26"
	ProtocolVersion20241105 = "2024-11-05"

	// LatestProtocolVersion is the newest revision this package implements,
	// the one a client proposes by default (MCP 2025-11-25
	// basic/lifecycle#version-negotiation: a client should propose the
	// latest version it supports).
	LatestProtocolVersion = ProtocolVersion20251125
)

// SupportedProtocolVersions returns the protocol revisions this package
// can negotiate, newest first. The caller owns the returned slice.
func SupportedProtocolVersions() []string {
	return []string{
		ProtocolVersion20251125,
		ProtocolVersion20250618,
		ProtocolVersion20250326,
		ProtocolVersion20241105,
	}
}

// IsSupportedProtocolVersion reports whether v is one of
// SupportedProtocolVersions.
func IsSupportedProtocolVersion(v string) bool {
	switch v {
	case ProtocolVersion20251125, ProtocolVersion20250618, ProtocolVersion20250326, ProtocolVersion20241105:
		return true
	}
	return false
}

// Request methods.
const (
	MethodInitialize             = "initialize"
	MethodPing                   = "ping"
	MethodToolsList              = "tools/list"
	MethodToolsCall              = "tools/call"
	MethodResourcesList          = "resources/list"
	MethodResourcesTemplatesList = "resources/templates/list"
	MethodResourcesRead          = "resources/read"
	MethodResourcesSubscribe     = "resources/subscribe"
	MethodResourcesUnsubscribe   = "resources/unsubscribe"
	MethodPromptsList            = "prompts/list"
	MethodPromptsGet             = "prompts/get"
	MethodCompletionComplete     = "completion/complete"
	MethodLoggingSetLevel        = "logging/setLevel"
	MethodSamplingCreateMessage  = "sampling/createMessage"
	MethodRootsList              = "roots/list"
	MethodElicitationCreate      = "elicitation/create"
	MethodTasksGet               = "tasks/get"
	MethodTasksResult            = "tasks/result"
	MethodTasksList              = "tasks/list"
	MethodTasksCancel            = "tasks/cancel"
)

// Notification methods.
const (
	NotificationInitialized          = "notifications/initialized"
	NotificationCancelled            = "notifications/cancelled"
	NotificationProgress             = "notifications/progress"
	NotificationMessage              = "notifications/message"
	NotificationResourcesListChanged = "notifications/resources/list_changed"
	NotificationResourcesUpdated     = "notifications/resources/updated"
	NotificationPromptsListChanged   = "notifications/prompts/list_changed"
	NotificationToolsListChanged     = "notifications/tools/list_changed"
	NotificationRootsListChanged     = "notifications/roots/list_changed"
	NotificationElicitationComplete  = "notifications/elicitation/complete"
	NotificationTasksStatus          = "notifications/tasks/status"
)

// methodFlags say what a side's method table knows about a method
// besides its handler.
type methodFlags uint8

const (
	// methodNotification marks a notification: a message without an id
	// that gets no answer. Its name starts with "notifications/" (see
	// isNotificationMethod).
	methodNotification methodFlags = 1 << iota
	// methodInline marks a request answered on the connection's read loop
	// (jsonrpc.ConnOptions.Inline): ping, which must be answered promptly
	// even when every handler slot is busy (MCP 2025-11-25
	// basic/utilities/ping#behavior-requirements), and initialize, so that
	// the messages after it see the session initialized.
	methodInline
	// methodBeforeInit marks a request a server answers before the
	// initialize exchange has begun (MCP 2025-11-25
	// basic/lifecycle#initialization: the client should send no request
	// but pings before the server has answered initialize).
	methodBeforeInit
)

// methodHandler answers a request, or handles a notification (its result
// is then ignored), on a session of type S. A nil methodHandler means that
// the session itself does not serve the method: a middleware may (the
// tasks/* requests, see Tasks.Middleware); otherwise a request gets
// "Method not found" and a notification is ignored.
type methodHandler[S any] func(s S, ctx context.Context, method string, params json.RawMessage) (any, error)

// methodInfo is one entry of a side's method table: serverMethodInfos
// (what a server receives, the schema's ClientRequest and
// ClientNotification unions) or clientMethodInfos (what a client receives,
// ServerRequest and ServerNotification). Adding a method is one line in
// the table of the side that receives it.
type methodInfo[S any] struct {
	flags   methodFlags
	handler methodHandler[S]
}

// request is the table entry of a request method.
func request[S any](flags methodFlags, h methodHandler[S]) methodInfo[S] {
	return methodInfo[S]{flags: flags, handler: h}
}

// notification is the table entry of a notification method whose handler
// h returns nothing (nil h: the session ignores the notification).
func notification[S any](h func(s S, ctx context.Context, params json.RawMessage)) methodInfo[S] {
	if h == nil {
		return methodInfo[S]{flags: methodNotification}
	}
	return methodInfo[S]{flags: methodNotification, handler: func(s S, ctx context.Context, _ string, params json.RawMessage) (any, error) {
		h(s, ctx, params)
		return nil, nil
	}}
}

// has reports whether every flag of f is set in fl.
func (fl methodFlags) has(f methodFlags) bool { return fl&f == f }

// answerPing answers ping on either side with an empty result (MCP
// 2025-11-25 basic/utilities/ping#behavior-requirements: the receiver
// answers promptly with an empty result).
func answerPing[S any](S, context.Context, string, json.RawMessage) (any, error) {
	return emptyResult, nil
}

// errMethodNotFound is the answer to a request the session does not serve.
func errMethodNotFound(method string) error {
	return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s", clip.String(method))
}

// isNotificationMethod reports whether method names a notification (MCP
// 2025-11-25 basic#notifications: a message without an id, which the
// receiver must not answer): every
// MCP notification method, and only those, starts with "notifications/"
// (the tables' methodNotification flags agree, see methods_test.go). The
// name rule, not a table lookup, also classifies methods that neither
// table knows, such as a custom notification a middleware sends.
func isNotificationMethod(method string) bool {
	return strings.HasPrefix(method, "notifications/")
}

// MethodNames returns every MCP method name that this package knows,
// requests and notifications of both sides, in no particular order: a
// transport passes them to jsonrpc.NewDecoder, whose decoded messages then
// share these strings rather than allocate their own. Each call returns a
// new slice.
func MethodNames() []string {
	names := make([]string, 0, len(serverMethodInfos)+len(clientMethodInfos))
	for m := range serverMethodInfos {
		names = append(names, m)
	}
	for m := range clientMethodInfos {
		if _, ok := serverMethodInfos[m]; !ok {
			names = append(names, m)
		}
	}
	return names
}
