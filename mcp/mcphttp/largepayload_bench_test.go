package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// echoSchemaText is the echo tool's input schema in the large-payload
// benchmarks, the same as bench/ uses.
const echoSchemaText = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

// largeEchoArgs are the typed echo tool's arguments.
type largeEchoArgs struct {
	Text string `json:"text"`
}

// largeText returns n bytes of printable ASCII with no character that JSON
// escapes, like the bench's 1 MiB payload.
func largeText(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:-"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[i%len(alphabet)]
	}
	return string(b)
}

// echoServer returns a server with one echo tool, declared typed (AddTool)
// or raw (Server.AddTool with its own json.Unmarshal, as bench/ does).
func echoServer(tb testing.TB, typed bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	t := &mcp.Tool{Name: "echo", InputSchema: json.RawMessage(echoSchemaText)}
	var err error
	if typed {
		err = mcp.AddTool(s, t, func(_ context.Context, _ *mcp.ServerSession, _ *mcp.CallToolRequestParams, in largeEchoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	} else {
		err = s.AddTool(t, func(_ context.Context, _ *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			var a largeEchoArgs
			if err := json.Unmarshal(p.Arguments, &a); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil
		})
	}
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// echoCallBody is a tools/call of echo with text as its argument.
func echoCallBody(id int, text string) string {
	var b strings.Builder
	b.Grow(len(text) + 128)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.WriteString(itoa(id))
	b.WriteString(`,"method":"tools/call","params":{"name":"echo","arguments":{"text":`)
	b.Write(appendQuoted(nil, text))
	b.WriteString(`}}}`)
	return b.String()
}

func appendQuoted(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// BenchmarkLargeEcho serves tools/call of an echo tool whose argument and
// answer are a string of the given size, by calling a Handler
// (JSONResponse, one initialized session) directly: no network, no client.
// It isolates the server's JSON work on large payloads: the envelope
// decoder, params decoding, schema validation, the tool's argument
// decoding, the result's encoding and the envelope encoder.
func BenchmarkLargeEcho(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"small", 2}, {"1MiB", 1 << 20}} {
		text := largeText(size.n)
		for _, typed := range []bool{true, false} {
			name := size.name + "/raw"
			if typed {
				name = size.name + "/typed"
			}
			b.Run(name, func(b *testing.B) {
				s := echoServer(b, typed)
				h := NewHandler(func(*http.Request) *mcp.Server { return s }, &Options{JSONResponse: true, SessionTimeout: -1})
				defer h.Close()
				sid := directSession(b, h)

				prefix := `,"method":"tools/call","params":{"name":"echo","arguments":{"text":` + string(appendQuoted(nil, text)) + `}}}`
				body := &resettableBody{}
				req := httptest.NewRequest("POST", "http://localhost/mcp", body)
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Mcp-Session-Id", sid)
				req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
				out := &benchWriter{h: http.Header{}}
				want := len(text)
				id := 1
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					body.Reset(`{"jsonrpc":"2.0","id":` + itoa(id) + prefix)
					id++
					req.ContentLength = int64(body.Len())
					out.buf.Reset()
					clear(out.h)
					h.ServeHTTP(out, req)
					if out.code != 200 || out.buf.Len() < want || !strings.Contains(out.buf.String()[:min(out.buf.Len(), 64)], `"result"`) {
						b.Fatalf("status %d: %.200s", out.code, out.buf.String())
					}
				}
			})
		}
	}
}
