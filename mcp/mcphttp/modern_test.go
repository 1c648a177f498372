package mcphttp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
	"time"
)

// modernMeta is a valid modern _meta.
const modernMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// modernServer is a server with the features the modern-leg tests use.
func modernServer(t testing.TB, tweaks ...func(*mcp.ServerOptions)) *mcp.Server {
	t.Helper()
	opts := &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapability{}},
		CacheTTL:     1500 * time.Millisecond,
	}
	for _, f := range tweaks {
		f(opts)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "modern-test", Version: "1.2.3"}, opts)
	add := func(tool *mcp.Tool, h mcp.ToolHandler) {
		t.Helper()
		if tool.InputSchema == nil {
			tool.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if err := s.AddTool(tool, h); err != nil {
			t.Fatal(err)
		}
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	add(&mcp.Tool{Name: "zeta"}, func(context.Context, *mcp.ServerSession, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return text("zeta"), nil
	})
	add(&mcp.Tool{Name: "echo"}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return text(mcp.EraFromContext(ctx).String() + " " + ss.Era().String() + " " + string(p.Arguments)), nil
	})
	add(&mcp.Tool{Name: "hdr", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"count":{"type":"integer","x-mcp-header":"Count"},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}}}}`)},
		func(context.Context, *mcp.ServerSession, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			return text("ok"), nil
		})
	add(&mcp.Tool{Name: "needs_sampling"}, func(context.Context, *mcp.ServerSession, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return nil, &mcp.MissingClientCapabilityError{Required: mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}}
	})
	add(&mcp.Tool{Name: "chatty"}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		if tok, ok := p.Meta.ProgressToken(); ok {
			if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1}); err != nil {
				return nil, err
			}
		}
		if err := ss.Log(ctx, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelInfo, Data: json.RawMessage(`"hello"`)}); err != nil {
			return nil, err
		}
		return text("done"), nil
	})
	if err := s.AddResource(&mcp.Resource{URI: "test://a", Name: "a"}, func(context.Context, *mcp.ServerSession, *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: "test://a", Text: "A"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.ServerSession, *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "hi"}}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// modernResp is an answer of the modern leg: its status and its JSON-RPC
// messages (one for JSON, every event for SSE).
type modernResp struct {
	status int
	header http.Header
	msgs   []map[string]any
}

// last is the final message: the response.
func (r modernResp) last() map[string]any {
	if len(r.msgs) == 0 {
		return nil
	}
	return r.msgs[len(r.msgs)-1]
}

func (r modernResp) errCode() int {
	e, _ := r.last()["error"].(map[string]any)
	if e == nil {
		return 0
	}
	n, _ := e["code"].(float64)
	return int(n)
}

// modernPost sends body with the standard modern headers for method and
// name (name "" sends no Mcp-Name), changed by hdr: a key with a nil
// value removes the header; keys are sent verbatim (not canonicalized).
func modernPost(t testing.TB, url, method, name, body string, hdr map[string][]string) modernResp {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{
		"Accept":               {"application/json, text/event-stream"},
		"Content-Type":         {"application/json"},
		"Mcp-Protocol-Version": {mcp.ProtocolVersion20260728},
		"Mcp-Method":           {method},
	}
	if name != "" {
		h["Mcp-Name"] = []string{name}
	}
	for k, v := range hdr {
		for hk := range h {
			if strings.EqualFold(hk, k) {
				delete(h, hk)
			}
		}
		if v != nil {
			h[k] = v
		}
	}
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := modernResp{status: resp.StatusCode, header: resp.Header}
	data, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if err := json.Unmarshal([]byte(d), &m); err != nil {
					t.Fatalf("event %q: %v", d, err)
				}
				out.msgs = append(out.msgs, m)
			}
		}
		return out
	}
	if len(data) > 0 {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("body %q: %v", data, err)
		}
		out.msgs = append(out.msgs, m)
	}
	return out
}

// call is a modern request body.
func call(id int, method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

// withMeta returns params (a JSON object without braces) plus _meta.
func withMeta(params string) string {
	if params == "" {
		return `{"_meta":` + modernMeta + `}`
	}
	return `{` + params + `,"_meta":` + modernMeta + `}`
}

// TestModernWireStrictness is the modern leg's table of malformed
// requests: each gets the error code and HTTP status revision 2026-07-28
// prescribes, with the request's id.
func TestModernWireStrictness(t *testing.T) {
	_, ts := serve(t, modernServer(t), nil)
	metaWithout := func(drop string) string {
		var m map[string]any
		_ = json.Unmarshal([]byte(modernMeta), &m)
		delete(m, drop)
		b, _ := json.Marshal(m)
		return `{"_meta":` + string(b) + `}`
	}
	metaWith := func(key, value string) string {
		return `{"_meta":` + strings.TrimSuffix(modernMeta, "}") + `,"` + key + `":` + value + `}}`
	}
	v999 := strings.Replace(modernMeta, mcp.ProtocolVersion20260728, "v999.0.0", 1)
	tests := []struct {
		name, method, mcpName, params string
		hdr                           map[string][]string
		status, code                  int
	}{
		{"no params", "tools/list", "", "", nil, 400, -32602},
		{"no _meta", "tools/list", "", `{}`, nil, 400, -32602},
		{"_meta null", "tools/list", "", `{"_meta":null}`, nil, 400, -32602},
		{"_meta not an object", "tools/list", "", `{"_meta":[1]}`, nil, 400, -32602},
		{"no protocolVersion", "server/discover", "", metaWithout(mcp.MetaKeyProtocolVersion), nil, 400, -32602},
		{"no clientCapabilities", "server/discover", "", metaWithout(mcp.MetaKeyClientCapabilities), nil, 400, -32602},
		{"clientCapabilities not an object", "server/discover", "", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":"all"}}`, nil, 400, -32602},
		{"protocolVersion not a string", "server/discover", "", `{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}`, nil, 400, -32602},
		{"unknown logLevel", "tools/list", "", metaWith(mcp.MetaKeyLogLevel, `"loud"`), nil, 400, -32602},
		{"bad extension key", "tools/list", "", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"x":{}}}}}`, nil, 400, -32602},
		{"no clientInfo is served", "server/discover", "", metaWithout(mcp.MetaKeyClientInfo), nil, 200, 0},
		{"no MCP-Protocol-Version header", "tools/list", "", withMeta(""), map[string][]string{"Mcp-Protocol-Version": nil}, 400, -32020},
		{"two MCP-Protocol-Version headers", "tools/list", "", withMeta(""), map[string][]string{"Mcp-Protocol-Version": {"2026-07-28", "2026-07-28"}}, 400, -32020},
		{"header and _meta disagree", "server/discover", "", `{"_meta":` + v999 + `}`, nil, 400, -32020},
		{"unsupported version", "server/discover", "", `{"_meta":` + v999 + `}`, map[string][]string{"Mcp-Protocol-Version": {"v999.0.0"}}, 400, -32022},
		{"legacy version in _meta", "server/discover", "", `{"_meta":` + strings.Replace(modernMeta, mcp.ProtocolVersion20260728, mcp.ProtocolVersion20251125, 1) + `}`, map[string][]string{"Mcp-Protocol-Version": {mcp.ProtocolVersion20251125}}, 400, -32022},
		{"no Mcp-Method", "tools/list", "", withMeta(""), map[string][]string{"Mcp-Method": nil}, 400, -32020},
		{"Mcp-Method of another method", "tools/list", "", withMeta(""), map[string][]string{"Mcp-Method": {"prompts/list"}}, 400, -32020},
		{"Mcp-Method in another case", "tools/list", "", withMeta(""), map[string][]string{"Mcp-Method": {"TOOLS/LIST"}}, 400, -32020},
		{"lower-case header name", "tools/list", "", withMeta(""), map[string][]string{"mcp-method": {"tools/list"}}, 200, 0},
		{"upper-case header name", "tools/list", "", withMeta(""), map[string][]string{"MCP-METHOD": {"tools/list"}}, 200, 0},
		{"no Mcp-Name", "tools/call", "", withMeta(`"name":"echo"`), nil, 400, -32020},
		{"Mcp-Name of another tool", "tools/call", "zeta", withMeta(`"name":"echo"`), nil, 400, -32020},
		{"Mcp-Name with white space", "tools/call", "  echo  ", withMeta(`"name":"echo"`), nil, 200, 0},
		{"Mcp-Name in Base64", "tools/call", "=?base64?ZWNobw==?=", withMeta(`"name":"echo"`), nil, 200, 0},
		{"Mcp-Name bad Base64", "tools/call", "=?base64?ZWNobw?=", withMeta(`"name":"echo"`), nil, 400, -32020},
		{"Mcp-Name of resources/read", "resources/read", "test://b", withMeta(`"uri":"test://a"`), nil, 400, -32020},
		{"Mcp-Name of prompts/get", "prompts/get", "p", withMeta(`"name":"p"`), nil, 200, 0},
		{"Mcp-Param present", "tools/call", "hdr", withMeta(`"name":"hdr","arguments":{"region":"us-west1","count":42,"opts":{"dry":true}}`),
			map[string][]string{"Mcp-Param-Region": {"us-west1"}, "Mcp-Param-Count": {"42.0"}, "Mcp-Param-Dry": {"true"}}, 200, 0},
		{"Mcp-Param in Base64", "tools/call", "hdr", withMeta(`"name":"hdr","arguments":{"region":"Hello, 世界"}`),
			map[string][]string{"Mcp-Param-Region": {"=?base64?SGVsbG8sIOS4lueVjA==?="}}, 200, 0},
		{"Mcp-Param literal without suffix", "tools/call", "hdr", withMeta(`"name":"hdr","arguments":{"region":"=?base64?SGVsbG8="}`),
			map[string][]string{"Mcp-Param-Region": {"=?base64?SGVsbG8="}}, 200, 0},
		{"Mcp-Param bad padding", "tools/call", "hdr", withMeta(`"name":"hdr","arguments":{"region":"Hello"}`),
			map[string][]string{"Mcp-Param-Region": {"=?base64?SGVsbG8?="}}, 400, -32020},
		{"Mcp-Param bad characters", "tools/call", "hdr", withMeta(`"name":"hdr","arguments":{"region":"Hello"}`),
			map[string][]string{"Mcp-Param-Region": {"=?base64?SGVs!!!bG8=?="}}, 400, -32020},
		{"Mcp-Param missing", "tools/call", "hdr", withMeta(`"name":"hdr","arguments":{"region":"x"}`), nil, 400, -32020},
		{"Mcp-Param wrong", "tools/call", "hdr", withMeta(`"name":"hdr","arguments":{"count":7}`),
			map[string][]string{"Mcp-Param-Count": {"8"}}, 400, -32020},
		{"Mcp-Param nested missing", "tools/call", "hdr", withMeta(`"name":"hdr","arguments":{"opts":{"dry":false}}`), nil, 400, -32020},
		{"Mcp-Param for a null argument", "tools/call", "hdr", withMeta(`"name":"hdr","arguments":{"region":null}`), nil, 200, 0},
		{"unknown method", "unknown/method", "", withMeta(""), nil, 404, -32601},
		{"removed method at an unsupported version", "ping", "", `{"_meta":` + v999 + `}`, map[string][]string{"Mcp-Protocol-Version": {"v999.0.0"}}, 400, -32022},
		{"legacy ping with an unknown version", "ping", "", ``, map[string][]string{"Mcp-Protocol-Version": {"2000-01-01"}, "Mcp-Method": nil}, 400, -32602},
		{"initialize", "initialize", "", withMeta(""), nil, 404, -32601},
		{"ping", "ping", "", withMeta(""), nil, 404, -32601},
		{"logging/setLevel", "logging/setLevel", "", withMeta(`"level":"info"`), nil, 404, -32601},
		{"resources/subscribe", "resources/subscribe", "", withMeta(`"uri":"test://a"`), nil, 404, -32601},
		{"resources/unsubscribe", "resources/unsubscribe", "", withMeta(`"uri":"test://a"`), nil, 404, -32601},
		{"missing capability", "tools/call", "needs_sampling", withMeta(`"name":"needs_sampling"`), nil, 400, -32021},
		{"resource not found", "resources/read", "test://none", withMeta(`"uri":"test://none"`), nil, 200, -32602},
		{"session id ignored", "tools/list", "", withMeta(""), map[string][]string{"Mcp-Session-Id": {"no-such-session"}, "Last-Event-Id": {"x"}}, 200, 0},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := 100 + i
			r := modernPost(t, ts.URL, tc.method, tc.mcpName, call(id, tc.method, tc.params), tc.hdr)
			if r.status != tc.status || r.errCode() != tc.code {
				t.Fatalf("status %d code %d, want %d %d: %v", r.status, r.errCode(), tc.status, tc.code, r.msgs)
			}
			if got, _ := r.last()["id"].(float64); int(got) != id {
				t.Errorf("id = %v, want %d", r.last()["id"], id)
			}
			if r.header.Get("Mcp-Session-Id") != "" {
				t.Error("the modern leg minted a session id")
			}
		})
	}
}

// TestModernErrorData checks the data of -32022, -32021 and the modern
// resource-not-found.
func TestModernErrorData(t *testing.T) {
	_, ts := serve(t, modernServer(t), nil)
	v999 := strings.Replace(modernMeta, mcp.ProtocolVersion20260728, "v999.0.0", 1)
	r := modernPost(t, ts.URL, "server/discover", "", call(1, "server/discover", `{"_meta":`+v999+`}`), map[string][]string{"Mcp-Protocol-Version": {"v999.0.0"}})
	data, _ := json.Marshal(r.last()["error"].(map[string]any)["data"])
	if want := `{"requested":"v999.0.0","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]}`; string(data) != want {
		t.Errorf("-32022 data = %s, want %s", data, want)
	}
	r = modernPost(t, ts.URL, "tools/call", "needs_sampling", call(2, "tools/call", withMeta(`"name":"needs_sampling"`)), nil)
	data, _ = json.Marshal(r.last()["error"].(map[string]any)["data"])
	if want := `{"requiredCapabilities":{"sampling":{}}}`; string(data) != want {
		t.Errorf("-32021 data = %s, want %s", data, want)
	}
	r = modernPost(t, ts.URL, "resources/read", "test://none", call(3, "resources/read", withMeta(`"uri":"test://none"`)), nil)
	data, _ = json.Marshal(r.last()["error"].(map[string]any)["data"])
	if want := `{"uri":"test://none"}`; string(data) != want {
		t.Errorf("resource-not-found data = %s, want %s", data, want)
	}
}

