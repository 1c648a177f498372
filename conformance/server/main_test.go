package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// startHTTP serves the everything-server on a loopback httptest server and
// returns the URL of its MCP endpoint.
func startHTTP(t *testing.T) string {
	t.Helper()
	s, err := newServer(quiet())
	if err != nil {
		t.Fatal(err)
	}
	h, closeHandler := newHTTPHandler(s, quiet())
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		closeHandler()
	})
	return ts.URL + mcpPath
}

// recorder counts what the client receives and sends.
type recorder struct {
	mu       sync.Mutex
	logs     []string
	progress []float64
	resumes  int // GETs with Last-Event-ID
	elicited []*mcp.ElicitRequestFormParams
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") != "" {
		r.mu.Lock()
		r.resumes++
		r.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(req)
}

// connectHTTP connects our own client to url over the 2025-11-25 leg,
// answering sampling and elicitation the way the suite's client does.
// These tests check that leg (sessions, server-to-client requests,
// resumption); connectHTTPEra picks the era.
func connectHTTP(t *testing.T, url string, rec *recorder) *mcp.ClientSession {
	t.Helper()
	return connectHTTPEra(t, url, rec, mcp.EraPolicyLegacy, false)
}

// connectHTTPEra is connectHTTP speaking the era policy asks for, and
// declaring the tasks extension (2026-07-28) if tasks is set.
func connectHTTPEra(t *testing.T, url string, rec *recorder, policy mcp.EraPolicy, tasks bool) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		EraPolicy:      policy,
		TasksExtension: tasks,
		CreateMessageHandler: func(ctx context.Context, cs *mcp.ClientSession, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "test-model", StopReason: "endTurn",
				Content: []mcp.Content{&mcp.TextContent{Text: "This is a test response from the client"}}}, nil
		},
		ElicitationHandler: func(ctx context.Context, cs *mcp.ClientSession, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			form := p.(*mcp.ElicitRequestFormParams)
			rec.mu.Lock()
			rec.elicited = append(rec.elicited, form)
			rec.mu.Unlock()
			content := map[string]any{}
			if _, ok := form.RequestedSchema.Properties["username"]; ok {
				content = map[string]any{"username": "testuser", "email": "test@example.com"}
			}
			for _, name := range form.RequestedSchema.Required { // the MRTR fixtures' forms
				if _, set := content[name]; set {
					continue
				}
				switch form.RequestedSchema.Properties[name].(type) {
				case *mcp.StringSchema:
					content[name] = "Alice"
				case *mcp.BooleanSchema:
					content[name] = true
				}
			}
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: content}, nil
		},
		LoggingMessageHandler: func(ctx context.Context, cs *mcp.ClientSession, p *mcp.LoggingMessageNotificationParams) {
			var s string
			_ = json.Unmarshal(p.Data, &s)
			rec.mu.Lock()
			rec.logs = append(rec.logs, string(p.Level)+" "+s)
			rec.mu.Unlock()
		},
		ProgressNotificationHandler: func(ctx context.Context, cs *mcp.ClientSession, p *mcp.ProgressNotificationParams) {
			rec.mu.Lock()
			rec.progress = append(rec.progress, p.Progress)
			rec.mu.Unlock()
		},
	})
	cs, err := c.Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func TestToolsOverHTTP(t *testing.T) {
	url := startHTTP(t)
	rec := &recorder{}
	cs := connectHTTP(t, url, rec)
	ctx := context.Background()
	if err := cs.SetLoggingLevel(ctx, mcp.LoggingLevelDebug); err != nil {
		t.Fatal(err)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*mcp.Tool{}
	for i := range list.Tools {
		tool := list.Tools[i]
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
		listed[tool.Name] = &tool
	}
	tests := []struct {
		name  string
		args  string
		check func(t *testing.T, res *mcp.CallToolResult)
	}{
		{"test_simple_text", `{}`, wantText("This is a simple text response for testing.")},
		{"test_image_content", `{}`, wantTypes("image")},
		{"test_audio_content", `{}`, func(t *testing.T, res *mcp.CallToolResult) {
			wantTypes("audio")(t, res)
			if a, ok := res.Content[0].(*mcp.AudioContent); ok && a.MIMEType != "audio/wav" {
				t.Errorf("audio mimeType %q", a.MIMEType)
			}
		}},
		{"test_embedded_resource", `{}`, wantTypes("resource")},
		{"test_multiple_content_types", `{}`, wantTypes("text", "image", "resource")},
		{"test_error_handling", `{}`, func(t *testing.T, res *mcp.CallToolResult) {
			if res.IsError == nil || !*res.IsError || resultText(res) == "" {
				t.Errorf("want a tool error with text, got %+v", res)
			}
		}},
		{"test_sampling", `{"prompt":"Test prompt for sampling"}`, wantText("LLM response: This is a test response from the client")},
		{"test_elicitation", `{"message":"Please provide your information"}`,
			wantText(`User response: action=accept, content={"email":"test@example.com","username":"testuser"}`)},
		{"test_elicitation_sep1034_defaults", `{}`,
			wantText(`Elicitation completed: action=accept, content={"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}`)},
		{"test_elicitation_sep1330_enums", `{}`, wantText(`Elicitation completed: action=accept, content={}`)},
		{"json_schema_2020_12_tool", `{"name":"a","contactMethod":"email","email":"a@example.com"}`, wantTypes("text")},
		{"test_tool_with_logging", `{}`, wantTypes("text")},
		{"test_tool_with_progress", `{}`, wantTypes("text")},
		{reconnectionToolName, `{}`, wantText("Reconnection test completed successfully")},
		{"test_missing_capability", `{}`, wantText("the client declared sampling")},
		{"test_logging_tool", `{}`, wantText("logged")},
		{"test_streaming_elicitation", `{}`, wantText(`User response: action=accept, content={"email":"test@example.com","username":"testuser"}`)},
		{"test_trigger_tool_change", `{}`, wantText("the tool list changed")},
		{"test_trigger_prompt_change", `{}`, wantText("the prompt list changed")},
		{"test_header_params", `{"region":"us-west1"}`, wantText(`ok: {"region":"us-west1"}`)},
		// The MRTR fixtures in a 2025-11-25 session: their asks are
		// requests to this client (which fills in no form fields but
		// username ones, and has no roots).
		{"test_input_required_result_elicitation", `{}`, wantText("Hello, Alice!")},
		{"test_input_required_result_sampling", `{}`, wantText("Sampled: This is a test response from the client")},
		{"test_input_required_result_list_roots", `{}`, wantText("Roots: ")},
		{"test_input_required_result_request_state", `{}`, wantText("Confirmed")},
		{"test_input_required_result_multiple_inputs", `{}`, wantText("name=Alice, greeting=This is a test response from the client, roots=")},
		{"test_input_required_result_multi_round", `{}`, wantText("Alice likes Alice")},
		{"test_input_required_result_tampered_state", `{}`, wantText("Confirmed")},
		{"test_input_required_result_capabilities", `{}`, wantText("Received 3 input responses.")},
		// The tasks fixtures in a 2025-11-25 session: mcp.BeginTask does
		// nothing there, so each call is answered when its handler returns.
		{"greet", `{"name":"World"}`, wantText("Hello, World!")},
		{"slow_compute", `{"seconds":0.01,"label":"x"}`, wantText("Computed x after 0.01s")},
		{"failing_job", `{}`, func(t *testing.T, res *mcp.CallToolResult) {
			if res.IsError == nil || !*res.IsError {
				t.Errorf("want a tool error, got %+v", res)
			}
		}},
		{"protocol_error_job", `{}`, nil}, // fails: see below
		{"confirm_delete", `{"filename":"f"}`, wantText("Deleted f")},
		{"multi_input", `{}`, wantText("name=Alice")},
		{"test_tool_with_task", `{}`, wantText("Hello, Alice!")},
	}
	if len(tests) != len(listed) {
		t.Errorf("%d tools listed, %d tested", len(listed), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if listed[tt.name] == nil {
				t.Fatalf("tool %s not listed", tt.name)
			}
			p := &mcp.CallToolRequestParams{Name: tt.name, Arguments: json.RawMessage(tt.args)}
			if tt.name == "test_tool_with_progress" {
				p.Meta.SetProgressToken(jsonrpc.StringID("progress-test-1"))
			}
			res, err := cs.CallTool(ctx, p)
			if tt.check == nil { // a handler that panics: an internal error
				if err == nil {
					t.Fatalf("no error: %+v", res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, res)
		})
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if want := []string{"info Tool execution started", "info Tool processing data", "info Tool execution completed",
		"info logging tool started", "info logging tool finished"}; !equal(rec.logs, want) {
		t.Errorf("log messages %q, want %q", rec.logs, want)
	}
	if want := []float64{0, 50, 100}; !equal(rec.progress, want) {
		t.Errorf("progress %v, want %v", rec.progress, want)
	}
	if rec.resumes != 1 {
		t.Errorf("%d resumptions, want 1 (test_reconnection's stream cut once)", rec.resumes)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func wantText(s string) func(*testing.T, *mcp.CallToolResult) {
	return func(t *testing.T, res *mcp.CallToolResult) {
		t.Helper()
		if got := resultText(res); got != s {
			t.Errorf("text %q, want %q", got, s)
		}
	}
}

func wantTypes(types ...string) func(*testing.T, *mcp.CallToolResult) {
	return func(t *testing.T, res *mcp.CallToolResult) {
		t.Helper()
		var got []string
		for _, c := range res.Content {
			b, _ := json.Marshal(c)
			var v struct{ Type string }
			_ = json.Unmarshal(b, &v)
			got = append(got, v.Type)
		}
		if !equal(got, types) {
			t.Errorf("content types %v, want %v", got, types)
		}
	}
}

func TestResourcesPromptsCompletion(t *testing.T) {
	url := startHTTP(t)
	cs := connectHTTP(t, url, &recorder{})
	ctx := context.Background()
	caps := cs.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil || caps.Logging == nil || caps.Completions == nil || caps.Tools == nil {
		t.Errorf("capabilities %+v", caps)
	}

	rl, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range rl.Resources {
		uris = append(uris, r.URI)
	}
	if want := []string{"test://static-text", "test://static-binary", "test://watched-resource"}; !equal(uris, want) {
		t.Errorf("resources %v, want %v", uris, want)
	}
	tl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != dataTemplate {
		t.Errorf("templates %+v", tl.ResourceTemplates)
	}
	reads := []struct{ uri, want string }{
		{"test://static-text", `{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}`},
		{"test://static-binary", `{"uri":"test://static-binary","mimeType":"image/png","blob":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="}`},
		{"test://template/123/data", `{"uri":"test://template/123/data","mimeType":"application/json","text":"{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"}`},
	}
	for _, r := range reads {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: r.uri})
		if err != nil {
			t.Errorf("read %s: %v", r.uri, err)
			continue
		}
		if len(res.Contents) != 1 {
			t.Errorf("read %s: %d items", r.uri, len(res.Contents))
			continue
		}
		if got, _ := json.Marshal(res.Contents[0]); string(got) != r.want {
			t.Errorf("read %s:\n got %s\nwant %s", r.uri, got, r.want)
		}
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: "test://nothing"}); err == nil {
		t.Error("read of a missing resource: no error")
	}
	sub := &mcp.SubscribeRequestParams{URI: "test://watched-resource"}
	if err := cs.Subscribe(ctx, sub); err != nil {
		t.Errorf("subscribe: %v", err)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeRequestParams{URI: sub.URI}); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}

	pl, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Prompts) != 5 {
		t.Errorf("%d prompts", len(pl.Prompts))
	}
	for _, p := range pl.Prompts {
		if p.Description == "" {
			t.Errorf("prompt %s has no description", p.Name)
		}
	}
	gets := []struct {
		name string
		args map[string]string
		want string
	}{
		{"test_simple_prompt", nil, `[{"role":"user","content":{"type":"text","text":"This is a simple prompt for testing."}}]`},
		{"test_prompt_with_arguments", map[string]string{"arg1": "testValue1", "arg2": "testValue2"},
			`[{"role":"user","content":{"type":"text","text":"Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}]`},
		{"test_prompt_with_embedded_resource", map[string]string{"resourceUri": "test://example-resource"},
			`[{"role":"user","content":{"type":"resource","resource":{"uri":"test://example-resource","mimeType":"text/plain","text":"Embedded resource content for testing."}}},` +
				`{"role":"user","content":{"type":"text","text":"Please process the embedded resource above."}}]`},
		{"test_prompt_with_image", nil,
			`[{"role":"user","content":{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==","mimeType":"image/png"}},` +
				`{"role":"user","content":{"type":"text","text":"Please analyze the image above."}}]`},
	}
	for _, g := range gets {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: g.name, Arguments: g.args})
		if err != nil {
			t.Errorf("get %s: %v", g.name, err)
			continue
		}
		if got, _ := json.Marshal(res.Messages); string(got) != g.want {
			t.Errorf("get %s:\n got %s\nwant %s", g.name, got, g.want)
		}
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: "test_prompt_with_arguments"}); err == nil {
		t.Error("get without the required arguments: no error")
	}

	completions := []struct {
		ref   mcp.CompleteReference
		arg   mcp.CompleteArgument
		wants []string
	}{
		{&mcp.PromptReference{Name: "test_prompt_with_arguments"}, mcp.CompleteArgument{Name: "arg1", Value: "par"}, []string{"paris", "park", "party"}},
		{&mcp.PromptReference{Name: "test_prompt_with_arguments"}, mcp.CompleteArgument{Name: "arg1", Value: "zzz"}, []string{}},
		{&mcp.ResourceTemplateReference{URI: dataTemplate}, mcp.CompleteArgument{Name: "id", Value: "1"}, []string{"1", "123"}},
	}
	for _, c := range completions {
		res, err := cs.Complete(ctx, &mcp.CompleteRequestParams{Ref: c.ref, Argument: c.arg})
		if err != nil {
			t.Errorf("complete %+v: %v", c.arg, err)
			continue
		}
		if !equal(res.Completion.Values, c.wants) {
			t.Errorf("complete %+v: %v, want %v", c.arg, res.Completion.Values, c.wants)
		}
	}
}

