package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// slowModernCall decodes raw as the ordinary path does: parseModernParams
// for the _meta, decodeCallToolParams for the call.
func slowModernCall(raw []byte) (*RequestMeta, *CallToolRequestParams, bool) {
	var p modernParams
	if parseModernParams(raw, &p) != nil {
		return nil, nil, false
	}
	var call CallToolRequestParams
	if decodeCallToolParams(raw, &call) != nil {
		return nil, nil, false
	}
	return p.Meta, &call, true
}

// checkFastAgrees fails if the fast path accepts raw and the ordinary
// path does not, or if they decode different values: the request _meta
// and the name (fastCall), and the call's params
// (checkModernDecodeAgrees).
func checkFastAgrees(t *testing.T, raw []byte) bool {
	t.Helper()
	checkModernDecodeAgrees(t, raw)
	var c modernContext
	if !c.fastCall(raw) {
		return false
	}
	meta, call, ok := slowModernCall(raw)
	if !ok {
		t.Fatalf("the fast path accepted %s, the ordinary path refuses it", raw)
	}
	c.req.info = nil // compared without clientInfo, decoded lazily
	meta.ClientInfo = nil
	if !reflect.DeepEqual(&c.req.meta, meta) {
		t.Fatalf("%s: fast meta %+v, slow %+v", raw, c.req.meta, *meta)
	}
	if c.name == nil || *c.name != call.Name {
		t.Fatalf("%s: fast name %v, slow %q", raw, c.name, call.Name)
	}
	return true
}

// slowModernCallParams decodes raw as callTool's modern decoding is
// documented to: decodeCallToolParams, then the protocol keys removed from
// _meta, and a _meta left empty dropped.
func slowModernCallParams(raw []byte) (CallToolRequestParams, error) {
	var p CallToolRequestParams
	if err := decodeCallToolParams(bytes.Clone(raw), &p); err != nil {
		return p, err
	}
	for _, k := range []string{MetaKeyProtocolVersion, MetaKeyClientCapabilities, MetaKeyClientInfo, MetaKeyLogLevel} {
		delete(p.Meta, k)
	}
	if len(p.Meta) == 0 {
		p.Meta = nil
	}
	return p, nil
}

// checkModernDecodeAgrees fails if decodeModernCallToolParams and
// slowModernCallParams disagree on raw: one fails and not the other, or
// they decode different params.
func checkModernDecodeAgrees(t *testing.T, raw []byte) {
	t.Helper()
	var fast CallToolRequestParams
	var c modernContext
	known := ""
	if c.fastCall(raw) {
		known = *c.name // as callTool is given it
	}
	ferr := decodeModernCallToolParams(bytes.Clone(raw), &fast, known)
	slow, serr := slowModernCallParams(raw)
	if (ferr == nil) != (serr == nil) {
		t.Fatalf("%s: modern decoding %v, plain decoding %v", raw, ferr, serr)
	}
	if ferr != nil {
		return
	}
	var other CallToolRequestParams // a known name that is not this one
	if decodeModernCallToolParams(bytes.Clone(raw), &other, "x") != nil || other.Name != slow.Name {
		t.Fatalf("%s: with another known name, name %q, want %q", raw, other.Name, slow.Name)
	}
	if fast.Name != slow.Name || string(fast.Arguments) != string(slow.Arguments) ||
		!reflect.DeepEqual(fast.Meta, slow.Meta) || !reflect.DeepEqual(fast.Task, slow.Task) ||
		string(fast.RequestState) != string(slow.RequestState) || !reflect.DeepEqual(fast.InputResponses, slow.InputResponses) {
		t.Fatalf("%s: modern decoding %+v, plain decoding %+v", raw, fast, slow)
	}
}

// TestDecodeModernCallToolParams checks what callTool hands a modern
// call's handler in p.Meta, on the scanned path and on the ordinary one:
// _meta without the protocol keys, nil when nothing remains.
func TestDecodeModernCallToolParams(t *testing.T) {
	for _, tc := range []struct {
		params string
		meta   Meta
	}{
		{`{"name":"echo","arguments":{"a":1},"_meta":` + modernMeta + `}`, nil},
		{`{"name":"echo"}`, nil},
		{`{"name":"e\u0063ho","_meta":` + modernMeta + `}`, nil},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"t"}}`, Meta{"progressToken": "t"}},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":12}}`, Meta{"progressToken": json.Number("12")}},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info","app/key":1}}`, Meta{"app/key": json.Number("1")}},
		{`{"name":"echo","task":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"progressToken":1}}`, Meta{"progressToken": json.Number("1")}},
	} {
		checkModernDecodeAgrees(t, []byte(tc.params))
		var p CallToolRequestParams
		if err := decodeModernCallToolParams([]byte(tc.params), &p, ""); err != nil {
			t.Fatalf("%s: %v", tc.params, err)
		}
		if p.Name != "echo" || !reflect.DeepEqual(p.Meta, tc.meta) {
			t.Errorf("%s: name %q, meta %#v; want echo, %#v", tc.params, p.Name, p.Meta, tc.meta)
		}
	}
}

