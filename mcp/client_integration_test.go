package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// featureServer's tools send requests to the client in the middle of their
// call:
//   - roots: lists the client's roots;
//   - weather: samples with a tool, then again with the tool's result;
//   - form: elicits a form with defaults, and echoes the content;
//   - pay: needs a URL elicitation first (-32042) until settle, which
//     reports its completion with notifications/elicitation/complete.
func featureServer(t *testing.T, rootsChanged chan<- struct{}, opts *ServerOptions) *Server {
	o := ServerOptions{}
	if opts != nil {
		o = *opts
	}
	o.RootsListChangedHandler = func(context.Context, *ServerSession) { rootsChanged <- struct{}{} }
	s := NewServer(&Implementation{Name: "features", Version: "1"}, &o)
	obj := json.RawMessage(`{"type":"object"}`)
	text := func(s string) *CallToolResult { return &CallToolResult{Content: []Content{&TextContent{Text: s}}} }
	add := func(name string, h ToolHandler) {
		if err := s.AddTool(&Tool{Name: name, InputSchema: obj}, h); err != nil {
			t.Fatal(err)
		}
	}
	add("roots", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		res, err := ss.ListRoots(ctx)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return text(strings.Join(uris, ",")), nil
	})
	add("weather", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		tools := []Tool{{Name: "forecast", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
		msgs := []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "Weather in Paris?"}}}}
		first, err := ss.CreateMessage(ctx, &CreateMessageRequestParams{MaxTokens: 50, Messages: msgs, Tools: tools, ToolChoice: &ToolChoice{Mode: ToolChoiceAuto}})
		if err != nil {
			return nil, err
		}
		use, ok := first.Content[0].(*ToolUseContent)
		if !ok || first.StopReason != StopReasonToolUse {
			return nil, fmt.Errorf("first answer is not a tool use: %+v", first)
		}
		msgs = append(msgs,
			SamplingMessage{Role: RoleAssistant, Content: first.Content},
			SamplingMessage{Role: RoleUser, Content: []Content{&ToolResultContent{ToolUseID: use.ID, Content: []Content{&TextContent{Text: "sunny, 21C"}}}}})
		second, err := ss.CreateMessage(ctx, &CreateMessageRequestParams{MaxTokens: 50, Messages: msgs, Tools: tools})
		if err != nil {
			return nil, err
		}
		return text(second.Content[0].(*TextContent).Text), nil
	})
	add("form", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		def := "anon"
		res, err := ss.Elicit(ctx, &ElicitRequestFormParams{Message: "who are you?", RequestedSchema: RequestedSchema{
			Properties: map[string]PrimitiveSchemaDefinition{"name": &StringSchema{Default: def}, "age": &NumberSchema{Type: "integer"}},
		}})
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(res)
		return text(string(b)), nil
	})
	var paid sync.Map
	add("pay", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		if _, ok := paid.Load(ss); ok {
			return text("paid"), nil
		}
		return nil, &URLElicitationRequiredError{Message: "payment needed", Data: URLElicitationRequiredData{
			Elicitations: []ElicitRequestURLParams{{ElicitationID: "pay-1", URL: "https://pay.example.com/1", Message: "pay"}},
		}}
	})
	add("settle", func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams) (*CallToolResult, error) {
		// The user completed the payment out of band.
		paid.Store(ss, true)
		if err := ss.Notify(ctx, NotificationElicitationComplete, &ElicitationCompleteNotificationParams{ElicitationID: "pay-1"}); err != nil {
			return nil, err
		}
		return text("settled"), nil
	})
	return s
}