// post sends one raw JSON-RPC POST to url.
func post(t *testing.T, url, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// initialize opens a session with a raw initialize POST and reads its
// answer to the end, as a client does before it sends anything else.
func initialize(t *testing.T, url string, header map[string]string) (sessionID string) {
	t.Helper()
	resp := post(t, url, initBody, header)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: status %d", resp.StatusCode)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize answered %q", b)
	}
	return resp.Header.Get("Mcp-Session-Id")
}

func TestHTTPRules(t *testing.T) {
	url := startHTTP(t)
	if resp := post(t, url, initBody, map[string]string{"Host": "evil.example.com", "Origin": "http://evil.example.com"}); resp.StatusCode/100 != 4 {
		t.Errorf("rebinding Host: status %d, want 4xx", resp.StatusCode)
	}
	sid := initialize(t, url, map[string]string{"Origin": strings.TrimSuffix(url, mcpPath)})
	if sid == "" {
		t.Fatal("no session id")
	}
	for _, c := range sid {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("session id %q has %q", sid, c)
		}
	}
	session := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	if resp := post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session); resp.StatusCode != http.StatusAccepted {
		t.Errorf("initialized: status %d", resp.StatusCode)
	}
	// Another version the server supports is accepted in the session (the
	// 0.1.16 suite sends 2025-03-26); an unknown one is not.
	versions := []struct {
		v    string
		want int
	}{{"2025-03-26", http.StatusOK}, {"2025-06-18", http.StatusOK}, {"1999-01-01", http.StatusBadRequest}}
	for i, tt := range versions {
		v, want := tt.v, tt.want
		h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": v}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, 10+i)
		if resp := post(t, url, body, h); resp.StatusCode != want {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("tools/list with version %s: status %d, want %d: %s", v, resp.StatusCode, want, b)
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	dresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	dresp.Body.Close()
	if dresp.StatusCode/100 != 2 {
		t.Errorf("DELETE: status %d", dresp.StatusCode)
	}
	if resp := post(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, session); resp.StatusCode != http.StatusNotFound {
		t.Errorf("after DELETE: status %d, want 404", resp.StatusCode)
	}
}

// TestReconnectionStreamIsCut reads the raw answer to a test_reconnection
// call: a priming event, a retry field, then the end of the stream, with
// no result; the result comes on the GET that resumes it.
func TestReconnectionStreamIsCut(t *testing.T) {
	url := startHTTP(t)
	sid := initialize(t, url, nil)
	session := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	resp := post(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_reconnection","arguments":{}}}`, session)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "id: ") || lines[1] != "data: " || lines[2] != "" || lines[3] != "retry: 500" {
		t.Fatalf("cut stream %q, want a priming event and a retry field", body)
	}
	last := strings.TrimPrefix(lines[0], "id: ")
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", last)
	gresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer gresp.Body.Close()
	b, err := io.ReadAll(gresp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"id":7,"result":{"content":[{"type":"text","text":"Reconnection test completed successfully"}]}`) {
		t.Errorf("resumed stream %q holds no result", b)
	}
}

// TestMain lets the test binary act as the server: with
// CONFORMANCE_SERVER_MAIN set, it runs main with the arguments that follow
// "--" (TestStdio starts it so).
func TestMain(m *testing.M) {
	if os.Getenv("CONFORMANCE_SERVER_MAIN") == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{os.Args[0]}, os.Args[i+1:]...)
				break
			}
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStdio(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "-stdio")
	cmd.Env = append(os.Environ(), "CONFORMANCE_SERVER_MAIN=1")
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "test_simple_text"})
	if err != nil {
		t.Fatal(err)
	}
	wantText("This is a simple text response for testing.")(t, res)
	// Over stdio there is no stream to cut: test_reconnection just answers.
	res, err = cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: reconnectionToolName})
	if err != nil {
		t.Fatal(err)
	}
	wantText("Reconnection test completed successfully")(t, res)
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"":               defaultAddr,
		":8080":          "127.0.0.1:8080",
		"127.0.0.1:9":    "127.0.0.1:9",
		"[::1]:9":        "[::1]:9",
		"localhost:9":    "localhost:9",
		"0.0.0.0:9":      "0.0.0.0:9",
		"not an address": "not an address",
	} {
		if got := listenAddr(in); got != want {
			t.Errorf("listenAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
