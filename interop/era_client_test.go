package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// Protocol revisions the era tests expect.
const (
	modernVersion = "2026-07-28"
	legacyVersion = "2025-11-25"
)

// eraSeen is what our server's echo tool saw of one tools/call: the era
// the server served it in (mcp.EraFromContext) and, on the modern leg, the
// request's own _meta.
type eraSeen struct {
	Tool    string `json:"tool"` // echo, or ask (one record per round)
	Text    string `json:"text"`
	Era     string `json:"era"`
	Version string `json:"version"` // _meta protocolVersion; "" on the legacy leg
	Client  string `json:"client"`  // _meta clientInfo.name; "" on the legacy leg
}

// eraLog collects what the server saw; in a stdio child it also appends
// each record to a file, which the test reads back.
type eraLog struct {
	mu   sync.Mutex
	seen []eraSeen
	file string
}

func (l *eraLog) add(s eraSeen) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, s)
	if l.file == "" {
		return
	}
	b, _ := json.Marshal(s)
	f, err := os.OpenFile(l.file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(b, '\n'))
}

func (l *eraLog) all() []eraSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// eraServer is the mcpstack server of the era tests: echo returns its
// text and records the era it was served in; add is there so that
// tools/list has more than one tool. One server serves both eras, or,
// with legacyOnly (ServerOptions.DisableModern), 2025-11-25 alone.
func eraServer(log *eraLog, legacyOnly bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpstack-era", Version: "1.0.0"}, &mcp.ServerOptions{DisableModern: legacyOnly})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes"},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams, in echoIn) (*mcp.CallToolResult, any, error) {
			log.add(seenBy(ctx, "echo", in.Text))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	// ask asks the user's name (a form elicitation), written once for both
	// eras: in a 2025-11-25 session the ask is an elicitation/create
	// request to the client; in a 2026-07-28 request the first round ends
	// with an InputRequiredResult and the client's retry carries the
	// answer (MRTR), so the handler runs twice.
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "asks the user's name"},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams, in struct{}) (*mcp.CallToolResult, any, error) {
			log.add(seenBy(ctx, "ask", ""))
			res, err := ss.Ask(ctx, mcp.InputRequests{
				"name": mcp.ElicitInput(&mcp.ElicitRequestFormParams{
					Message: "What is your name?",
					RequestedSchema: mcp.RequestedSchema{
						Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{}},
						Required:   []string{"name"},
					},
				}),
			})
			if err != nil {
				return nil, nil, err // in a 2026-07-28 request: mcp.ErrInputRequired
			}
			name, _ := res.Elicit("name").Content["name"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + name}}}, nil, nil
		})
	type addIn struct{ A, B int }
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "adds"},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams, in addIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil, nil
		})
	return s
}

// seenBy is what a tool handler of eraServer records of its request.
func seenBy(ctx context.Context, tool, text string) eraSeen {
	seen := eraSeen{Tool: tool, Text: text, Era: "legacy"}
	if mcp.EraFromContext(ctx) == mcp.EraModern {
		seen.Era = "modern"
	}
	if m := mcp.RequestMetaFromContext(ctx); m != nil {
		seen.Version = m.ProtocolVersion
		if m.ClientInfo != nil {
			seen.Client = m.ClientInfo.Name
		}
	}
	return seen
}

// runEraChild serves eraServer on stdio, in the test binary started again
// with INTEROP_CHILD=mcpstack-era; INTEROP_ERA_LOG names the file it
// records what it saw in, INTEROP_ERA_LEGACY=1 makes it legacy-only.
func runEraChild() error {
	log := &eraLog{file: os.Getenv("INTEROP_ERA_LOG")}
	return eraServer(log, os.Getenv("INTEROP_ERA_LEGACY") == "1").Run(context.Background(), &mcp.StdioTransport{})
}

// eraPost is one POST our HTTP endpoint received: the JSON-RPC method of
// its body and the headers that carry the era.
type eraPost struct {
	Method          string // from the body
	ProtocolVersion string // MCP-Protocol-Version
	McpMethod       string // Mcp-Method
	McpName         string // Mcp-Name
	SessionID       string // Mcp-Session-Id
}

// eraEndpoint is our Streamable HTTP endpoint with a recorder of the
// POSTs it receives in front of it.
type eraEndpoint struct {
	URL   string
	log   eraLog
	mu    sync.Mutex
	posts []eraPost
}

