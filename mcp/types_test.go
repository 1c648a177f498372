package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const (
	specDir     = "../../shared/spec"
	examplesDir = specDir + "/examples"
	schemaFile  = specDir + "/schema-2025-11-25.json"
	schemaURL   = "file:///mcp/schema-2025-11-25.json"
)

// schemaSet compiles definitions of one revision's schema on demand.
type schemaSet struct {
	c     *jsonschema.Compiler
	url   string // the schema's resource URL, to which pointers are appended
	cache map[string]*jsonschema.Schema
}

// loadSchema loads the 2025-11-25 schema.
func loadSchema(t *testing.T) *schemaSet { return loadSchemaFile(t, schemaFile, schemaURL) }

// loadSchemaFile loads the schema in file as the resource url; the test
// is skipped when the file is absent.
func loadSchemaFile(t *testing.T, file, url string) *schemaSet {
	t.Helper()
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("schema not found: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	return &schemaSet{c: c, url: url, cache: make(map[string]*jsonschema.Schema)}
}

// validate validates data against the definition at ptr, such as
// "#/$defs/Tool".
func (s *schemaSet) validate(ptr string, data []byte) error {
	sch, ok := s.cache[ptr]
	if !ok {
		var err error
		if sch, err = s.c.Compile(s.url + ptr); err != nil {
			return err
		}
		s.cache[ptr] = sch
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// newExample returns a pointer to the Go type for a MANIFEST exampleOf.
func newExample(name string) any {
	switch name {
	case "AudioContent":
		return new(AudioContent)
	case "BlobResourceContents":
		return new(BlobResourceContents)
	case "BooleanSchema":
		return new(BooleanSchema)
	case "CallToolRequest":
		return specRequest[CallToolRequestParams](MethodToolsCall)
	case "CallToolRequestParams":
		return new(CallToolRequestParams)
	case "CallToolResult":
		return new(CallToolResult)
	case "CallToolResultResponse":
		return specResponse[CallToolResult]()
	case "CancelledNotification":
		return specNotification[CancelledNotificationParams](NotificationCancelled)
	case "CancelledNotificationParams":
		return new(CancelledNotificationParams)
	case "ClientCapabilities":
		return new(ClientCapabilities)
	case "CompleteRequest":
		return specRequest[CompleteRequestParams](MethodCompletionComplete)
	case "CompleteRequestParams":
		return new(CompleteRequestParams)
	case "CompleteResult":
		return new(CompleteResult)
	case "CompleteResultResponse":
		return specResponse[CompleteResult]()
	case "CreateMessageRequest":
		return specRequest[CreateMessageRequestParams](MethodSamplingCreateMessage)
	case "CreateMessageRequestParams":
		return new(CreateMessageRequestParams)
	case "CreateMessageResult":
		return new(CreateMessageResult)
	case "CreateMessageResultResponse":
		return specResponse[CreateMessageResult]()
	case "ElicitRequest":
		return specElicitRequest()
	case "ElicitRequestFormParams":
		return new(ElicitRequestFormParams)
	case "ElicitRequestURLParams":
		return new(ElicitRequestURLParams)
	case "ElicitResult":
		return new(ElicitResult)
	case "ElicitResultResponse":
		return specResponse[ElicitResult]()
	case "ElicitationCompleteNotification":
		return specNotification[ElicitationCompleteNotificationParams](NotificationElicitationComplete)
	case "EmbeddedResource":
		return new(EmbeddedResource)
	case "GetPromptRequest":
		return specRequest[GetPromptRequestParams](MethodPromptsGet)
	case "GetPromptRequestParams":
		return new(GetPromptRequestParams)
	case "GetPromptResult":
		return new(GetPromptResult)
	case "GetPromptResultResponse":
		return specResponse[GetPromptResult]()
	case "GetTaskPayloadRequest":
		return specRequest[GetTaskPayloadRequestParams](MethodTasksResult)
	case "ImageContent":
		return new(ImageContent)
	case "InitializeRequest":
		return specRequest[InitializeRequestParams](MethodInitialize)
	case "InitializeRequestParams":
		return new(InitializeRequestParams)
	case "InitializeResult":
		return new(InitializeResult)
	case "InitializeResultResponse":
		return specResponse[InitializeResult]()
	case "InitializedNotification":
		return specNotification[NotificationParams](NotificationInitialized)
	case "InternalError", "InvalidParamsError", "MethodNotFoundError", "ParseError":
		return new(jsonrpc.Error)
	case "ListPromptsRequest":
		return specRequest[PaginatedRequestParams](MethodPromptsList)
	case "ListPromptsResult":
		return new(ListPromptsResult)
	case "ListPromptsResultResponse":
		return specResponse[ListPromptsResult]()
	case "ListResourceTemplatesRequest":
		return specRequest[PaginatedRequestParams](MethodResourcesTemplatesList)
	case "ListResourceTemplatesResult":
		return new(ListResourceTemplatesResult)
	case "ListResourceTemplatesResultResponse":
		return specResponse[ListResourceTemplatesResult]()
	case "ListResourcesRequest":
		return specRequest[PaginatedRequestParams](MethodResourcesList)
	case "ListResourcesResult":
		return new(ListResourcesResult)
	case "ListResourcesResultResponse":
		return specResponse[ListResourcesResult]()
	case "ListRootsRequest":
		return specRequest[RequestParams](MethodRootsList)
	case "ListRootsResult":
		return new(ListRootsResult)
	case "ListRootsResultResponse":
		return specResponse[ListRootsResult]()
	case "ListToolsRequest":
		return specRequest[PaginatedRequestParams](MethodToolsList)
	case "ListToolsResult":
		return new(ListToolsResult)
	case "ListToolsResultResponse":
		return specResponse[ListToolsResult]()
	case "LoggingMessageNotification":
		return specNotification[LoggingMessageNotificationParams](NotificationMessage)
	case "LoggingMessageNotificationParams":
		return new(LoggingMessageNotificationParams)
	case "ModelPreferences":
		return new(ModelPreferences)
	case "NumberSchema":
		return new(NumberSchema)
	case "PaginatedRequestParams":
		return new(PaginatedRequestParams)
	case "PingRequest":
		return specRequest[RequestParams](MethodPing)
	case "PingResultResponse", "SetLevelResultResponse", "SubscribeResultResponse", "UnsubscribeResultResponse":
		return specResponse[Result]()
	case "ProgressNotification":
		return specNotification[ProgressNotificationParams](NotificationProgress)
	case "ProgressNotificationParams":
		return new(ProgressNotificationParams)
	case "PromptListChangedNotification":
		return specNotification[NotificationParams](NotificationPromptsListChanged)
	case "ReadResourceRequest":
		return specRequest[ReadResourceRequestParams](MethodResourcesRead)
	case "ReadResourceResult":
		return new(ReadResourceResult)
	case "ReadResourceResultResponse":
		return specResponse[ReadResourceResult]()
	case "Resource":
		return new(Resource)
	case "ResourceLink":
		return new(ResourceLink)
	case "ResourceListChangedNotification":
		return specNotification[NotificationParams](NotificationResourcesListChanged)
	case "ResourceUpdatedNotification":
		return specNotification[ResourceUpdatedNotificationParams](NotificationResourcesUpdated)
	case "ResourceUpdatedNotificationParams":
		return new(ResourceUpdatedNotificationParams)
	case "Root":
		return new(Root)
	case "RootsListChangedNotification":
		return specNotification[NotificationParams](NotificationRootsListChanged)
	case "SamplingMessage":
		return new(SamplingMessage)
	case "ServerCapabilities":
		return new(ServerCapabilities)
	case "SetLevelRequest":
		return specRequest[SetLevelRequestParams](MethodLoggingSetLevel)
	case "SetLevelRequestParams":
		return new(SetLevelRequestParams)
	case "StringSchema":
		return new(StringSchema)
	case "SubscribeRequest":
		return specRequest[SubscribeRequestParams](MethodResourcesSubscribe)
	case "SubscribeRequestParams":
		return new(SubscribeRequestParams)
	case "TextContent":
		return new(TextContent)
	case "TextResourceContents":
		return new(TextResourceContents)
	case "TitledMultiSelectEnumSchema":
		return new(TitledMultiSelectEnumSchema)
	case "TitledSingleSelectEnumSchema":
		return new(TitledSingleSelectEnumSchema)
	case "Tool":
		return new(Tool)
	case "ToolListChangedNotification":
		return specNotification[NotificationParams](NotificationToolsListChanged)
	case "ToolResultContent":
		return new(ToolResultContent)
	case "ToolUseContent":
		return new(ToolUseContent)
	case "URLElicitationRequiredError":
		return new(specURLElicitationError)
	case "UnsubscribeRequest":
		return specRequest[UnsubscribeRequestParams](MethodResourcesUnsubscribe)
	case "UntitledMultiSelectEnumSchema":
		return new(UntitledMultiSelectEnumSchema)
	case "UntitledSingleSelectEnumSchema":
		return new(UntitledSingleSelectEnumSchema)
	}
	return nil
}

type manifestEntry struct {
	Path         string   `json:"path"`
	ExampleOf    string   `json:"exampleOf"`
	ValidateAs   []string `json:"validateAs"`
	Expect       string   `json:"expect"`
	ExpectedCode *int     `json:"expectedCode"`
}

func readManifest(t *testing.T) []manifestEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(examplesDir, "MANIFEST.json"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("examples not found: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Count    int             `json:"count"`
		Examples []manifestEntry `json:"examples"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Examples) != m.Count || m.Count == 0 {
		t.Fatalf("manifest lists %d examples, says %d", len(m.Examples), m.Count)
	}
	return m.Examples
}

// decodeAndValidate decodes data into v and validates it if it can.
func decodeAndValidate(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	if val, ok := v.(validator); ok {
		return val.Validate()
	}
	return nil
}

func TestExamples(t *testing.T) {
	schema := loadSchema(t)
	var valid, refused int
	for _, e := range readManifest(t) {
		t.Run(e.Path, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(examplesDir, e.Path))
			if err != nil {
				t.Fatal(err)
			}
			v := newExample(e.ExampleOf)
			if v == nil {
				t.Fatalf("no Go type for %s", e.ExampleOf)
			}
			err = decodeAndValidate(data, v)
			switch e.Expect {
			case "invalid":
				if err == nil {
					t.Fatalf("decode+Validate accepted an invalid %s", e.ExampleOf)
				}
				t.Logf("refused: %v", err)
				refused++
				return
			case "valid":
			default:
				t.Fatalf("unknown expectation %q", e.Expect)
			}
			if err != nil {
				t.Fatalf("decode+Validate: %v", err)
			}
			if e.ExpectedCode != nil {
				if got := v.(*jsonrpc.Error).Code; got != int64(*e.ExpectedCode) {
					t.Errorf("code = %d, want %d", got, *e.ExpectedCode)
				}
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			for _, ptr := range e.ValidateAs {
				doc := out
				if p, ok := strings.CutSuffix(ptr, " (on .result)"); ok {
					var env struct{ Result json.RawMessage }
					if err := json.Unmarshal(out, &env); err != nil {
						t.Fatal(err)
					}
					ptr, doc = p, env.Result
				}
				if err := schema.validate(ptr, doc); err != nil {
					t.Errorf("re-encoded JSON fails %s:\n%s\n%v", ptr, out, err)
				}
			}
			if eq, err := jsonEqual(data, out); err != nil || !eq {
				t.Errorf("round trip changed the value (err %v):\n in: %s\nout: %s", err, compact(data), out)
			}
			valid++
		})
	}
	if !t.Failed() && (valid < 130 || refused != 3) {
		t.Errorf("checked %d valid and %d invalid vectors, want at least 130 and 3", valid, refused)
	}
}

// TestInvalidExamplesFailSchema checks that the negative vectors are indeed
// refused by the schema, so that TestExamples' refusals mean something.
func TestInvalidExamplesFailSchema(t *testing.T) {
	schema := loadSchema(t)
	for _, e := range readManifest(t) {
		if e.Expect != "invalid" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(examplesDir, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.validate(e.ValidateAs[0], data); err == nil {
			t.Errorf("%s: schema accepts a vector the manifest calls invalid", e.Path)
		}
	}
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

// jsonEqual reports whether a and b hold the same JSON value, comparing
// numbers by value.
func jsonEqual(a, b []byte) (bool, error) {
	va, err := decodeAny(a)
	if err != nil {
		return false, err
	}
	vb, err := decodeAny(b)
	if err != nil {
		return false, err
	}
	return equalAny(va, vb), nil
}

func decodeAny(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func equalAny(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !equalAny(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalAny(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		ra, oka := new(big.Rat).SetString(string(a))
		rb, okb := new(big.Rat).SetString(string(b))
		return oka && okb && ra.Cmp(rb) == 0
	}
	return a == b
}

func TestJSONEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[true,null,"x"]}`, `{"b":[true,null,"x"],"a":1.0}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":false}`, `{}`, false},
		{`"1"`, `1`, false},
		{`{"a":[]}`, `{"a":null}`, false},
	}
	for _, tt := range tests {
		if got, err := jsonEqual([]byte(tt.a), []byte(tt.b)); err != nil || got != tt.want {
			t.Errorf("jsonEqual(%s, %s) = %v, %v; want %v", tt.a, tt.b, got, err, tt.want)
		}
	}
}

// TestEveryDefinition checks that each $defs entry of the schema has a Go
// type, listed here by the schema's name.
func TestEveryDefinition(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("schema not found")
	}
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	// The envelope definitions (requests, notifications, responses and
	// their unions) are jsonrpc's message model, whose params or result
	// are the mcp types; the spec examples of them are read that way
	// (specMessage).
	goTypes := map[string]any{
		"Annotations": Annotations{}, "AudioContent": AudioContent{}, "BaseMetadata": BaseMetadata{},
		"BlobResourceContents": BlobResourceContents{}, "BooleanSchema": BooleanSchema{},
		"CallToolRequest": jsonrpc.Request{}, "CallToolRequestParams": CallToolRequestParams{},
		"CallToolResult": CallToolResult{}, "CancelTaskRequest": jsonrpc.Request{},
		"CancelTaskResult": CancelTaskResult{}, "CancelledNotification": jsonrpc.Request{},
		"CancelledNotificationParams": CancelledNotificationParams{}, "ClientCapabilities": ClientCapabilities{},
		"ClientNotification": jsonrpc.Request{}, "ClientRequest": jsonrpc.Request{},
		"ClientResult": (*ClientResult)(nil), "CompleteRequest": jsonrpc.Request{},
		"CompleteRequestParams": CompleteRequestParams{}, "CompleteResult": CompleteResult{},
		"ContentBlock": (*ContentBlock)(nil), "CreateMessageRequest": jsonrpc.Request{},
		"CreateMessageRequestParams": CreateMessageRequestParams{}, "CreateMessageResult": CreateMessageResult{},
		"CreateTaskResult": CreateTaskResult{}, "Cursor": Cursor(""), "ElicitRequest": jsonrpc.Request{},
		"ElicitRequestFormParams": ElicitRequestFormParams{}, "ElicitRequestParams": (*ElicitRequestParams)(nil),
		"ElicitRequestURLParams": ElicitRequestURLParams{}, "ElicitResult": ElicitResult{},
		"ElicitationCompleteNotification": jsonrpc.Request{},
		"EmbeddedResource":                EmbeddedResource{}, "EmptyResult": EmptyResult{},
		"EnumSchema": (*EnumSchema)(nil), "Error": jsonrpc.Error{}, "GetPromptRequest": jsonrpc.Request{},
		"GetPromptRequestParams": GetPromptRequestParams{}, "GetPromptResult": GetPromptResult{},
		"GetTaskPayloadRequest": jsonrpc.Request{}, "GetTaskPayloadResult": GetTaskPayloadResult{},
		"GetTaskRequest": jsonrpc.Request{}, "GetTaskResult": GetTaskResult{}, "Icon": Icon{}, "Icons": Icons{},
		"ImageContent": ImageContent{}, "Implementation": Implementation{}, "InitializeRequest": jsonrpc.Request{},
		"InitializeRequestParams": InitializeRequestParams{}, "InitializeResult": InitializeResult{},
		"InitializedNotification": jsonrpc.Request{}, "JSONRPCErrorResponse": jsonrpc.Response{},
		"JSONRPCMessage": (*jsonrpc.Message)(nil), "JSONRPCNotification": jsonrpc.Request{},
		"JSONRPCRequest": jsonrpc.Request{}, "JSONRPCResponse": jsonrpc.Response{},
		"JSONRPCResultResponse": jsonrpc.Response{}, "LegacyTitledEnumSchema": LegacyTitledEnumSchema{},
		"ListPromptsRequest": jsonrpc.Request{}, "ListPromptsResult": ListPromptsResult{},
		"ListResourceTemplatesRequest": jsonrpc.Request{},
		"ListResourceTemplatesResult":  ListResourceTemplatesResult{}, "ListResourcesRequest": jsonrpc.Request{},
		"ListResourcesResult": ListResourcesResult{}, "ListRootsRequest": jsonrpc.Request{},
		"ListRootsResult": ListRootsResult{}, "ListTasksRequest": jsonrpc.Request{},
		"ListTasksResult": ListTasksResult{}, "ListToolsRequest": jsonrpc.Request{},
		"ListToolsResult": ListToolsResult{}, "LoggingLevel": LoggingLevel(""),
		"LoggingMessageNotification":       jsonrpc.Request{},
		"LoggingMessageNotificationParams": LoggingMessageNotificationParams{}, "ModelHint": ModelHint{},
		"ModelPreferences": ModelPreferences{}, "MultiSelectEnumSchema": (*MultiSelectEnumSchema)(nil),
		"Notification": jsonrpc.Request{}, "NotificationParams": NotificationParams{},
		"NumberSchema": NumberSchema{}, "PaginatedRequest": jsonrpc.Request{},
		"PaginatedRequestParams": PaginatedRequestParams{}, "PaginatedResult": PaginatedResult{},
		"PingRequest": jsonrpc.Request{}, "PrimitiveSchemaDefinition": (*PrimitiveSchemaDefinition)(nil),
		"ProgressNotification": jsonrpc.Request{}, "ProgressNotificationParams": ProgressNotificationParams{},
		"ProgressToken": ProgressToken{}, "Prompt": Prompt{}, "PromptArgument": PromptArgument{},
		"PromptListChangedNotification": jsonrpc.Request{}, "PromptMessage": PromptMessage{},
		"PromptReference": PromptReference{}, "ReadResourceRequest": jsonrpc.Request{},
		"ReadResourceRequestParams": ReadResourceRequestParams{}, "ReadResourceResult": ReadResourceResult{},
		"RelatedTaskMetadata": RelatedTaskMetadata{}, "Request": jsonrpc.Request{}, "RequestId": RequestID{},
		"RequestParams": RequestParams{}, "Resource": Resource{}, "ResourceContents": (*ResourceContents)(nil),
		"ResourceLink": ResourceLink{}, "ResourceListChangedNotification": jsonrpc.Request{},
		"ResourceRequestParams": ResourceRequestParams{}, "ResourceTemplate": ResourceTemplate{},
		"ResourceTemplateReference":         ResourceTemplateReference{},
		"ResourceUpdatedNotification":       jsonrpc.Request{},
		"ResourceUpdatedNotificationParams": ResourceUpdatedNotificationParams{}, "Result": Result{},
		"Role": Role(""), "Root": Root{}, "RootsListChangedNotification": jsonrpc.Request{},
		"SamplingMessage": SamplingMessage{}, "SamplingMessageContentBlock": (*SamplingMessageContentBlock)(nil),
		"ServerCapabilities": ServerCapabilities{}, "ServerNotification": jsonrpc.Request{},
		"ServerRequest": jsonrpc.Request{}, "ServerResult": (*ServerResult)(nil), "SetLevelRequest": jsonrpc.Request{},
		"SetLevelRequestParams": SetLevelRequestParams{}, "SingleSelectEnumSchema": (*SingleSelectEnumSchema)(nil),
		"StringSchema": StringSchema{}, "SubscribeRequest": jsonrpc.Request{},
		"SubscribeRequestParams": SubscribeRequestParams{}, "Task": Task{},
		"TaskAugmentedRequestParams": TaskAugmentedRequestParams{}, "TaskMetadata": TaskMetadata{},
		"TaskStatus": TaskStatus(""), "TaskStatusNotification": jsonrpc.Request{},
		"TaskStatusNotificationParams": TaskStatusNotificationParams{}, "TextContent": TextContent{},
		"TextResourceContents": TextResourceContents{}, "TitledMultiSelectEnumSchema": TitledMultiSelectEnumSchema{},
		"TitledSingleSelectEnumSchema": TitledSingleSelectEnumSchema{}, "Tool": Tool{},
		"ToolAnnotations": ToolAnnotations{}, "ToolChoice": ToolChoice{}, "ToolExecution": ToolExecution{},
		"ToolListChangedNotification": jsonrpc.Request{}, "ToolResultContent": ToolResultContent{},
		"ToolUseContent": ToolUseContent{}, "URLElicitationRequiredError": jsonrpc.Response{},
		"UnsubscribeRequest": jsonrpc.Request{}, "UnsubscribeRequestParams": UnsubscribeRequestParams{},
		"UntitledMultiSelectEnumSchema":  UntitledMultiSelectEnumSchema{},
		"UntitledSingleSelectEnumSchema": UntitledSingleSelectEnumSchema{},
	}
	for name := range s.Defs {
		if _, ok := goTypes[name]; !ok {
			t.Errorf("schema definition %s has no Go type", name)
		}
	}
	for name := range goTypes {
		if _, ok := s.Defs[name]; !ok {
			t.Errorf("Go type listed for %s, which the schema does not define", name)
		}
	}
}

// addr returns a pointer to a copy of v.
func addr[T any](v T) *T { return &v }

// TestEncoding checks exact encodings of values built in Go: required
// arrays as [], empty capabilities as {}, null ttl, defaults for required
// members, and that each encoding satisfies its schema definition.
func TestEncoding(t *testing.T) {
	schema := loadSchema(t)
	tests := []struct {
		name string
		def  string
		v    any
		want string
	}{
		{"CallToolResult nil content", "CallToolResult", CallToolResult{}, `{"content":[]}`},
		{"CallToolResult pointer", "CallToolResult", &CallToolResult{IsError: addr(false)}, `{"content":[],"isError":false}`},
		{"ListToolsResult", "ListToolsResult", ListToolsResult{}, `{"tools":[]}`},
		{"ListResourcesResult", "ListResourcesResult", ListResourcesResult{}, `{"resources":[]}`},
		{"ListResourceTemplatesResult", "ListResourceTemplatesResult", ListResourceTemplatesResult{}, `{"resourceTemplates":[]}`},
		{"ListPromptsResult", "ListPromptsResult", ListPromptsResult{}, `{"prompts":[]}`},
		{"ReadResourceResult", "ReadResourceResult", ReadResourceResult{}, `{"contents":[]}`},
		{"ListRootsResult", "ListRootsResult", ListRootsResult{}, `{"roots":[]}`},
		{"ListTasksResult", "ListTasksResult", ListTasksResult{}, `{"tasks":[]}`},
		{"GetPromptResult", "GetPromptResult", GetPromptResult{}, `{"messages":[]}`},
		{"CompleteResult", "CompleteResult", CompleteResult{}, `{"completion":{"values":[]}}`},
		{"CreateMessageRequestParams", "CreateMessageRequestParams", CreateMessageRequestParams{MaxTokens: 10}, `{"messages":[],"maxTokens":10}`},
		{"ToolResultContent", "ToolResultContent", ToolResultContent{ToolUseID: "u"}, `{"type":"tool_result","toolUseId":"u","content":[]}`},
		{"ToolUseContent nil input", "ToolUseContent", ToolUseContent{ID: "u", Name: "t"}, `{"type":"tool_use","id":"u","name":"t","input":{}}`},
		{"SamplingMessage no content", "SamplingMessage", SamplingMessage{Role: RoleUser}, `{"content":[],"role":"user"}`},
		{"SamplingMessage one block", "SamplingMessage", SamplingMessage{Role: RoleUser, Content: []Content{&TextContent{Text: "hi"}}}, `{"content":{"type":"text","text":"hi"},"role":"user"}`},
		{"SamplingMessage two blocks", "SamplingMessage", SamplingMessage{Role: RoleAssistant, Content: []Content{
			&ToolUseContent{ID: "1", Name: "a", Input: json.RawMessage(`{"x":1}`)}, &ToolUseContent{ID: "2", Name: "b"},
		}}, `{"content":[{"type":"tool_use","id":"1","name":"a","input":{"x":1}},{"type":"tool_use","id":"2","name":"b","input":{}}],"role":"assistant"}`},
		{"CreateMessageResult", "CreateMessageResult", CreateMessageResult{Role: RoleAssistant, Model: "m", Content: []Content{&TextContent{}}}, `{"content":{"type":"text","text":""},"role":"assistant","model":"m"}`},
		{"Tool default input schema", "Tool", Tool{Name: "t"}, `{"name":"t","inputSchema":{"type":"object"}}`},
		{"Tool annotations false", "Tool", Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), Annotations: &ToolAnnotations{DestructiveHint: addr(false)}, Execution: &ToolExecution{TaskSupport: TaskSupportOptional}},
			`{"name":"t","inputSchema":{"type":"object","additionalProperties":false},"annotations":{"destructiveHint":false},"execution":{"taskSupport":"optional"}}`},
		{"ImageContent nil data", "ImageContent", ImageContent{MIMEType: "image/png"}, `{"type":"image","data":"","mimeType":"image/png"}`},
		{"AudioContent data", "AudioContent", AudioContent{Data: []byte("abc"), MIMEType: "audio/wav"}, `{"type":"audio","data":"YWJj","mimeType":"audio/wav"}`},
		{"BlobResourceContents nil blob", "BlobResourceContents", BlobResourceContents{URI: "file:///b"}, `{"uri":"file:///b","blob":""}`},
		{"EmbeddedResource", "EmbeddedResource", EmbeddedResource{Resource: &TextResourceContents{URI: "file:///a", Text: "x"}}, `{"type":"resource","resource":{"uri":"file:///a","text":"x"}}`},
		{"ResourceLink", "ResourceLink", ResourceLink{URI: "file:///a", Name: "a", Size: addr(int64(0))}, `{"type":"resource_link","uri":"file:///a","name":"a","size":0}`},
		{"Annotations priority zero", "Annotations", Annotations{Priority: addr(0.0)}, `{"priority":0}`},
		{"RequestedSchema defaults", "ElicitRequestFormParams", ElicitRequestFormParams{Message: "m"}, `{"message":"m","requestedSchema":{"type":"object","properties":{}}}`},
		{"ElicitRequestURLParams", "ElicitRequestURLParams", ElicitRequestURLParams{ElicitationID: "e", URL: "https://x.example/", Message: "m"}, `{"mode":"url","elicitationId":"e","url":"https://x.example/","message":"m"}`},
		{"UntitledSingleSelectEnumSchema", "UntitledSingleSelectEnumSchema", UntitledSingleSelectEnumSchema{}, `{"type":"string","enum":[]}`},
		{"TitledSingleSelectEnumSchema", "TitledSingleSelectEnumSchema", TitledSingleSelectEnumSchema{}, `{"type":"string","oneOf":[]}`},
		{"UntitledMultiSelectEnumSchema", "UntitledMultiSelectEnumSchema", UntitledMultiSelectEnumSchema{}, `{"type":"array","items":{"type":"string","enum":[]}}`},
		{"TitledMultiSelectEnumSchema", "TitledMultiSelectEnumSchema", TitledMultiSelectEnumSchema{}, `{"type":"array","items":{"anyOf":[]}}`},
		{"LegacyTitledEnumSchema", "LegacyTitledEnumSchema", LegacyTitledEnumSchema{Enum: []string{"a"}, EnumNames: []string{"A"}}, `{"type":"string","enum":["a"],"enumNames":["A"]}`},
		{"NumberSchema default type", "NumberSchema", NumberSchema{Minimum: addr(0.0)}, `{"type":"number","minimum":0}`},
		{"BooleanSchema default false", "BooleanSchema", BooleanSchema{Default: addr(false)}, `{"type":"boolean","default":false}`},
		{"StringSchema", "StringSchema", StringSchema{Format: StringFormatDate}, `{"type":"string","format":"date"}`},
		{"PromptReference", "PromptReference", PromptReference{Name: "p"}, `{"type":"ref/prompt","name":"p"}`},
		{"ResourceTemplateReference", "ResourceTemplateReference", ResourceTemplateReference{URI: "file:///{x}"}, `{"type":"ref/resource","uri":"file:///{x}"}`},
		{"Task nil ttl", "Task", Task{TaskID: "t", Status: TaskStatusWorking, CreatedAt: "c", LastUpdatedAt: "u"},
			`{"taskId":"t","status":"working","createdAt":"c","lastUpdatedAt":"u","ttl":null}`},
		{"Task ttl", "Task", Task{TaskID: "t", Status: TaskStatusCompleted, CreatedAt: "c", LastUpdatedAt: "u", TTL: addr(int64(60000)), PollInterval: addr(int64(0))},
			`{"taskId":"t","status":"completed","createdAt":"c","lastUpdatedAt":"u","ttl":60000,"pollInterval":0}`},
		{"GetTaskResult flattened", "GetTaskResult", GetTaskResult{Meta: Meta{"k": "v"}, Task: Task{TaskID: "t", Status: TaskStatusFailed, CreatedAt: "c", LastUpdatedAt: "u"}},
			`{"_meta":{"k":"v"},"taskId":"t","status":"failed","createdAt":"c","lastUpdatedAt":"u","ttl":null}`},
		{"CreateTaskResult", "CreateTaskResult", CreateTaskResult{Task: Task{TaskID: "t", Status: TaskStatusWorking, CreatedAt: "c", LastUpdatedAt: "u"}},
			`{"task":{"taskId":"t","status":"working","createdAt":"c","lastUpdatedAt":"u","ttl":null}}`},
		{"GetTaskPayloadResult empty", "GetTaskPayloadResult", GetTaskPayloadResult(nil), `{}`},
		{"CancelledNotificationParams no id", "CancelledNotificationParams", CancelledNotificationParams{Reason: "r"}, `{"reason":"r"}`},
		{"CancelledNotificationParams int id", "CancelledNotificationParams", CancelledNotificationParams{RequestID: jsonrpc.Int64ID(7)}, `{"requestId":7}`},
		{"LoggingMessageNotificationParams nil data", "LoggingMessageNotificationParams", LoggingMessageNotificationParams{Level: LoggingLevelInfo}, `{"level":"info","data":null}`},
		// Whole messages, encoded as the runtime encodes them.
		{"URLElicitationRequiredError", "URLElicitationRequiredError", &specURLElicitationError{err: URLElicitationRequiredError{Message: "m"}},
			`{"jsonrpc":"2.0","error":{"code":-32042,"message":"m","data":{"elicitations":[]}}}`},
		{"ErrorResponse no id", "JSONRPCErrorResponse", &jsonrpc.Response{Error: jsonrpc.NewError(-32700, "Parse error")},
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`},
		{"ping result", "JSONRPCResultResponse", &jsonrpc.Response{ID: jsonrpc.StringID("a"), Result: emptyResult}, `{"jsonrpc":"2.0","id":"a","result":{}}`},
		{"PingRequest no params", "PingRequest", &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: MethodPing}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"InitializedNotification", "InitializedNotification", &jsonrpc.Request{Method: NotificationInitialized}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"ElicitRequest URL params", "ElicitRequest", &specMessage{msg: &jsonrpc.Request{ID: jsonrpc.StringID("x"), Method: MethodElicitationCreate}, value: &ElicitRequestURLParams{ElicitationID: "e", URL: "https://a.example/", Message: "m"}},
			`{"jsonrpc":"2.0","id":"x","method":"elicitation/create","params":{"mode":"url","elicitationId":"e","url":"https://a.example/","message":"m"}}`},
		{"ClientCapabilities empty", "ClientCapabilities", ClientCapabilities{}, `{}`},
		{"ClientCapabilities empty sub-objects", "ClientCapabilities", ClientCapabilities{
			Roots:       &RootsCapability{},
			Sampling:    &SamplingCapability{Context: &Capability{}, Tools: &Capability{}},
			Elicitation: &ElicitationCapability{},
			Tasks: &ClientTasksCapability{List: &Capability{}, Cancel: &Capability{}, Requests: &ClientTaskRequests{
				Sampling:    &SamplingTaskRequests{CreateMessage: &Capability{}},
				Elicitation: &ElicitationTaskRequests{Create: &Capability{}},
			}},
			Experimental: map[string]json.RawMessage{"x": json.RawMessage(`{}`)},
		}, `{"experimental":{"x":{}},"roots":{},"sampling":{"context":{},"tools":{}},"elicitation":{},"tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}}}`},
		{"ServerCapabilities empty sub-objects", "ServerCapabilities", ServerCapabilities{
			Logging: &LoggingCapability{}, Completions: &CompletionsCapability{}, Prompts: &PromptsCapability{},
			Resources: &ResourcesCapability{}, Tools: &ToolsCapability{ListChanged: true},
			Tasks: &ServerTasksCapability{Requests: &ServerTaskRequests{Tools: &ToolsTaskRequests{Call: &Capability{}}}},
		}, `{"logging":{},"completions":{},"prompts":{},"resources":{},"tools":{"listChanged":true},"tasks":{"requests":{"tools":{"call":{}}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			var err error
			if m, ok := tt.v.(jsonrpc.Message); ok {
				got, err = jsonrpc.Encode(m)
			} else {
				got, err = json.Marshal(tt.v)
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if err := schema.validate("#/$defs/"+tt.def, got); err != nil {
				t.Errorf("%s fails %s: %v", got, tt.def, err)
			}
		})
	}
}

func TestCapabilitiesDecode(t *testing.T) {
	var c ClientCapabilities
	in := `{"roots":{"listChanged":true,"future":1},"elicitation":{},"extensions":{"io.x/y":{}},"newThing":true}`
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatalf("unknown keys refused: %v", err)
	}
	if c.Roots == nil || !c.Roots.ListChanged || c.Sampling != nil {
		t.Errorf("decoded %+v", c)
	}
	if !c.Elicitation.SupportsForm() || c.Elicitation.SupportsURL() {
		t.Error("empty elicitation capability must mean form only")
	}
	url := &ElicitationCapability{URL: &Capability{}}
	if url.SupportsForm() || !url.SupportsURL() {
		t.Error("url-only elicitation capability")
	}
	both := &ElicitationCapability{Form: &Capability{}, URL: &Capability{}}
	if !both.SupportsForm() || !both.SupportsURL() {
		t.Error("form and url elicitation capability")
	}
	var none *ElicitationCapability
	if none.SupportsForm() || none.SupportsURL() {
		t.Error("nil elicitation capability supports nothing")
	}
	bad := ServerCapabilities{Experimental: map[string]json.RawMessage{"a": json.RawMessage(`{}`), "b": json.RawMessage(`[]`)}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "experimental.b") {
		t.Errorf("Validate = %v, want experimental.b refused", err)
	}
}

func TestTaskTTLDecode(t *testing.T) {
	var r GetTaskResult
	in := `{"_meta":{"a":1},"taskId":"t","status":"input_required","createdAt":"c","lastUpdatedAt":"u","ttl":null,"pollInterval":500}`
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if r.TTL != nil || r.PollInterval == nil || *r.PollInterval != 500 || r.Status != TaskStatusInputRequired || r.Meta["a"] != json.Number("1") {
		t.Errorf("decoded %+v", r)
	}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}
	if err := json.Unmarshal([]byte(`{"taskId":"t","ttl":1.5}`), &r); err == nil {
		t.Error("fractional ttl accepted")
	}
}

func TestTaskStatus(t *testing.T) {
	for s, terminal := range map[TaskStatus]bool{
		TaskStatusWorking: false, TaskStatusInputRequired: false,
		TaskStatusCompleted: true, TaskStatusFailed: true, TaskStatusCancelled: true,
	} {
		if s.Terminal() != terminal {
			t.Errorf("%s.Terminal() = %v", s, !terminal)
		}
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
	}
	if TaskStatus("done").Validate() == nil || TaskStatus("").Validate() == nil {
		t.Error("unknown status accepted")
	}
}

func TestContentDispatch(t *testing.T) {
	blocks := map[string]any{
		`{"type":"text","text":"a"}`:                                         &TextContent{},
		`{"type":"image","data":"YQ==","mimeType":"image/png"}`:              &ImageContent{},
		`{"type":"audio","data":"YQ==","mimeType":"audio/wav"}`:              &AudioContent{},
		`{"type":"resource_link","uri":"file:///a","name":"a"}`:              &ResourceLink{},
		`{"type":"resource","resource":{"uri":"file:///a","blob":"YQ=="}}`:   &EmbeddedResource{},
		`{"type":"tool_use","id":"1","name":"t","input":{}}`:                 &ToolUseContent{},
		`{"type":"tool_result","toolUseId":"1","content":[]}`:                &ToolResultContent{},
		`{"type":"tool_result","toolUseId":"1","content":[{"type":"text"}]}`: &ToolResultContent{},
	}
	for in, want := range blocks {
		typ, _ := decodeAny([]byte(in))
		kind := typ.(map[string]any)["type"].(string)
		inBlock := contentBit(kind)&contentBlockSet != 0
		inSampling := contentBit(kind)&samplingContentSet != 0

		var r CallToolResult
		err := json.Unmarshal([]byte(`{"content":[`+in+`]}`), &r)
		if inBlock {
			if err != nil || reflect.TypeOf(r.Content[0]) != reflect.TypeOf(want) {
				t.Errorf("CallToolResult with %s: %T, %v", in, r.Content, err)
			}
		} else if !errors.Is(err, ErrInvalidType) {
			t.Errorf("CallToolResult accepted %s: %v", in, err)
		}

		var m SamplingMessage
		err = json.Unmarshal([]byte(`{"role":"user","content":`+in+`}`), &m)
		if inSampling {
			if err != nil || len(m.Content) != 1 || reflect.TypeOf(m.Content[0]) != reflect.TypeOf(want) {
				t.Errorf("SamplingMessage with %s: %v, %v", in, m.Content, err)
			}
		} else if !errors.Is(err, ErrInvalidType) {
			t.Errorf("SamplingMessage accepted %s: %v", in, err)
		}

		var pm PromptMessage
		err = json.Unmarshal([]byte(`{"role":"user","content":`+in+`}`), &pm)
		if inBlock != (err == nil) {
			t.Errorf("PromptMessage with %s: %v", in, err)
		}

		var tr ToolResultContent
		err = json.Unmarshal([]byte(`{"type":"tool_result","toolUseId":"x","content":[`+in+`]}`), &tr)
		if inBlock != (err == nil) {
			t.Errorf("ToolResultContent with %s: %v", in, err)
		}
	}

	refused := []string{
		`{"content":[{"type":"video","data":""}]}`,
		`{"content":[{"text":"no type"}]}`,
		`{"content":[null]}`,
		`{"content":[{"type":"text","text":"a"},{"type":"tool_use","id":"1","name":"t","input":{}}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a"}}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x","blob":"YQ=="}}]}`,
	}
	for _, in := range refused {
		var r CallToolResult
		if err := json.Unmarshal([]byte(in), &r); !errors.Is(err, ErrInvalidType) {
			t.Errorf("CallToolResult %s: err = %v, want ErrInvalidType", in, err)
		}
	}

	// Decoding a concrete type directly checks its discriminator too.
	var tc TextContent
	if err := json.Unmarshal([]byte(`{"type":"image","text":"a"}`), &tc); !errors.Is(err, ErrInvalidType) {
		t.Errorf("TextContent with type image: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"text":"a"}`), &tc); !errors.Is(err, ErrInvalidType) {
		t.Errorf("TextContent without type: %v", err)
	}

	// One block and an array of one block both decode; one block encodes
	// as an object.
	var m SamplingMessage
	if err := json.Unmarshal([]byte(`{"role":"user","content":[{"type":"text","text":"a"}]}`), &m); err != nil || len(m.Content) != 1 {
		t.Fatalf("array of one: %v %v", m.Content, err)
	}
	var cm CreateMessageResult
	if err := json.Unmarshal([]byte(`{"role":"assistant","model":"m","content":[]}`), &cm); err != nil || cm.Content == nil || len(cm.Content) != 0 {
		t.Errorf("empty array: %#v %v", cm.Content, err)
	}

	// The embedded resource of a block is text or blob by its members.
	var r CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"t"}},{"type":"resource","resource":{"uri":"file:///b","blob":"YWJj"}}]}`), &r); err != nil {
		t.Fatal(err)
	}
	if txt, ok := r.Content[0].(*EmbeddedResource).Resource.(*TextResourceContents); !ok || txt.Text != "t" {
		t.Errorf("text resource: %#v", r.Content[0])
	}
	if blob, ok := r.Content[1].(*EmbeddedResource).Resource.(*BlobResourceContents); !ok || string(blob.Blob) != "abc" {
		t.Errorf("blob resource: %#v", r.Content[1])
	}
}

func TestUnionDispatch(t *testing.T) {
	t.Run("CompleteReference", func(t *testing.T) {
		var p CompleteRequestParams
		if err := json.Unmarshal([]byte(`{"ref":{"type":"ref/resource","uri":"file:///{p}"},"argument":{"name":"p","value":"a"}}`), &p); err != nil {
			t.Fatal(err)
		}
		if ref, ok := p.Ref.(*ResourceTemplateReference); !ok || ref.URI != "file:///{p}" {
			t.Errorf("ref = %#v", p.Ref)
		}
		if err := json.Unmarshal([]byte(`{"ref":{"type":"ref/prompt","name":"n"},"argument":{"name":"p","value":"a"}}`), &p); err != nil {
			t.Fatal(err)
		}
		if ref, ok := p.Ref.(*PromptReference); !ok || ref.Name != "n" {
			t.Errorf("ref = %#v", p.Ref)
		}
		for _, in := range []string{`{"ref":{"type":"ref/tool","name":"n"}}`, `{"ref":{"name":"n"}}`} {
			if err := json.Unmarshal([]byte(in), &p); !errors.Is(err, ErrInvalidType) {
				t.Errorf("%s: %v", in, err)
			}
		}
	})
	t.Run("ElicitRequestParams", func(t *testing.T) {
		tests := []struct {
			params string
			want   any
		}{
			{`{"message":"m","requestedSchema":{"type":"object","properties":{}}}`, &ElicitRequestFormParams{}},
			{`{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}}`, &ElicitRequestFormParams{}},
			{`{"mode":"url","message":"m","elicitationId":"e","url":"https://a.example/"}`, &ElicitRequestURLParams{}},
		}
		for _, tt := range tests {
			r := specElicitRequest()
			in := `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":` + tt.params + `}`
			if err := json.Unmarshal([]byte(in), r); err != nil {
				t.Fatalf("%s: %v", tt.params, err)
			}
			if reflect.TypeOf(r.value) != reflect.TypeOf(tt.want) {
				t.Errorf("%s: params are %T", tt.params, r.value)
			}
			out, _ := json.Marshal(r)
			if eq, _ := jsonEqual([]byte(in), out); !eq {
				t.Errorf("round trip: %s -> %s", in, out)
			}
		}
		if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"mode":"sms"}}`), specElicitRequest()); !errors.Is(err, ErrInvalidType) {
			t.Errorf("unknown mode: %v", err)
		}
		var u ElicitRequestURLParams
		if err := json.Unmarshal([]byte(`{"mode":"form","url":"https://a.example/"}`), &u); !errors.Is(err, ErrInvalidType) {
			t.Errorf("URL params with form mode: %v", err)
		}
	})
	t.Run("PrimitiveSchemaDefinition", func(t *testing.T) {
		props := map[string]any{
			`{"type":"string"}`: &StringSchema{},
			`{"type":"string","format":"email","minLength":1}`:               &StringSchema{},
			`{"type":"integer","maximum":3}`:                                 &NumberSchema{},
			`{"type":"number"}`:                                              &NumberSchema{},
			`{"type":"boolean","default":true}`:                              &BooleanSchema{},
			`{"type":"string","enum":["a","b"]}`:                             &UntitledSingleSelectEnumSchema{},
			`{"type":"string","enum":["a"],"enumNames":["A"]}`:               &LegacyTitledEnumSchema{},
			`{"type":"string","oneOf":[{"const":"a","title":"A"}]}`:          &TitledSingleSelectEnumSchema{},
			`{"type":"array","items":{"type":"string","enum":["a"]}}`:        &UntitledMultiSelectEnumSchema{},
			`{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}}`: &TitledMultiSelectEnumSchema{},
		}
		for in, want := range props {
			var s RequestedSchema
			doc := `{"type":"object","properties":{"f":` + in + `}}`
			if err := json.Unmarshal([]byte(doc), &s); err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			if reflect.TypeOf(s.Properties["f"]) != reflect.TypeOf(want) {
				t.Errorf("%s decoded as %T", in, s.Properties["f"])
			}
			out, _ := json.Marshal(s)
			if eq, _ := jsonEqual([]byte(doc), out); !eq {
				t.Errorf("round trip: %s -> %s", doc, out)
			}
		}
		for _, in := range []string{`{"type":"object"}`, `{"minLength":1}`, `{"type":"null"}`} {
			var s RequestedSchema
			if err := json.Unmarshal([]byte(`{"type":"object","properties":{"f":`+in+`}}`), &s); !errors.Is(err, ErrInvalidType) {
				t.Errorf("%s: %v", in, err)
			}
		}
		var enum EnumSchema = &TitledMultiSelectEnumSchema{}
		if _, ok := enum.(MultiSelectEnumSchema); !ok {
			t.Error("TitledMultiSelectEnumSchema is not a MultiSelectEnumSchema")
		}
		if _, ok := enum.(SingleSelectEnumSchema); ok {
			t.Error("TitledMultiSelectEnumSchema is a SingleSelectEnumSchema")
		}
	})
	t.Run("ElicitResult", func(t *testing.T) {
		var r ElicitResult
		in := `{"action":"accept","content":{"s":"x","n":2.5,"i":3,"b":false,"l":["a","b"],"e":[]}}`
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"s": "x", "n": 2.5, "i": 3.0, "b": false, "l": []string{"a", "b"}, "e": []string{}}
		if !reflect.DeepEqual(r.Content, want) {
			t.Errorf("content = %#v", r.Content)
		}
		if err := r.Validate(); err != nil {
			t.Error(err)
		}
		out, _ := json.Marshal(r)
		if eq, _ := jsonEqual([]byte(in), out); !eq {
			t.Errorf("round trip: %s", out)
		}
		for _, bad := range []string{`{"o":{}}`, `{"z":null}`, `{"l":[1]}`} {
			if err := json.Unmarshal([]byte(`{"action":"accept","content":`+bad+`}`), &r); err == nil {
				t.Errorf("content %s accepted", bad)
			}
		}
		r = ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"m": map[string]any{}}}
		if err := r.Validate(); err == nil {
			t.Error("Validate accepted an object value")
		}
		if err := (&ElicitResult{Action: "ok"}).Validate(); err == nil {
			t.Error("Validate accepted an unknown action")
		}
	})
}

func TestValidate(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		name    string
		v       validator
		wantErr string // empty: valid
	}{
		{"tool ok", &Tool{Name: "t", InputSchema: obj, OutputSchema: obj}, ""},
		{"tool no name", &Tool{InputSchema: obj}, "name: is required"},
		{"tool input schema array root", &Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"array"}`)}, "inputSchema"},
		{"tool input schema no type", &Tool{Name: "t", InputSchema: json.RawMessage(`{"properties":{}}`)}, "inputSchema"},
		{"tool input schema type list", &Tool{Name: "t", InputSchema: json.RawMessage(`{"type":["object","null"]}`)}, "inputSchema"},
		{"tool input schema case", &Tool{Name: "t", InputSchema: json.RawMessage(`{"Type":"object"}`)}, "inputSchema"},
		{"tool input schema not object", &Tool{Name: "t", InputSchema: json.RawMessage(`true`)}, "inputSchema"},
		{"tool output schema array", &Tool{Name: "t", OutputSchema: json.RawMessage(`{"type":"array","items":{}}`)}, "outputSchema"},
		{"tool task support", &Tool{Name: "t", Execution: &ToolExecution{TaskSupport: "always"}}, "execution.taskSupport"},
		{"tool icon theme", &Tool{Name: "t", Icons: []Icon{{Src: "https://a/i.png", Theme: "blue"}}}, "icons[0].theme"},
		{"tool icon src", &Tool{Name: "t", Icons: []Icon{{}}}, "icons[0].src"},
		{"list tools nested", &ListToolsResult{Tools: []Tool{{Name: "a"}, {}}}, "tools[1].name"},
		{"call result ok", &CallToolResult{Content: []Content{&TextContent{}}, StructuredContent: json.RawMessage(`{"a":[1]}`)}, ""},
		{"call result array structured", &CallToolResult{StructuredContent: json.RawMessage(`[]`)}, "structuredContent"},
		{"call result null structured", &CallToolResult{StructuredContent: json.RawMessage(`null`)}, "structuredContent"},
		{"call result nil block", &CallToolResult{Content: []Content{nil}}, "content[0]: is missing"},
		{"call result typed nil block", &CallToolResult{Content: []Content{(*TextContent)(nil)}}, "content[0]: is missing"},
		{"call result tool_use block", &CallToolResult{Content: []Content{&ToolUseContent{ID: "1", Name: "t"}}}, "not allowed"},
		{"call result image without mime", &CallToolResult{Content: []Content{&ImageContent{}}}, "content[0].mimeType"},
		{"call result bad audience", &CallToolResult{Content: []Content{&TextContent{Annotations: &Annotations{Audience: []Role{"system"}}}}}, "annotations.audience[0]"},
		{"call result bad priority", &CallToolResult{Content: []Content{&AudioContent{MIMEType: "audio/wav", Annotations: &Annotations{Priority: addr(1.5)}}}}, "annotations.priority"},
		{"call result embedded nil", &CallToolResult{Content: []Content{&EmbeddedResource{}}}, "content[0].resource: is missing"},
		{"call result link no uri", &CallToolResult{Content: []Content{&ResourceLink{Name: "n"}}}, "content[0].uri"},
		{"call params arguments array", &CallToolRequestParams{Name: "t", Arguments: json.RawMessage(`[1]`)}, "arguments"},
		{"call params negative ttl", &CallToolRequestParams{Name: "t", Task: &TaskMetadata{TTL: addr(int64(-1))}}, "task.ttl"},
		{"tool use input array", &ToolUseContent{ID: "1", Name: "t", Input: json.RawMessage(`[]`)}, "input"},
		{"tool result bad block", &ToolResultContent{ToolUseID: "1", Content: []Content{&ToolResultContent{ToolUseID: "2"}}}, "not allowed"},
		{"tool result no id", &ToolResultContent{}, "toolUseId"},
		{"sampling ok", &SamplingMessage{Role: RoleAssistant, Content: []Content{&ToolUseContent{ID: "1", Name: "t"}}}, ""},
		{"sampling bad role", &SamplingMessage{Role: "system"}, "role"},
		{"sampling resource link", &SamplingMessage{Role: RoleUser, Content: []Content{&ResourceLink{URI: "u", Name: "n"}}}, "not allowed"},
		{"create message ok", &CreateMessageRequestParams{MaxTokens: 1, IncludeContext: IncludeContextThisServer, ToolChoice: &ToolChoice{Mode: ToolChoiceRequired}}, ""},
		{"create message max tokens", &CreateMessageRequestParams{}, "maxTokens"},
		{"create message include context", &CreateMessageRequestParams{MaxTokens: 1, IncludeContext: "everything"}, "includeContext"},
		{"create message tool choice", &CreateMessageRequestParams{MaxTokens: 1, ToolChoice: &ToolChoice{Mode: "maybe"}}, "toolChoice.mode"},
		{"create message preferences", &CreateMessageRequestParams{MaxTokens: 1, ModelPreferences: &ModelPreferences{SpeedPriority: addr(-0.1)}}, "modelPreferences.speedPriority"},
		{"create message bad tool", &CreateMessageRequestParams{MaxTokens: 1, Tools: []Tool{{Name: "t", InputSchema: json.RawMessage(`{}`)}}}, "tools[0].inputSchema"},
		{"create message metadata", &CreateMessageRequestParams{MaxTokens: 1, Metadata: json.RawMessage(`"x"`)}, "metadata"},
		{"create message nested", &CreateMessageRequestParams{MaxTokens: 1, Messages: []SamplingMessage{{Role: RoleUser, Content: []Content{&ImageContent{}}}}}, "messages[0].content[0].mimeType"},
		{"create message result no model", &CreateMessageResult{Role: RoleAssistant}, "model"},
		{"prompt ok", &Prompt{Name: "p", Arguments: []PromptArgument{{Name: "a", Required: addr(true)}}}, ""},
		{"prompt argument name", &Prompt{Name: "p", Arguments: []PromptArgument{{}}}, "arguments[0].name"},
		{"prompt result bad role", &GetPromptResult{Messages: []PromptMessage{{Role: "bot", Content: &TextContent{}}}}, "messages[0].role"},
		{"prompt result no content", &GetPromptResult{Messages: []PromptMessage{{Role: RoleUser}}}, "messages[0].content: is missing"},
		{"get prompt name", &GetPromptRequestParams{}, "name"},
		{"resource ok", &Resource{URI: "file:///a", Name: "a", Size: addr(int64(0))}, ""},
		{"resource negative size", &Resource{URI: "file:///a", Name: "a", Size: addr(int64(-1))}, "size"},
		{"resource no name", &Resource{URI: "file:///a"}, "name"},
		{"template no template", &ResourceTemplate{Name: "a"}, "uriTemplate"},
		{"read params", &ReadResourceRequestParams{}, "uri"},
		{"subscribe params", &SubscribeRequestParams{}, "uri"},
		{"unsubscribe params", &UnsubscribeRequestParams{}, "uri"},
		{"updated params", &ResourceUpdatedNotificationParams{}, "uri"},
		{"read result nil contents", &ReadResourceResult{Contents: []ResourceContents{nil}}, "contents[0]: is missing"},
		{"read result no uri", &ReadResourceResult{Contents: []ResourceContents{&BlobResourceContents{}}}, "contents[0].uri"},
		{"root ok", &Root{URI: "FILE:///home"}, ""},
		{"root https", &Root{URI: "https://a.example/"}, "file://"},
		{"roots nested", &ListRootsResult{Roots: []Root{{URI: "file:///a"}, {URI: "/tmp"}}}, "roots[1].uri"},
		{"implementation no version", &Implementation{Name: "x"}, "version"},
		{"initialize ok", &InitializeRequestParams{ProtocolVersion: LatestProtocolVersion, ClientInfo: Implementation{Name: "c", Version: "1"}}, ""},
		{"initialize no version", &InitializeRequestParams{ClientInfo: Implementation{Name: "c", Version: "1"}}, "protocolVersion"},
		{"initialize client info", &InitializeRequestParams{ProtocolVersion: "x", ClientInfo: Implementation{Name: "c"}}, "clientInfo.version"},
		{"initialize result server info", &InitializeResult{ProtocolVersion: "x", ServerInfo: Implementation{Version: "1"}}, "serverInfo.name"},
		{"initialize result experimental", &InitializeResult{ProtocolVersion: "x", ServerInfo: Implementation{Name: "s", Version: "1"}, Capabilities: ServerCapabilities{Experimental: map[string]json.RawMessage{"e": json.RawMessage(`1`)}}}, "capabilities.experimental.e"},
		{"form ok", &ElicitRequestFormParams{Message: "m", RequestedSchema: RequestedSchema{Properties: map[string]PrimitiveSchemaDefinition{"a": &StringSchema{}, "b": &NumberSchema{Type: "integer"}}}}, ""},
		{"form bad mode", &ElicitRequestFormParams{Mode: "url"}, "mode"},
		{"form schema type", &ElicitRequestFormParams{RequestedSchema: RequestedSchema{Type: "array"}}, "requestedSchema.type"},
		{"form nil property", &ElicitRequestFormParams{RequestedSchema: RequestedSchema{Properties: map[string]PrimitiveSchemaDefinition{"a": nil}}}, "requestedSchema.properties.a"},
		{"form bad format", &ElicitRequestFormParams{RequestedSchema: RequestedSchema{Properties: map[string]PrimitiveSchemaDefinition{"a": &StringSchema{Format: "phone"}}}}, "properties.a.format"},
		{"form bad number type", &ElicitRequestFormParams{RequestedSchema: RequestedSchema{Properties: map[string]PrimitiveSchemaDefinition{"a": &NumberSchema{Type: "float"}}}}, "properties.a.type"},
		{"form negative length", &ElicitRequestFormParams{RequestedSchema: RequestedSchema{Properties: map[string]PrimitiveSchemaDefinition{"a": &StringSchema{MinLength: addr(-1)}}}}, "minLength"},
		{"form negative items", &ElicitRequestFormParams{RequestedSchema: RequestedSchema{Properties: map[string]PrimitiveSchemaDefinition{"a": &TitledMultiSelectEnumSchema{MaxItems: addr(-1)}}}}, "maxItems"},
		{"url ok", &ElicitRequestURLParams{ElicitationID: "e", URL: "https://a.example/x", Message: "m"}, ""},
		{"url no id", &ElicitRequestURLParams{URL: "https://a.example/x", Message: "m"}, "elicitationId"},
		{"url relative", &ElicitRequestURLParams{ElicitationID: "e", URL: "/x", Message: "m"}, "url"},
		{"url missing", &ElicitRequestURLParams{ElicitationID: "e"}, "url"},
		{"elicitation complete", &ElicitationCompleteNotificationParams{}, "elicitationId"},
		{"set level", &SetLevelRequestParams{Level: "verbose"}, "level"},
		{"log message level", &LoggingMessageNotificationParams{Level: "trace"}, "level"},
		{"complete ok", &CompleteRequestParams{Ref: &PromptReference{Name: "p"}, Argument: CompleteArgument{Name: "a"}}, ""},
		{"complete no ref", &CompleteRequestParams{Argument: CompleteArgument{Name: "a"}}, "ref"},
		{"complete ref name", &CompleteRequestParams{Ref: &PromptReference{}, Argument: CompleteArgument{Name: "a"}}, "ref.name"},
		{"complete ref uri", &CompleteRequestParams{Ref: &ResourceTemplateReference{}, Argument: CompleteArgument{Name: "a"}}, "ref.uri"},
		{"complete argument", &CompleteRequestParams{Ref: &PromptReference{Name: "p"}}, "argument.name"},
		{"complete result too many", &CompleteResult{Completion: Completion{Values: make([]string, 101)}}, "completion.values"},
		{"complete result 100", &CompleteResult{Completion: Completion{Values: make([]string, 100)}}, ""},
		{"complete result total", &CompleteResult{Completion: Completion{Total: addr(-1)}}, "completion.total"},
		{"task ok", &Task{TaskID: "t", Status: TaskStatusWorking, CreatedAt: "c", LastUpdatedAt: "u"}, ""},
		{"task no id", &Task{Status: TaskStatusWorking, CreatedAt: "c", LastUpdatedAt: "u"}, "taskId"},
		{"task status", &Task{TaskID: "t", Status: "paused", CreatedAt: "c", LastUpdatedAt: "u"}, "status"},
		{"task created", &Task{TaskID: "t", Status: TaskStatusWorking, LastUpdatedAt: "u"}, "createdAt"},
		{"task ttl", &Task{TaskID: "t", Status: TaskStatusWorking, CreatedAt: "c", LastUpdatedAt: "u", TTL: addr(int64(-5))}, "ttl"},
		{"task poll", &Task{TaskID: "t", Status: TaskStatusWorking, CreatedAt: "c", LastUpdatedAt: "u", PollInterval: addr(int64(-5))}, "pollInterval"},
		{"create task result", &CreateTaskResult{}, "task.taskId"},
		{"cancel task result", &CancelTaskResult{}, "taskId"},
		{"task status params", &TaskStatusNotificationParams{}, "taskId"},
		{"list tasks nested", &ListTasksResult{Tasks: []Task{{}}}, "tasks[0].taskId"},
		{"get task params", &GetTaskRequestParams{}, "taskId"},
		{"get payload params", &GetTaskPayloadRequestParams{}, "taskId"},
		{"cancel task params", &CancelTaskRequestParams{}, "taskId"},
		{"payload not object", addr(GetTaskPayloadResult(`[1]`)), "must be a JSON object"},
		{"progress token", &ProgressNotificationParams{}, "progressToken"},
		{"role", Role("system"), "Role"},
		{"base metadata", &BaseMetadata{}, "name"},
		{"icons", &Icons{Icons: []Icon{{Src: "data:image/png;base64,AA==", Theme: "dark"}, {Src: "x", Theme: "sepia"}}}, "icons[1].theme"},
		{"task augmented", &TaskAugmentedRequestParams{Task: &TaskMetadata{TTL: addr(int64(-1))}}, "task.ttl"},
		{"resource request", &ResourceRequestParams{}, "uri"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a *ValidationError", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestGetTaskPayloadResult(t *testing.T) {
	r := specResponse[GetTaskPayloadResult]()
	in := `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"done"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}}`
	if err := json.Unmarshal([]byte(in), r); err != nil {
		t.Fatal(err)
	}
	var res CallToolResult
	if err := r.value.(*GetTaskPayloadResult).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if id, ok := res.Meta.RelatedTaskID(); !ok || id != "t1" || res.Content[0].(*TextContent).Text != "done" {
		t.Errorf("decoded %+v", res)
	}
	out, _ := json.Marshal(r)
	if eq, _ := jsonEqual([]byte(in), out); !eq {
		t.Errorf("round trip: %s", out)
	}
	var p GetTaskPayloadResult
	if err := json.Unmarshal([]byte(`"x"`), &p); err == nil {
		t.Error("string payload accepted")
	}
	if _, err := json.Marshal(GetTaskPayloadResult(`[]`)); err == nil {
		t.Error("array payload encoded")
	}
}

