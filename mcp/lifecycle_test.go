package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// connectPair runs a server and a client in one process over the in-memory
// transport.
func connectPair(t *testing.T, s *Server, c *Client) (*ServerSession, *ClientSession) {
	t.Helper()
	ct, st := InMemoryTransports()
	ss, err := s.Connect(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(context.Background(), ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return ss, cs
}

func TestVersionNegotiation(t *testing.T) {
	tests := []struct {
		name      string
		requested string
		server    []string
		client    []string
		want      string
		wantErr   bool
	}{
		{"latest", ProtocolVersion20251125, nil, nil, ProtocolVersion20251125, false},
		{"2025-06-18 echoed", ProtocolVersion20250618, nil, nil, ProtocolVersion20250618, false},
		{"2025-03-26 echoed", ProtocolVersion20250326, nil, nil, ProtocolVersion20250326, false},
		{"2024-11-05 echoed", ProtocolVersion20241105, nil, nil, ProtocolVersion20241105, false},
		{"unknown version: server answers its latest", "2099-01-01", nil, []string{"2099-01-01", ProtocolVersion20251125}, ProtocolVersion20251125, false},
		{"older server: client accepts its answer", ProtocolVersion20251125, []string{ProtocolVersion20250618}, nil, ProtocolVersion20250618, false},
		{"client cannot use the answer: disconnect", ProtocolVersion20251125, []string{ProtocolVersion20241105}, []string{ProtocolVersion20251125}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{ProtocolVersions: tt.server})
			c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{ProtocolVersion: tt.requested, ProtocolVersions: tt.client})
			ct, st := InMemoryTransports()
			ss, err := s.Connect(context.Background(), st)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cs, err := c.Connect(context.Background(), ct)
			if tt.wantErr {
				var uv *UnsupportedVersionError
				if !errors.As(err, &uv) || uv.Offered != ProtocolVersion20241105 {
					t.Fatalf("Connect: %v, want *UnsupportedVersionError", err)
				}
				// The client disconnected: the server session ends.
				select {
				case <-ss.done:
				case <-time.After(5 * time.Second):
					t.Fatal("server session still open after the client refused the version")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.ProtocolVersion(); got != tt.want {
				t.Errorf("client negotiated %q, want %q", got, tt.want)
			}
			if got := ss.ProtocolVersion(); got != tt.want {
				t.Errorf("server negotiated %q, want %q", got, tt.want)
			}
			if got := ss.InitializeParams().ClientInfo.Name; got != "c" {
				t.Errorf("client info %q", got)
			}
		})
	}
}

func TestInitializedHandlerAndState(t *testing.T) {
	initialized := make(chan *ServerSession, 1)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		InitializedHandler: func(ctx context.Context, ss *ServerSession) { initialized <- ss },
	})
	ss, _ := connectPair(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	select {
	case got := <-initialized:
		if got != ss {
			t.Fatal("InitializedHandler got another session")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("notifications/initialized never arrived")
	}
	if !ss.isOperational() {
		t.Fatal("session not operational after initialized")
	}
}

func TestCapabilityGating(t *testing.T) {
	// A server without logging and a client without sampling each answer
	// -32601 for the capability they did not advertise.
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	ss, cs := connectPair(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	err := cs.Call(context.Background(), MethodLoggingSetLevel, &SetLevelRequestParams{Level: LoggingLevelInfo}, nil)
	if !errors.Is(err, jsonrpc.ErrMethodNotFound) {
		t.Errorf("logging/setLevel without logging: %v", err)
	}
	_, err = cs.ListTools(context.Background(), nil)
	if !errors.Is(err, jsonrpc.ErrMethodNotFound) {
		t.Errorf("tools/list without tools: %v", err)
	}
	_, err = ss.CreateMessage(context.Background(), &CreateMessageRequestParams{MaxTokens: 10, Messages: []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "hi"}}}}})
	if !errors.Is(err, jsonrpc.ErrMethodNotFound) {
		t.Errorf("sampling without the capability: %v", err)
	}
	if caps := cs.InitializeResult().Capabilities; caps.Tools != nil || caps.Logging != nil {
		t.Errorf("server advertised %+v", caps)
	}
	if caps := ss.InitializeParams().Capabilities; caps.Sampling != nil {
		t.Errorf("client advertised %+v", caps)
	}
}

