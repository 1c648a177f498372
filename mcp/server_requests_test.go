package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// TestServerRequestsMidCall has a tool that reports progress and, in the
// middle of the call, asks the client for its roots, a sample and an
// elicitation, over each transport.
func TestServerRequestsMidCall(t *testing.T) {
	for _, tc := range featureTransports {
		t.Run(tc.name, func(t *testing.T) {
			s := testServer(nil)
			mustOK(t, s.AddTool(&Tool{Name: "busy", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
				tok, ok := p.Meta.ProgressToken()
				if !ok {
					return nil, errors.New("no progress token")
				}
				progress := func(n float64) error {
					return ss.NotifyProgress(ctx, &ProgressNotificationParams{ProgressToken: tok, Progress: n, Total: ptrTo(3.0)})
				}
				if err := progress(1); err != nil {
					return nil, err
				}
				roots, err := ss.ListRoots(ctx)
				if err != nil {
					return nil, fmt.Errorf("roots: %w", err)
				}
				msg, err := ss.CreateMessage(ctx, &CreateMessageRequestParams{MaxTokens: 10,
					Messages:   []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "2+2?"}}}},
					Tools:      []Tool{{Name: "calc", InputSchema: json.RawMessage(`{"type":"object"}`)}},
					ToolChoice: &ToolChoice{Mode: ToolChoiceAuto},
				})
				if err != nil {
					return nil, fmt.Errorf("sampling: %w", err)
				}
				if err := progress(2); err != nil {
					return nil, err
				}
				el, err := ss.Elicit(ctx, &ElicitRequestFormParams{Message: "name?", RequestedSchema: RequestedSchema{
					Properties: map[string]PrimitiveSchemaDefinition{"name": &StringSchema{}},
				}})
				if err != nil {
					return nil, fmt.Errorf("elicit: %w", err)
				}
				if err := progress(3); err != nil {
					return nil, err
				}
				text := fmt.Sprintf("%s|%s|%s|%v", roots.Roots[0].URI, msg.Content[0].(*TextContent).Text, el.Action, el.Content["name"])
				return &CallToolResult{Content: []Content{&TextContent{Text: text}}}, nil
			}))
			var mu sync.Mutex
			var seen []float64
			var toolsSeen int
			c := testClient(&ClientOptions{
				Capabilities: &ClientCapabilities{Sampling: &SamplingCapability{Tools: &Capability{}}},
				Roots:        []*Root{{URI: "file:///work", Name: "work"}},
				ProgressNotificationHandler: func(_ context.Context, _ *ClientSession, p *ProgressNotificationParams) {
					mu.Lock()
					seen = append(seen, p.Progress)
					mu.Unlock()
				},
				CreateMessageHandler: func(_ context.Context, _ *ClientSession, p *CreateMessageRequestParams) (*CreateMessageResult, error) {
					mu.Lock()
					toolsSeen = len(p.Tools)
					mu.Unlock()
					return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: []Content{&TextContent{Text: "4"}}}, nil
				},
				ElicitationHandler: func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
					return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
				},
			})
			cs := tc.connect(t, s, c)
			p := &CallToolRequestParams{Name: "busy"}
			p.Meta.SetProgressToken(jsonrpc.StringID("job-1"))
			res, err := cs.CallTool(context.Background(), p)
			mustOK(t, err)
			if got := textOfContent(t, res.Content[0]); got != "file:///work|4|accept|Ada" {
				t.Fatalf("result %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(seen) != "[1 2 3]" || toolsSeen != 1 {
				t.Fatalf("progress %v, tools passed to sampling %d", seen, toolsSeen)
			}
		})
	}
}