// TestModernResults checks what every modern result carries: resultType,
// serverInfo in _meta, and on the cacheable ones ttlMs and cacheScope;
// tools/list is sorted by name.
func TestModernResults(t *testing.T) {
	_, ts := serve(t, modernServer(t), nil)
	serverInfo := map[string]any{"name": "modern-test", "version": "1.2.3"}
	for _, tc := range []struct {
		method, name, params string
		cacheable            bool
	}{
		{"server/discover", "", "", true},
		{"tools/list", "", "", true},
		{"prompts/list", "", "", true},
		{"resources/list", "", "", true},
		{"resources/templates/list", "", "", true},
		{"resources/read", "test://a", `"uri":"test://a"`, true},
		{"tools/call", "echo", `"name":"echo","arguments":{"a":1}`, false},
		{"prompts/get", "p", `"name":"p"`, false},
	} {
		t.Run(tc.method, func(t *testing.T) {
			r := modernPost(t, ts.URL, tc.method, tc.name, call(1, tc.method, withMeta(tc.params)), nil)
			res, _ := r.last()["result"].(map[string]any)
			if r.status != 200 || res == nil {
				t.Fatalf("status %d: %v", r.status, r.msgs)
			}
			if res["resultType"] != "complete" {
				t.Errorf("resultType = %v", res["resultType"])
			}
			meta, _ := res["_meta"].(map[string]any)
			if fmt.Sprint(meta[mcp.MetaKeyServerInfo]) != fmt.Sprint(serverInfo) {
				t.Errorf("_meta = %v", res["_meta"])
			}
			_, hasTTL := res["ttlMs"]
			if hasTTL != tc.cacheable {
				t.Errorf("ttlMs present = %v, want %v", hasTTL, tc.cacheable)
			}
			if tc.cacheable && (res["ttlMs"] != float64(1500) || res["cacheScope"] != "private") {
				t.Errorf("ttlMs %v cacheScope %v, want 1500 private", res["ttlMs"], res["cacheScope"])
			}
			switch tc.method {
			case "tools/list":
				var names []string
				for _, tool := range res["tools"].([]any) {
					names = append(names, tool.(map[string]any)["name"].(string))
				}
				if want := "chatty echo hdr needs_sampling zeta"; strings.Join(names, " ") != want {
					t.Errorf("tools/list order %v, want %s", names, want)
				}
			case "tools/call":
				if got := fmt.Sprint(res["content"]); !strings.Contains(got, "modern modern") {
					t.Errorf("the handler did not see the modern era: %s", got)
				}
			case "server/discover":
				vs := fmt.Sprint(res["supportedVersions"])
				caps, _ := res["capabilities"].(map[string]any)
				if !strings.Contains(vs, "2026-07-28") || !strings.Contains(vs, "2025-11-25") || caps["tools"] == nil || caps["prompts"] == nil || caps["resources"] == nil {
					t.Errorf("discover = %v", res)
				}
			}
		})
	}
}

