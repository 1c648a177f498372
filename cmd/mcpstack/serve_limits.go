package main

import (
	"flag"

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
	fs.IntVar(&l.maxSubscriptionURI, "max-subscription-uri", mcp.DefaultMaxSubscriptionURILength, "refuse resources/subscribe of a URI longer than `BYTES`")
	return l
}

// server sets the server's bounds in o.
func (l *streamLimits) server(o *mcp.ServerOptions) {
	if l == nil {
		return
	}
	o.MaxSubscriptions = l.maxSubscriptions
	o.MaxSubscriptionURILength = l.maxSubscriptionURI
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
}
