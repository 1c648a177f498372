package mcphttp

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp/eventstore"
)

// HTTP header names of the Streamable HTTP transport.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-Id"
)

const (
	// DefaultSessionTimeout is how long a Streamable HTTP session may stay
	// idle before the handler ends it, unless told otherwise.
	DefaultSessionTimeout = 30 * time.Minute
	// DefaultMaxBodyBytes bounds a POST body unless told otherwise: 4 MiB.
	DefaultMaxBodyBytes = 4 << 20
	// DefaultRetryInterval is the SSE retry field the handler sends before
	// it closes a connection whose stream goes on, unless told otherwise.
	DefaultRetryInterval = time.Second
	// DefaultReadTimeout bounds the reading of a POST body unless told
	// otherwise.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds each write to a client (one SSE event, one
	// JSON answer) unless told otherwise.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxSessions bounds the sessions of a handler unless told
	// otherwise: about 10 MiB of idle sessions.
	DefaultMaxSessions = 10000

	// DefaultMaxQueuedMessages and DefaultMaxQueuedBytes bound what waits
	// for one SSE response unless told otherwise (see
	// Options.MaxQueuedMessages): a client that is this far
	// behind is not reading, and its backlog would grow with every
	// message; 4 MiB is also the default bound of a POST body, and as
	// much as a eventstore.Memory keeps for four sessions.
	DefaultMaxQueuedMessages = 1024
	DefaultMaxQueuedBytes    = 4 << 20

	// DefaultMaxBatchLength bounds a batch unless told otherwise: a
	// 2025-03-26 client batches a few messages, and every entry holds a
	// decoded message and its answer until the whole batch is answered.
	DefaultMaxBatchLength = jsonrpc.DefaultMaxBatchLength
	// DefaultMaxBatchConcurrency bounds the requests of one batch handled
	// at once unless told otherwise: an eighth of a session's 64 handler
	// slots, so that one batch neither costs a goroutine per entry nor
	// keeps the session's other POSTs waiting.
	DefaultMaxBatchConcurrency = 8

	// DefaultMaxBufferedBytes bounds what a handler holds for all its
	// clients together unless told otherwise (see Options.MaxBufferedBytes):
	// 256 MiB.
	DefaultMaxBufferedBytes = eventstore.DefaultBudgetBytes

	// DefaultReplicaRecheck is how often a replica re-reads the records
	// of the shared sessions it holds unless told otherwise (see
	// Options.ReplicaRecheck): a lost DELETE or state change is caught
	// within 30 s, for one directory read per held session and interval.
	DefaultReplicaRecheck = 30 * time.Second

	standaloneStreamID = "0"
)

