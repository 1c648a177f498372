package authclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// returnBound is how long a cancelled wait may take to end. The contract is
// "at once"; the bound is generous for a loaded machine.
const returnBound = 2 * time.Second

// blockingAuthorizer lets the first authorization through (a redirect
// follower), then blocks every later one, as a user who never completes the
// login in the browser, until its context ends.
type blockingAuthorizer struct {
	RedirectFollower
	n        atomic.Int32
	started  chan struct{} // receives when a blocked authorization starts
	returned chan error    // receives what a blocked authorization returns
}

func newBlockingAuthorizer() *blockingAuthorizer {
	return &blockingAuthorizer{
		RedirectFollower: *follower(),
		started:          make(chan struct{}, 8),
		returned:         make(chan error, 8),
	}
}

func (b *blockingAuthorizer) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	if b.n.Add(1) == 1 {
		return b.RedirectFollower.Authorize(ctx, authURL)
	}
	b.started <- struct{}{}
	<-ctx.Done()
	b.returned <- ctx.Err()
	return nil, ctx.Err()
}

// waitFor fails the test unless ch delivers within returnBound.
func waitFor[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(returnBound):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s: still waiting after %v\n%s", what, returnBound, buf[:runtime.Stack(buf, true)])
	}
	var zero T
	return zero
}

// TestStepUpLoginEndsWithContext: a step-up login that waits for the
// user's browser ends when the context of the request that needs it ends,
// and other requests to the same server neither wait for it beyond their
// own context nor at all when they only need the current token (#16.3).
func TestStepUpLoginEndsWithContext(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, func(s *fakeRS) {
		s.required = func(r *http.Request) []string {
			if r.URL.Query().Get("need") == "admin" {
				return []string{"admin"}
			}
			return nil
		}
	})
	post := func(ctx context.Context, c *http.Client, u string) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(`{}`))
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	tests := []struct {
		name string
		// other, if set, runs while the step-up login is blocked; it
		// returns an error if its request did not end as it should.
		other func(c *http.Client) error
	}{
		{name: "caller cancels"},
		{name: "request with the current token is not held", other: func(c *http.Client) error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st, err := post(ctx, c, rs.url())
			if err != nil || st != 200 {
				return errors.New("the request needing no login did not go through: " + http.StatusText(st))
			}
			return nil
		}},
		{name: "another step-up leaves with its context", other: func(c *http.Client) error {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err := post(ctx, c, rs.url()+"?need=admin")
			if !errors.Is(err, context.DeadlineExceeded) {
				return errors.New("want DeadlineExceeded, got " + errString(err))
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			auth := newBlockingAuthorizer()
			c := NewTransport(Config{Authorizer: auth}).Client()
			if st, err := post(context.Background(), c, rs.url()); err != nil || st != 200 {
				t.Fatalf("first login: %d %v", st, err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := post(ctx, c, rs.url()+"?need=admin")
				done <- err
			}()
			waitFor(t, "the step-up login to start", auth.started)
			if tt.other != nil {
				errc := make(chan error, 1)
				go func() { errc <- tt.other(c) }()
				if err := waitFor(t, "the other request", errc); err != nil {
					t.Fatal(err)
				}
			}
			cancel()
			if err := waitFor(t, "the cancelled request", done); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled request: %v", err)
			}
			if err := waitFor(t, "the browser wait to end", auth.returned); !errors.Is(err, context.Canceled) {
				t.Fatalf("authorizer: %v", err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// TestMCPClientStepUpCancel drives the path of issue #16.3 end to end: an
// mcp client on this transport calls a tool that needs a scope the token
// lacks; the step-up login blocks; cancelling the call's context returns
// the call within the bound, the notifications/cancelled that follows is
// not held by the login, the login's browser wait ends, and Close returns.
func TestMCPClientStepUpCancel(t *testing.T) {
	as := newFakeAS(t, nil)
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	if err := srv.AddTool(&mcp.Tool{Name: "admin", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		}); err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var cancels atomic.Int32
	var rsURL string
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prm := oauth.ProtectedResourceMetadataPath("/mcp")
		if r.URL.Path == prm {
			writeJSON(w, 200, map[string]any{"resource": rsURL, "authorization_servers": []string{as.Issuer()}})
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		ch := oauth.BearerChallenge{ResourceMetadata: strings.TrimSuffix(rsURL, "/mcp") + prm}
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		granted, valid := as.ScopesOf(tok)
		if !valid {
			w.Header().Set("WWW-Authenticate", ch.String())
			w.WriteHeader(401)
			return
		}
		if bytes.Contains(body, []byte(`"tools/call"`)) && !oauth.HasAllScopes(granted, []string{"admin"}) {
			ch.Error, ch.Scope = oauth.InsufficientScope, []string{"admin"}
			w.Header().Set("WWW-Authenticate", ch.String())
			w.WriteHeader(403)
			return
		}
		if bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
			cancels.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer rs.Close()
	rsURL = rs.URL + "/mcp"

	auth := newBlockingAuthorizer()
	hc := &http.Client{Transport: NewTransport(Config{Authorizer: auth})}
	// notifications/cancelled is how a 2025-11-25 session cancels; a
	// 2026-07-28 request is cancelled by closing its stream.
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{EraPolicy: mcp.EraPolicyLegacy})
	cs, err := client.Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: rsURL, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "admin", Arguments: json.RawMessage(`{}`)})
		done <- err
	}()
	waitFor(t, "the step-up login to start", auth.started)
	cancel()
	if err := waitFor(t, "the cancelled call", done); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	if err := waitFor(t, "the browser wait to end", auth.returned); !errors.Is(err, context.Canceled) {
		t.Fatalf("authorizer: %v", err)
	}
	if cancels.Load() != 1 {
		t.Errorf("%d notifications/cancelled reached the server, want 1", cancels.Load())
	}
	closed := make(chan error, 1)
	go func() { closed <- cs.Close() }()
	waitFor(t, "Close", closed)
	if n := auth.n.Load(); n != 2 {
		t.Errorf("%d authorizations, want 2 (the login, the abandoned step-up)", n)
	}
}
