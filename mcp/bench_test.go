package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

var (
	benchCallRequest = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York","units":"metric"},"_meta":{"progressToken":"tok-42"}}}`)
	benchCallResult  = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Current weather in New York: Temperature 22C, partly cloudy, humidity 65%, wind 10 km/h NW."}],"isError":false}}`)
)

// BenchmarkDecodeCallToolRequest decodes a whole tools/call request: the
// envelope and the typed params.
func BenchmarkDecodeCallToolRequest(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m, err := jsonrpc.Decode(benchCallRequest)
		if err != nil {
			b.Fatal(err)
		}
		var p CallToolRequestParams
		if err := parseParams(m.(*jsonrpc.Request).Params, &p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeCallToolRequest encodes typed params and the envelope.
func BenchmarkEncodeCallToolRequest(b *testing.B) {
	p := &CallToolRequestParams{Name: "get_weather", Arguments: json.RawMessage(`{"location":"New York","units":"metric"}`), Meta: Meta{}}
	p.Meta.SetProgressToken(jsonrpc.StringID("tok-42"))
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		raw, err := json.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = jsonrpc.AppendMessage(buf[:0], &jsonrpc.Request{ID: jsonrpc.Int64ID(42), Method: MethodToolsCall, Params: raw}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeCallToolResult decodes a whole tools/call result.
func BenchmarkDecodeCallToolResult(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m, err := jsonrpc.Decode(benchCallResult)
		if err != nil {
			b.Fatal(err)
		}
		var r CallToolResult
		if err := json.Unmarshal(m.(*jsonrpc.Response).Result, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeCallToolResult encodes a typed result and the envelope.
func BenchmarkEncodeCallToolResult(b *testing.B) {
	r := &CallToolResult{Content: []Content{&TextContent{Text: "Current weather in New York: Temperature 22C, partly cloudy, humidity 65%, wind 10 km/h NW."}}}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		raw, err := json.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = jsonrpc.AppendMessage(buf[:0], &jsonrpc.Response{ID: jsonrpc.Int64ID(42), Result: raw}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInMemoryCallTool is a whole tools/call through a client and a
// server in one process.
func BenchmarkInMemoryCallTool(b *testing.B) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(&Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{&TextContent{Text: "ok"}}}, nil
	})
	ct, st := InMemoryTransports()
	ss, _ := s.Connect(context.Background(), st)
	defer ss.Close()
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	p := &CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cs.CallTool(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}
