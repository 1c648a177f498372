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
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// The client's modern binding over Streamable HTTP (revision 2026-07-28):
// era negotiation, headers, listen streams. The transport-independent
// parts (MRTR, cache, tasks extension, stdio probe) are tested in package
// mcp over in-memory streams.

// eraFakeRequest is one POST a fake server received.
type eraFakeRequest struct {
	Method string
	ID     json.RawMessage
	Params map[string]json.RawMessage
	Header http.Header
}

// eraFakeServer is a scripted HTTP MCP server: answer decides each reply
// (status, body); it records every request.
type eraFakeServer struct {
	mu     sync.Mutex
	reqs   []eraFakeRequest
	answer func(r eraFakeRequest) (int, any)
}

func (f *eraFakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage            `json:"id"`
		Method string                     `json:"method"`
		Params map[string]json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(b, &m)
	fr := eraFakeRequest{Method: m.Method, ID: m.ID, Params: m.Params, Header: r.Header.Clone()}
	f.mu.Lock()
	f.reqs = append(f.reqs, fr)
	f.mu.Unlock()
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	status, body := f.answer(fr)
	if status == 0 {
		status = http.StatusOK
	}
	switch b := body.(type) {
	case nil:
		w.WriteHeader(status)
	case string:
		w.WriteHeader(status)
		io.WriteString(w, b)
	case *jsonrpc.Error:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": b})
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": body})
	}
}

func (f *eraFakeServer) methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ms []string
	for _, r := range f.reqs {
		ms = append(ms, r.Method)
	}
	return ms
}

func (f *eraFakeServer) requests() []eraFakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

var modernDiscover = map[string]any{
	"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
	"supportedVersions": []string{mcp.ProtocolVersion20260728},
	"capabilities":      map[string]any{"tools": map[string]any{}},
	"_meta":             map[string]any{mcp.MetaKeyServerInfo: map[string]any{"name": "fake", "version": "9"}},
}

var legacyInit = map[string]any{
	"protocolVersion": mcp.ProtocolVersion20251125, "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "old", "version": "1"},
}

// TestEraNegotiationHTTP checks the verdict and the requests it costs for
// each kind of answer to the probe (revision 2026-07-28, Streamable HTTP
// "Backward Compatibility").
func TestEraNegotiationHTTP(t *testing.T) {
	unsupportedOnce := func() func(eraFakeRequest) (int, any) {
		var n int
		var mu sync.Mutex
		return func(r eraFakeRequest) (int, any) {
			mu.Lock()
			defer mu.Unlock()
			n++
			if n == 1 {
				return 400, &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: json.RawMessage(`{"supported":["2026-07-28","2025-11-25"],"requested":"x"}`)}
			}
			return 200, modernDiscover
		}
	}
	legacy := func(status int, body any) func(eraFakeRequest) (int, any) {
		return func(r eraFakeRequest) (int, any) {
			if r.Method == mcp.MethodInitialize {
				return 200, legacyInit
			}
			return status, body
		}
	}
	tests := []struct {
		name    string
		opts    mcp.ClientOptions
		answer  func(eraFakeRequest) (int, any)
		era     mcp.Era
		wantErr bool
		methods []string
	}{
		{name: "modern", answer: func(eraFakeRequest) (int, any) { return 200, modernDiscover }, era: mcp.EraModern,
			methods: []string{mcp.MethodServerDiscover}},
		{name: "modern after unsupported version", answer: unsupportedOnce(), era: mcp.EraModern,
			methods: []string{mcp.MethodServerDiscover, mcp.MethodServerDiscover}},
		{name: "legacy 400 plain", answer: legacy(400, "Bad Request: Server not initialized"), era: mcp.EraLegacy,
			methods: []string{mcp.MethodServerDiscover, mcp.MethodInitialize, mcp.NotificationInitialized}},
		{name: "legacy 400 with a legacy JSON-RPC error", answer: legacy(400, &jsonrpc.Error{Code: -32000, Message: "no session"}), era: mcp.EraLegacy,
			methods: []string{mcp.MethodServerDiscover, mcp.MethodInitialize, mcp.NotificationInitialized}},
		{name: "legacy 200 method not found", answer: legacy(200, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "nope"}), era: mcp.EraLegacy,
			methods: []string{mcp.MethodServerDiscover, mcp.MethodInitialize, mcp.NotificationInitialized}},
		{name: "legacy 404", answer: legacy(404, nil), era: mcp.EraLegacy,
			methods: []string{mcp.MethodServerDiscover, mcp.MethodInitialize, mcp.NotificationInitialized}},
		{name: "401 is no evidence", answer: legacy(401, nil), wantErr: true, methods: []string{mcp.MethodServerDiscover}},
		{name: "403 is no evidence", answer: legacy(403, nil), wantErr: true, methods: []string{mcp.MethodServerDiscover}},
		{name: "500 is no evidence", answer: legacy(500, nil), wantErr: true, methods: []string{mcp.MethodServerDiscover}},
		{name: "header mismatch: modern, no fallback", answer: legacy(400, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: "m"}), wantErr: true,
			methods: []string{mcp.MethodServerDiscover}},
		{name: "pinned legacy sends no probe", opts: mcp.ClientOptions{EraPolicy: mcp.EraPolicyLegacy}, answer: legacy(200, modernDiscover), era: mcp.EraLegacy,
			methods: []string{mcp.MethodInitialize, mcp.NotificationInitialized}},
		{name: "cached discover sends nothing", opts: mcp.ClientOptions{PriorDiscover: &mcp.DiscoverResult{SupportedVersions: []string{mcp.ProtocolVersion20260728}}},
			answer: func(eraFakeRequest) (int, any) { return 500, nil }, era: mcp.EraModern},
		{name: "modern only refuses a legacy server", opts: mcp.ClientOptions{EraPolicy: mcp.EraPolicyModern}, answer: legacy(400, nil), wantErr: true,
			methods: []string{mcp.MethodServerDiscover}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f := &eraFakeServer{answer: tt.answer}
			ts := httptest.NewServer(f)
			defer ts.Close()
			opts := tt.opts
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &opts)
			cs, err := c.Connect(ctx, &ClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true, DisableLegacyFallback: true})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Connect: %v, want error %v", err, tt.wantErr)
			}
			if err == nil {
				defer cs.Close()
				if got := cs.Era(); got != tt.era {
					t.Errorf("mcp.Era() = %v, want %v", got, tt.era)
				}
			}
			if got := f.methods(); !slices.Equal(got, tt.methods) {
				t.Errorf("requests %v, want %v", got, tt.methods)
			}
		})
	}
}

