package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// TestLimitListener: at --max-connections, a new connection takes the
// place of an idle keep-alive one, or gets 503 when none is idle (issue
// #16 item 7: idle connections exhausted the descriptors).
func TestLimitListener(t *testing.T) {
	for _, tc := range []struct {
		name     string
		path     string // what the first two connections ask
		wantBusy bool   // the third is refused
	}{
		{"idle ones make room", "/fast", false},
		{"busy ones do not", "/slow", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			mux := http.NewServeMux()
			mux.HandleFunc("/fast", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "fast") })
			mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(200)
				http.NewResponseController(w).Flush()
				<-release
			})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			lim := &httpLimits{idle: time.Minute, read: time.Minute, write: time.Minute, shutdown: time.Second, maxConns: 2}
			s := newHTTPServer(ln, nil, mux, lim, slog.New(slog.DiscardHandler), nil)
			go s.hs.Serve(s.ln)
			defer s.hs.Close()
			get := func(path string) (net.Conn, *bufio.Reader) {
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
				return c, bufio.NewReader(c)
			}
			status := func(br *bufio.Reader) string {
				line, _ := br.ReadString('\n')
				return strings.TrimSpace(line)
			}
			for range 2 {
				_, br := get(tc.path)
				if got := status(br); got != "HTTP/1.1 200 OK" {
					t.Fatalf("within the limit: %q", got)
				}
			}
			if !tc.wantBusy {
				waitUntil(t, "both connections idle", func() bool {
					s.limit.mu.Lock()
					defer s.limit.mu.Unlock()
					return len(s.limit.idle) == 2
				})
			}
			_, br := get("/fast")
			got := status(br)
			if tc.wantBusy {
				if got != "HTTP/1.1 503 Service Unavailable" {
					t.Fatalf("beyond the limit, all busy: %q", got)
				}
				if _, err := io.ReadAll(br); err != nil {
					t.Fatalf("refused connection not closed cleanly: %v", err)
				}
				return
			}
			if got != "HTTP/1.1 200 OK" {
				t.Fatalf("beyond the limit, with idle ones: %q", got)
			}
			if n := s.limit.openConns(); n > 2 {
				t.Fatalf("%d connections open, over the limit of 2", n)
			}
		})
	}
}

// waitUntil polls cond until it holds, failing after a generous bound.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServeShutdown runs `mcpstack serve --addr` with a slow tool call in
// flight and sends it SIGTERM (issue #16 item 13: it cut calls after 5 s
// with nothing sent and exited 0). A call that ends within
// --shutdown-timeout gets its answer and the server exits 0; one that
// does not is cut, and the server exits 1 soon after the grace period.
func TestServeShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server for several seconds")
	}
	for _, tc := range []struct {
		name     string
		grace    string
		args     string // of count: longer than the 5 s of old
		wantCode int
		wantText string // the call's answer; "" for a failed call
	}{
		{"finishes within the grace period", "60s", `{"n":70,"interval_ms":100}`, 0, "counted to 70"},
		{"cut after the grace period", "1s", `{"n":1000,"interval_ms":100}`, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(self(t), "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", tc.grace)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			br := bufio.NewReader(stderr)
			line, err := br.ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "mcpstack serve: MCP at ") {
				t.Fatalf("serve said %q, %v", line, err)
			}
			endpoint := strings.TrimSpace(strings.TrimPrefix(line, "mcpstack serve: MCP at "))
			var rest strings.Builder
			copied := make(chan struct{})
			go func() { io.Copy(&rest, br); close(copied) }()

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			started := make(chan struct{}, 1)
			client := mcp.NewClient(&mcp.Implementation{Name: "shutdown-test", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(context.Context, *mcp.ClientSession, *mcp.ProgressNotificationParams) {
					select {
					case started <- struct{}{}:
					default:
					}
				},
			})
			cs, err := client.Connect(ctx, &mcphttp.ClientTransport{Endpoint: endpoint, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			type answer struct {
				res *mcp.CallToolResult
				err error
			}
			answered := make(chan answer, 1)
			go func() {
				p := &mcp.CallToolRequestParams{Name: "count", Arguments: json.RawMessage(tc.args)}
				p.Meta = mcp.Meta{}
				p.Meta.SetProgressToken(jsonrpc.StringID("shutdown"))
				res, err := cs.CallTool(ctx, p)
				answered <- answer{res, err}
			}()
			select {
			case <-started:
			case a := <-answered:
				t.Fatalf("the call ended before SIGTERM: %+v", a)
			}
			sent := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			took := time.Since(sent)
			<-copied
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			t.Logf("grace %s: exit %d, %s after SIGTERM; stderr %q", tc.grace, code, took.Round(time.Millisecond), rest.String())
			if code != tc.wantCode {
				t.Fatalf("exit code %d, want %d; stderr %q", code, tc.wantCode, rest.String())
			}
			a := <-answered
			if tc.wantText == "" {
				if a.err == nil {
					t.Fatalf("the cut call answered %+v", a.res)
				}
				if !strings.Contains(rest.String(), "cut") {
					t.Errorf("stderr does not say that work was cut: %q", rest.String())
				}
				return
			}
			if a.err != nil || len(a.res.Content) != 1 || a.res.Content[0].(*mcp.TextContent).Text != tc.wantText {
				t.Fatalf("the call answered %+v, %v; want %q", a.res, a.err, tc.wantText)
			}
		})
	}
}

// TestAuthserverShutdown: `mcpstack authserver` shuts down through the
// same helper: on SIGTERM with nothing in flight it exits 0, and its
// flags bound its connections.
func TestAuthserverShutdown(t *testing.T) {
	cmd := exec.Command(self(t), "authserver", "--addr", "127.0.0.1:0", "--db", ":memory:", "--dev-user", "me", "--shutdown-timeout", "30s", "--max-connections", "8", "--idle-timeout", "1s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	br := bufio.NewReader(stderr)
	line, err := br.ReadString('\n')
	const prefix = "mcpstack authserver: issuer "
	if err != nil || !strings.HasPrefix(line, prefix) {
		t.Fatalf("authserver said %q, %v", line, err)
	}
	go io.Copy(io.Discard, br)
	issuer := strings.TrimSpace(strings.TrimPrefix(line, prefix))
	resp, err := http.Get(issuer + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("metadata: %d", resp.StatusCode)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("authserver after SIGTERM: %v, want exit 0", err)
	}
}