func TestResultUnions(t *testing.T) {
	server := []ServerResult{&Result{}, &InitializeResult{}, &ListResourcesResult{}, &ListResourceTemplatesResult{},
		&ReadResourceResult{}, &ListPromptsResult{}, &GetPromptResult{}, &ListToolsResult{}, &CallToolResult{},
		&CompleteResult{}, &GetTaskResult{}, &GetTaskPayloadResult{}, &CancelTaskResult{}, &ListTasksResult{}, &CreateTaskResult{}}
	client := []ClientResult{&Result{}, &CreateMessageResult{}, &ListRootsResult{}, &ElicitResult{},
		&GetTaskResult{}, &GetTaskPayloadResult{}, &CancelTaskResult{}, &ListTasksResult{}, &CreateTaskResult{}}
	for _, r := range server {
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("%T: %v", r, err)
		}
	}
	if len(server) != 15 || len(client) != 9 {
		t.Error("union lists changed")
	}
	if _, ok := any(&CallToolResult{}).(ClientResult); ok {
		t.Error("CallToolResult is a ClientResult")
	}
	if _, ok := any(&ElicitResult{}).(ServerResult); ok {
		t.Error("ElicitResult is a ServerResult")
	}
}

func TestMethods(t *testing.T) {
	versions := SupportedProtocolVersions()
	if versions[0] != LatestProtocolVersion || LatestProtocolVersion != "2025-11-25" {
		t.Errorf("versions = %v", versions)
	}
	if !slices.IsSortedFunc(versions, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Errorf("versions not newest first: %v", versions)
	}
	versions[0] = "mutated"
	if SupportedProtocolVersions()[0] != ProtocolVersion20251125 {
		t.Error("SupportedProtocolVersions shares its slice")
	}
	for _, v := range SupportedProtocolVersions() {
		if !IsSupportedProtocolVersion(v) {
			t.Errorf("%s not supported", v)
		}
	}
	if IsSupportedProtocolVersion("2026-07-28") || IsSupportedProtocolVersion("") {
		t.Error("unknown version supported")
	}
	tests := []struct {
		method                   string
		clientReq, serverReq     bool
		clientNotif, serverNotif bool
	}{
		{MethodInitialize, true, false, false, false},
		{MethodPing, true, true, false, false},
		{MethodToolsCall, true, false, false, false},
		{MethodSamplingCreateMessage, false, true, false, false},
		{MethodElicitationCreate, false, true, false, false},
		{MethodRootsList, false, true, false, false},
		{MethodTasksGet, true, true, false, false},
		{MethodCompletionComplete, true, false, false, false},
		{NotificationCancelled, false, false, true, true},
		{NotificationInitialized, false, false, true, false},
		{NotificationRootsListChanged, false, false, true, false},
		{NotificationMessage, false, false, false, true},
		{NotificationElicitationComplete, false, false, false, true},
		{NotificationTasksStatus, false, false, true, true},
		{"tools/delete", false, false, false, false},
	}
	for _, tt := range tests {
		clientReq, clientNotif := sentBy(serverMethodInfos, tt.method)
		serverReq, serverNotif := sentBy(clientMethodInfos, tt.method)
		if clientReq != tt.clientReq || serverReq != tt.serverReq || clientNotif != tt.clientNotif || serverNotif != tt.serverNotif {
			t.Errorf("%s: the method tables give the wrong direction", tt.method)
		}
	}
	if CodeResourceNotFound != -32002 || CodeURLElicitationRequired != -32042 {
		t.Error("error codes")
	}
}

