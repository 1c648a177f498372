package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// Our Client and our Server over Streamable HTTP.

// onlySession returns the handler's one session.
func onlySession(t testing.TB, h *Handler) *httpSession {
	t.Helper()
	var s *httpSession
	eventually(t, "one session", func() bool {
		h.mu.RLock()
		defer h.mu.RUnlock()
		if len(h.sessions) != 1 {
			return false
		}
		for _, v := range h.sessions {
			s = v
		}
		return true
	})
	return s
}

func samplingClient(progress *[]float64, mu *sync.Mutex) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, cs *mcp.ClientSession, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "forty-two"}}}, nil
		},
		ProgressNotificationHandler: func(ctx context.Context, cs *mcp.ClientSession, p *mcp.ProgressNotificationParams) {
			if progress != nil {
				mu.Lock()
				*progress = append(*progress, p.Progress)
				mu.Unlock()
			}
		},
	})
}

func callText(t testing.TB, cs *mcp.ClientSession, ctx context.Context, p *mcp.CallToolRequestParams) string {
	t.Helper()
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("tools/call %s: %v", p.Name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("tools/call %s: %d blocks", p.Name, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("tools/call %s: %T", p.Name, res.Content[0])
	}
	return tc.Text
}

func progressCall(n int, token string) *mcp.CallToolRequestParams {
	p := &mcp.CallToolRequestParams{Name: "progress", Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))}
	p.Meta.SetProgressToken(jsonrpc.StringID(token))
	return p
}