func startEraEndpoint(t *testing.T, legacyOnly bool) *eraEndpoint {
	e := &eraEndpoint{}
	srv := eraServer(&e.log, legacyOnly)
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			var m struct{ Method string }
			json.Unmarshal(b, &m) // a batch or a response leaves Method empty
			e.mu.Lock()
			e.posts = append(e.posts, eraPost{
				Method: m.Method, ProtocolVersion: r.Header.Get("MCP-Protocol-Version"),
				McpMethod: r.Header.Get("Mcp-Method"), McpName: r.Header.Get("Mcp-Name"),
				SessionID: r.Header.Get("Mcp-Session-Id"),
			})
			e.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	e.URL = ts.URL
	t.Cleanup(func() { ts.Close(); h.Close() })
	return e
}

func (e *eraEndpoint) requests() []eraPost {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.posts)
}

// clientReport is what a client says it did: the era and revision it
// settled on, the tools it listed and the text echo returned.
type clientReport struct {
	Era             string   `json:"era"`
	ProtocolVersion string   `json:"protocolVersion"`
	Tools           []string `json:"tools"`
	Text            string   `json:"text"`
	Asked           string   `json:"asked"` // what ask returned
	ServerName      string   `json:"serverName"`
	Error           string   `json:"error"`
}

// eraClientRun runs one client against target ("stdio" for a child of
// this binary, else an HTTP URL), with text as echo's argument.
type eraClientRun func(t *testing.T, ctx context.Context, target, text string, child *exec.Cmd) clientReport

// goSDKEraClient returns the go-sdk v1.8.0 client, at protocolVersion
// ("" for the client's default: it probes server/discover at 2026-07-28
// first and falls back to initialize).
func goSDKEraClient(protocolVersion string) eraClientRun {
	return func(t *testing.T, ctx context.Context, target, text string, child *exec.Cmd) clientReport {
		client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-era-client", Version: "1.8.0"}, &sdk.ClientOptions{
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			},
		})
		var tr sdk.Transport = &sdk.StreamableClientTransport{Endpoint: target, MaxRetries: -1}
		if target == "stdio" {
			tr = &sdk.CommandTransport{Command: child}
		}
		var opts *sdk.ClientSessionOptions
		if protocolVersion != "" {
			opts = &sdk.ClientSessionOptions{ProtocolVersion: protocolVersion}
		}
		cs, err := client.Connect(ctx, tr, opts)
		if err != nil {
			return clientReport{Error: "connect: " + err.Error()}
		}
		defer cs.Close()
		rep := clientReport{ProtocolVersion: cs.InitializeResult().ProtocolVersion, Era: "legacy"}
		if rep.ProtocolVersion >= modernVersion {
			rep.Era = "modern"
		}
		if si := cs.InitializeResult().ServerInfo; si != nil {
			rep.ServerName = si.Name
		}
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return clientReport{Error: "tools/list: " + err.Error()}
		}
		for _, tool := range tools.Tools {
			rep.Tools = append(rep.Tools, tool.Name)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil {
			return clientReport{Error: "tools/call: " + err.Error()}
		}
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				rep.Text += tc.Text
			}
		}
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask", Arguments: map[string]any{}})
		if err != nil {
			return clientReport{Error: "tools/call ask: " + err.Error()}
		}
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				rep.Asked += tc.Text
			}
		}
		return rep
	}
}

// tsEraClient returns the TypeScript SDK client sdkVersion ("v2": the
// @modelcontextprotocol/client 2.4.0 package; "v1": @modelcontextprotocol/sdk
// 1.32.2) in the given versionNegotiation mode, run by node/era-client.mjs.
func tsEraClient(sdkVersion, mode string) eraClientRun {
	pkg := map[string]string{"v1": "@modelcontextprotocol/sdk", "v2": "@modelcontextprotocol/client"}[sdkVersion]
	return func(t *testing.T, ctx context.Context, target, text string, child *exec.Cmd) clientReport {
		bin := node(t, pkg)
		script, err := filepath.Abs(filepath.Join(nodeDir, "era-client.mjs"))
		if err != nil {
			t.Fatal(err)
		}
		args := []string{script, sdkVersion, mode, target}
		env := append(os.Environ(), "TEXT="+text)
		if target == "stdio" {
			args = append(args, child.Args...)
			args[len(args)-len(child.Args)] = child.Path
			env = append(env, child.Env...)
		}
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var rep clientReport
		if jerr := json.Unmarshal(lastLine(out), &rep); jerr != nil {
			return clientReport{Error: fmt.Sprintf("era-client.mjs: %v (%v); stdout %q; stderr:\n%s", err, jerr, out, stderr.String())}
		}
		if err != nil && rep.Error == "" {
			rep.Error = fmt.Sprintf("era-client.mjs: %v; stderr:\n%s", err, stderr.String())
		}
		return rep
	}
}

