package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// standaloneMock is a raw Streamable HTTP server that, like the suite's
// elicitation mock, sends the elicitation a tool call makes on the
// standalone GET stream only, and drops it when that stream is not open;
// it is slow to open that stream.
type standaloneMock struct {
	mu       sync.Mutex
	get      chan []byte // events for the open GET stream; nil when none
	answered chan json.RawMessage
}

func (m *standaloneMock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		// A slow server: the stream opens a while after the GET came,
		// long after the client's next POSTs if it did not wait.
		time.Sleep(200 * time.Millisecond)
		ch := make(chan []byte, 4)
		m.mu.Lock()
		m.get = ch
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-ch:
				fmt.Fprintf(w, "data: %s\n\n", ev)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case http.MethodDelete:
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	reply := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "s1")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}
	switch {
	case msg.Result != nil:
		m.answered <- msg.Result
		w.WriteHeader(http.StatusAccepted)
	case msg.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "initialize":
		reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"mock","version":"1"}}`)
	case msg.Method == "tools/list":
		reply(`{"tools":[{"name":"test_client_elicitation_defaults","description":"d","inputSchema":{"type":"object"}}]}`)
	case msg.Method == "tools/call":
		m.mu.Lock()
		get := m.get
		m.mu.Unlock()
		if get != nil {
			get <- []byte(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"m","requestedSchema":` +
				`{"type":"object","properties":{"name":{"type":"string","default":"John Doe"}}}}}`)
		}
		select {
		case res := <-m.answered:
			reply(fmt.Sprintf(`{"content":[{"type":"text","text":%q}]}`, res))
		case <-time.After(2 * time.Second):
			reply(`{"isError":true,"content":[{"type":"text","text":"no answer to the elicitation"}]}`)
		}
	default:
		reply(`{}`)
	}
}

// TestServerRequestOnStandaloneStream checks that the client has its GET
// stream open before it calls a tool, so that a server that sends its
// requests there only does not lose them.
func TestServerRequestOnStandaloneStream(t *testing.T) {
	for i := 0; i < 5; i++ {
		m := &standaloneMock{answered: make(chan json.RawMessage, 1)}
		ts := httptest.NewServer(m)
		err := run(context.Background(), quiet(), "elicitation-sep1034-client-defaults", ts.URL, nil)
		ts.CloseClientConnections()
		ts.Close()
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
}
