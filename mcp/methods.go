package mcp

// Protocol revisions. A session speaks the one its initialize exchange
// negotiated.
const (
	ProtocolVersion20251125 = "2025-11-25"
	ProtocolVersion20250618 = "2025-06-18"
	ProtocolVersion20250326 = "2025-03-26"
	ProtocolVersion20241105 = "2024-11-05"

	// LatestProtocolVersion is the newest revision this package implements,
	// the one a client proposes by default.
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

// methodNames lists every method above, requests and notifications: the
// names a server's decoder reuses rather than copies.
func methodNames() []string {
	return []string{
		MethodInitialize, MethodPing, MethodToolsList, MethodToolsCall,
		MethodResourcesList, MethodResourcesTemplatesList, MethodResourcesRead,
		MethodResourcesSubscribe, MethodResourcesUnsubscribe, MethodPromptsList,
		MethodPromptsGet, MethodCompletionComplete, MethodLoggingSetLevel,
		MethodSamplingCreateMessage, MethodRootsList, MethodElicitationCreate,
		MethodTasksGet, MethodTasksResult, MethodTasksList, MethodTasksCancel,
		NotificationInitialized, NotificationCancelled, NotificationProgress,
		NotificationMessage, NotificationResourcesListChanged,
		NotificationResourcesUpdated, NotificationPromptsListChanged,
		NotificationToolsListChanged, NotificationRootsListChanged,
		NotificationElicitationComplete, NotificationTasksStatus,
	}
}

// IsClientRequestMethod reports whether method is a request a client may
// send to a server (the schema's ClientRequest union).
func IsClientRequestMethod(method string) bool {
	switch method {
	case MethodInitialize, MethodPing,
		MethodResourcesList, MethodResourcesTemplatesList, MethodResourcesRead,
		MethodResourcesSubscribe, MethodResourcesUnsubscribe,
		MethodPromptsList, MethodPromptsGet, MethodToolsList, MethodToolsCall,
		MethodTasksGet, MethodTasksResult, MethodTasksCancel, MethodTasksList,
		MethodLoggingSetLevel, MethodCompletionComplete:
		return true
	}
	return false
}

// IsServerRequestMethod reports whether method is a request a server may
// send to a client (the schema's ServerRequest union).
func IsServerRequestMethod(method string) bool {
	switch method {
	case MethodPing, MethodTasksGet, MethodTasksResult, MethodTasksCancel, MethodTasksList,
		MethodSamplingCreateMessage, MethodRootsList, MethodElicitationCreate:
		return true
	}
	return false
}

// IsClientNotificationMethod reports whether method is a notification a
// client may send to a server (the schema's ClientNotification union).
func IsClientNotificationMethod(method string) bool {
	switch method {
	case NotificationCancelled, NotificationInitialized, NotificationProgress,
		NotificationTasksStatus, NotificationRootsListChanged:
		return true
	}
	return false
}

// IsServerNotificationMethod reports whether method is a notification a
// server may send to a client (the schema's ServerNotification union).
func IsServerNotificationMethod(method string) bool {
	switch method {
	case NotificationCancelled, NotificationProgress,
		NotificationResourcesListChanged, NotificationResourcesUpdated,
		NotificationPromptsListChanged, NotificationToolsListChanged,
		NotificationTasksStatus, NotificationMessage, NotificationElicitationComplete:
		return true
	}
	return false
}

// paramsRequired reports whether the schema requires params for method.
func paramsRequired(method string) bool {
	switch method {
	case MethodInitialize, MethodToolsCall, MethodResourcesRead,
		MethodResourcesSubscribe, MethodResourcesUnsubscribe, MethodPromptsGet,
		MethodCompletionComplete, MethodLoggingSetLevel, MethodSamplingCreateMessage,
		MethodElicitationCreate, MethodTasksGet, MethodTasksResult, MethodTasksCancel,
		NotificationCancelled, NotificationProgress, NotificationMessage,
		NotificationResourcesUpdated, NotificationElicitationComplete, NotificationTasksStatus:
		return true
	}
	return false
}

// paramsFitMethod reports whether params, a request or notification's
// params, may be sent with method. Raw params fit every method.
func paramsFitMethod(params any, method string) bool {
	switch params.(type) {
	case *InitializeRequestParams:
		return method == MethodInitialize
	case *RequestParams:
		return method == MethodPing || method == MethodRootsList
	case *PaginatedRequestParams:
		switch method {
		case MethodResourcesList, MethodResourcesTemplatesList, MethodPromptsList,
			MethodToolsList, MethodTasksList:
			return true
		}
		return false
	case *ReadResourceRequestParams:
		return method == MethodResourcesRead
	case *SubscribeRequestParams:
		return method == MethodResourcesSubscribe
	case *UnsubscribeRequestParams:
		return method == MethodResourcesUnsubscribe
	case *GetPromptRequestParams:
		return method == MethodPromptsGet
	case *CallToolRequestParams:
		return method == MethodToolsCall
	case *CompleteRequestParams:
		return method == MethodCompletionComplete
	case *SetLevelRequestParams:
		return method == MethodLoggingSetLevel
	case *CreateMessageRequestParams:
		return method == MethodSamplingCreateMessage
	case ElicitRequestParams:
		return method == MethodElicitationCreate
	case *GetTaskRequestParams:
		return method == MethodTasksGet
	case *GetTaskPayloadRequestParams:
		return method == MethodTasksResult
	case *CancelTaskRequestParams:
		return method == MethodTasksCancel
	case *NotificationParams:
		switch method {
		case NotificationInitialized, NotificationResourcesListChanged,
			NotificationPromptsListChanged, NotificationToolsListChanged,
			NotificationRootsListChanged:
			return true
		}
		return false
	case *CancelledNotificationParams:
		return method == NotificationCancelled
	case *ProgressNotificationParams:
		return method == NotificationProgress
	case *LoggingMessageNotificationParams:
		return method == NotificationMessage
	case *ResourceUpdatedNotificationParams:
		return method == NotificationResourcesUpdated
	case *ElicitationCompleteNotificationParams:
		return method == NotificationElicitationComplete
	case *TaskStatusNotificationParams:
		return method == NotificationTasksStatus
	}
	return true
}