// lastLine returns the last non-empty line of b.
func lastLine(b []byte) []byte {
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			last = slices.Clone(l)
		}
	}
	return last
}

// TestClientsAgainstOurServerEras runs other implementations' clients
// against our server, which serves both protocol eras on one endpoint (and
// on stdio): the go-sdk v1.8.0 client in its default mode (it probes
// server/discover at 2026-07-28 first) and pinned to 2025-11-25; the
// TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0) with
// versionNegotiation mode 'auto' and 'legacy'; the TypeScript SDK 1.32.2
// client (2025 era only). Each lists the tools and calls echo, and the
// era is checked on both sides: the client's own verdict, what our echo
// handler saw (mcp.EraFromContext and the request's _meta), and over HTTP
// the requests themselves (a modern client never sends initialize, and its
// tools/call carries MCP-Protocol-Version 2026-07-28, Mcp-Method and
// Mcp-Name and no session; a legacy one initializes and carries its
// session id). Against the same server made legacy-only
// (ServerOptions.DisableModern) every client ends in 2025-11-25: the
// probing ones take the answer to their server/discover as a legacy
// server's and initialize on the same connection.
func TestClientsAgainstOurServerEras(t *testing.T) {
	type tcase struct {
		name   string
		client eraClientRun
		era    string // "modern" or "legacy"
		// clientName is the clientInfo name a modern client sends.
		clientName string
	}
	clients := []tcase{
		{"go-sdk-v1.8.0/default", goSDKEraClient(""), "modern", "go-sdk-era-client"},
		{"go-sdk-v1.8.0/2025-11-25", goSDKEraClient(legacyVersion), "legacy", ""},
		{"ts-client-2.4.0/auto", tsEraClient("v2", "auto"), "modern", "ts-v2-era-client"},
		{"ts-client-2.4.0/legacy", tsEraClient("v2", "legacy"), "legacy", ""},
		{"ts-sdk-1.32.2/legacy", tsEraClient("v1", "legacy"), "legacy", ""},
	}
	for _, server := range []string{"dual", "legacy-only"} {
		legacyOnly := server == "legacy-only"
		for _, transport := range []string{"http", "stdio"} {
			for _, tc := range clients {
				if legacyOnly {
					tc.era, tc.clientName = "legacy", ""
				}
				t.Run(server+"/"+transport+"/"+tc.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					text := "era " + transport + " " + tc.name
					var (
						rep  clientReport
						seen []eraSeen
						ep   *eraEndpoint
					)
					if transport == "http" {
						ep = startEraEndpoint(t, legacyOnly)
						rep = tc.client(t, ctx, ep.URL, text, nil)
						seen = ep.log.all()
					} else {
						logFile := filepath.Join(t.TempDir(), "seen.jsonl")
						cmd := child("mcpstack-era")
						if exe, err := os.Executable(); err == nil {
							cmd.Path, cmd.Args[0] = exe, exe
						}
						cmd.Env = append(cmd.Env, "INTEROP_ERA_LOG="+logFile)
						if legacyOnly {
							cmd.Env = append(cmd.Env, "INTEROP_ERA_LEGACY=1")
						}
						rep = tc.client(t, ctx, "stdio", text, cmd)
						seen = readEraLog(t, logFile)
					}
					if rep.Error != "" {
						t.Fatal(rep.Error)
					}
					checkEraReport(t, rep, tc.era, text)
					checkEraSeen(t, seen, tc.era, text, tc.clientName)
					if ep != nil {
						checkEraPosts(t, ep.requests(), tc.era)
					}
				})
			}
		}
	}
}

