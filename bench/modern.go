package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// modernVersion is the stateless revision (2026-07-28) the modern rows
// speak: no initialize and no session; every request carries its protocol
// version and client capabilities in params._meta, and over Streamable
// HTTP the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers
// (basic/transports/streamable-http, "Request Metadata").
const modernVersion = "2026-07-28"

// modernCallHeaders are the headers of a modern tools/call of the echo
// tool, the only request the modern rows send: the version, the method
// and the tool's name mirrored from the body. Each line ends with CRLF.
const modernCallHeaders = "MCP-Protocol-Version: " + modernVersion + "\r\n" +
	"Mcp-Method: tools/call\r\n" +
	"Mcp-Name: echo\r\n"

// modernMeta is the params._meta of every modern request: the three
// reserved keys a 2026-07-28 client sends (protocolVersion and
// clientCapabilities are required, clientInfo is what the go-sdk and
// TypeScript clients send too).
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `",` +
	`"io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}`

// modernCallBody is callBody in the modern shape: the same tools/call of
// echo with text, its params carrying modernMeta. text must need no JSON
// escaping.
func modernCallBody(id int, text string) []byte {
	b := make([]byte, 0, len(text)+96+len(modernMeta))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`...)
	b = append(b, text...)
	b = append(b, `"},`...)
	b = append(b, modernMeta...)
	b = append(b, `}}`...)
	return b
}

// setModernCallHeaders sets modernCallHeaders on a net/http request.
func setModernCallHeaders(h http.Header) {
	h.Set("MCP-Protocol-Version", modernVersion)
	h.Set("Mcp-Method", "tools/call")
	h.Set("Mcp-Name", "echo")
}

// body is the tools/call of echo with text in the shape t's server is
// driven in, with a request id not used before on t.
func (t *target) body(text string) []byte {
	if t.modern {
		return modernCallBody(t.id(), text)
	}
	return callBody(t.id(), text)
}

// open gives t n sessions to call on: n handshakes with conc workers for
// a legacy server; for a modern one, n empty session ids (a modern request
// needs none; the load is spread over the workers all the same).
func (t *target) open(ctx context.Context, n, conc int) error {
	if t.modern {
		t.sessions = make([]string, n)
		return nil
	}
	ids, err := t.cl.handshakes(ctx, n, conc)
	t.sessions = ids
	return err
}

// newGoSDKStateless serves the go-sdk's Server through its Streamable HTTP
// handler in stateless mode (StreamableHTTPOptions.Stateless), the mode in
// which go-sdk v1.8.0 serves revision 2026-07-28, answering with JSON.
func newGoSDKStateless() (http.Handler, func()) {
	s := goSDKServer()
	h := gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	return h, func() {}
}

// modernPairs are the comparisons the 2026-07-28 rows are run for (issue
// 19): our modern path against our legacy one on the same handler, and
// against the go-sdk's stateless server.
var modernPairs = [][2]string{
	{"mcpstack@2026-07-28", "mcpstack"},
	{"mcpstack@2026-07-28", "go-sdk-stateless@2026-07-28"},
}

// printModern writes, for each pair of modernPairs that ran, the ratios
// of the first row over the second at concurrency c: req/s (above 1: the
// first is faster), and allocations, bytes and CPU per request, each as
// measured in the servers' process over the load and with ServeHTTP
// called directly (below 1: the first costs less).
func printModern(w io.Writer, c int, res []*result) {
	byName := map[string]*result{}
	for _, r := range res {
		byName[r.Name] = r
	}
	header := false
	for _, p := range modernPairs {
		a, b := byName[p[0]], byName[p[1]]
		if a == nil || b == nil {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nRevision 2026-07-28 tools/call at C=%d, ratios first over second (req/s: above 1 is faster; costs: below 1 is cheaper):\n\n", c)
			fmt.Fprintln(w, "| first | second | req/s | p50 | allocs/req | bytes/req | CPU µs/req | handler allocs/req | handler bytes/req |")
			fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
			header = true
		}
		la, lb := a.Calls[c], b.Calls[c]
		fmt.Fprintf(w, "| %s | %s | %.2f× | %.2f× | %.2f× | %.2f× | %.2f× | %.2f× | %.2f× |\n", a.Name, b.Name,
			la.RPS/lb.RPS, la.P50us/lb.P50us, la.Allocs/lb.Allocs, la.Bytes/lb.Bytes, la.CPUus/lb.CPUus,
			a.HandlerAllocs/b.HandlerAllocs, a.HandlerBytes/b.HandlerBytes)
	}
}
