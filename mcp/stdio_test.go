package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// The test binary doubles as the child processes of the stdio tests: with
// MCPSTACK_TEST_CHILD set it runs as a server (or a bare echo) over its
// standard input and output instead of running tests.
func TestMain(m *testing.M) {
	switch os.Getenv("MCPSTACK_TEST_CHILD") {
	case "server":
		runChildServer()
		os.Exit(0)
	case "echo":
		runBareEcho()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const childMaxMessage = 1 << 16

func newTestServer(logger *slog.Logger) *Server {
	s := NewServer(&Implementation{Name: "test-server", Version: "1.0.0"}, &ServerOptions{Logger: logger, Instructions: "test server"})
	s.AddTool(&Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
			var args struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(p.Arguments, &args); err != nil {
				return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %v", err)
			}
			return &CallToolResult{Content: []Content{&TextContent{Text: args.Text}}}, nil
		})
	s.AddTool(&Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, ss *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
			return nil, errors.New("database password is hunter2")
		})
	return s
}

func runChildServer() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := newTestServer(logger)
	if err := s.Run(context.Background(), &StdioTransport{MaxMessageSize: childMaxMessage}); err != nil {
		logger.Error("server", "error", err)
		os.Exit(1)
	}
}

// runBareEcho writes back every line it reads: the floor a stdio round
// trip cannot beat.
func runBareEcho() {
	r := bufio.NewReader(os.Stdin)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := os.Stdout.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func childCommand(t testing.TB, mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MCPSTACK_TEST_CHILD="+mode)
	cmd.Stderr = io.Discard
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	return cmd
}

// rawChild talks to a child server line by line.
type rawChild struct {
	t     *testing.T
	stdin io.WriteCloser
	out   *bufio.Reader
	cmd   *exec.Cmd
}

func startRawChild(t *testing.T) *rawChild {
	cmd := childCommand(t, "server")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &rawChild{t: t, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20), cmd: cmd}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("child did not exit after stdin closed")
		}
	})
	return c
}

func (c *rawChild) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// recv reads one line and decodes it as a generic message.
func (c *rawChild) recv() map[string]json.RawMessage {
	c.t.Helper()
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := c.out.ReadString('\n')
		ch <- result{line, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			c.t.Fatalf("read from child: %v", r.err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.line), &m); err != nil {
			c.t.Fatalf("child wrote a non-JSON line %q: %v", r.line, err)
		}
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("timed out waiting for the child")
	}
	return nil
}