func TestClientFeaturesEndToEnd(t *testing.T) {
	for _, kind := range taskTransports {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			rootsChanged := make(chan struct{}, 4)
			completed := make(chan string, 4)
			var samplingMu sync.Mutex
			var samplingCalls []int // number of messages per sampling request
			c := newTestClient(&ClientOptions{
				Roots:        []*Root{{URI: "file:///work/a"}},
				Capabilities: &ClientCapabilities{Sampling: &SamplingCapability{Tools: &Capability{}}},
				CreateMessageHandler: func(_ context.Context, _ *ClientSession, p *CreateMessageRequestParams) (*CreateMessageResult, error) {
					samplingMu.Lock()
					samplingCalls = append(samplingCalls, len(p.Messages))
					samplingMu.Unlock()
					last := p.Messages[len(p.Messages)-1]
					if tr, ok := last.Content[0].(*ToolResultContent); ok {
						return &CreateMessageResult{Role: RoleAssistant, Model: "m", StopReason: StopReasonEndTurn,
							Content: []Content{&TextContent{Text: "It is " + tr.Content[0].(*TextContent).Text}}}, nil
					}
					return &CreateMessageResult{Role: RoleAssistant, Model: "m", StopReason: StopReasonToolUse,
						Content: []Content{&ToolUseContent{ID: "call-1", Name: p.Tools[0].Name, Input: json.RawMessage(`{"city":"Paris"}`)}}}, nil
				},
				ElicitationURLMode: true,
				ElicitationHandler: func(_ context.Context, _ *ClientSession, p ElicitRequestParams) (*ElicitResult, error) {
					return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"age": 7}}, nil
				},
				ElicitationCompleteHandler: func(_ context.Context, _ *ClientSession, p *ElicitationCompleteNotificationParams) {
					completed <- p.ElicitationID
				},
			})
			cs := tasksConnect(t, kind, featureServer(t, rootsChanged, nil), c)
			call := func(name string) (string, error) {
				r, err := cs.CallTool(ctx, &CallToolRequestParams{Name: name})
				if err != nil {
					return "", err
				}
				return resultText(t, r), nil
			}

			// roots/list in the middle of a call, and list_changed.
			if got, err := call("roots"); err != nil || got != "file:///work/a" {
				t.Fatalf("roots: %q, %v", got, err)
			}
			if err := c.AddRoots(&Root{URI: "file:///work/b"}); err != nil {
				t.Fatal(err)
			}
			<-rootsChanged
			if got, err := call("roots"); err != nil || got != "file:///work/a,file:///work/b" {
				t.Fatalf("roots after AddRoots: %q, %v", got, err)
			}

			// A sampling tool loop.
			if got, err := call("weather"); err != nil || got != "It is sunny, 21C" {
				t.Fatalf("weather: %q, %v", got, err)
			}
			samplingMu.Lock()
			if !slices.Equal(samplingCalls, []int{1, 3}) {
				t.Errorf("sampling requests with %v messages, want [1 3]", samplingCalls)
			}
			samplingMu.Unlock()

			// A form with defaults.
			got, err := call("form")
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, json.RawMessage(got), `{"action":"accept","content":{"name":"anon","age":7}}`) {
				t.Errorf("form: %s", got)
			}

			// URL elicitation required, completed, retried.
			_, err = call("pay")
			var ure *URLElicitationRequiredError
			if !errors.As(err, &ure) || ure.Data.Elicitations[0].ElicitationID != "pay-1" {
				t.Fatalf("pay: %v, want a URL elicitation error", err)
			}
			if _, err := call("settle"); err != nil {
				t.Fatal(err)
			}
			if id := <-completed; id != "pay-1" {
				t.Errorf("completed %q", id)
			}
			if got, err := call("pay"); err != nil || got != "paid" {
				t.Errorf("retry: %q, %v", got, err)
			}
		})
	}
}

func TestClientMiddleware(t *testing.T) {
	for _, kind := range taskTransports {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			var mu sync.Mutex
			var log []string
			record := func(name string) Middleware {
				return func(next MethodHandler) MethodHandler {
					return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
						session := "no session"
						if ClientSessionFromContext(ctx) != nil {
							session = "session"
						}
						mu.Lock()
						log = append(log, name+" "+method+" "+session)
						mu.Unlock()
						return next(ctx, method, params)
					}
				}
			}
			// A receiving middleware may answer a request itself.
			deny := func(next MethodHandler) MethodHandler {
				return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
					if method == MethodRootsList {
						return &ListRootsResult{Roots: []Root{{URI: "file:///from/middleware"}}}, nil
					}
					return next(ctx, method, params)
				}
			}
			c := newTestClient(&ClientOptions{
				EraPolicy:           EraPolicyLegacy, // the want list is the legacy exchange
				ReceivingMiddleware: []Middleware{record("recv1"), record("recv2"), deny},
				SendingMiddleware:   []Middleware{record("send1"), record("send2")},
			})
			cs := tasksConnect(t, kind, featureServer(t, make(chan struct{}, 1), nil), c)
			r, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "roots"})
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(t, r); got != "file:///from/middleware" {
				t.Errorf("roots: %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			want := []string{
				"send1 initialize session", "send2 initialize session",
				"send1 notifications/initialized session", "send2 notifications/initialized session",
				"send1 tools/call session", "send2 tools/call session",
				"recv1 roots/list session", "recv2 roots/list session",
			}
			if !slices.Equal(log, want) {
				t.Errorf("middleware saw\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