// checkEraReport checks the client's own account.
func checkEraReport(t *testing.T, rep clientReport, era, text string) {
	t.Helper()
	want := legacyVersion
	if era == "modern" {
		want = modernVersion
	}
	if rep.Era != era || rep.ProtocolVersion != want {
		t.Errorf("the client settled on era %q at %q, want %q at %q", rep.Era, rep.ProtocolVersion, era, want)
	}
	if rep.ServerName != "mcpstack-era" {
		t.Errorf("server name %q", rep.ServerName)
	}
	slices.Sort(rep.Tools)
	if !slices.Equal(rep.Tools, []string{"add", "ask", "echo"}) {
		t.Errorf("tools/list: %v, want [add ask echo]", rep.Tools)
	}
	if rep.Text != text {
		t.Errorf("echo returned %q, want %q", rep.Text, text)
	}
	if rep.Asked != "hello Ada" {
		t.Errorf("ask returned %q, want %q (the client's elicitation answer)", rep.Asked, "hello Ada")
	}
}

// checkEraSeen checks what our tool handlers saw: one echo of text, and
// ask run once in a legacy session (its question a request to the client)
// or twice in the modern era (the first round answered input_required,
// the retry carrying the answer), every run in the expected era.
func checkEraSeen(t *testing.T, seen []eraSeen, era, text, clientName string) {
	t.Helper()
	wantAsks := 1
	if era == "modern" {
		wantAsks = 2
	}
	echoes, asks := 0, 0
	for _, s := range seen {
		switch s.Tool {
		case "echo":
			echoes++
			if s.Text != text {
				t.Errorf("echo saw %q, want %q", s.Text, text)
			}
		case "ask":
			asks++
		}
		if s.Era != era {
			t.Errorf("the server served %s in the %s era, want %s", s.Tool, s.Era, era)
		}
		if era == "modern" && (s.Version != modernVersion || s.Client != clientName) {
			t.Errorf("the modern %s call's _meta: protocolVersion %q clientInfo.name %q, want %q %q", s.Tool, s.Version, s.Client, modernVersion, clientName)
		}
	}
	if echoes != 1 || asks != wantAsks {
		t.Errorf("the server ran echo %d times and ask %d times, want 1 and %d: %+v", echoes, asks, wantAsks, seen)
	}
}

// checkEraPosts checks the HTTP requests our endpoint received.
func checkEraPosts(t *testing.T, posts []eraPost, era string) {
	t.Helper()
	var methods []string
	var call *eraPost
	for i, p := range posts {
		methods = append(methods, p.Method)
		if p.Method == "tools/call" && call == nil {
			call = &posts[i] // echo's, the first
		}
	}
	if call == nil {
		t.Fatalf("no tools/call among the POSTs %v", methods)
	}
	hasInit := slices.Contains(methods, "initialize")
	switch era {
	case "modern":
		if hasInit {
			t.Errorf("a modern client sent initialize: %v", methods)
		}
		if !slices.Contains(methods, "server/discover") {
			t.Errorf("a modern client never sent server/discover: %v", methods)
		}
		want := eraPost{Method: "tools/call", ProtocolVersion: modernVersion, McpMethod: "tools/call", McpName: "echo"}
		if *call != want {
			t.Errorf("the modern tools/call POST: %+v, want %+v", *call, want)
		}
		// ask: the first call and its retry with the answer, each a
		// tools/call POST of its own.
		asks := 0
		for _, p := range posts {
			if p.McpName == "ask" && p.Method == "tools/call" {
				asks++
			}
		}
		if asks != 2 {
			t.Errorf("%d tools/call POSTs of ask, want 2 (the call, then the retry with inputResponses): %v", asks, methods)
		}
	case "legacy":
		if !hasInit {
			t.Errorf("a legacy client never sent initialize: %v", methods)
		}
		if call.ProtocolVersion != legacyVersion || call.SessionID == "" {
			t.Errorf("the legacy tools/call POST: %+v, want MCP-Protocol-Version %s and a session id", *call, legacyVersion)
		}
	}
}

// readEraLog reads the records a stdio child wrote.
func readEraLog(t *testing.T, file string) []eraSeen {
	t.Helper()
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []eraSeen
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s eraSeen
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("era log line %q: %v", l, err)
		}
		out = append(out, s)
	}
	return out
}
