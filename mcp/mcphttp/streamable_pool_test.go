package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// keptStore is an EventStore that remembers the bytes it was given, as
// given (not copied), next to a copy, so that a test can tell whether the
// handler reused the memory of an event the store keeps.
type keptStore struct {
	eventstore.Memory
	mu   sync.Mutex
	kept [][2][]byte // as given, and a copy made then
}

func (s *keptStore) Append(ctx context.Context, sessionID, streamID string, seq int64, data []byte) error {
	s.mu.Lock()
	s.kept = append(s.kept, [2][]byte{data, bytes.Clone(data)})
	s.mu.Unlock()
	return s.Memory.Append(ctx, sessionID, streamID, seq, data)
}

// TestStreamablePooledAnswers serves many concurrent tools/call of echo
// tools, with texts of different sizes, in every answering mode: each
// answer must carry its own text, whatever buffers were reused for the
// others, and the events kept for resumption must never change.
func TestStreamablePooledAnswers(t *testing.T) {
	modes := []struct {
		name  string
		opts  Options
		tool  string // the tool called
		event bool   // the answer is an SSE stream
	}{
		{name: "JSON", opts: Options{JSONResponse: true}, tool: "echo"},
		{name: "JSON upgraded to SSE", opts: Options{JSONResponse: true}, tool: "chatty", event: true},
		{name: "SSE", tool: "echo", event: true},
		{name: "SSE chatty", tool: "chatty", event: true},
		{name: "stateless JSON", opts: Options{JSONResponse: true, Stateless: true}, tool: "echo"},
		{name: "stateless SSE", opts: Options{Stateless: true}, tool: "chatty", event: true},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv := echoServer(t, true)
			err := mcp.AddTool(srv, &mcp.Tool{Name: "chatty", InputSchema: json.RawMessage(echoSchemaText)},
				func(ctx context.Context, ss *mcp.ServerSession, _ *mcp.CallToolRequestParams, in largeEchoArgs) (*mcp.CallToolResult, any, error) {
					// A notification before the result makes the answer SSE.
					if err := ss.Notify(ctx, "notifications/test", map[string]int{"n": len(in.Text)}); err != nil {
						return nil, nil, err
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
				})
			if err != nil {
				t.Fatal(err)
			}
			store := &keptStore{Memory: eventstore.Memory{MaxBytesPerSession: 64 << 20}}
			opts := mode.opts
			opts.EventStore = store
			opts.MaxBodyBytes = 8 << 20
			h := NewHandler(func(*http.Request) *mcp.Server { return srv }, &opts)
			ts := httptest.NewServer(h)
			defer ts.Close()
			defer h.Close()

			post := func(body, sid string) (*http.Response, error) {
				req, err := http.NewRequest("POST", ts.URL, strings.NewReader(body))
				if err != nil {
					return nil, err
				}
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
				if sid != "" {
					req.Header.Set("Mcp-Session-Id", sid)
				}
				return ts.Client().Do(req)
			}
			sid := ""
			if !mode.opts.Stateless {
				resp, err := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				sid = resp.Header.Get("Mcp-Session-Id")
				resp, err = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}

			sizes := []int{1, 100, 5000, 70 << 10, 1 << 20, 5 << 20} // the last over maxPooledBuf
			const rounds = 2
			var wg sync.WaitGroup
			for i := range rounds * len(sizes) {
				wg.Go(func() {
					n := sizes[i%len(sizes)]
					// Each call's text differs from every other's.
					text := fmt.Sprintf("call %d:", i) + largeText(n)
					body := strings.Replace(echoCallBody(i+1, text), `"name":"echo"`, `"name":"`+mode.tool+`"`, 1)
					resp, err := post(body, sid)
					if err != nil {
						t.Error(err)
						return
					}
					defer resp.Body.Close()
					raw, err := io.ReadAll(resp.Body)
					if err != nil {
						t.Error(err)
						return
					}
					if resp.StatusCode != http.StatusOK {
						t.Errorf("call %d: status %d: %.200s", i, resp.StatusCode, raw)
						return
					}
					if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") != mode.event {
						t.Errorf("call %d: Content-Type %q", i, ct)
					}
					if !mode.event {
						if cl := resp.Header.Get("Content-Length"); len(raw) > 2048 && cl != fmt.Sprint(len(raw)) {
							t.Errorf("call %d: Content-Length %q for %d bytes", i, cl, len(raw))
						}
					}
					if got := answerText(t, raw, mode.event); got != text {
						t.Errorf("call %d: answer text of %d bytes (%.40q), want %d bytes (%.40q)", i, len(got), got, len(text), text)
					}
				})
			}
			wg.Wait()
			store.mu.Lock()
			defer store.mu.Unlock()
			for i, k := range store.kept {
				if !bytes.Equal(k[0], k[1]) {
					t.Errorf("event %d changed after it was kept: %.60q, was %.60q", i, k[0], k[1])
				}
			}
		})
	}
}

// answerText returns the text of the tools/call result in an answer: a
// JSON response, or the response among the events of an SSE stream.
func answerText(t *testing.T, raw []byte, sse bool) string {
	t.Helper()
	msgs := [][]byte{raw}
	if sse {
		msgs = nil
		for _, line := range bytes.Split(raw, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && len(d) > 0 {
				msgs = append(msgs, d)
			}
		}
	}
	for _, m := range msgs {
		var r struct {
			Result *struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal(m, &r); err != nil {
			t.Errorf("answer: %v: %.100q", err, m)
			return ""
		}
		if r.Result != nil && len(r.Result.Content) == 1 {
			return r.Result.Content[0].Text
		}
	}
	t.Errorf("no result in the answer %.200q", raw)
	return ""
}

// TestSSEEventBytes checks that an event is written with the same bytes
// whether its data is copied after its fields or written from where it is.
func TestSSEEventBytes(t *testing.T) {
	big := largeText(directEventMin + 10)
	tests := []struct {
		name   string
		stream string
		seq    int64
		data   string
	}{
		{name: "small", data: `{"a":1}`},
		{name: "small with id", stream: "s1", seq: 3, data: `{"a":1}`},
		{name: "large", data: big},
		{name: "large with id", stream: "s1", seq: 42, data: big},
		{name: "large on two lines", stream: "s1", seq: 7, data: big + "\n" + big},
		{name: "large with CRLF", data: big + "\r\n" + big},
		{name: "at the threshold", data: big[:directEventMin]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []byte
			if tt.seq > 0 && tt.stream != "" {
				want = append(want, "id: "...)
				want = formatEventID(want, tt.stream, tt.seq)
				want = append(want, '\n')
			}
			want = appendSSEEvent(want, "", "", 0, []byte(tt.data))
			rec := httptest.NewRecorder()
			c := &sseConn{w: rec}
			c.event(tt.stream, tt.seq, []byte(tt.data))
			c.event(tt.stream, tt.seq, []byte(tt.data))
			if got := rec.Body.Bytes(); !bytes.Equal(got, append(bytes.Clone(want), want...)) {
				t.Errorf("wrote %d bytes %.80q…, want twice %d bytes %.80q…", len(got), got, len(want), want)
			}
			if c.sent != 2 || c.lastSeq != tt.seq {
				t.Errorf("sent %d, lastSeq %d; want 2, %d", c.sent, c.lastSeq, tt.seq)
			}
		})
	}
}
