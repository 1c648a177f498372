package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

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
	"supportedVersions": []string{ProtocolVersion20260728},
	"capabilities":      map[string]any{"tools": map[string]any{}},
	"_meta":             map[string]any{MetaKeyServerInfo: map[string]any{"name": "fake", "version": "9"}},
}

var legacyInit = map[string]any{
	"protocolVersion": ProtocolVersion20251125, "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "old", "version": "1"},
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
				return 400, &jsonrpc.Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: json.RawMessage(`{"supported":["2026-07-28","2025-11-25"],"requested":"x"}`)}
			}
			return 200, modernDiscover
		}
	}
	legacy := func(status int, body any) func(eraFakeRequest) (int, any) {
		return func(r eraFakeRequest) (int, any) {
			if r.Method == MethodInitialize {
				return 200, legacyInit
			}
			return status, body
		}
	}
	tests := []struct {
		name    string
		opts    ClientOptions
		answer  func(eraFakeRequest) (int, any)
		era     Era
		wantErr bool
		methods []string
	}{
		{name: "modern", answer: func(eraFakeRequest) (int, any) { return 200, modernDiscover }, era: EraModern,
			methods: []string{MethodServerDiscover}},
		{name: "modern after unsupported version", answer: unsupportedOnce(), era: EraModern,
			methods: []string{MethodServerDiscover, MethodServerDiscover}},
		{name: "legacy 400 plain", answer: legacy(400, "Bad Request: Server not initialized"), era: EraLegacy,
			methods: []string{MethodServerDiscover, MethodInitialize, NotificationInitialized}},
		{name: "legacy 400 with a legacy JSON-RPC error", answer: legacy(400, &jsonrpc.Error{Code: -32000, Message: "no session"}), era: EraLegacy,
			methods: []string{MethodServerDiscover, MethodInitialize, NotificationInitialized}},
		{name: "legacy 200 method not found", answer: legacy(200, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "nope"}), era: EraLegacy,
			methods: []string{MethodServerDiscover, MethodInitialize, NotificationInitialized}},
		{name: "legacy 404", answer: legacy(404, nil), era: EraLegacy,
			methods: []string{MethodServerDiscover, MethodInitialize, NotificationInitialized}},
		{name: "401 is no evidence", answer: legacy(401, nil), wantErr: true, methods: []string{MethodServerDiscover}},
		{name: "403 is no evidence", answer: legacy(403, nil), wantErr: true, methods: []string{MethodServerDiscover}},
		{name: "500 is no evidence", answer: legacy(500, nil), wantErr: true, methods: []string{MethodServerDiscover}},
		{name: "header mismatch: modern, no fallback", answer: legacy(400, &jsonrpc.Error{Code: CodeHeaderMismatch, Message: "m"}), wantErr: true,
			methods: []string{MethodServerDiscover}},
		{name: "pinned legacy sends no probe", opts: ClientOptions{EraPolicy: EraPolicyLegacy}, answer: legacy(200, modernDiscover), era: EraLegacy,
			methods: []string{MethodInitialize, NotificationInitialized}},
		{name: "cached discover sends nothing", opts: ClientOptions{PriorDiscover: &DiscoverResult{SupportedVersions: []string{ProtocolVersion20260728}}},
			answer: func(eraFakeRequest) (int, any) { return 500, nil }, era: EraModern},
		{name: "modern only refuses a legacy server", opts: ClientOptions{EraPolicy: EraPolicyModern}, answer: legacy(400, nil), wantErr: true,
			methods: []string{MethodServerDiscover}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f := &eraFakeServer{answer: tt.answer}
			ts := httptest.NewServer(f)
			defer ts.Close()
			opts := tt.opts
			c := NewClient(&Implementation{Name: "c", Version: "1"}, &opts)
			cs, err := c.Connect(ctx, &StreamableClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true, DisableLegacyFallback: true})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Connect: %v, want error %v", err, tt.wantErr)
			}
			if err == nil {
				defer cs.Close()
				if got := cs.Era(); got != tt.era {
					t.Errorf("Era() = %v, want %v", got, tt.era)
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
		case MethodServerDiscover:
			return 200, modernDiscover
		case MethodToolsList:
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
	c := NewClient(&Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &StreamableClientTransport{Endpoint: ts.URL})
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
	if _, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "héllo", Arguments: args}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "good", Arguments: args}); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	for _, r := range reqs {
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(r.Params["_meta"], &meta); err != nil {
			t.Fatalf("%s: _meta: %v", r.Method, err)
		}
		for _, k := range []string{MetaKeyProtocolVersion, MetaKeyClientCapabilities, MetaKeyClientInfo} {
			if _, ok := meta[k]; !ok {
				t.Errorf("%s: _meta lacks %s", r.Method, k)
			}
		}
		if got := r.Header.Get("Mcp-Protocol-Version"); got != ProtocolVersion20260728 || string(meta[MetaKeyProtocolVersion]) != `"`+got+`"` {
			t.Errorf("%s: MCP-Protocol-Version %q, _meta %s", r.Method, got, meta[MetaKeyProtocolVersion])
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

// TestMRTRRetry checks the multi round-trip loop: the handlers answer the
// input requests, the retry echoes requestState exactly under a new id,
// a result without resultType is final, and the rounds are bounded.
func TestMRTRRetry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	rounds := 0
	f := &eraFakeServer{answer: func(r eraFakeRequest) (int, any) {
		if r.Method == MethodServerDiscover {
			return 200, modernDiscover
		}
		var name string
		_ = json.Unmarshal(r.Params["name"], &name)
		mu.Lock()
		defer mu.Unlock()
		switch name {
		case "forever":
			return 200, map[string]any{"resultType": "input_required", "requestState": "s"}
		case "plain":
			return 200, map[string]any{"content": []any{}} // no resultType: complete
		}
		if _, ok := r.Params["inputResponses"]; !ok {
			rounds++
			return 200, map[string]any{"resultType": "input_required", "requestState": "opaque+/=",
				"inputRequests": map[string]any{
					"ask":   map[string]any{"method": MethodElicitationCreate, "params": map[string]any{"message": "ok?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}},
					"roots": map[string]any{"method": MethodRootsList, "params": map[string]any{}},
				}}
		}
		return 200, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "done"}}}
	}}
	ts := httptest.NewServer(f)
	defer ts.Close()
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		MaxInputRounds: 3,
		Roots:          []*Root{{URI: "file:///r"}},
		ElicitationHandler: func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{}}, nil
		},
	})
	cs, err := c.Connect(ctx, &StreamableClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "done" {
		t.Errorf("result %q", got)
	}
	reqs := f.requests()
	first, retry := reqs[1], reqs[2]
	if string(first.ID) == string(retry.ID) {
		t.Errorf("the retry reuses id %s", first.ID)
	}
	if got := string(retry.Params["requestState"]); got != `"opaque+/="` {
		t.Errorf("requestState %s", got)
	}
	var resp map[string]json.RawMessage
	_ = json.Unmarshal(retry.Params["inputResponses"], &resp)
	if !strings.Contains(string(resp["ask"]), `"accept"`) || !strings.Contains(string(resp["roots"]), "file:///r") {
		t.Errorf("inputResponses %s", retry.Params["inputResponses"])
	}
	if _, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "plain"}); err != nil {
		t.Errorf("a result without resultType: %v", err)
	}
	n := len(f.requests())
	_, err = cs.CallTool(ctx, &CallToolRequestParams{Name: "forever"})
	if !errors.Is(err, ErrTooManyInputRounds) {
		t.Errorf("endless input_required: %v", err)
	}
	if got := len(f.requests()) - n; got != 4 {
		t.Errorf("endless input_required made %d requests, want 1 + MaxInputRounds", got)
	}
}

