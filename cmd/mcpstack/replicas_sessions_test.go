package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// sessionsInit is an initialize whose client declares elicitation, which
// the ask tool checks on whichever replica runs it.
const sessionsInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + replicaVersion + `","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"sessions-test","version":"1"}}}`

// next returns the backend (index) that the proxy sends the next request
// to.
func (p *rrProxy) next() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n % len(p.rps)
}

// skip sends pings (request id id) for the session until the proxy's
// next request goes to a replica other than not.
func (p *rrProxy) skip(t *testing.T, endpoint, sid string, not, id int) {
	t.Helper()
	for p.next() == not {
		resp := mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"ping"}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// replicaOf returns the backend (index) that the round-robin proxy sent a
// request to.
func replicaOf(t *testing.T, resp *http.Response) int {
	t.Helper()
	n, err := strconv.Atoi(resp.Header.Get("X-Test-Replica"))
	if err != nil {
		t.Fatalf("no X-Test-Replica: %v", resp.Header)
	}
	return n
}

// sseMessages reads an SSE body to its end and returns the JSON messages
// it carried.
func sseMessages(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	readSSE(r, func(ev sseEvent) bool {
		if ev.data != "" {
			var m map[string]any
			if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
				t.Errorf("event %q: %v", ev.data, err)
			}
			out = append(out, m)
		}
		return true
	})
	return out
}

// TestServeReplicasSessions runs three `mcpstack serve --redis` processes
// behind a plain round-robin proxy (no stickiness) and one 2025-11-25
// session through it:
//   - consecutive requests land on different replicas and all succeed
//     (each replica rebuilds the session from Redis);
//   - the ask tool, run by a replica that did not create the session, sees
//     the client's elicitation capability, and its elicitation completes
//     with the client's response POSTed to another replica;
//   - the standalone GET held by one replica receives exactly one
//     notifications/resources/updated for a subscription made through
//     another replica and a file change that every replica sees;
//   - DELETE through one replica: 404 on all three.
//
// On main, the second request already fails: 404 from every replica but
// the one that created the session.
func TestServeReplicasSessions(t *testing.T) {
	redisURL, prefix := freshRedisPrefix(t)
	root, file := fileRoot(t)
	backends, _ := startServeReplicas(t, 3, "--redis", redisURL, "--redis-prefix", prefix, "--root", root)
	proxy := startRRProxy(t)
	proxy.set(backends...)
	endpoint := proxy.URL + "/mcp"

	resp := mcpPost(t, endpoint, "", sessionsInit)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	home := replicaOf(t, resp)
	resp = mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("initialized on replica %d (home %d): %d", replicaOf(t, resp), home, resp.StatusCode) // the subtests go on: each shows its own failure
	}

	t.Run("every replica serves the session", func(t *testing.T) {
		seen := map[int]bool{}
		for i := range 6 {
			resp := mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","id":`+strconv.Itoa(10+i)+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello `+strconv.Itoa(i)+`"}}}`)
			msgs := sseMessages(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || len(msgs) != 1 || !strings.Contains(jsonText(t, msgs[0]["result"]), "hello "+strconv.Itoa(i)) {
				t.Fatalf("call %d on replica %d: %d %v", i, replicaOf(t, resp), resp.StatusCode, msgs)
			}
			seen[replicaOf(t, resp)] = true
		}
		if len(seen) != 3 {
			t.Fatalf("served by %v, want all three", seen)
		}
	})

	t.Run("elicitation answered through another replica", func(t *testing.T) {
		// The call goes to a replica that did not create the session: it
		// must have rebuilt it, the client's capabilities included.
		proxy.skip(t, endpoint, sid, home, 99)
		call := mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
		if call.StatusCode != http.StatusOK {
			t.Fatalf("ask on replica %d: %d", replicaOf(t, call), call.StatusCode)
		}
		defer call.Body.Close()
		asker := replicaOf(t, call)
		events := make(chan map[string]any, 8)
		go func() {
			defer close(events)
			readSSE(call.Body, func(ev sseEvent) bool {
				var m map[string]any
				if ev.data != "" && json.Unmarshal([]byte(ev.data), &m) == nil {
					events <- m
				}
				return true
			})
		}()
		next := func() map[string]any {
			select {
			case m, ok := <-events:
				if !ok {
					t.Fatal("the ask stream ended")
				}
				return m
			case <-time.After(30 * time.Second):
				t.Fatal("nothing on the ask stream")
			}
			return nil
		}
		req := next()
		if req["method"] != "elicitation/create" {
			t.Fatalf("replica %d sent %v, want an elicitation", asker, req)
		}
		idJSON, _ := json.Marshal(req["id"])
		answer := mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","id":`+string(idJSON)+`,"result":{"action":"accept","content":{"name":"Ada","colour":"green"}}}`)
		answer.Body.Close()
		if answer.StatusCode != http.StatusAccepted {
			t.Fatalf("the answer: %d", answer.StatusCode)
		}
		if by := replicaOf(t, answer); by == asker {
			t.Fatalf("the answer went to the asking replica %d; the test wants another", by)
		}
		res := next()
		if got := jsonText(t, res["result"]); !strings.Contains(got, "Hello, Ada! green is a fine colour.") {
			t.Fatalf("ask result (asked by %d, answered through %d, home %d): %v", asker, replicaOf(t, answer), home, res)
		}
	})

	t.Run("standalone GET on one replica", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, endpoint, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", replicaVersion)
		get, err := http.DefaultClient.Do(req)
		if err != nil || get.StatusCode != http.StatusOK {
			t.Fatalf("GET: %v %v", get, err)
		}
		defer get.Body.Close()
		getter := replicaOf(t, get)
		var mu sync.Mutex
		updates := 0
		go readSSE(get.Body, func(ev sseEvent) bool {
			if strings.Contains(ev.data, "notifications/resources/updated") {
				mu.Lock()
				updates++
				mu.Unlock()
			}
			return true
		})
		resp := mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","id":30,"method":"resources/list"}`)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		uri := ""
		for _, m := range regexp.MustCompile(`"uri":"([^"]+)"`).FindAllStringSubmatch(string(body), -1) {
			if strings.HasSuffix(m[1], "/a.txt") {
				uri = m[1]
			}
		}
		if uri == "" {
			t.Fatalf("a.txt is not listed: %s", body)
		}
		resp = mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","id":31,"method":"resources/subscribe","params":{"uri":"`+uri+`"}}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("subscribe: %d", resp.StatusCode)
		}
		if replicaOf(t, resp) == getter {
			t.Fatalf("subscribe went to the GET's replica %d; the test wants another", getter)
		}
		time.Sleep(2 * pollInterval) // every watcher has its first look, every copy its subscription
		if err := os.WriteFile(file, []byte("two, longer"), 0o644); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return updates > 0
		}, func() string { return fmt.Sprintf("no resources/updated on the GET held by replica %d", getter) })
		time.Sleep(4 * pollInterval) // a second notification would arrive now
		mu.Lock()
		defer mu.Unlock()
		if updates != 1 {
			t.Fatalf("%d resources/updated for one change, want 1", updates)
		}
	})

	t.Run("DELETE ends the session on all", func(t *testing.T) {
		// Through a replica that did not create the session.
		proxy.skip(t, endpoint, sid, home, 98)
		req, _ := http.NewRequest(http.MethodDelete, endpoint, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", replicaVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE: %d", resp.StatusCode)
		}
		eventually404(t, endpoint, sid)
	})
}

