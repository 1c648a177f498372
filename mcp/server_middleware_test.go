package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// recorder is a middleware that records the methods it sees, in order.
type recorder struct {
	mu      sync.Mutex
	name    string
	log     *[]string
	results []any
}

func (r *recorder) mw(next MethodHandler) MethodHandler {
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		r.mu.Lock()
		*r.log = append(*r.log, r.name+">"+method)
		r.mu.Unlock()
		res, err := next(ctx, method, params)
		r.mu.Lock()
		*r.log = append(*r.log, r.name+"<"+method)
		r.results = append(r.results, res)
		r.mu.Unlock()
		return res, err
	}
}

func echoTool(t testing.TB, s *Server) {
	t.Helper()
	err := s.AddTool(&Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(p.Arguments, &in)
			if ServerSessionFromContext(ctx) != ss {
				return nil, errors.New("handler context lacks its session")
			}
			return &CallToolResult{Content: []Content{&TextContent{Text: in.Text}}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReceivingMiddlewareOrderAndSession(t *testing.T) {
	var mu sync.Mutex
	var log []string
	outer := &recorder{name: "a", log: &log}
	inner := &recorder{name: "b", log: &log}
	var sawSession []bool
	check := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			mu.Lock()
			sawSession = append(sawSession, ServerSessionFromContext(ctx) != nil)
			mu.Unlock()
			return next(ctx, method, params)
		}
	}
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{ReceivingMiddleware: []Middleware{outer.mw, inner.mw, check}})
	echoTool(t, s)
	_, cs := connectPair(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	res, err := cs.CallTool(context.Background(), &CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*TextContent); !ok || tc.Text != "hi" {
		t.Fatalf("content = %#v", res.Content)
	}
	eventually(t, "initialized seen by the middleware", func() bool {
		outer.mu.Lock()
		defer outer.mu.Unlock()
		return slices.Contains(log, "a<"+NotificationInitialized)
	})
	outer.mu.Lock()
	got := strings.Join(slices.DeleteFunc(slices.Clone(log), func(s string) bool { return strings.Contains(s, "initialized") }), " ")
	outer.mu.Unlock()
	want := "a>initialize b>initialize b<initialize a<initialize a>tools/call b>tools/call b<tools/call a<tools/call"
	if got != want {
		t.Fatalf("order:\n got %s\nwant %s", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(sawSession, false) {
		t.Fatalf("some handler context lacked the session: %v", sawSession)
	}
}

func TestReceivingMiddlewareAltersParamsAndResults(t *testing.T) {
	for _, tc := range featureTransports {
		t.Run(tc.name, func(t *testing.T) { testMiddlewareAlters(t, tc) })
	}
}

func testMiddlewareAlters(t *testing.T, tc transportCase) {
	initialized := make(chan struct{})
	rewrite := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			switch method {
			case MethodToolsCall:
				var p CallToolRequestParams
				if err := json.Unmarshal(params, &p); err != nil {
					return nil, err
				}
				p.Arguments = json.RawMessage(`{"text":"rewritten"}`)
				params, _ = json.Marshal(&p)
				res, err := next(ctx, method, params)
				if err != nil {
					return nil, err
				}
				r := res.(*CallToolResult)
				r.Content = append(r.Content, &TextContent{Text: "added"})
				return r, nil
			case "tasks/get":
				// a middleware may answer a method the server does not know
				return json.RawMessage(`{"taskId":"t1","status":"working","createdAt":"2025-01-01T00:00:00Z","lastUpdatedAt":"2025-01-01T00:00:00Z","ttl":null}`), nil
			}
			return next(ctx, method, params)
		}
	}
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		ReceivingMiddleware: []Middleware{rewrite, freshContext},
		InitializedHandler:  func(context.Context, *ServerSession) { close(initialized) },
		Capabilities:        &ServerCapabilities{Tasks: &ServerTasksCapability{}},
	})
	echoTool(t, s)
	cs := tc.connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	<-initialized // notifications/initialized was dispatched as a notification
	if cs.InitializeResult().Capabilities.Tasks == nil {
		t.Error("tasks capability from ServerOptions.Capabilities not advertised")
	}
	res, err := cs.CallTool(context.Background(), &CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range res.Content {
		texts = append(texts, c.(*TextContent).Text)
	}
	if strings.Join(texts, ",") != "rewritten,added" {
		t.Fatalf("texts = %v", texts)
	}
	var task map[string]any
	if err := cs.Call(context.Background(), "tasks/get", map[string]string{"taskId": "t1"}, &task); err != nil {
		t.Fatal(err)
	}
	if task["status"] != "working" {
		t.Fatalf("task = %v", task)
	}
	// without the middleware the method is unknown
	var je *jsonrpc.Error
	if err := cs.Call(context.Background(), "tasks/list", nil, nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("tasks/list: %v", err)
	}
}

