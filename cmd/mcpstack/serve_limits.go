package main

import (
	"flag"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// streamLimits are the bounds of serve on what one session may make the
// server hold: the messages waiting for a client that reads slowly, the
// entries of a batch, and resource subscriptions (issue 16 items 8-10).
// The zero value means the library's defaults.
type streamLimits struct {
	maxQueuedMessages   int
	maxQueuedBytes      int
	maxBatchLength      int
	maxBatchConcurrency int
	maxSubscriptions    int
	maxSubscriptionURI  int
	// The modern leg's subscriptions/listen streams (protocol 2026-07-28).
	maxListeners     int
	maxListenBytes   int64
	maxCallerListens int
	maxModern        int // ServerOptions.MaxModernRequests
	maxCallerModern  int // ServerOptions.MaxModernRequestsPerPrincipal
	listenKeepAlive  time.Duration
	listenQueue      int
	maxBufferedBytes int64
}

// addStreamLimitFlags defines the flags of streamLimits on fs, with the
// library's defaults, which --help shows.
func addStreamLimitFlags(fs *flag.FlagSet) *streamLimits {
	l := &streamLimits{}
	fs.IntVar(&l.maxQueuedMessages, "max-queued-messages", mcphttp.DefaultMaxQueuedMessages, "cut the connection of an SSE stream whose client is `N` messages behind (it can resume)")
	fs.IntVar(&l.maxQueuedBytes, "max-queued-bytes", mcphttp.DefaultMaxQueuedBytes, "cut the connection of an SSE stream whose client is `BYTES` behind (it can resume)")
	fs.IntVar(&l.maxBatchLength, "max-batch", mcphttp.DefaultMaxBatchLength, "refuse a batch (protocol 2025-03-26) of more than `N` messages")
	fs.IntVar(&l.maxBatchConcurrency, "max-batch-concurrency", mcphttp.DefaultMaxBatchConcurrency, "handle at most `N` requests of one batch at once")
	fs.IntVar(&l.maxSubscriptions, "max-subscriptions", mcp.DefaultMaxSubscriptions, "refuse resources/subscribe past `N` subscriptions of a session")
	fs.Int64Var(&l.maxBufferedBytes, "max-buffered-bytes", mcphttp.DefaultMaxBufferedBytes, "hold at most `BYTES` for all clients together (request bodies, unread answers, events kept for resumption); past it a POST gets 503, an answer an error, and the oldest kept events go (0: no bound)")
	fs.IntVar(&l.maxSubscriptionURI, "max-subscription-uri", mcp.DefaultMaxSubscriptionURILength, "refuse resources/subscribe of a URI longer than `BYTES`")
	fs.IntVar(&l.maxListeners, "max-listeners", mcp.DefaultMaxListeners, "keep at most `N` subscriptions/listen streams (protocol 2026-07-28) open; past them, a new one gets a JSON-RPC error (-32010) (0: no limit)")
	fs.Int64Var(&l.maxListenBytes, "max-listen-bytes", mcp.DefaultMaxListenBytes, "let the open subscriptions/listen streams hold at most `BYTES` together (their requests and filters); past them, a new one gets a JSON-RPC error (-32010) (0: no limit)")
	fs.IntVar(&l.maxCallerListens, "max-listeners-per-caller", mcp.DefaultMaxListenersPerPrincipal, "with --issuer, keep at most `N` subscriptions/listen streams of one caller (token subject) open; past them, a new one gets a JSON-RPC error (-32010) (0: no limit)")
	fs.IntVar(&l.maxModern, "max-modern-requests", mcp.DefaultMaxModernRequests, "handle at most `N` requests of protocol 2026-07-28 (no session) at once; past them, a request gets a JSON-RPC error (-32010) (0: no limit)")
	fs.IntVar(&l.maxCallerModern, "max-modern-requests-per-caller", mcp.DefaultMaxModernRequestsPerPrincipal, "with --issuer, handle at most `N` requests of protocol 2026-07-28 of one caller (token subject) at once; past them, a request gets a JSON-RPC error (-32010) (0: no limit)")
	fs.DurationVar(&l.listenKeepAlive, "listen-keepalive", mcp.DefaultListenKeepAlive, "send an idle subscriptions/listen stream an SSE comment every `DURATION`, so that proxies keep it open (0: never)")
	fs.IntVar(&l.listenQueue, "listen-queue", mcp.DefaultListenQueue, "end a subscriptions/listen stream whose client is `N` change notifications behind (it listens again)")
	return l
}

// check refuses values of l that mean nothing.
func (l *streamLimits) check() error {
	if l.maxListeners < 0 || l.maxListenBytes < 0 || l.maxCallerListens < 0 || l.maxModern < 0 || l.maxCallerModern < 0 || l.listenKeepAlive < 0 || l.listenQueue < 1 {
		return usageErrorf("--max-listeners, --max-listen-bytes, --max-listeners-per-caller, --max-modern-requests, --max-modern-requests-per-caller and --listen-keepalive cannot be negative, and --listen-queue must be positive")
	}
	return nil
}

// server sets the server's bounds in o.
func (l *streamLimits) server(o *mcp.ServerOptions) {
	if l == nil {
		return
	}
	o.MaxSubscriptions = l.maxSubscriptions
	o.MaxSubscriptionURILength = l.maxSubscriptionURI
	o.MaxListeners = noBound(l.maxListeners)
	o.MaxListenBytes = noBound(l.maxListenBytes)
	o.MaxListenersPerPrincipal = noBound(l.maxCallerListens)
	o.MaxModernRequests = noBound(l.maxModern)
	o.MaxModernRequestsPerPrincipal = noBound(l.maxCallerModern)
	o.ListenKeepAlive = noBound(l.listenKeepAlive)
	o.ListenQueue = l.listenQueue
}

// handler sets the Streamable HTTP handler's bounds in o.
func (l *streamLimits) handler(o *mcphttp.Options) {
	if l == nil {
		return
	}
	o.MaxQueuedMessages = l.maxQueuedMessages
	o.MaxQueuedBytes = l.maxQueuedBytes
	o.MaxBatchLength = l.maxBatchLength
	o.MaxBatchConcurrency = l.maxBatchConcurrency
	o.MaxBufferedBytes = noBound(l.maxBufferedBytes)
}