func (c *rawChild) expectPing(id int) {
	c.t.Helper()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`, id))
	m := c.recv()
	if string(m["id"]) != fmt.Sprintf(`"ping-%d"`, id) || string(m["result"]) != "{}" {
		c.t.Fatalf("ping not answered properly: %v", m)
	}
}

func (c *rawChild) initialize(version string) {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	m := c.recv()
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(m["result"], &res); err != nil || res.ProtocolVersion != version {
		c.t.Fatalf("initialize: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

type errCase struct {
	name string
	line string
	code int64
	id   string // the exact JSON of the expected id; "" means absent
}

func (c *rawChild) check(tt errCase) {
	c.t.Helper()
	c.send(tt.line)
	m := c.recv()
	var e struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(m["error"], &e); err != nil {
		c.t.Fatalf("%s: not an error response: %v", tt.name, m)
	}
	if e.Code != tt.code {
		c.t.Errorf("%s: code %d (%s), want %d", tt.name, e.Code, e.Message, tt.code)
	}
	if got := string(m["id"]); got != tt.id {
		c.t.Errorf("%s: id %q, want %q", tt.name, got, tt.id)
	}
	if _, ok := m["result"]; ok {
		c.t.Errorf("%s: response has both error and result", tt.name)
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		c.t.Errorf("%s: jsonrpc member %s", tt.name, m["jsonrpc"])
	}
}

// TestStdioMalformedInput runs every malformed-input rule against a real
// child process over stdio, and checks after each one that the connection
// still answers ping.
func TestStdioMalformedInput(t *testing.T) {
	c := startRawChild(t)

	// Before initialization only ping and initialize are served.
	c.expectPing(0)
	c.check(errCase{"request before initialize", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, `1`})
	c.check(errCase{"initialize with bad params", `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":5}}`, jsonrpc.CodeInvalidParams, `2`})
	c.initialize(ProtocolVersion20251125)

	tests := []errCase{
		{"not JSON", `this is not json`, jsonrpc.CodeParseError, ``},
		{"truncated object", `{"jsonrpc":"2.0","id":3,"method":"ping"`, jsonrpc.CodeParseError, ``},
		{"trailing garbage", `{"jsonrpc":"2.0","id":4,"method":"ping"}}`, jsonrpc.CodeParseError, ``},
		{"bare string", `"ping"`, jsonrpc.CodeInvalidRequest, ``},
		{"bare number", `42`, jsonrpc.CodeInvalidRequest, ``},
		{"empty object", `{}`, jsonrpc.CodeInvalidRequest, ``},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"a","method":"ping"}`, jsonrpc.CodeInvalidRequest, `"a"`},
		{"jsonrpc missing", `{"id":"b","method":"ping"}`, jsonrpc.CodeInvalidRequest, `"b"`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc.CodeInvalidRequest, ``},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, jsonrpc.CodeInvalidRequest, ``},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, jsonrpc.CodeInvalidRequest, ``},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, jsonrpc.CodeInvalidRequest, ``},
		{"array id", `{"jsonrpc":"2.0","id":[5],"method":"ping"}`, jsonrpc.CodeInvalidRequest, ``},
		{"method not a string", `{"jsonrpc":"2.0","id":5,"method":7}`, jsonrpc.CodeInvalidRequest, `5`},
		{"params an array", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[]}`, jsonrpc.CodeInvalidRequest, `6`},
		{"params a string", `{"jsonrpc":"2.0","id":"6s","method":"tools/list","params":"x"}`, jsonrpc.CodeInvalidRequest, `"6s"`},
		{"duplicate member", `{"jsonrpc":"2.0","id":7,"method":"ping","method":"x"}`, jsonrpc.CodeInvalidRequest, `7`},
		{"unknown method", `{"jsonrpc":"2.0","id":8,"method":"no/such/method"}`, jsonrpc.CodeMethodNotFound, `8`},
		{"unknown method, string id", `{"jsonrpc":"2.0","id":"8","method":"no/such/method"}`, jsonrpc.CodeMethodNotFound, `"8"`},
		{"bad params type", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":5}}`, jsonrpc.CodeInvalidParams, `9`},
		{"unknown tool", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"nope"}}`, jsonrpc.CodeInvalidParams, `10`},
		{"handler failure", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"fail","arguments":{}}}`, jsonrpc.CodeInternalError, `11`},
		{"second initialize", `{"jsonrpc":"2.0","id":12,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, jsonrpc.CodeInvalidRequest, `12`},
		{"reused id", `{"jsonrpc":"2.0","id":8,"method":"ping"}`, jsonrpc.CodeInvalidRequest, `8`},
		{"batch in a 2025-11-25 session", `[{"jsonrpc":"2.0","id":13,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, ``},
		{"empty batch", `[]`, jsonrpc.CodeInvalidRequest, ``},
		{"result without id", `{"jsonrpc":"2.0","result":{}}`, jsonrpc.CodeInvalidRequest, ``},
		{"over the size limit", `{"jsonrpc":"2.0","id":14,"method":"ping","params":{"x":"` + strings.Repeat("a", childMaxMessage) + `"}}`, jsonrpc.CodeInvalidRequest, ``},
	}
	for i, tt := range tests {
		c.check(tt)
		c.expectPing(i + 1)
	}

	// The handler failure does not leak its detail.
	c.send(`{"jsonrpc":"2.0","id":"leak","method":"tools/call","params":{"name":"fail","arguments":{}}}`)
	if m := c.recv(); strings.Contains(string(m["error"]), "hunter2") {
		t.Errorf("internal detail leaked: %s", m["error"])
	}

	// Notifications are never answered, known or not: the next line the
	// child writes is the ping's answer.
	c.send(`{"jsonrpc":"2.0","method":"no/such/notification"}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":"bad"}}`)
	c.expectPing(100)

	// A response to nothing is dropped.
	c.send(`{"jsonrpc":"2.0","id":424242,"result":{}}`)
	c.expectPing(101)

	// Ids keep their kind: "20" and 20 are different ids.
	c.send(`{"jsonrpc":"2.0","id":"20","method":"ping"}`)
	if m := c.recv(); string(m["id"]) != `"20"` {
		t.Fatalf(`string id echoed as %s`, m["id"])
	}
	c.send(`{"jsonrpc":"2.0","id":20,"method":"ping"}`)
	if m := c.recv(); string(m["id"]) != `20` || m["error"] != nil {
		t.Fatalf(`integer id: %v`, m)
	}
}

