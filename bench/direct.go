package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
)

// directRequest builds a POST as the client would send it, addressed to a
// loopback server from a loopback peer.
// A modern request (no session) carries the modern call's headers.
func directRequest(session string, body []byte, modern bool) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", bytes.NewReader(body))
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		r.Header.Set("Mcp-Session-Id", session)
		r.Header.Set("MCP-Protocol-Version", protocolVersion)
	} else if modern {
		setModernCallHeaders(r.Header)
	}
	return r
}

// directHandshake opens a session by calling h.ServeHTTP directly.
func directHandshake(h http.Handler) (string, error) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, directRequest("", initializeBody, false))
	sid := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != http.StatusOK || sid == "" {
		return "", fmt.Errorf("initialize: status %d, session %q: %.200s", rec.Code, sid, rec.Body.Bytes())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, directRequest(sid, initializedBody, false))
	if rec.Code != http.StatusAccepted {
		return "", fmt.Errorf("initialized: status %d: %.200s", rec.Code, rec.Body.Bytes())
	}
	return sid, nil
}

// handlerCost calls a fresh handler's ServeHTTP directly n times with a
// tools/call, with no network and no client, and returns the allocations
// and bytes per call, less those of building the request and recorder
// (measured the same way with a handler that does nothing). This is the
// server's own cost, above net/http's connection handling.
func handlerCost(im impl, n int) (allocsPerReq, bytesPerReq float64, err error) {
	h, release := im.new()
	defer release()
	null := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	var sid string // a modern request needs no session
	if !im.modern {
		if sid, err = directHandshake(h); err != nil {
			return 0, 0, err
		}
	}
	call := callBody
	if im.modern {
		call = modernCallBody
	}
	next := 2
	measure := func(h http.Handler, check bool) (float64, float64, error) {
		bodies := make([][]byte, n) // new ids: a session must not reuse one
		for i := range bodies {
			bodies[i] = call(next, "hello")
			next++
		}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i := range n {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, directRequest(sid, bodies[i], im.modern))
			if rec.Code != http.StatusOK || (check && !bytes.Contains(rec.Body.Bytes(), []byte(`"result":`))) {
				return 0, 0, fmt.Errorf("tools/call: status %d: %.200s", rec.Code, rec.Body.Bytes())
			}
		}
		runtime.ReadMemStats(&m1)
		return float64(m1.Mallocs-m0.Mallocs) / float64(n), float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n), nil
	}
	if _, _, err := measure(h, true); err != nil { // warm up
		return 0, 0, err
	}
	a, b, err := measure(h, true)
	if err != nil {
		return 0, 0, err
	}
	na, nb, _ := measure(null, false)
	return a - na, b - nb, nil
}
