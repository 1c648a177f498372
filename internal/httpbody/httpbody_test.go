package httpbody

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// hang writes a complete document, flushes it as a chunk and keeps the body
// open until the client goes away.
func hang(doc string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(doc))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// write answers with doc.
func write(doc string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(doc)) }
}

// cutChunk announces a chunk and closes the connection in its middle.
func cutChunk(w http.ResponseWriter, r *http.Request) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	buf.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"a\":1")
	buf.Flush()
}

func TestRead(t *testing.T) {
	const doc = `{"issuer":"https://as.example"}`
	tests := []struct {
		name    string
		handler http.HandlerFunc
		limit   int64
		// ctxTimeout is the deadline of the request's context; clientTimeout
		// is http.Client.Timeout.
		ctxTimeout, clientTimeout time.Duration
		runs                      int
		want                      string
		wantErr, wantCause        error
	}{
		{name: "complete", handler: write(doc), limit: 100, ctxTimeout: time.Minute, runs: 1, want: doc},
		{name: "deadline cuts an open chunked body", handler: hang(doc), limit: 100, ctxTimeout: 30 * time.Millisecond, runs: 50, wantErr: ErrCut, wantCause: context.DeadlineExceeded},
		{name: "client timeout cuts an open chunked body", handler: hang(doc), limit: 100, clientTimeout: 30 * time.Millisecond, runs: 50, wantErr: ErrCut},
		{name: "connection closed inside a chunk", handler: cutChunk, limit: 100, runs: 1, wantErr: ErrCut},
		{name: "over the limit", handler: hang(doc), limit: 5, ctxTimeout: time.Minute, runs: 1, want: doc[:5], wantErr: ErrTooLarge},
		{name: "exactly the limit", handler: write(doc), limit: int64(len(doc)), runs: 1, want: doc},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Over TLS, a cut body often ends in a clean EOF.
			s := httptest.NewUnstartedServer(tc.handler)
			s.Config.ErrorLog = log.New(io.Discard, "", 0)
			s.StartTLS()
			defer s.Close()
			client := s.Client()
			client.Timeout = tc.clientTimeout
			for range tc.runs {
				got, sent, err := get(t, client, s.URL, tc.ctxTimeout, tc.limit)
				if !sent {
					// The deadline fired before the headers came: refused
					// too, but not by Read.
					if tc.wantErr != ErrCut || (tc.wantCause != nil && !errors.Is(err, tc.wantCause)) {
						t.Fatalf("request: %v", err)
					}
					continue
				}
				if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if tc.wantCause != nil && !errors.Is(err, tc.wantCause) {
					t.Fatalf("err = %v, want it to wrap %v", err, tc.wantCause)
				}
				if errors.Is(err, ErrCut) && got != nil {
					t.Fatalf("a cut body came back: %q", got)
				}
				if tc.wantErr != ErrCut && string(got) != tc.want {
					t.Fatalf("body = %q, want %q", got, tc.want)
				}
			}
		})
	}
}

// get sends a request and reads its answer with Read; sent reports whether
// the request had an answer.
func get(t *testing.T, client *http.Client, url string, timeout time.Duration, limit int64) (_ []byte, sent bool, _ error) {
	t.Helper()
	ctx := t.Context()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	data, err := Read(ctx, resp, limit)
	return data, true, err
}