// TestStdioBatch2025_03_26 checks that a session at 2025-03-26 processes
// batches as JSON-RPC 2.0 says.
func TestStdioBatch2025_03_26(t *testing.T) {
	c := startRawChild(t)
	c.initialize(ProtocolVersion20250326)
	c.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"no/such"},3]`)
	line, err := c.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var batch []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &batch); err != nil {
		t.Fatalf("batch answer %q: %v", line, err)
	}
	if len(batch) != 3 {
		t.Fatalf("got %d responses, want 3: %s", len(batch), line)
	}
	ids := map[string]string{}
	for _, r := range batch {
		ids[string(r["id"])] = string(r["result"]) + string(r["error"])
	}
	if ids["1"] != "{}" || !strings.Contains(ids["2"], "-32601") || !strings.Contains(ids[""], "-32600") {
		t.Fatalf("batch answers: %v", ids)
	}
	c.expectPing(1)
}

// TestStdioClientServer connects our client to our server in a child
// process and shuts it down by closing its stdin.
func TestStdioClientServer(t *testing.T) {
	ctx := context.Background()
	client := NewClient(&Implementation{Name: "test-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &CommandTransport{Command: childCommand(t, "server")})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.ProtocolVersion(); got != LatestProtocolVersion {
		t.Errorf("negotiated %q", got)
	}
	if r := cs.InitializeResult(); r.ServerInfo.Name != "test-server" || r.Instructions != "test server" {
		t.Errorf("initialize result: %+v", r)
	}
	if err := cs.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].(*TextContent).Text != "hello" {
		t.Fatalf("echo: %+v", res)
	}
	start := time.Now()
	if err := cs.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("the child needed a signal to exit after stdin closed")
	}
}

// TestCommandTransportEscalates checks the shutdown ladder on a child that
// ignores its closed stdin: SIGTERM follows.
func TestCommandTransportEscalates(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap "exit 7" TERM; while true; do sleep 0.05; done`)
	tr := &CommandTransport{Command: cmd, TerminateTimeout: time.Second} // room for a loaded machine to run the trap
	s, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if cmd.ProcessState == nil {
		t.Fatal("process not reaped")
	}
	if ws := cmd.ProcessState.ExitCode(); ws != 7 {
		t.Fatalf("exit code %d: SIGTERM was not delivered", ws)
	}
}

// BenchmarkStdioPing is a ping round trip through a child process, with a
// context that cannot end: the calling goroutine reads its own response.
// Issue 3's target is within 1.25x of BenchmarkStdioBareEcho; compare them
// by running the test binary alternately, several times, with
// -test.bench 'StdioPing$|StdioBareEcho$', and taking medians.
func BenchmarkStdioPing(b *testing.B) {
	benchStdioPing(b, context.Background(), nil)
}

// benchStdioPing pings a child server over stdio with ctx, from a client
// made with opts.
func benchStdioPing(b *testing.B, ctx context.Context, opts *ClientOptions) {
	client := NewClient(&Implementation{Name: "bench", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &CommandTransport{Command: childCommand(b, "server")})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := cs.Ping(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdioBareEcho is the floor for BenchmarkStdioPing: the same
// pipes and child, one line out and one line back, no JSON-RPC.
func BenchmarkStdioBareEcho(b *testing.B) {
	cmd := childCommand(b, "echo")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	r := bufio.NewReader(stdout)
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := stdin.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStdioPipelinedInitialize sends initialize, initialized and a request
// in one write, without waiting: each must see the one before it.
func TestStdioPipelinedInitialize(t *testing.T) {
	c := startRawChild(t)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := c.recv(); string(m["id"]) != "1" || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	if m := c.recv(); string(m["id"]) != "2" || m["result"] == nil {
		t.Fatalf("tools/list right after initialize: %s", m["error"])
	}
}

// TestCommandTransportOnExit checks that OnExit reports the child's exit
// status, so that a caller can say why the server went away.
func TestCommandTransportOnExit(t *testing.T) {
	for _, tc := range []struct {
		script string
		code   int // -1: nil error
	}{
		{"exit 3", 3},
		{"exit 0", -1},
	} {
		got := make(chan error, 2)
		tr := &CommandTransport{Command: exec.Command("sh", "-c", tc.script), OnExit: func(err error) { got <- err }}
		s, err := tr.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		err = <-got
		var ee *exec.ExitError
		switch {
		case tc.code < 0 && err != nil:
			t.Errorf("%s: OnExit(%v), want nil", tc.script, err)
		case tc.code >= 0 && (!errors.As(err, &ee) || ee.ExitCode() != tc.code):
			t.Errorf("%s: OnExit(%v), want exit status %d", tc.script, err, tc.code)
		}
		if len(got) != 0 {
			t.Errorf("%s: OnExit called more than once", tc.script)
		}
	}
}
