package mcphttp

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// withHTTPValues makes the values of r's context (a verified caller put
// there by authorization middleware, say) and r itself available to the
// handlers of the requests and notifications in m.
func withHTTPValues(m jsonrpc.Message, r *http.Request) jsonrpc.Message {
	switch m := m.(type) {
	case *jsonrpc.Request:
		return m.WithValues(httpValues{r})
	case jsonrpc.Batch:
		for i, e := range m {
			if req, ok := e.(*jsonrpc.Request); ok {
				m[i] = req.WithValues(httpValues{r})
			}
		}
	}
	return m
}

// httpValues is a values-only view of an HTTP request's context that also
// answers RequestFromContext.
type httpValues struct{ r *http.Request }

type httpRequestKey struct{}

func (v httpValues) Deadline() (time.Time, bool) { return time.Time{}, false }

func (v httpValues) Done() <-chan struct{} { return nil }

func (v httpValues) Err() error { return nil }

func (v httpValues) Value(key any) any {
	if key == (httpRequestKey{}) {
		return v.r
	}
	return v.r.Context().Value(key)
}

// RequestFromContext returns the HTTP request that delivered the message
// a handler is serving, when it came over Streamable HTTP (nil otherwise).
// Its context's values are also those of ctx, so that what authorization
// middleware stored there reaches tool handlers. Read its header only; its
// body has been consumed, and the exchange may be over.
func RequestFromContext(ctx context.Context) *http.Request {
	r, _ := ctx.Value(httpRequestKey{}).(*http.Request)
	return r
}