// TestModernRequestStream checks that notifications about a request go on
// its own response stream: progress when it asks, log messages only with
// a log level in its _meta.
func TestModernRequestStream(t *testing.T) {
	_, ts := serve(t, modernServer(t), nil)
	meta := strings.TrimSuffix(modernMeta, "}")
	for _, tc := range []struct {
		name, meta string
		want       []string
	}{
		{"nothing asked", modernMeta, nil},
		{"progress", meta + `,"progressToken":"tok"}`, []string{"notifications/progress"}},
		{"log level", meta + `,"io.modelcontextprotocol/logLevel":"debug"}`, []string{"notifications/message"}},
		{"log level above", meta + `,"io.modelcontextprotocol/logLevel":"error"}`, nil},
		{"both", meta + `,"progressToken":7,"io.modelcontextprotocol/logLevel":"info"}`, []string{"notifications/progress", "notifications/message"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := modernPost(t, ts.URL, "tools/call", "chatty", call(1, "tools/call", `{"name":"chatty","_meta":`+tc.meta+`}`), nil)
			var got []string
			for _, m := range r.msgs[:len(r.msgs)-1] {
				got = append(got, fmt.Sprint(m["method"]))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("notifications %v, want %v", got, tc.want)
			}
			if res, _ := r.last()["result"].(map[string]any); res == nil {
				t.Fatalf("no result: %v", r.msgs)
			}
			if len(tc.want) > 0 && r.header.Get("Content-Type") != "text/event-stream" {
				t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
			}
		})
	}
}