func TestStreamableClientServer(t *testing.T) {
	for _, jsonMode := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", jsonMode), func(t *testing.T) {
			ctx := context.Background()
			s := toolServer(t, nil)
			started, cancelled := make(chan struct{}), make(chan struct{})
			if err := s.AddTool(&mcp.Tool{Name: "wait-cancel", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				close(started)
				<-ctx.Done()
				close(cancelled)
				return nil, ctx.Err()
			}); err != nil {
				t.Fatal(err)
			}
			h := NewHandler(func(*http.Request) *mcp.Server { return s }, &Options{JSONResponse: jsonMode})
			rec := &headerRecorder{h: h}
			ts := httptest.NewServer(rec)
			defer ts.Close()
			defer h.Close()

			var mu sync.Mutex
			var progress []float64
			cs, err := samplingClient(&progress, &mu).Connect(ctx, &ClientTransport{Endpoint: ts.URL})
			if err != nil {
				t.Fatal(err)
			}
			if v := cs.ProtocolVersion(); v != mcp.ProtocolVersion20251125 {
				t.Fatalf("negotiated %q", v)
			}
			if err := cs.Ping(ctx); err != nil {
				t.Fatalf("client→server ping: %v", err)
			}
			// server→client ping travels on the standalone GET stream.
			sess := onlySession(t, h)
			if err := sess.ss.Ping(ctx); err != nil {
				t.Fatalf("server→client ping: %v", err)
			}
			if got := callText(t, cs, ctx, &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"a":"b"}`)}); got != `{"a":"b"}` {
				t.Fatalf("echo: %q", got)
			}
			// A sampling request in the middle of a tool call.
			if got := callText(t, cs, ctx, &mcp.CallToolRequestParams{Name: "sample", Arguments: json.RawMessage(`{}`)}); got != "model said: forty-two" {
				t.Fatalf("sample: %q", got)
			}
			// Progress, in order, before the result.
			if got := callText(t, cs, ctx, progressCall(5, "p1")); got != "done" {
				t.Fatalf("progress: %q", got)
			}
			mu.Lock()
			if fmt.Sprint(progress) != "[1 2 3 4 5]" {
				t.Fatalf("progress notifications %v", progress)
			}
			mu.Unlock()
			// Cancellation reaches the server's handler.
			cctx, cancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &mcp.CallToolRequestParams{Name: "wait-cancel", Arguments: json.RawMessage(`{}`)})
				errc <- err
			}()
			<-started
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled call: %v", err)
			}
			<-cancelled
			eventually(t, "the cancelled exchange ends", func() bool { return h.exchanges.Load() == 0 })
			// The session still works, and Close sends DELETE.
			if err := cs.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			sid := sess.id
			cs.Close()
			if h.session(sid) != nil {
				t.Fatal("session still open after the client closed")
			}
			checkClientHeaders(t, rec.requests(), sid)
		})
	}
}

// checkClientHeaders checks what our client sent: both Accept types on
// every POST, the session id and protocol version after initialize, a GET
// stream, and a final DELETE.
func checkClientHeaders(t *testing.T, rs []recorded, sid string) {
	t.Helper()
	var gets, deletes int
	for i, r := range rs {
		switch r.method {
		case "POST":
			if a := r.header.Get("Accept"); !strings.Contains(a, "application/json") || !strings.Contains(a, "text/event-stream") {
				t.Errorf("POST %d: Accept %q", i, a)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("POST %d: Content-Type %q", i, ct)
			}
			init := strings.Contains(r.body, `"method":"initialize"`)
			if init {
				if r.header.Get("Mcp-Session-Id") != "" {
					t.Errorf("initialize sent a session id")
				}
				continue
			}
			if got := r.header.Get("Mcp-Session-Id"); got != sid {
				t.Errorf("POST %d (%s): session %q, want %q", i, r.body, got, sid)
			}
			if got := r.header.Get("Mcp-Protocol-Version"); got != mcp.ProtocolVersion20251125 {
				t.Errorf("POST %d (%s): protocol version %q", i, r.body, got)
			}
		case "GET":
			gets++
			if a := r.header.Get("Accept"); a != "text/event-stream" {
				t.Errorf("GET: Accept %q", a)
			}
			if r.header.Get("Mcp-Session-Id") != sid || r.header.Get("Mcp-Protocol-Version") != mcp.ProtocolVersion20251125 {
				t.Errorf("GET: headers %v", r.header)
			}
		case "DELETE":
			deletes++
			if r.header.Get("Mcp-Session-Id") != sid {
				t.Errorf("DELETE: session %q", r.header.Get("Mcp-Session-Id"))
			}
		}
	}
	if gets == 0 {
		t.Error("the client never opened the GET stream")
	}
	if deletes != 1 {
		t.Errorf("%d DELETEs, want 1", deletes)
	}
}

func TestStreamableClientStateless(t *testing.T) {
	for _, jsonMode := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", jsonMode), func(t *testing.T) {
			ctx := context.Background()
			h := NewHandler(func(*http.Request) *mcp.Server { return toolServer(t, nil) }, &Options{Stateless: true, JSONResponse: jsonMode})
			rec := &headerRecorder{h: h}
			ts := httptest.NewServer(rec)
			defer ts.Close()
			var mu sync.Mutex
			var progress []float64
			cs, err := samplingClient(&progress, &mu).Connect(ctx, &ClientTransport{Endpoint: ts.URL})
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			if got := callText(t, cs, ctx, progressCall(3, "s")); got != "done" {
				t.Fatalf("progress: %q", got)
			}
			mu.Lock()
			if len(progress) != 3 {
				t.Errorf("progress %v", progress)
			}
			mu.Unlock()
			cs.Close()
			for _, r := range rec.requests() {
				if r.header.Get("Mcp-Session-Id") != "" || r.method == "DELETE" {
					t.Errorf("%s with session %q in stateless mode", r.method, r.header.Get("Mcp-Session-Id"))
				}
			}
			eventually(t, "every exchange ends", func() bool { return h.exchanges.Load() == 0 })
		})
	}
}

func TestStreamableClientSessionExpired(t *testing.T) {
	ctx := context.Background()
	h, ts := serve(t, toolServer(t, nil), nil)
	tr := &ClientTransport{Endpoint: ts.URL}
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	s := onlySession(t, h)
	// Let the client's GET stream open first: a GET that arrives after the
	// session ended gets the 404 itself, and the ping then finds the
	// connection closed.
	eventually(t, "the GET stream is open", func() bool {
		s.mu.Lock()
		st := s.standalone
		s.mu.Unlock()
		if st == nil {
			return false
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.w != nil
	})
	s.terminate() // the server forgets the session
	err = cs.Ping(ctx)
	if !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("ping on an ended session: %v, want ErrSessionExpired", err)
	}
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 {
		t.Fatalf("error %v does not carry the 404", err)
	}
	if err := cs.Wait(); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("Wait: %v, want ErrSessionExpired", err)
	}
	// Re-initializing is connecting again with the same transport.
	cs2, err := c.Connect(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	if err := cs2.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestStreamableClientNoGETStream(t *testing.T) {
	// A server without a GET stream answers 405; the client carries on.
	ctx := context.Background()
	_, ts := serve(t, toolServer(t, nil), &Options{DisableStandaloneSSE: true})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &ClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 3 {
		if err := cs.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStreamableClientErrors(t *testing.T) {
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	if _, err := (&ClientTransport{Endpoint: "ftp://x"}).Connect(ctx); err == nil {
		t.Error("an ftp endpoint was accepted")
	}
	// A server that refuses everything: no fallback possible, the error
	// carries the status.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "go away", http.StatusNotFound)
	}))
	defer ts.Close()
	_, err := c.Connect(ctx, &ClientTransport{Endpoint: ts.URL})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 || se.Method != "POST" || se.Message != "go away" {
		t.Fatalf("Connect: %v", err)
	}
	// 401 is reported as it is (authorization plugs in via HTTPClient).
	ts401 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer ts401.Close()
	_, err = c.Connect(ctx, &ClientTransport{Endpoint: ts401.URL})
	if !errors.As(err, &se) || se.StatusCode != 401 || se.Header.Get("WWW-Authenticate") != `Bearer resource_metadata="x"` {
		t.Fatalf("Connect: %v", err)
	}
}

func TestStreamableClientHTTPClientAndHeader(t *testing.T) {
	// The caller's *http.Client carries every request; Header adds to them.
	ctx := context.Background()
	h, _ := serve(t, toolServer(t, nil), nil)
	var mu sync.Mutex
	seen := map[string]int{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method+" "+r.Header.Get("Authorization")+" "+r.Header.Get("X-Extra")]++
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer token")
		return http.DefaultTransport.RoundTrip(r)
	})}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &ClientTransport{Endpoint: ts.URL, HTTPClient: hc, Header: http.Header{"X-Extra": {"1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	mu.Lock()
	defer mu.Unlock()
	for k := range seen {
		if !strings.HasSuffix(k, " Bearer token 1") {
			t.Errorf("request %q bypassed the caller's client or headers", k)
		}
	}
	if seen["POST Bearer token 1"] < 3 || seen["DELETE Bearer token 1"] != 1 {
		t.Errorf("requests %v", seen)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestStreamableClientLegacyFallback(t *testing.T) {
	ctx := context.Background()
	s := toolServer(t, nil)
	old := NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	defer old.Close()
	rec := &headerRecorder{h: old}
	ts := httptest.NewServer(rec)
	defer ts.Close()
	var mu sync.Mutex
	var progress []float64
	cs, err := samplingClient(&progress, &mu).Connect(ctx, &ClientTransport{Endpoint: ts.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, cs, ctx, &mcp.CallToolRequestParams{Name: "sample", Arguments: json.RawMessage(`{}`)}); got != "model said: forty-two" {
		t.Fatalf("sample over the old transport: %q", got)
	}
	if got := callText(t, cs, ctx, progressCall(4, "old")); got != "done" {
		t.Fatalf("progress: %q", got)
	}
	mu.Lock()
	if fmt.Sprint(progress) != "[1 2 3 4]" {
		t.Fatalf("progress %v", progress)
	}
	mu.Unlock()
	cs.Close()
	eventually(t, "the old session ends with its stream", func() bool {
		old.mu.Lock()
		defer old.mu.Unlock()
		return len(old.sessions) == 0
	})
	rs := rec.requests()
	if len(rs) < 3 || rs[0].method != "POST" || rs[1].method != "GET" || rs[2].method != "POST" || !strings.Contains(rs[2].body, "initialize") {
		t.Fatalf("requests: first a POST to the URL, then GET, then initialize again at the endpoint; got %v", rs)
	}
	for _, r := range rs[2:] {
		if r.method == "POST" && !strings.Contains(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("legacy POST Content-Type %q", r.header.Get("Content-Type"))
		}
	}
}

func TestStreamableClientNoFallback(t *testing.T) {
	ctx := context.Background()
	old := NewSSEHandler(func(*http.Request) *mcp.Server { return toolServer(t, nil) }, nil)
	ts := httptest.NewServer(old)
	defer ts.Close()
	_, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &ClientTransport{Endpoint: ts.URL, DisableLegacyFallback: true})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 400 {
		t.Fatalf("Connect without fallback: %v", err)
	}
}

// scriptedServer answers initialize as a Streamable HTTP server would, and
// every other request with an SSE stream that carries one notification
// with an id, then ends; every GET gets getStatus.
func scriptedServer(t *testing.T, streamBody string, getStatus int, gets *[]string, mu *sync.Mutex) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case "GET":
			mu.Lock()
			*gets = append(*gets, r.Header.Get("Last-Event-ID"))
			mu.Unlock()
			w.WriteHeader(getStatus)
			return
		case "DELETE":
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &m)
		switch {
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "scripted")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, m.ID)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, streamBody)
		}
	}))
}

func TestStreamableClientGivesUp(t *testing.T) {
	withID := "id: 7_0\ndata: \n\nid: 7_1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":1}}\n\n"
	withoutID := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":1}}\n\n"
	tests := []struct {
		name       string
		body       string
		getStatus  int
		maxRetries int
		wantGets   int
	}{
		{"server errors: retried up to MaxRetries", withID, 503, 3, 3},
		{"client error: not retried", withID, 400, 3, 1},
		{"no reconnection", withID, 503, -1, 0},
		{"no event id: nothing to resume from", withoutID, 503, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var gets []string
			ts := scriptedServer(t, tt.body, tt.getStatus, &gets, &mu)
			defer ts.Close()
			ctx := context.Background()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &ClientTransport{
				Endpoint: ts.URL, MaxRetries: tt.maxRetries, RetryDelay: 1, DisableStandaloneSSE: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			err = cs.Ping(ctx)
			if !errors.Is(err, jsonrpc.ErrInternal) || !strings.Contains(err.Error(), "no answer from the server") {
				t.Fatalf("ping on a stream that cannot be resumed: %v", err)
			}
			mu.Lock()
			got := slices.Clone(gets)
			mu.Unlock()
			if len(got) != tt.wantGets {
				t.Fatalf("%d GETs, want %d", len(got), tt.wantGets)
			}
			for _, g := range got {
				if g != "7_1" {
					t.Errorf("GET with Last-Event-ID %q, want 7_1", g)
				}
			}
			// The session survives the lost stream.
			if err := cs.Ping(ctx); !errors.Is(err, jsonrpc.ErrInternal) {
				t.Fatalf("second ping: %v", err)
			}
		})
	}
}

// TestStreamableClientPostCarriesCallerValues checks that the POST of a
// request carries the values of the caller's context (an HTTP client's
// tracing instrumentation finds the caller's span there) while it does not
// end with the caller's context.
func TestStreamableClientPostCarriesCallerValues(t *testing.T) {
	type key struct{}
	_, ts := serve(t, toolServer(t, nil), nil)
	var seen atomic.Int32
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPost && r.Context().Value(key{}) == "caller" {
			seen.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(),
		&ClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx := context.WithValue(context.Background(), key{}, "caller")
	if callText(t, cs, ctx, &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"a":1}`)}) != `{"a":1}` {
		t.Fatal("echo failed")
	}
	if seen.Load() != 1 {
		t.Fatalf("%d POSTs carried the caller's value, want 1", seen.Load())
	}
}
