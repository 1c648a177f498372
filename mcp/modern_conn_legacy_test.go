package mcp

import "testing"

// TestLegacyOnlyConnProbe checks a connection (stdio) to a server that
// serves no modern revision (DisableModern), probed the way the go-sdk
// v1.8.0 client probes by default: server/discover with modern _meta,
// then, on any answer that is not a DiscoverResult, initialize on the same
// connection. The probe gets an error that is not a modern one (a modern
// error such as -32022 tells the client not to fall back: basic/transports/
// stdio, "Backward Compatibility"), and initialize is served.
func TestLegacyOnlyConnProbe(t *testing.T) {
	s := NewServer(&Implementation{Name: "legacy-only", Version: "1"}, &ServerOptions{DisableModern: true})
	for _, tc := range []struct {
		name, method string
	}{
		{"discover", MethodServerDiscover},
		{"tools/list", MethodToolsList},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connectLines(t, s)
			c.send(call(1, tc.method, withMeta("")))
			m := c.next()
			e, _ := m["error"].(map[string]any)
			if e == nil {
				t.Fatalf("the probe was answered %v, want an error", m)
			}
			switch code := int(e["code"].(float64)); code {
			case CodeUnsupportedProtocolVersion, CodeHeaderMismatch, CodeMissingRequiredClientCapability:
				t.Fatalf("the probe got the modern error %v: a client would not fall back to initialize", e)
			}
			c.send(call(2, MethodInitialize, `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`))
			res, _ := c.next()["result"].(map[string]any)
			if res["protocolVersion"] != ProtocolVersion20251125 {
				t.Fatalf("initialize after the probe: %v", res)
			}
		})
	}
}
