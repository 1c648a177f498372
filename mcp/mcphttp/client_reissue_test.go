package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

// cutServer is a modern server whose tools/call answers break: the first
// cuts answers of each tools/call are cut in the way cut names, and the
// next is complete. It records the id and arguments of every tools/call.
type cutServer struct {
	cuts int    // how many answers to cut; -1: all
	how  string // "sse-abort", "sse-eof", "json-truncated"

	mu    sync.Mutex
	calls []cutCall
}

type cutCall struct {
	ID        string
	Arguments string
	Header    string // Mcp-Method
}

func (s *cutServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &m)
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if m.Method != mcp.MethodToolsCall {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[]}}`, m.ID)
		return
	}
	s.mu.Lock()
	n := len(s.calls)
	s.calls = append(s.calls, cutCall{ID: string(m.ID), Arguments: string(m.Params.Arguments), Header: r.Header.Get(headerMcpMethod)})
	s.mu.Unlock()
	final := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":"done %d"}]}}`, m.ID, n)
	cut := s.cuts < 0 || n < s.cuts
	switch {
	case !cut:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", final)
	case s.how == "json-truncated":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(final)))
		io.WriteString(w, final[:len(final)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection drops mid-body
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`+"\n\n")
		w.(http.Flusher).Flush()
		if s.how == "sse-abort" {
			panic(http.ErrAbortHandler) // no terminating chunk: a broken stream
		}
		// sse-eof: the stream ends cleanly, without the response.
	}
}

func (s *cutServer) recorded() []cutCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]cutCall(nil), s.calls...)
}

// priorModern skips the era probe: the tests here are about requests.
var priorModern = &mcp.DiscoverResult{SupportedVersions: []string{mcp.ProtocolVersion20260728}}

// TestModernReissueOnBrokenStream checks that a modern request whose
// response stream breaks is re-issued with the same params under a new
// id, at most MaxReissues times (revision 2026-07-28 changelog item 9,
// SEP-2575), and that the caller sees one request.
func TestModernReissueOnBrokenStream(t *testing.T) {
	tests := []struct {
		name        string
		how         string
		cuts        int
		maxReissues int
		wantPosts   int
		wantErr     bool
	}{
		{name: "sse aborted once", how: "sse-abort", cuts: 1, wantPosts: 2},
		{name: "sse ended without response", how: "sse-eof", cuts: 1, wantPosts: 2},
		{name: "json body truncated", how: "json-truncated", cuts: 1, wantPosts: 2},
		{name: "default bound", how: "sse-abort", cuts: 2, wantPosts: 3},
		{name: "past the default bound", how: "sse-abort", cuts: -1, wantPosts: 1 + DefaultMaxReissues, wantErr: true},
		{name: "larger bound", how: "sse-eof", cuts: 4, maxReissues: 4, wantPosts: 5},
		{name: "re-issue disabled", how: "sse-abort", cuts: 1, maxReissues: -1, wantPosts: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s := &cutServer{cuts: tt.cuts, how: tt.how}
			ts := httptest.NewServer(s)
			defer ts.Close()
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{PriorDiscover: priorModern})
			cs, err := c.Connect(ctx, &ClientTransport{Endpoint: ts.URL, MaxReissues: tt.maxReissues, RetryDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "t", Arguments: json.RawMessage(`{"x":1}`)})
			if (err != nil) != tt.wantErr {
				t.Fatalf("CallTool: %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), errStreamBroken.Error()) {
				t.Errorf("CallTool error %q does not say the stream broke", err)
			}
			if err == nil {
				if want := fmt.Sprintf("done %d", tt.wantPosts-1); len(res.Content) != 1 || !strings.Contains(string(mustJSON(t, res.Content[0])), want) {
					t.Errorf("result %s, want %q", mustJSON(t, res.Content), want)
				}
			}
			calls := s.recorded()
			if len(calls) != tt.wantPosts {
				t.Fatalf("%d tools/call POSTs, want %d: %+v", len(calls), tt.wantPosts, calls)
			}
			seen := map[string]bool{}
			for i, call := range calls {
				if seen[call.ID] {
					t.Errorf("POST %d reuses id %s", i, call.ID)
				}
				seen[call.ID] = true
				if call.Arguments != calls[0].Arguments || call.Header != mcp.MethodToolsCall {
					t.Errorf("POST %d: arguments %s, Mcp-Method %q; want the first's %s and tools/call", i, call.Arguments, call.Header, calls[0].Arguments)
				}
			}
			// The session goes on: the next request is numbered as usual.
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Errorf("ListTools after: %v", err)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestModernReissueNotAfterCancel checks that a stream the client closed
// because its caller gave up (the cancellation of a modern request) is
// not re-issued.
func TestModernReissueNotAfterCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	started := make(chan struct{})
	var mu sync.Mutex
	posts := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": open\n\n")
		w.(http.Flusher).Flush()
		select {
		case started <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer ts.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{PriorDiscover: priorModern})
	cs, err := c.Connect(ctx, &ClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	cctx, ccancel := context.WithCancel(ctx)
	go func() {
		<-started
		ccancel()
	}()
	if _, err := cs.CallTool(cctx, &mcp.CallToolRequestParams{Name: "t"}); err == nil {
		t.Fatal("CallTool succeeded after its context ended")
	}
	cs.Close() // waits for the request's goroutine
	mu.Lock()
	defer mu.Unlock()
	if posts != 1 {
		t.Errorf("%d POSTs, want 1: a cancelled request was re-issued", posts)
	}
}

// TestModernListenNotReissued checks that a subscriptions/listen stream
// that breaks is not re-issued by the transport: the subscription ends
// (Done, Err) and the caller listens again, since the server tags its
// notifications with the listen request's id.
func TestModernListenNotReissued(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	listens := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &m)
		if m.Method != mcp.MethodSubscriptionsListen {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		mu.Lock()
		listens++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		tag := fmt.Sprintf(`{"%s":%s}`, mcp.MetaKeySubscriptionID, m.ID)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":%q,\"params\":{\"notifications\":{\"toolsListChanged\":true},\"_meta\":%s}}\n\n", mcp.NotificationSubscriptionsAcknowledged, tag)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer ts.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{PriorDiscover: priorModern})
	cs, err := c.Connect(ctx, &ClientTransport{Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	sub, err := cs.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		// The break may come before the acknowledgement is read: the
		// listen then fails, which is as good.
		t.Logf("Listen: %v", err)
	} else {
		select {
		case <-sub.Done():
		case <-ctx.Done():
			t.Fatal("the subscription did not end with its stream")
		}
		if sub.Err() == nil || !strings.Contains(sub.Err().Error(), errStreamBroken.Error()) {
			t.Errorf("Err %v, want the broken stream", sub.Err())
		}
	}
	cs.Close()
	mu.Lock()
	defer mu.Unlock()
	if listens != 1 {
		t.Errorf("%d listen POSTs, want 1", listens)
	}
}