// TestServeReplicasClient: our own client, pinned to 2025-11-25, with its
// standalone GET, through three `serve --redis` processes behind a plain
// round-robin proxy: every call succeeds, ask's elicitation included
// (its response POSTed wherever the proxy sends it), and closing the
// session (DELETE) leaves it unknown everywhere. On main a call fails
// with 404 as soon as it reaches a replica that did not create the
// session.
func TestServeReplicasClient(t *testing.T) {
	redisURL, prefix := freshRedisPrefix(t)
	backends, _ := startServeReplicas(t, 3, "--redis", redisURL, "--redis-prefix", prefix)
	proxy := startRRProxy(t)
	proxy.set(backends...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "replicas-client", Version: "1"}, &mcp.ClientOptions{
		EraPolicy: mcp.EraPolicyLegacy,
		ElicitationHandler: func(context.Context, *mcp.ClientSession, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Grace", "colour": "red"}}, nil
		},
	})
	rec := &sidRecorder{rt: http.DefaultTransport}
	cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: proxy.URL + "/mcp", HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	sid := rec.sid
	rec.mu.Unlock()
	if sid == "" {
		t.Fatal("no session id")
	}
	for i := range 7 {
		name, args, want := "echo", json.RawMessage(`{"text":"call `+strconv.Itoa(i)+`"}`), "call "+strconv.Itoa(i)
		if i == 3 || i == 6 {
			name, args, want = "ask", nil, "Hello, Grace! red is a fine colour."
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("call %d (%s): %v", i, name, err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(got, want) || (res.IsError != nil && *res.IsError) {
			t.Fatalf("call %d (%s): %q", i, name, got)
		}
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	eventually404(t, proxy.URL+"/mcp", sid)
}

// sidRecorder notes the Mcp-Session-Id that a server gives its client.
type sidRecorder struct {
	rt  http.RoundTripper
	mu  sync.Mutex
	sid string
}

func (r *sidRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.rt.RoundTrip(req)
	if err == nil {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			r.mu.Lock()
			r.sid = sid
			r.mu.Unlock()
		}
	}
	return resp, err
}

// eventually404 polls until every replica answers 404 for the session
// (the others drop their copies on a message from the deleting one).
func eventually404(t *testing.T, endpoint, sid string) {
	t.Helper()
	notFound := map[int]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for len(notFound) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("404 from replicas %v only", notFound)
		}
		resp := mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","id":40,"method":"ping"}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			notFound[replicaOf(t, resp)] = true
		} else {
			delete(notFound, replicaOf(t, resp))
			time.Sleep(20 * time.Millisecond)
		}
	}
}