// Options configure a Handler. The zero value
// is usable: sessions, SSE answers, resumption from an in-memory event
// store, DELETE and the standalone GET stream are on, and the DNS-rebinding
// defence is on.
type Options struct {
	// Stateless turns sessions off. No Mcp-Session-Id is issued or read;
	// each POST is served by a fresh session of the server that getServer
	// returns, which is closed when the POST has been answered. A POST
	// carrying anything but initialize is served by a session initialized
	// implicitly: as if the client had sent initialize with the version of
	// its MCP-Protocol-Version header (2025-03-26 when absent), no
	// capabilities and a clientInfo named "unknown", then
	// notifications/initialized. Notifications and responses POSTed by the client get 202 and are
	// dropped, since no session could relate them to anything; for the same
	// reason a server cannot send requests to the client (sampling,
	// elicitation, roots) in this mode. GET and DELETE get 405, and streams
	// cannot be resumed.
	Stateless bool
	// JSONResponse makes the handler answer a request with one
	// application/json response rather than an SSE stream. If the server
	// sends a notification or a request about it before its result, the
	// answer becomes an SSE stream there and then.
	JSONResponse bool
	// EventStore keeps the events of SSE streams so that clients can resume
	// them. Nil means a eventstore.Memory with the default limits.
	EventStore eventstore.Store
	// SessionTimeout ends sessions that have had no HTTP request in
	// progress for that long. Zero means DefaultSessionTimeout; negative
	// means sessions never expire.
	SessionTimeout time.Duration
	// DisableDelete makes the handler answer DELETE with 405, so that
	// clients cannot end their sessions.
	DisableDelete bool
	// DisableStandaloneSSE makes the handler answer a GET that opens the
	// session's standalone stream with 405. A GET that resumes a stream
	// (with Last-Event-ID) is still served.
	DisableStandaloneSSE bool
	// MaxBodyBytes bounds a POST body; larger ones get 413. Zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxEventsPerConnection, if positive, makes the handler close an SSE
	// connection once it has sent that many messages on it, after sending
	// RetryInterval as the SSE retry field. The stream goes on: the client
	// reconnects with GET and Last-Event-ID and receives what follows. This
	// is SSE polling (protocol revision 2025-11-25); it bounds how long a
	// connection stays open, for proxies that cut long responses. It
	// applies only to sessions at 2025-11-25 or later, whose clients know
	// to reconnect.
	MaxEventsPerConnection int
	// RetryInterval is the reconnection delay sent before such a close.
	// Zero means DefaultRetryInterval. Rounded up to whole seconds, it is
	// also the Retry-After of a 503 answer.
	RetryInterval time.Duration

	// ReadTimeout bounds the reading of a POST body: a client that sends
	// it more slowly loses its connection. Zero means DefaultReadTimeout;
	// negative means no bound. The handler sets the connection's read
	// deadline itself (http.ResponseController), for the body only, and
	// clears it once the body is read and when a GET stream starts, so
	// that the read deadline of an http.Server.ReadTimeout does not end
	// the SSE streams that follow.
	ReadTimeout time.Duration
	// WriteTimeout bounds each write to a client: every SSE event, and a
	// JSON answer or error as a whole. A client that does not take a
	// message within it loses its connection (its stream's events stay in
	// the event store, for resumption). Zero means DefaultWriteTimeout;
	// negative means no bound. The handler moves the connection's write
	// deadline forward before each write and leaves it set, so that the
	// deadline of an http.Server.WriteTimeout does not end long-lived SSE
	// streams; give other handlers served on the same connections an
	// http.Server.WriteTimeout, which net/http resets at every request.
	WriteTimeout time.Duration
	// MaxSessions bounds the sessions open at once; the initialize that
	// would open one more gets 503 with Retry-After. Zero means
	// DefaultMaxSessions; negative means no bound. Idle sessions end after
	// SessionTimeout, freeing their places.
	MaxSessions int
	// MaxQueuedMessages and MaxQueuedBytes bound the messages waiting to
	// be written to one HTTP response (an SSE stream), for a client that
	// reads more slowly than the server sends. A message that would go
	// past either bound cuts the connection instead: the stream goes on
	// without it, its messages kept in the event store (within the store's
	// bounds), and the client resumes it with GET and Last-Event-ID. One
	// message is always let through, whatever its size. Zero means
	// DefaultMaxQueuedMessages and DefaultMaxQueuedBytes.
	MaxQueuedMessages int
	MaxQueuedBytes    int

	// MaxBatchLength bounds the messages of a batch (accepted at protocol
	// version 2025-03-26 only); a longer one gets 400 with an invalid
	// request error, before any of it is handled. Zero means
	// DefaultMaxBatchLength.
	MaxBatchLength int
	// MaxBatchConcurrency bounds how many requests of one batch are
	// handled at once; the others wait for one of them to finish. Zero
	// means DefaultMaxBatchConcurrency.
	MaxBatchConcurrency int

	// MaxBufferedBytes bounds the bytes that the handler holds on behalf
	// of all its clients together, which the per-session and per-stream
	// bounds above do not: the POST bodies of requests being handled, the
	// messages encoded and not yet written to a client (queued for a slow
	// reader, or being written to one that does not read), and the events
	// kept for resumption by the default event store. Each place asks a
	// shared eventstore.Budget for room, and when there is none:
	//
	//   - a POST body gets 503 with Retry-After, before it is read;
	//   - a response gets replaced by a JSON-RPC error (-32603) saying that
	//     the answer could not be buffered, so that its request is
	//     answered;
	//   - a request or notification that the server sends gets an error
	//     wrapping eventstore.ErrBudgetExhausted, returned to the code
	//     that sent it;
	//   - the event store evicts the oldest events of the session that
	//     keeps the most first, and a client that resumes past them gets
	//     400 (see eventstore.Memory).
	//
	// The budget counts the bytes the transport holds, not the copies
	// that the server's handlers make of them (decoded arguments, a
	// result before it is encoded): a client that leaves large answers
	// unread makes the process hold about twice the budget (about 510 MiB
	// of RSS for the default, against 1.1 GiB and growing with the number
	// of clients without it), whatever the number of clients.
	//
	// Zero means DefaultMaxBufferedBytes; negative means no bound. Ignored
	// when Budget is set.
	MaxBufferedBytes int64
	// Budget, if set, is the buffer budget the handler takes from,
	// instead of one of its own of MaxBufferedBytes: give the same one to
	// several handlers (an SSEHandler, say) and to an eventstore.Memory
	// passed as EventStore, to bound them all together. An EventStore
	// given here takes from a budget only if it was built with one; the
	// default store takes from the handler's.
	Budget *eventstore.Budget

	// Identity, if set, names the caller of an HTTP request, such as the
	// subject and client of its verified access token. A session is bound
	// to the identity that created it: a later request for that session
	// from another identity (or from none) gets 403 and touches nothing.
	// Nil leaves sessions unbound, with the session id as the only key.
	Identity func(r *http.Request) string

	// AllowedHosts lists the Host header values accepted; others get 403.
	// An entry without a port matches any port ("localhost",
	// "example.com:8443", "[::1]"). When empty, and the request arrived on
	// a loopback address, only localhost and loopback IP addresses are
	// accepted; on other addresses any Host is, so set this list when
	// serving on a public address.
	AllowedHosts []string
	// AllowedOrigins lists the Origin header values accepted, such as
	// "https://app.example.com"; others get 403. A request without Origin
	// (one that no browser sent) is accepted. When empty, an Origin is
	// accepted if its host and port are those of the Host header, or if
	// both are loopback names.
	AllowedOrigins []string
	// DisableDNSRebindingProtection turns off the Host and Origin checks.
	DisableDNSRebindingProtection bool
	// CORS, if set, lets pages on the origins it lists use the endpoint
	// from a browser (see CORSOptions); those origins also pass the Origin
	// check. Nil answers no preflight and sends no CORS headers. A handler
	// in front of this one that may answer by itself (an authorization
	// middleware) needs the CORS function with the same options around it.
	CORS *CORSOptions

	// Replicas, if set, makes the sessions of this handler work on every
	// replica of the server (processes behind one load balancer, with no
	// stickiness): a session created on one is rebuilt on another from
	// its record in the EventStore's directory, a client's response to a
	// request another replica sent is routed to it, a message for the
	// standalone stream goes to the replica holding the GET, and DELETE
	// ends the session on all (see replicas.go). EventStore must then be
	// shared by the replicas and be an eventstore.SessionDirectory and an
	// eventstore.SessionUpdater, such as store/redis.EventStore, which is
	// also the Replicas. Nil keeps each session on the replica that
	// created it. Ignored when Stateless.
	Replicas eventstore.Replicas
	// ReplicaRecheck is how often, with Replicas, the handler re-reads
	// the record of every shared session it holds, in one background
	// goroutine (never on a request's path), and applies it: the news
	// that another replica changed or deleted a session travels on
	// Replicas at most once (Redis Pub/Sub drops what is published while
	// a subscriber reconnects), and a copy that missed it would stay
	// stale, or alive after a DELETE, until it idled out. With the
	// recheck, a DELETE through any replica ends every copy within this
	// bound, and a state change (log level, subscriptions, the replica
	// holding the standalone stream) reaches every copy within it. Zero
	// means DefaultReplicaRecheck; negative never.
	ReplicaRecheck time.Duration
	// SessionIDKeys, if set, sign the session ids this handler mints
	// (an HMAC-SHA256 under the first key, appended to the random id) and
	// make it refuse with 404, before any call to EventStore, a request
	// for a session it does not hold whose id no key verifies: without
	// them, every request with a made-up Mcp-Session-Id costs a read of
	// the shared directory (see sessionid.go). Give every replica the
	// same keys, each of at least 32 random bytes; rotate by putting a
	// new key first and keeping the old ones while their sessions live.
	// A session minted without keys (before an upgrade) is still served
	// by the replica holding it, but no longer rebuilt or resumed on
	// another: its client gets 404 there and starts a new session, as
	// MCP 2025-11-25 basic/transports#session-management asks. Nil keeps
	// unsigned ids and reads the directory for any id. Read at New; the
	// handler keeps the slice and does not modify it.
	SessionIDKeys [][]byte

	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
}