// TestStdioProbeIsOptIn checks that by default a stdio client never sends
// a request before initialize (a legacy server may exit on one), and that
// the opt-in probe reports a server that did.
func TestStdioProbeIsOptIn(t *testing.T) {
	for _, tt := range []struct {
		name    string
		server  func(context.Context, jsonrpc.Stream)
		policy  EraPolicy
		wantErr error
		era     Era
	}{
		{"default against a fragile legacy server", fragileLegacyServer, EraPolicyDefault, nil, EraLegacy},
		{"auto against a fragile legacy server", fragileLegacyServer, EraPolicyAuto, ErrProbeKilledServer, 0},
		{"auto against a silent legacy server", silentLegacyServer, EraPolicyAuto, nil, EraLegacy},
		{"auto against a modern server", modernStdioServer, EraPolicyAuto, nil, EraModern},
		{"default against a modern server", modernStdioServer, EraPolicyDefault, nil, EraLegacy},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ct, st := InMemoryTransports()
			ss, err := st.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			go tt.server(ctx, ss)
			cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{EraPolicy: tt.policy, ProbeTimeout: 100 * time.Millisecond}).Connect(ctx, ct)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Connect: %v, want %v", err, tt.wantErr)
			}
			if err == nil {
				if cs.Era() != tt.era {
					t.Errorf("era %v, want %v", cs.Era(), tt.era)
				}
				cs.Close()
			}
		})
	}
}

