package mcp

import (
	"encoding/json"
	"slices"
)

// Wire types of protocol revision 2026-07-28 ("modern" in the revision's
// own terms, basic/versioning "Terminology"): per-request _meta instead of
// the initialize handshake, server/discover, subscriptions/listen,
// resultType on every result, cacheable results and the errors -32020 to
// -32022. The multi round-trip request types (InputRequiredResult and its
// members) live beside them in their own file.

// ProtocolVersion20260728 is the first modern revision: every request
// carries its version and client capabilities in _meta and there are no
// sessions (changelog, major changes 1 and 2).
const ProtocolVersion20260728 = "2026-07-28"

// LatestModernProtocolVersion is the newest modern revision this package
// implements, the one a modern client puts in _meta by default.
const LatestModernProtocolVersion = ProtocolVersion20260728

// ModernProtocolVersions returns the modern revisions this package speaks,
// newest first. The caller owns the returned slice.
func ModernProtocolVersions() []string {
	return []string{ProtocolVersion20260728}
}

// IsModernProtocolVersion reports whether v is one of
// ModernProtocolVersions.
func IsModernProtocolVersion(v string) bool {
	return v == ProtocolVersion20260728
}

// AllProtocolVersions returns every revision this package speaks, modern
// and legacy, newest first: the supportedVersions a dual-era server
// advertises in server/discover and in an UnsupportedProtocolVersionError.
// The caller owns the returned slice.
func AllProtocolVersions() []string {
	return slices.Concat(ModernProtocolVersions(), SupportedProtocolVersions())
}

// Era is the family of protocol revisions a request belongs to
// (basic/versioning, "Terminology").
type Era uint8

const (
	// EraLegacy is a request of a session opened by initialize (2025-11-25
	// and earlier).
	EraLegacy Era = iota
	// EraModern is a request that carries its protocol version, client
	// capabilities and client info in its own _meta (2026-07-28 and
	// later), served statelessly.
	EraModern
)

// String returns "legacy" or "modern".
func (e Era) String() string {
	if e == EraModern {
		return "modern"
	}
	return "legacy"
}

