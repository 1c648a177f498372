package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
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
// path does not, or if they decode different values.
func checkFastAgrees(t *testing.T, raw []byte) bool {
	t.Helper()
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
	if c.mem.Name != call.Name || string(c.mem.Arguments) != string(call.Arguments) {
		t.Fatalf("%s: fast call %q %s, slow %q %s", raw, c.mem.Name, c.mem.Arguments, call.Name, call.Arguments)
	}
	fastTok, _ := c.mem.Meta.ProgressToken()
	slowTok, _ := call.Meta.ProgressToken()
	if fastTok != slowTok {
		t.Fatalf("%s: progress token %v vs %v", raw, fastTok, slowTok)
	}
	return true
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
	} {
		if got := checkFastAgrees(t, []byte(tc.params)); got != tc.fast {
			t.Errorf("%s: fast = %v, want %v", tc.params, got, tc.fast)
		}
	}
}

// FuzzModernFastCall checks that whatever the fast path accepts, the
// ordinary path accepts too and decodes the same way.
func FuzzModernFastCall(f *testing.F) {
	f.Add(`{"name":"echo","arguments":{"a":1},"_meta":` + modernMeta + `}`)
	f.Add(`{"name":"e","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"progressToken":"t","io.modelcontextprotocol/logLevel":"info"}}`)
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
