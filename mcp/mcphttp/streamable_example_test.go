package mcphttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// greeter is a server with one tool.
func greeter() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	err := s.AddTool(&mcp.Tool{
		Name:        "greet",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		if err := json.Unmarshal(p.Arguments, &in); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	return s
}

// A server on the Streamable HTTP transport, and a client calling it. The
// server listens on the loopback address only: a local server must not be
// reachable from other machines, and the handler's DNS-rebinding defence
// then accepts only loopback Host names.
func ExampleNewHandler() {
	s := greeter()
	handler := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		handler.Shutdown(ctx) // ends the SSE streams, which srv.Shutdown would wait for
		srv.Shutdown(ctx)
	}()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcphttp.ClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp"})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close() // sends DELETE: the server ends the session
	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "greet", Arguments: json.RawMessage(`{"name":"Ada"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cs.ProtocolVersion())
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// 2025-11-25
	// Hello, Ada!
}

// One process serving both HTTP transports: Streamable HTTP on /mcp and,
// for clients that predate it, the 2024-11-05 HTTP+SSE transport on /sse.
// A Streamable HTTP client pointed at /sse finds the old transport there and
// falls back to it.
func ExampleNewSSEHandler() {
	s := greeter()
	mux := http.NewServeMux()
	streamable := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	legacy := mcphttp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	defer streamable.Close()
	defer legacy.Close()
	mux.Handle("/mcp", streamable)
	mux.Handle("/sse", legacy) // GET opens a stream, POST /sse?sessionId=… sends

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example-client", Version: "1.0.0"}, nil)
	for _, path := range []string{"/mcp", "/sse"} {
		cs, err := client.Connect(ctx, &mcphttp.ClientTransport{Endpoint: "http://" + ln.Addr().String() + path})
		if err != nil {
			log.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "greet", Arguments: json.RawMessage(`{"name":"` + path + `"}`)})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
		cs.Close()
	}
	// Output:
	// Hello, /mcp!
	// Hello, /sse!
}

// Options for a deployment: JSON answers where the server sends nothing
// but results, a bounded event store for resuming SSE streams, SSE polling
// so that no response stays open past 100 messages, shorter-lived idle
// sessions, and the public names the server answers to.
func ExampleOptions() {
	s := greeter()
	handler := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, &mcphttp.Options{
		JSONResponse: true,
		EventStore: &eventstore.Memory{
			MaxEventsPerStream: 256,
			MaxBytesPerSession: 256 << 10,
		},
		MaxEventsPerConnection: 100,
		RetryInterval:          2 * time.Second,
		SessionTimeout:         10 * time.Minute,
		AllowedHosts:           []string{"mcp.example.com"},
		AllowedOrigins:         []string{"https://app.example.com"},
	})
	defer handler.Close()
	fmt.Printf("%T\n", handler)
	// Output: *mcphttp.Handler
}

// A client notices that the server ended its session: its requests fail
// with ErrSessionExpired (and so does ClientSession.Wait). To go on, it
// connects again with the same transport, which starts a new session.
func ExampleErrSessionExpired() {
	s := greeter()
	handler := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: handler}
	go srv.Serve(ln)
	defer srv.Close()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example-client", Version: "1.0.0"}, nil)
	transport := &mcphttp.ClientTransport{Endpoint: "http://" + ln.Addr().String()}
	cs, err := client.Connect(ctx, transport)
	if err != nil {
		log.Fatal(err)
	}
	handler.Close() // the server forgets every session
	err = cs.Ping(ctx)
	fmt.Println(errors.Is(err, mcphttp.ErrSessionExpired))
	// Output: true
}