// TestServerRequestsRefusedLocally checks that requests the client's
// capabilities do not allow are refused before anything is sent, with the
// code the client would have answered.
func TestServerRequestsRefusedLocally(t *testing.T) {
	var mu sync.Mutex
	sent := 0
	count := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if !isNotificationMethod(method) {
				mu.Lock()
				sent++
				mu.Unlock()
			}
			return next(ctx, method, params)
		}
	}
	s := testServer(&ServerOptions{SendingMiddleware: []Middleware{count}})
	sampling := func(context.Context, *ClientSession, *CreateMessageRequestParams) (*CreateMessageResult, error) {
		return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: []Content{&TextContent{Text: "x"}}}, nil
	}
	elicit := func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
		return &ElicitResult{Action: ElicitActionDecline}, nil
	}
	msgs := []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "q"}}}}
	tests := []struct {
		name string
		opts *ClientOptions
		call func(ss *ServerSession) error
		code int64
	}{
		{"sampling undeclared", &ClientOptions{}, func(ss *ServerSession) error {
			_, err := ss.CreateMessage(context.Background(), &CreateMessageRequestParams{MaxTokens: 1, Messages: msgs})
			return err
		}, jsonrpc.CodeMethodNotFound},
		{"sampling tools undeclared", &ClientOptions{CreateMessageHandler: sampling}, func(ss *ServerSession) error {
			_, err := ss.CreateMessage(context.Background(), &CreateMessageRequestParams{MaxTokens: 1, Messages: msgs, ToolChoice: &ToolChoice{Mode: ToolChoiceAuto}})
			return err
		}, jsonrpc.CodeInvalidParams},
		{"sampling context undeclared", &ClientOptions{CreateMessageHandler: sampling}, func(ss *ServerSession) error {
			_, err := ss.CreateMessage(context.Background(), &CreateMessageRequestParams{MaxTokens: 1, Messages: msgs, IncludeContext: IncludeContextThisServer})
			return err
		}, jsonrpc.CodeInvalidParams},
		{"elicitation undeclared", &ClientOptions{}, func(ss *ServerSession) error {
			_, err := ss.Elicit(context.Background(), &ElicitRequestFormParams{Message: "m"})
			return err
		}, jsonrpc.CodeMethodNotFound},
		{"url mode undeclared", &ClientOptions{ElicitationHandler: elicit}, func(ss *ServerSession) error {
			_, err := ss.Elicit(context.Background(), &ElicitRequestURLParams{Message: "m", URL: "https://example.com", ElicitationID: "e"})
			return err
		}, jsonrpc.CodeInvalidParams},
		{"roots undeclared", &ClientOptions{DisableRoots: true}, func(ss *ServerSession) error {
			_, err := ss.ListRoots(context.Background())
			return err
		}, jsonrpc.CodeMethodNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss, _ := connectPair(t, s, testClient(tt.opts))
			mu.Lock()
			before := sent
			mu.Unlock()
			err := tt.call(ss)
			if !errors.Is(err, ErrCapabilityNotDeclared) {
				t.Fatalf("err = %v", err)
			}
			expectCode(t, tt.name, err, tt.code)
			mu.Lock()
			defer mu.Unlock()
			if sent != before {
				t.Fatal("the request was sent")
			}
		})
	}
}

func TestLogging(t *testing.T) {
	for _, tc := range featureTransports {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := testServer(&ServerOptions{Capabilities: &ServerCapabilities{Logging: &LoggingCapability{}}})
			mustOK(t, AddTool(s, &Tool{Name: "log"}, func(ctx context.Context, ss *ServerSession, _ *CallToolRequestParams, _ struct{}) (*CallToolResult, any, error) {
				for _, l := range []LoggingLevel{LoggingLevelDebug, LoggingLevelInfo, LoggingLevelWarning, LoggingLevelEmergency} {
					if err := ss.Log(ctx, &LoggingMessageNotificationParams{Level: l, Logger: "direct", Data: json.RawMessage(`"` + string(l) + `"`)}); err != nil {
						return nil, nil, err
					}
				}
				lg := slog.New(NewLoggingHandler(ss, &LoggingHandlerOptions{LoggerName: "slog"}))
				lg.InfoContext(ctx, "info dropped")
				lg.With("a", 1).WithGroup("g").ErrorContext(ctx, "boom", "b", true, slog.Group("h", "c", "x"))
				return &CallToolResult{}, nil, nil
			}))
			var mu sync.Mutex
			var got []string
			cs := tc.connect(t, s, testClient(&ClientOptions{LoggingMessageHandler: func(_ context.Context, _ *ClientSession, p *LoggingMessageNotificationParams) {
				var data any
				_ = json.Unmarshal(p.Data, &data)
				if m, ok := data.(map[string]any); ok {
					delete(m, "time")
				}
				b, _ := json.Marshal(data)
				mu.Lock()
				got = append(got, fmt.Sprintf("%s/%s/%s", p.Level, p.Logger, b))
				mu.Unlock()
			}}))
			call := func() string {
				_, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "log"})
				mustOK(t, err)
				mu.Lock()
				defer mu.Unlock()
				out := strings.Join(got, " ")
				got = nil
				return out
			}
			if out := call(); out != "" {
				t.Errorf("before setLevel: %s", out)
			}
			mustOK(t, cs.SetLoggingLevel(ctx, LoggingLevelWarning))
			want := `warning/direct/"warning" emergency/direct/"emergency" error/slog/{"a":1,"g":{"b":true,"h":{"c":"x"}},"msg":"boom"}`
			if out := call(); out != want {
				t.Errorf("at warning:\n got %s\nwant %s", out, want)
			}
			err := cs.SetLoggingLevel(ctx, "verbose")
			expectCode(t, "bad level", err, jsonrpc.CodeInvalidParams)
		})
	}
}

func TestSlogLevel(t *testing.T) {
	tests := []struct {
		in   slog.Level
		want LoggingLevel
	}{
		{slog.LevelDebug, LoggingLevelDebug},
		{slog.LevelDebug + 3, LoggingLevelDebug},
		{slog.LevelInfo, LoggingLevelInfo},
		{slog.LevelInfo + 2, LoggingLevelNotice},
		{slog.LevelWarn, LoggingLevelWarning},
		{slog.LevelError, LoggingLevelError},
		{slog.LevelError + 4, LoggingLevelCritical},
		{slog.LevelError + 8, LoggingLevelAlert},
		{slog.LevelError + 12, LoggingLevelEmergency},
		{slog.LevelError + 100, LoggingLevelEmergency},
	}
	for _, tt := range tests {
		if got := SlogLevel(tt.in); got != tt.want {
			t.Errorf("%v: %s, want %s", tt.in, got, tt.want)
		}
	}
}