func TestPingBothWays(t *testing.T) {
	ss, cs := connectPair(t, NewServer(&Implementation{Name: "s", Version: "1"}, nil), NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	if err := cs.Ping(context.Background()); err != nil {
		t.Fatalf("client ping: %v", err)
	}
	if err := ss.Ping(context.Background()); err != nil {
		t.Fatalf("server ping: %v", err)
	}
}

func TestCancellationBothWays(t *testing.T) {
	handlerCtx := make(chan context.Context, 1)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(&Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
		handlerCtx <- ctx
		<-ctx.Done()
		return &CallToolResult{}, nil
	})
	samplingCtx := make(chan context.Context, 1)
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		CreateMessageHandler: func(ctx context.Context, cs *ClientSession, p *CreateMessageRequestParams) (*CreateMessageResult, error) {
			samplingCtx <- ctx
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	ss, cs := connectPair(t, s, c)

	// Client to server.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "block"})
		errc <- err
	}()
	hctx := <-handlerCtx
	cancel()
	select {
	case <-hctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server handler not cancelled by notifications/cancelled")
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("CallTool: %v", err)
	}

	// Server to client.
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		_, err := ss.CreateMessage(ctx, &CreateMessageRequestParams{MaxTokens: 1, Messages: []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "x"}}}}})
		errc <- err
	}()
	sctx := <-samplingCtx
	cancel()
	select {
	case <-sctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("client handler not cancelled by notifications/cancelled")
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("CreateMessage: %v", err)
	}
	// Both sides still work.
	if err := cs.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ss.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestProgressBothWays(t *testing.T) {
	var mu sync.Mutex
	var clientSaw []float64
	var serverSaw []float64
	serverGot := make(chan struct{})
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		ProgressNotificationHandler: func(ctx context.Context, ss *ServerSession, p *ProgressNotificationParams) {
			mu.Lock()
			serverSaw = append(serverSaw, p.Progress)
			if len(serverSaw) == 2 {
				close(serverGot)
			}
			mu.Unlock()
		},
	})
	s.AddTool(&Tool{Name: "work", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
		tok, ok := p.Meta.ProgressToken()
		if !ok {
			return nil, errors.New("no progress token")
		}
		for i := 1; i <= 3; i++ {
			if err := ss.NotifyProgress(ctx, &ProgressNotificationParams{ProgressToken: tok, Progress: float64(i)}); err != nil {
				return nil, err
			}
		}
		return &CallToolResult{}, nil
	})
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, cs *ClientSession, p *ProgressNotificationParams) {
			mu.Lock()
			clientSaw = append(clientSaw, p.Progress)
			mu.Unlock()
		},
		CreateMessageHandler: func(ctx context.Context, cs *ClientSession, p *CreateMessageRequestParams) (*CreateMessageResult, error) {
			tok, _ := p.Meta.ProgressToken()
			for i := 1; i <= 2; i++ {
				if err := cs.NotifyProgress(ctx, &ProgressNotificationParams{ProgressToken: tok, Progress: float64(i) / 2}); err != nil {
					return nil, err
				}
			}
			return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: []Content{&TextContent{Text: "ok"}}}, nil
		},
	})
	ss, cs := connectPair(t, s, c)
	p := &CallToolRequestParams{Name: "work", Meta: Meta{}}
	p.Meta.SetProgressToken(jsonrpc.StringID("t1"))
	if _, err := cs.CallTool(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(clientSaw) != 3 || clientSaw[2] != 3 {
		t.Errorf("client saw progress %v", clientSaw)
	}
	mu.Unlock()

	cp := &CreateMessageRequestParams{MaxTokens: 5, Messages: []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "q"}}}}, Meta: Meta{}}
	cp.Meta.SetProgressToken(jsonrpc.Int64ID(7))
	res, err := ss.CreateMessage(context.Background(), cp)
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "m" {
		t.Errorf("result %+v", res)
	}
	select {
	case <-serverGot:
	case <-time.After(5 * time.Second):
		t.Fatal("server did not see the client's progress")
	}
}

func TestStrictMeta(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{StrictMeta: true})
	s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
		return &CallToolResult{}, nil
	})
	_, cs := connectPair(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	_, err := cs.CallTool(context.Background(), &CallToolRequestParams{Name: "t", Meta: Meta{"com.example/ok": 1}})
	if err != nil {
		t.Fatalf("valid key refused: %v", err)
	}
	_, err = cs.CallTool(context.Background(), &CallToolRequestParams{Name: "t", Meta: Meta{"-bad-/x": 1}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("invalid key: %v", err)
	}
	if want := "-bad-/x"; !strings.Contains(je.Message, want) {
		t.Errorf("error %q does not name the key %q", je.Message, want)
	}
}

func TestKeepAliveClosesDeadPeer(t *testing.T) {
	// A peer that never answers: the keep-alive ping fails and the session
	// closes.
	ct, st := InMemoryTransports()
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{KeepAlive: 30 * time.Millisecond})
	ss, err := s.Connect(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := ct.Connect(context.Background())
	_ = stream // never read: pings go unanswered
	select {
	case <-ss.done:
	case <-time.After(5 * time.Second):
		t.Fatal("session not closed after keep-alive failure")
	}
}
