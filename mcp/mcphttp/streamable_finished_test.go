package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

// tsLikeResumes replays what the TypeScript SDK's Streamable HTTP client
// (1.x, StreamableHTTPClientTransport: _handleSseStream,
// _scheduleReconnection, _startOrAuthSse) does once an SSE stream that
// carried an event id closes: it GETs the stream again with Last-Event-ID;
// a 2xx answer is read as a stream and, when it closes, resumed again from
// attempt 0; 405 ends the reconnection without error; any other status
// counts as a failed attempt, retried until maxRetries (2) attempts have
// failed. The delays (the server's retry field, else a backoff) are left
// out. It returns the number of GETs, giving up at limit.
func tsLikeResumes(t *testing.T, url, sid, version, lastID string, limit int) int {
	t.Helper()
	const maxRetries = 2
	gets, failed := 0, 0
	for gets < limit {
		gets++
		r := rawDo(t, http.MethodGet, url, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version, "Last-Event-ID": lastID}, "")
		switch {
		case r.status == http.StatusMethodNotAllowed:
			return gets
		case r.status < 200 || r.status > 299:
			failed++
			if failed >= maxRetries {
				return gets
			}
		default:
			for _, ev := range sseEvents(t, r.body) {
				if ev.id != "" {
					lastID = ev.id
				}
			}
			failed = 0
		}
	}
	return gets
}

// TestStreamableResumeFinishedStream checks that a client resuming a POST's
// stream after it ended, as the TypeScript SDK's client does after every
// SSE answer, stops within two GETs: the stream's end is answered with 405,
// not with an empty stream that the client takes for a dropped connection
// (issue 16 item 14).
func TestStreamableResumeFinishedStream(t *testing.T) {
	const version = mcp.ProtocolVersion20251125
	release := make(chan struct{})
	defer close(release)
	h, ts := serve(t, toolServer(t, release), nil)
	call := func(t *testing.T, sid, body string) []sseEvent {
		r := rawDo(t, http.MethodPost, ts.URL, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version}, body)
		if r.status != http.StatusOK {
			t.Fatalf("POST: %d %s", r.status, r.body)
		}
		return sseEvents(t, r.body)
	}
	tests := []struct {
		name string
		// run makes a stream end and returns the last event id the client
		// received on it.
		run     func(t *testing.T, sid string) string
		maxGets int
	}{
		{"answered", func(t *testing.T, sid string) string {
			evs := call(t, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
			return evs[len(evs)-1].id
		}, 1},
		{"error answer", func(t *testing.T, sid string) string {
			evs := call(t, sid, `{"jsonrpc":"2.0","id":8,"method":"no/such/method"}`)
			return evs[len(evs)-1].id
		}, 1},
		{"answer missed", func(t *testing.T, sid string) string {
			evs := call(t, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
			return evs[0].id // the priming event only: the replay has the answer
		}, 2},
		{"cancelled", func(t *testing.T, sid string) string {
			ch := rawAsync(http.MethodPost, ts.URL, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version},
				`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
			eventually(t, "the call is in flight", func() bool { return h.exchanges.Load() > 0 })
			rawDo(t, http.MethodPost, ts.URL, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version},
				`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":10}}`)
			r := <-ch
			if r.err != nil || r.status != http.StatusOK {
				t.Fatalf("POST: %v %d %s", r.err, r.status, r.body)
			}
			evs := sseEvents(t, r.body)
			if len(evs) == 0 {
				t.Fatal("no priming event")
			}
			return evs[len(evs)-1].id
		}, 2}, // no event was kept: the store cannot tell this stream from a lost one (400, retried once)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sid := rawInit(t, ts.URL, version)
			last := tt.run(t, sid)
			if last == "" {
				t.Fatal("the stream carried no event id")
			}
			if n := tsLikeResumes(t, ts.URL, sid, version, last, 10); n > tt.maxGets {
				t.Errorf("%d GETs to resume a finished stream, want at most %d", n, tt.maxGets)
			}
		})
	}
}

// TestStreamableResumeFinishedStreamTypeScript runs the TypeScript SDK's
// client itself (testdata/ts/count_resumes.mjs) when MCPSTACK_TS_SDK_DIR
// names a directory where @modelcontextprotocol/sdk is installed (npm
// install @modelcontextprotocol/sdk@1.32.2 there) and node is on PATH;
// it is skipped otherwise. Each finished stream may be resumed at most
// twice (issue 16 item 14).
func TestStreamableResumeFinishedStreamTypeScript(t *testing.T) {
	dir := os.Getenv("MCPSTACK_TS_SDK_DIR")
	node, err := exec.LookPath("node")
	if dir == "" || err != nil {
		t.Skip("set MCPSTACK_TS_SDK_DIR to a directory with @modelcontextprotocol/sdk installed, and put node on PATH")
	}
	release := make(chan struct{})
	defer close(release)
	_, ts := serve(t, toolServer(t, release), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "testdata/ts/count_resumes.mjs", ts.URL, "6000")
	cmd.Env = append(os.Environ(), "TS_SDK_DIR="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var res struct{ Gets []string }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	perStream := map[string]int{}
	for _, g := range res.Gets {
		stream, _, _ := parseEventID(strings.Fields(g)[0])
		perStream[stream]++
	}
	t.Logf("GETs with Last-Event-ID: %v", res.Gets)
	for stream, n := range perStream {
		if n > 2 {
			t.Errorf("stream %s resumed %d times, want at most 2", stream, n)
		}
	}
}
