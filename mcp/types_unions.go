package mcp

// ClientResult is a result a client returns to a server (the schema's
// ClientResult union): *Result, *CreateMessageResult, *ListRootsResult,
// *ElicitResult, *GetTaskResult, *GetTaskPayloadResult, *CancelTaskResult
// or *ListTasksResult. *CreateTaskResult, which the schema leaves out of
// the union, is one too, since a client answers a task-augmented request
// with it.
type ClientResult interface {
	isClientResult()
}

// ServerResult is a result a server returns to a client (the schema's
// ServerResult union): *Result, *InitializeResult, *ListResourcesResult,
// *ListResourceTemplatesResult, *ReadResourceResult, *ListPromptsResult,
// *GetPromptResult, *ListToolsResult, *CallToolResult, *CompleteResult,
// *GetTaskResult, *GetTaskPayloadResult, *CancelTaskResult or
// *ListTasksResult. *CreateTaskResult, which the schema leaves out of the
// union, is one too, since a server answers a task-augmented request with
// it.
type ServerResult interface {
	isServerResult()
}

func (*Result) isClientResult()               {}
func (*CreateMessageResult) isClientResult()  {}
func (*ListRootsResult) isClientResult()      {}
func (*ElicitResult) isClientResult()         {}
func (*GetTaskResult) isClientResult()        {}
func (*GetTaskPayloadResult) isClientResult() {}
func (*CancelTaskResult) isClientResult()     {}
func (*ListTasksResult) isClientResult()      {}
func (*CreateTaskResult) isClientResult()     {}

func (*Result) isServerResult()                      {}
func (*InitializeResult) isServerResult()            {}
func (*ListResourcesResult) isServerResult()         {}
func (*ListResourceTemplatesResult) isServerResult() {}
func (*ReadResourceResult) isServerResult()          {}
func (*ListPromptsResult) isServerResult()           {}
func (*GetPromptResult) isServerResult()             {}
func (*ListToolsResult) isServerResult()             {}
func (*CallToolResult) isServerResult()              {}
func (*CompleteResult) isServerResult()              {}
func (*GetTaskResult) isServerResult()               {}
func (*GetTaskPayloadResult) isServerResult()        {}
func (*CancelTaskResult) isServerResult()            {}
func (*ListTasksResult) isServerResult()             {}
func (*CreateTaskResult) isServerResult()            {}