// silentLegacyServer answers initialize and ignores every other request,
// as some legacy servers do before initialize: the probe times out.
func silentLegacyServer(ctx context.Context, s jsonrpc.Stream) {
	defer s.Close()
	for {
		m, err := s.Read(ctx)
		if err != nil {
			return
		}
		if req, ok := m.(*jsonrpc.Request); ok && req.Method == MethodInitialize {
			b, _ := json.Marshal(legacyInit)
			_ = s.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: b})
		}
	}
}

// modernStdioServer answers server/discover and initialize (a dual-era
// server: the client's policy decides).
func modernStdioServer(ctx context.Context, s jsonrpc.Stream) {
	defer s.Close()
	for {
		m, err := s.Read(ctx)
		if err != nil {
			return
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.IsNotification() {
			continue
		}
		var res any = map[string]any{"resultType": "complete"}
		switch req.Method {
		case MethodServerDiscover:
			res = modernDiscover
		case MethodInitialize:
			res = legacyInit
		}
		b, _ := json.Marshal(res)
		_ = s.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: b})
	}
}

// fragileLegacyServer answers initialize and exits on any other request
// that comes first, as some legacy stdio servers do.
func fragileLegacyServer(ctx context.Context, s jsonrpc.Stream) {
	defer s.Close()
	for {
		m, err := s.Read(ctx)
		if err != nil {
			return
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.IsNotification() {
			continue
		}
		if req.Method != MethodInitialize {
			return
		}
		b, _ := json.Marshal(legacyInit)
		_ = s.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: b})
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
		if r.Method == MethodServerDiscover {
			return 200, cachedDiscover
		}
		return 200, map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": []any{}}
	}}
	ts := httptest.NewServer(f)
	defer ts.Close()
	c := NewClient(&Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &StreamableClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cs.SetLoggingLevel(ctx, LoggingLevelWarning); err != nil {
		t.Fatal(err)
	}
	if err := c.AddRoots(&Root{URI: "file:///x"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &SubscribeRequestParams{URI: "file:///x"}); !errors.Is(err, ErrRemovedInModern) {
		t.Errorf("Subscribe: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{MethodServerDiscover, MethodServerDiscover, MethodToolsList}
	if got := f.methods(); !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	reqs := f.requests()
	if got := string(reqs[len(reqs)-1].Params["_meta"]); !strings.Contains(got, `"`+MetaKeyLogLevel+`":"warning"`) {
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
		case MethodServerDiscover:
			return 200, modernDiscover
		case MethodToolsList:
			lists++
			prop := map[string]any{"type": "string"}
			if lists > 1 {
				prop["x-mcp-header"] = "Region"
			}
			return 200, map[string]any{"resultType": "complete", "tools": []any{
				map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"region": prop}}}}}
		}
		if r.Header.Get("Mcp-Param-Region") != "eu" {
			return 400, &jsonrpc.Error{Code: CodeHeaderMismatch, Message: "Mcp-Param-Region missing"}
		}
		return 200, map[string]any{"resultType": "complete", "content": []any{}}
	}}
	ts := httptest.NewServer(f)
	defer ts.Close()
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &StreamableClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "t", Arguments: json.RawMessage(`{"region":"eu"}`)}); err != nil {
		t.Fatal(err)
	}
	want := []string{MethodServerDiscover, MethodToolsList, MethodToolsCall, MethodToolsList, MethodToolsCall}
	if got := f.methods(); !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
}