// TestModernFastCall checks which params the fast path takes and that it
// decodes them as the ordinary path does.
func TestModernFastCall(t *testing.T) {
	for _, tc := range []struct {
		params string
		fast   bool
	}{
		{`{"name":"echo","arguments":{"a":1},"_meta":` + modernMeta + `}`, true},
		{`{"_meta":` + modernMeta + `,"name":"e\u0063ho"}`, true},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{"form":{}}},"progressToken":"t","io.modelcontextprotocol/logLevel":"warning"}}`, true},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"v9","io.modelcontextprotocol/clientCapabilities":{},"progressToken":12}}`, true},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"app/key":1}}`, false},
		{`{"name":"echo","task":{},"_meta":` + modernMeta + `}`, false},
		{`{"name":"echo","Name":"x","_meta":` + modernMeta + `}`, false},
		{`{"name":"echo","name":"x","_meta":` + modernMeta + `}`, false},
		{`{"name":"","_meta":` + modernMeta + `}`, false},
		{`{"name":"echo","arguments":[],"_meta":` + modernMeta + `}`, false},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`, false},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, false},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}`, false},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}`, false},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":5}}}`, false},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"bad":{}}}}}`, false},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1.5}}`, false},
		{`{"name":"echo","_meta":` + modernMeta + `} x`, false},
		{`{"name":`, false},
		{`{"name":"echo","_meta":`, false},
	} {
		if got := checkFastAgrees(t, []byte(tc.params)); got != tc.fast {
			t.Errorf("%s: fast = %v, want %v", tc.params, got, tc.fast)
		}
	}
}

// FuzzModernFastCall checks that whatever the fast path (fastCall)
// accepts, the ordinary path accepts too and decodes the same way, and
// that decodeModernCallToolParams agrees with the plain decoding.
func FuzzModernFastCall(f *testing.F) {
	f.Add(`{"name":"echo","arguments":{"a":1},"_meta":` + modernMeta + `}`)
	f.Add(`{"name":"e","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"progressToken":"t","io.modelcontextprotocol/logLevel":"info"}}`)
	f.Add(`{"name":"e","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":-0,"app/k":[1]}}`)
	f.Add(`{"name":"e","_meta":{"progressToken":"a","progressToken":2}}`)
	f.Fuzz(func(t *testing.T, params string) {
		if !json.Valid([]byte(params)) {
			return
		}
		checkFastAgrees(t, []byte(params))
	})
}

// FuzzHeaderValue checks that EncodeHeaderValue's output is a valid
// header value that DecodeHeaderValue turns back into the input, and that
// DecodeHeaderValue never accepts a value with bytes a header cannot
// carry.
func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?=", "", "=?base64?SGVsbG8?="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		enc := EncodeHeaderValue(v)
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
				t.Fatalf("EncodeHeaderValue(%q) = %q holds byte %#x", v, enc, c)
			}
		}
		if got, ok := DecodeHeaderValue(enc); !ok || got != v {
			t.Fatalf("DecodeHeaderValue(EncodeHeaderValue(%q)) = %q, %v", v, got, ok)
		}
		if got, ok := DecodeHeaderValue(v); ok && got == v {
			for i := 0; i < len(v); i++ {
				if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
					t.Fatalf("DecodeHeaderValue accepted %q literally", v)
				}
			}
		}
	})
}

// TestModernToolMeta checks what a tool handler of a modern tools/call
// sees, through the whole server, whichever decoding the params take: in
// p.Meta the request's _meta without the protocol keys (progressToken
// and application keys as Meta.UnmarshalJSON decodes them, nil when
// nothing remains), and the protocol keys in RequestMetaFromContext.
func TestModernToolMeta(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	type seen struct {
		meta    Meta
		version string
	}
	got := make(chan seen, 1)
	if err := s.AddTool(&Tool{Name: "meta", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
		var v string
		if rm := RequestMetaFromContext(ctx); rm != nil {
			v = rm.ProtocolVersion
		}
		got <- seen{p.Meta, v}
		return &CallToolResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	const proto = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}`
	for _, tc := range []struct {
		name, meta string
		want       Meta
	}{
		{"protocol keys only", `{` + proto + `}`, nil},
		{"string token", `{` + proto + `,"progressToken":"t"}`, Meta{"progressToken": "t"}},
		{"integer token", `{"progressToken":7,` + proto + `,"io.modelcontextprotocol/logLevel":"info"}`, Meta{"progressToken": json.Number("7")}},
		{"application key", `{` + proto + `,"app/k":{"x":[1]}}`, Meta{"app/k": map[string]any{"x": []any{json.Number("1")}}}},
		{"both", `{` + proto + `,"progressToken":"t","app/k":true}`, Meta{"progressToken": "t", "app/k": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r ModernRequest
			req := &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: MethodToolsCall,
				Params: json.RawMessage(`{"name":"meta","arguments":{},"_meta":` + tc.meta + `}`)}
			if e := s.PrepareModern(context.Background(), &r, req, nopSink{}); e != nil {
				t.Fatal(e)
			}
			if _, e := r.Serve(); e != nil {
				t.Fatal(e)
			}
			g := <-got
			if !reflect.DeepEqual(g.meta, tc.want) || g.version != ProtocolVersion20260728 {
				t.Errorf("p.Meta %#v, protocol version %q; want %#v, %q", g.meta, g.version, tc.want, ProtocolVersion20260728)
			}
		})
	}
}

// BenchmarkModernCallDecode measures the decodings of a modern
// tools/call's params: the request's (fastCall, in PrepareModern) and the
// call's (decodeModernCallToolParams, in callTool).
func BenchmarkModernCallDecode(b *testing.B) {
	raw := []byte(`{"name":"echo","arguments":{"text":"hi"},"_meta":` + modernMeta + `}`)
	b.Run("fastCall", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c modernContext
			if !c.fastCall(raw) {
				b.Fatal("not fast")
			}
		}
	})
	b.Run("decodeModernCallToolParams", func(b *testing.B) {
		b.ReportAllocs()
		var p CallToolRequestParams
		for b.Loop() {
			if err := decodeModernCallToolParams(raw, &p, "echo"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