// TestModernRequestMetadata checks the _meta members and headers of
// modern requests, the base64 form of unsafe values, x-mcp-header
// mirroring and the dropping of invalid tools.
func TestModernRequestMetadata(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
		switch r.Method {
		case mcp.MethodServerDiscover:
			return 200, modernDiscover
		case mcp.MethodToolsList:
			return 200, map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": []any{
				map[string]any{"name": "good", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
					"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
					"n":      map[string]any{"type": "integer", "x-mcp-header": "N"},
					"nested": map[string]any{"type": "object", "properties": map[string]any{"flag": map[string]any{"type": "boolean", "x-mcp-header": "Flag"}}},
				}}},
				map[string]any{"name": "bad", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
					"x": map[string]any{"type": "number", "x-mcp-header": "X"},
				}}},
			}}
		}
		return 200, map[string]any{"resultType": "complete", "content": []any{}}
	}}
	ts := httptest.NewServer(f)
	defer ts.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &ClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != "good" {
		t.Fatalf("tools %+v, want only good", tools.Tools)
	}
	args := json.RawMessage(`{"region":" padded","n":42,"nested":{"flag":true}}`)
	if _, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "héllo", Arguments: args}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "good", Arguments: args}); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	for _, r := range reqs {
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(r.Params["_meta"], &meta); err != nil {
			t.Fatalf("%s: _meta: %v", r.Method, err)
		}
		for _, k := range []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities, mcp.MetaKeyClientInfo} {
			if _, ok := meta[k]; !ok {
				t.Errorf("%s: _meta lacks %s", r.Method, k)
			}
		}
		if got := r.Header.Get("Mcp-Protocol-Version"); got != mcp.ProtocolVersion20260728 || string(meta[mcp.MetaKeyProtocolVersion]) != `"`+got+`"` {
			t.Errorf("%s: MCP-Protocol-Version %q, _meta %s", r.Method, got, meta[mcp.MetaKeyProtocolVersion])
		}
		if got := r.Header.Get("Mcp-Method"); got != r.Method {
			t.Errorf("Mcp-Method %q, want %q", got, r.Method)
		}
		if r.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s: a session id in a modern request", r.Method)
		}
	}
	last := reqs[len(reqs)-1]
	want := map[string]string{
		"Mcp-Name":         "good",
		"Mcp-Param-Region": "=?base64?IHBhZGRlZA==?=",
		"Mcp-Param-N":      "42",
		"Mcp-Param-Flag":   "true",
	}
	for k, v := range want {
		if got := last.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if got := reqs[len(reqs)-2].Header.Get("Mcp-Name"); got != "=?base64?aMOpbGxv?=" {
		t.Errorf("Mcp-Name of a non-ASCII name: %q", got)
	}
	if h := reqs[len(reqs)-2].Header; h.Get("Mcp-Param-Region") != "" {
		t.Errorf("Mcp-Param-* for a tool never listed: %v", h)
	}
}