// Keys of the _meta map that revision 2026-07-28 defines.
const (
	// MetaKeyProtocolVersion is the request _meta key holding the revision
	// the request speaks (a string). Required on every modern request.
	MetaKeyProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	// MetaKeyClientCapabilities is the request _meta key holding the
	// client's capabilities for this request (a ClientCapabilities).
	// Required on every modern request; servers must not infer
	// capabilities from earlier requests.
	MetaKeyClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	// MetaKeyClientInfo is the request _meta key naming the client (an
	// Implementation). Self-reported: for display and logs only.
	MetaKeyClientInfo = "io.modelcontextprotocol/clientInfo"
	// MetaKeyServerInfo is the result _meta key naming the server (an
	// Implementation).
	MetaKeyServerInfo = "io.modelcontextprotocol/serverInfo"
	// MetaKeyLogLevel is the request _meta key holding the lowest
	// LoggingLevel the client wants notifications/message for, for this
	// request only. Without it the server sends no notifications/message
	// for the request (server/utilities/logging).
	MetaKeyLogLevel = "io.modelcontextprotocol/logLevel"
	// MetaKeySubscriptionID is the notification _meta key every
	// notification on a subscriptions/listen stream carries: the JSON-RPC
	// id of the subscriptions/listen request.
	MetaKeySubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

// Methods revision 2026-07-28 adds.
const (
	// MethodServerDiscover asks a server for its versions, capabilities
	// and identity (server/discover). Every modern server implements it.
	MethodServerDiscover = "server/discover"
	// MethodSubscriptionsListen opens a long-lived stream of the change
	// notifications the client opts in to (basic/patterns/subscriptions).
	MethodSubscriptionsListen = "subscriptions/listen"
	// NotificationSubscriptionsAcknowledged is the first message of a
	// subscriptions/listen stream: the filter the server agreed to honour.
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
)

// Error codes of revision 2026-07-28, from the range the specification
// reserves for itself (-32020 to -32099, basic/index "Error codes").
const (
	// CodeHeaderMismatch: the HTTP headers (MCP-Protocol-Version,
	// Mcp-Method, Mcp-Name, Mcp-Param-*) are missing, malformed or do not
	// match the request body. HTTP status 400.
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability: the request needs a client
	// capability its _meta does not declare; the error data is a
	// MissingRequiredClientCapabilityData. HTTP status 400.
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the server does not speak the
	// request's protocol version; the error data is an
	// UnsupportedProtocolVersionData. HTTP status 400.
	CodeUnsupportedProtocolVersion = -32022
)

// UnsupportedProtocolVersionData is the data of an error with code
// CodeUnsupportedProtocolVersion.
type UnsupportedProtocolVersionData struct {
	// Supported lists the versions the server speaks; the client picks one
	// and retries. Required.
	Supported []string `json:"supported"`
	// Requested is the version the request asked for. Required.
	Requested string `json:"requested"`
}

// MissingRequiredClientCapabilityData is the data of an error with code
// CodeMissingRequiredClientCapability.
type MissingRequiredClientCapabilityData struct {
	// RequiredCapabilities are the capabilities the server needs the
	// client to declare for this request. Required.
	RequiredCapabilities ClientCapabilities `json:"requiredCapabilities"`
}

// CacheScope says who may cache a cacheable result, as HTTP's
// Cache-Control public and private do (server/utilities/caching).
type CacheScope string

const (
	// CacheScopePublic: the result holds nothing user-specific; any client
	// or shared intermediary may cache it across authorization contexts.
	CacheScopePublic CacheScope = "public"
	// CacheScopePrivate: the result may be reused only within the same
	// authorization context (the same access token).
	CacheScopePrivate CacheScope = "private"
)

// Validate checks that s is a known scope.
func (s CacheScope) Validate() error {
	switch s {
	case CacheScopePublic, CacheScopePrivate:
		return nil
	}
	return invalid("CacheScope", "", "unknown cache scope "+string(s))
}

// RequestMeta is the protocol part of a modern request's _meta, decoded
// into fields (other keys, such as application metadata, are not kept).
// ClientCapabilities and ProtocolVersion are required; a nil
// ClientCapabilities means the key was absent.
type RequestMeta struct {
	// ProtocolVersion is the revision the request speaks.
	ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
	// ClientCapabilities are the client's capabilities for this request;
	// an empty object declares none.
	ClientCapabilities *ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
	// ClientInfo names the client; self-reported, for display and logs.
	ClientInfo *Implementation `json:"io.modelcontextprotocol/clientInfo,omitempty"`
	// LogLevel, if set, asks for notifications/message at this level and
	// above for this request only.
	LogLevel LoggingLevel `json:"io.modelcontextprotocol/logLevel,omitempty"`
	// ProgressToken, if set, asks for notifications/progress on this
	// request's own response stream.
	ProgressToken *ProgressToken `json:"progressToken,omitempty"`
}

// DiscoverResult is the result of server/discover: what a client needs to
// pick a version and learn what the server offers, without a handshake.
// It is cacheable.
type DiscoverResult struct {
	// ResultType is ResultTypeComplete.
	ResultType ResultType `json:"resultType,omitempty"`
	// SupportedVersions are the revisions the server speaks. Required.
	SupportedVersions []string `json:"supportedVersions"`
	// Capabilities are the server's capabilities.
	Capabilities ServerCapabilities `json:"capabilities"`
	// Instructions tell the client how to use the server.
	Instructions string `json:"instructions,omitempty"`
	// TTLMs is how long, in milliseconds, the client may cache this result
	// (0: stale at once). Required on the wire.
	TTLMs *int64 `json:"ttlMs,omitempty"`
	// CacheScope says who may cache this result. Required on the wire.
	CacheScope CacheScope `json:"cacheScope,omitempty"`
	// Meta holds protocol and application metadata, such as serverInfo.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes r with SupportedVersions as [] when nil.
func (r DiscoverResult) MarshalJSON() ([]byte, error) {
	type wire DiscoverResult
	w := wire(r)
	if w.SupportedVersions == nil {
		w.SupportedVersions = []string{}
	}
	return json.Marshal(w)
}

// Validate checks the required members.
func (r *DiscoverResult) Validate() error {
	const typ = "DiscoverResult"
	if len(r.SupportedVersions) == 0 {
		return invalid(typ, "supportedVersions", "is required")
	}
	if r.CacheScope != "" {
		if err := inField(typ, "cacheScope", r.CacheScope.Validate()); err != nil {
			return err
		}
	}
	if err := checkNonNegative(typ, "ttlMs", r.TTLMs); err != nil {
		return err
	}
	return inField(typ, "capabilities", r.Capabilities.Validate())
}

// SubscriptionFilter is the set of change notifications a client opts in
// to on a subscriptions/listen stream, and, in the acknowledgement, the
// subset the server agreed to honour. Every type is opt-in: the server
// sends nothing the filter does not name.
type SubscriptionFilter struct {
	// ToolsListChanged asks for notifications/tools/list_changed.
	ToolsListChanged bool `json:"toolsListChanged,omitempty"`
	// PromptsListChanged asks for notifications/prompts/list_changed.
	PromptsListChanged bool `json:"promptsListChanged,omitempty"`
	// ResourcesListChanged asks for notifications/resources/list_changed.
	ResourcesListChanged bool `json:"resourcesListChanged,omitempty"`
	// ResourceSubscriptions asks for notifications/resources/updated for
	// these URIs (it replaces resources/subscribe).
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// SubscriptionsListenRequestParams is the params of subscriptions/listen.
type SubscriptionsListenRequestParams struct {
	// Notifications is the filter the client opts in to. Required: nil
	// means the member was absent.
	Notifications *SubscriptionFilter `json:"notifications"`
	// Meta holds the request's protocol metadata. Required.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate checks that the filter is present.
func (p *SubscriptionsListenRequestParams) Validate() error {
	if p.Notifications == nil {
		return invalid("SubscriptionsListenRequestParams", "notifications", "is required")
	}
	return nil
}

// SubscriptionsAcknowledgedNotificationParams is the params of
// notifications/subscriptions/acknowledged.
type SubscriptionsAcknowledgedNotificationParams struct {
	// Notifications is the subset of the requested filter the server
	// honours: types it does not support are left out.
	Notifications SubscriptionFilter `json:"notifications"`
	// Meta holds MetaKeySubscriptionID.
	Meta Meta `json:"_meta,omitempty"`
}

// SubscriptionsListenResult ends a subscriptions/listen stream gracefully
// (for example at server shutdown); an abrupt close carries no result.
type SubscriptionsListenResult struct {
	// ResultType is ResultTypeComplete.
	ResultType ResultType `json:"resultType,omitempty"`
	// Meta holds MetaKeySubscriptionID.
	Meta Meta `json:"_meta,omitempty"`
}

// SubscriptionID returns the io.modelcontextprotocol/subscriptionId entry,
// if there is one and it is a string or an integer.
func (m Meta) SubscriptionID() (RequestID, bool) {
	return idFromMeta(m[MetaKeySubscriptionID])
}

// ModernProtocolVersion returns the io.modelcontextprotocol/protocolVersion
// entry, if it is a string.
func (m Meta) ModernProtocolVersion() (string, bool) {
	v, ok := m[MetaKeyProtocolVersion].(string)
	return v, ok
}