// TestModernGetDelete checks that GET and DELETE of a modern client get
// 405, while the legacy leg keeps them.
func TestModernGetDelete(t *testing.T) {
	_, ts := serve(t, modernServer(t), nil)
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		r := rawDo(t, m, ts.URL, map[string]string{"Mcp-Protocol-Version": mcp.ProtocolVersion20260728, "Mcp-Session-Id": "x"}, "")
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
			t.Errorf("%s: %d Allow %q, want 405 POST", m, r.status, r.header.Get("Allow"))
		}
	}
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	r := rawDo(t, http.MethodDelete, ts.URL, map[string]string{"Mcp-Protocol-Version": mcp.ProtocolVersion20251125, "Mcp-Session-Id": sid}, "")
	if r.status != http.StatusOK && r.status != http.StatusNoContent {
		t.Errorf("legacy DELETE: %d", r.status)
	}
}

// TestModernBesideLegacy checks that one endpoint serves both eras: a
// legacy session keeps working between modern requests, and a modern
// request is not taken for a legacy one by its body alone.
func TestModernBesideLegacy(t *testing.T) {
	_, ts := serve(t, modernServer(t), nil)
	sid := rawInit(t, ts.URL, mcp.ProtocolVersion20251125)
	hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
	r := rawDo(t, http.MethodPost, ts.URL, hdr, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if r.status != 200 || !strings.Contains(r.body, "legacy legacy") || strings.Contains(r.body, "resultType") {
		t.Fatalf("legacy call: %d %s", r.status, r.body)
	}
	m := modernPost(t, ts.URL, "tools/call", "echo", call(3, "tools/call", withMeta(`"name":"echo"`)), nil)
	if m.status != 200 || m.last()["result"] == nil {
		t.Fatalf("modern call: %v", m.msgs)
	}
	// A modern body without the header: the header is required.
	b := modernPost(t, ts.URL, "tools/list", "", call(4, "tools/list", withMeta("")), map[string][]string{"Mcp-Protocol-Version": nil})
	if b.status != 400 || b.errCode() != mcp.CodeHeaderMismatch {
		t.Fatalf("modern body without header: %d %v", b.status, b.msgs)
	}
}

// TestModernListen checks subscriptions/listen: the acknowledgement first
// with the honoured filter, then only the notifications asked for, each
// tagged with the listen request's id.
func TestModernListen(t *testing.T) {
	s := modernServer(t)
	h, ts := serve(t, s, nil)
	open := func(id, filter string) (*bufio.Reader, func()) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{"notifications":` + filter + `,"_meta":` + modernMeta + `}}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header = http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"},
			"Mcp-Protocol-Version": {mcp.ProtocolVersion20260728}, "Mcp-Method": {"subscriptions/listen"}}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return bufio.NewReader(resp.Body), func() { resp.Body.Close() }
	}
	next := func(r *bufio.Reader) map[string]any {
		t.Helper()
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended: %v", err)
			}
			if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
				var m map[string]any
				if err := json.Unmarshal([]byte(d), &m); err != nil {
					t.Fatal(err)
				}
				return m
			}
		}
	}
	tools, closeTools := open(`"L1"`, `{"toolsListChanged":true,"promptsListChanged":false,"resourceSubscriptions":["test://a"]}`)
	defer closeTools()
	prompts, closePrompts := open(`7`, `{"promptsListChanged":true}`)
	defer closePrompts()
	ack := next(tools)
	params, _ := ack["params"].(map[string]any)
	if ack["method"] != mcp.NotificationSubscriptionsAcknowledged || fmt.Sprint(params["notifications"]) != "map[resourceSubscriptions:[test://a] toolsListChanged:true]" ||
		params["_meta"].(map[string]any)[mcp.MetaKeySubscriptionID] != "L1" {
		t.Fatalf("first message %v", ack)
	}
	if ack := next(prompts); ack["method"] != mcp.NotificationSubscriptionsAcknowledged {
		t.Fatalf("first message %v", ack)
	}
	// Both listeners are registered once acknowledged.
	if err := s.AddTool(&mcp.Tool{Name: "later", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.ServerSession, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.ResourceUpdated(context.Background(), "test://a"); err != nil {
		t.Fatal(err)
	}
	s.RemovePrompts("p")
	for _, want := range []string{mcp.NotificationToolsListChanged, mcp.NotificationResourcesUpdated} {
		m := next(tools)
		p, _ := m["params"].(map[string]any)
		if m["method"] != want || p["_meta"].(map[string]any)[mcp.MetaKeySubscriptionID] != "L1" {
			t.Fatalf("got %v, want %s tagged L1", m, want)
		}
	}
	// The prompts stream got the prompts change, and not the tools one
	// nor the resource update that came before it.
	m := next(prompts)
	p, _ := m["params"].(map[string]any)
	if m["method"] != mcp.NotificationPromptsListChanged || p["_meta"].(map[string]any)[mcp.MetaKeySubscriptionID] != float64(7) {
		t.Fatalf("got %v, want prompts/list_changed tagged 7", m)
	}
	// Closing the handler ends the streams with a result.
	h.Close()
	if end := next(tools); end["result"] == nil || end["id"] != "L1" {
		t.Fatalf("last message %v, want the listen result", end)
	}
}

// TestModernListenBound checks mcp.ServerOptions.MaxListeners.
func TestModernListenBound(t *testing.T) {
	s := modernServer(t, func(o *mcp.ServerOptions) { o.MaxListeners = 1 })
	_, ts := serve(t, s, nil)
	body := call(1, "subscriptions/listen", withMeta(`"notifications":{"toolsListChanged":true}`))
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
	req.Header = http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"},
		"Mcp-Protocol-Version": {mcp.ProtocolVersion20260728}, "Mcp-Method": {"subscriptions/listen"}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	r := modernPost(t, ts.URL, "subscriptions/listen", "", call(2, "subscriptions/listen", withMeta(`"notifications":{}`)), nil)
	if r.errCode() != -32010 {
		t.Fatalf("second listen: %d %v", r.status, r.msgs)
	}
}