// TestModernSessionSkipsRemovedMethods checks that a modern session sends
// none of the methods revision 2026-07-28 removed: Ping becomes
// server/discover, SetLoggingLevel goes into the next requests' _meta,
// roots changes are not announced, Subscribe is refused.
func TestModernSessionSkipsRemovedMethods(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cachedDiscover := map[string]any{}
	for k, v := range modernDiscover {
		cachedDiscover[k] = v
	}
	cachedDiscover["ttlMs"] = 3600000 // Ping must reach the server anyway
	f := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
		if r.Method == mcp.MethodServerDiscover {
			return 200, cachedDiscover
		}
		return 200, map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": []any{}}
	}}
	ts := httptest.NewServer(f)
	defer ts.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &ClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cs.SetLoggingLevel(ctx, mcp.LoggingLevelWarning); err != nil {
		t.Fatal(err)
	}
	if err := c.AddRoots(&mcp.Root{URI: "file:///x"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: "file:///x"}); !errors.Is(err, mcp.ErrRemovedInModern) {
		t.Errorf("Subscribe: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{mcp.MethodServerDiscover, mcp.MethodServerDiscover, mcp.MethodToolsList}
	if got := f.methods(); !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	reqs := f.requests()
	if got := string(reqs[len(reqs)-1].Params["_meta"]); !strings.Contains(got, `"`+mcp.MetaKeyLogLevel+`":"warning"`) {
		t.Errorf("_meta after SetLoggingLevel: %s", got)
	}
}

// TestHeaderMismatchRefreshesTools checks that a tools/call refused with
// HeaderMismatch makes the client list the tools again and retry once with
// the headers the new annotations give.
func TestHeaderMismatchRefreshesTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	lists := 0
	f := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case mcp.MethodServerDiscover:
			return 200, modernDiscover
		case mcp.MethodToolsList:
			lists++
			prop := map[string]any{"type": "string"}
			if lists > 1 {
				prop["x-mcp-header"] = "Region"
			}
			return 200, map[string]any{"resultType": "complete", "tools": []any{
				map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"region": prop}}}}}
		}
		if r.Header.Get("Mcp-Param-Region") != "eu" {
			return 400, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: "Mcp-Param-Region missing"}
		}
		return 200, map[string]any{"resultType": "complete", "content": []any{}}
	}}
	ts := httptest.NewServer(f)
	defer ts.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &ClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(`{"region":"eu"}`)}); err != nil {
		t.Fatal(err)
	}
	want := []string{mcp.MethodServerDiscover, mcp.MethodToolsList, mcp.MethodToolsCall, mcp.MethodToolsList, mcp.MethodToolsCall}
	if got := f.methods(); !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
}

// TestListenModern checks subscriptions/listen against a modern server:
// Listen returns the acknowledged filter, tagged notifications reach the
// handlers, and Close closes the stream (the server sees its request end).
func TestListenModern(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	streamEnded := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(b, &m)
		switch m.Method {
		case mcp.MethodServerDiscover:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": modernDiscover})
		case mcp.MethodSubscriptionsListen:
			if r.Header.Get("Mcp-Method") != mcp.MethodSubscriptionsListen {
				t.Errorf("Mcp-Method %q", r.Header.Get("Mcp-Method"))
			}
			w.Header().Set("Content-Type", "text/event-stream")
			tag := fmt.Sprintf(`{"%s":%s}`, mcp.MetaKeySubscriptionID, m.ID)
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":%q,\"params\":{\"notifications\":{\"toolsListChanged\":true},\"_meta\":%s}}\n\n", mcp.NotificationSubscriptionsAcknowledged, tag)
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":%q,\"params\":{\"_meta\":%s}}\n\n", mcp.NotificationToolsListChanged, tag)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(streamEnded)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer ts.Close()
	changed := make(chan struct{}, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ClientSession) { changed <- struct{}{} },
	})
	cs, err := c.Connect(ctx, &ClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	sub, err := cs.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	if a := sub.Acknowledged(); !a.ToolsListChanged || a.PromptsListChanged {
		t.Errorf("acknowledged %+v", a)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed")
	}
	if err := sub.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-streamEnded:
	case <-ctx.Done():
		t.Fatal("Close left the listen stream open")
	}
	if err := sub.Err(); err != nil {
		t.Errorf("Err after Close: %v", err)
	}
}