func TestLoggingLevel(t *testing.T) {
	levels := []LoggingLevel{LoggingLevelDebug, LoggingLevelInfo, LoggingLevelNotice, LoggingLevelWarning,
		LoggingLevelError, LoggingLevelCritical, LoggingLevelAlert, LoggingLevelEmergency}
	for i, l := range levels {
		if l.Severity() != i {
			t.Errorf("%s.Severity() = %d, want %d", l, l.Severity(), i)
		}
		if l.Validate() != nil {
			t.Errorf("%s invalid", l)
		}
	}
	if LoggingLevel("Warning").Severity() != -1 || LoggingLevel("").Validate() == nil {
		t.Error("unknown level accepted")
	}
}

func TestUnknownFieldsTolerated(t *testing.T) {
	tests := []struct {
		v  any
		in string
	}{
		{new(CallToolRequestParams), `{"name":"t","future":{"x":1}}`},
		{new(CallToolResult), `{"content":[{"type":"text","text":"a","extra":1}],"resultType":"complete"}`},
		{new(InitializeResult), `{"protocolVersion":"2025-11-25","capabilities":{"extensions":{}},"serverInfo":{"name":"s","version":"1","x":2},"y":3}`},
		{new(Tool), `{"name":"t","inputSchema":{"type":"object"},"newField":[1]}`},
		{new(Task), `{"taskId":"t","status":"working","createdAt":"c","lastUpdatedAt":"u","ttl":null,"owner":"o"}`},
		{new(ElicitResult), `{"action":"decline","reason":"no"}`},
	}
	for _, tt := range tests {
		if err := decodeAndValidate([]byte(tt.in), tt.v); err != nil {
			t.Errorf("%T %s: %v", tt.v, tt.in, err)
		}
	}
}
