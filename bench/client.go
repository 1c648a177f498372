package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// protocolVersion is the MCP revision the client negotiates.
const protocolVersion = "2025-11-25"

// A client sends raw JSON-RPC POSTs to one endpoint, the same way to every
// server, so that only the servers differ.
// With raw set, requests go through rawClient, a lean HTTP/1.1 client;
// otherwise through net/http's.
type client struct {
	url string
	hc  *http.Client
	raw *rawClient
	// modern: requests without a session carry modernCallHeaders (the
	// modern rows send only tools/call of echo).
	modern bool
}

func newClient(url string, conns int, raw bool) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = conns + 8
	tr.MaxIdleConnsPerHost = conns + 8
	tr.WriteBufferSize = 64 << 10
	tr.ReadBufferSize = 64 << 10
	c := &client{url: url, hc: &http.Client{Transport: tr}}
	if raw {
		rc, err := newRawClient(url)
		if err != nil {
			panic(err) // url comes from httptest
		}
		c.raw = rc
	}
	return c
}

func (c *client) close() {
	c.hc.CloseIdleConnections()
	if c.raw != nil {
		c.raw.close()
	}
}

// post sends body and returns the status, the session id header and the
// response body.
func (c *client) post(ctx context.Context, session string, body []byte, keep bool) (int, string, []byte, error) {
	if c.raw != nil {
		return c.raw.post(session, body, keep, c.modern)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", protocolVersion)
	} else if c.modern {
		setModernCallHeaders(req.Header)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	var out []byte
	if keep {
		out, err = readAll(resp)
	} else {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	if err != nil {
		return 0, "", nil, err
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), out, nil
}

var (
	initializeBody  = []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}`)
	initializedBody = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
)

// handshake opens a session: initialize, then notifications/initialized.
func (c *client) handshake(ctx context.Context) (string, error) {
	st, sid, body, err := c.post(ctx, "", initializeBody, true)
	if err != nil {
		return "", err
	}
	if st != http.StatusOK || sid == "" {
		return "", fmt.Errorf("initialize: status %d, session %q: %.200s", st, sid, body)
	}
	st, _, body, err = c.post(ctx, sid, initializedBody, true)
	if err != nil {
		return "", err
	}
	if st != http.StatusAccepted {
		return "", fmt.Errorf("initialized: status %d: %.200s", st, body)
	}
	return sid, nil
}

// callBody is a tools/call of echo with text, with the given request id.
// text must need no JSON escaping.
func callBody(id int, text string) []byte {
	b := make([]byte, 0, len(text)+96)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`...)
	b = append(b, text...)
	b = append(b, `"}}}`...)
	return b
}

// call sends one tools/call and checks the status and that the answer is a
// result, not a JSON-RPC error (which also comes with status 200).
func (c *client) call(ctx context.Context, session string, body []byte) ([]byte, error) {
	st, _, out, err := c.post(ctx, session, body, true)
	if err != nil {
		return nil, err
	}
	if st != http.StatusOK || !bytes.Contains(out, []byte(`"result":`)) {
		return nil, fmt.Errorf("tools/call: status %d: %.200s", st, out)
	}
	return out, nil
}

// handshakes opens n sessions with conc workers and returns their ids.
func (c *client) handshakes(ctx context.Context, n, conc int) ([]string, error) {
	ids := make([]string, n)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range conc {
		wg.Go(func() {
			for i := range next {
				sid, err := c.handshake(ctx)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				ids[i] = sid
			}
		})
	}
	wg.Wait()
	return ids, first
}

// readAll reads a response body whole, into one buffer sized from
// Content-Length when the server sent it (the same for every server).
func readAll(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n > 0 && n <= 64<<20 {
		out := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	return io.ReadAll(resp.Body)
}