// freshContext calls next with a context that carries nothing of the
// original: the session still dispatches notifications and requests right.
func freshContext(next MethodHandler) MethodHandler {
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		return next(context.WithoutCancel(context.Background()), method, params)
	}
}

func TestReceivingMiddlewareRunsAfterLifecycleCheck(t *testing.T) {
	called := false
	mw := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method == MethodToolsList {
				called = true
			}
			return next(ctx, method, params)
		}
	}
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{ReceivingMiddleware: []Middleware{mw}})
	echoTool(t, s)
	ct, st := InMemoryTransports()
	ss, err := s.Connect(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	stream, err := ct.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conn := jsonrpc.NewConn(stream, jsonrpc.ConnOptions{})
	defer conn.Close()
	var je *jsonrpc.Error
	if err := conn.Call(context.Background(), MethodToolsList, nil, nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("tools/list before initialize: %v", err)
	}
	if called {
		t.Fatal("middleware ran before the lifecycle check refused the request")
	}
}

func TestSendingMiddleware(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	var sessionOK = true
	mw := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			mu.Lock()
			seen = append(seen, method)
			if ServerSessionFromContext(ctx) == nil {
				sessionOK = false
			}
			mu.Unlock()
			if method == MethodSamplingCreateMessage {
				var p CreateMessageRequestParams
				if err := json.Unmarshal(params, &p); err != nil {
					return nil, err
				}
				p.MaxTokens = 7
				params, _ = json.Marshal(&p)
				res, err := next(ctx, method, params)
				if err != nil {
					return nil, err
				}
				if _, ok := res.(json.RawMessage); !ok {
					return nil, errors.New("sending result is not raw JSON")
				}
				return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"from middleware"},"model":"m"}`), nil
			}
			return next(ctx, method, params)
		}
	}
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{SendingMiddleware: []Middleware{mw}})
	echoTool(t, s)
	gotMax := make(chan int64, 1)
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		CreateMessageHandler: func(_ context.Context, _ *ClientSession, p *CreateMessageRequestParams) (*CreateMessageResult, error) {
			gotMax <- p.MaxTokens
			return &CreateMessageResult{Role: RoleAssistant, Content: []Content{&TextContent{Text: "from client"}}, Model: "m"}, nil
		},
	})
	ss, _ := connectPair(t, s, c)
	res, err := ss.CreateMessage(context.Background(), &CreateMessageRequestParams{
		Messages:  []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "hello"}}}},
		MaxTokens: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := <-gotMax; n != 7 {
		t.Errorf("client saw maxTokens %d, want 7 (altered by the middleware)", n)
	}
	if len(res.Content) != 1 {
		t.Fatalf("result content = %#v", res.Content)
	}
	if tc, ok := res.Content[0].(*TextContent); !ok || tc.Text != "from middleware" {
		t.Errorf("result content = %#v", res.Content)
	}
	if err := ss.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.AddTool(&Tool{Name: "other", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *ServerSession, *CallToolRequestParams) (*CallToolResult, error) {
		return &CallToolResult{}, nil
	})
	eventually(t, "list_changed through the middleware", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(seen, NotificationToolsListChanged)
	})
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(seen, MethodPing) || !sessionOK {
		t.Fatalf("seen %v, session in ctx: %v", seen, sessionOK)
	}
}
