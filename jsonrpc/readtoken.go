package jsonrpc

import "time"

// The read token.
//
// At most one goroutine reads the stream of a connection made by NewConn
// at a time: the holder of the read token. A caller waiting for its
// response in CallID that may read (whose context cannot end, or any
// caller over an interruptible stream, see below) takes the token when it
// is free and reads itself, dispatching every message it reads as a
// dedicated read loop would (a response to another caller goes to that
// caller's channel, a request to a handler, a notification to the handler
// inline, in order), until it reads its own response, which it returns
// with no hand-off to another goroutine. It then passes the token to the
// oldest caller waiting that may read (by sending tokenHandoff on its
// channel), else to the background reader if calls are pending that may
// not read, else frees it.
//
// A caller whose context can end must return as soon as it ends. It reads
// only when the stream's reads can be interrupted (see
// interruptibleStream): it reads with readInterruptible, which gives up
// when its context ends, losing nothing, and passes the token on as when
// it has its response. It waits for the token on its channel and its
// context at once, and a caller that leaves the queue of waiting callers
// passes the token on if it was handed to it meanwhile. Over any other
// stream, as Read cannot be abandoned midway, such a caller never reads:
// it waits on its channel, and the background reader reads for it.
//
// The background reader (a role, see serveHere) reads the messages that
// arrive while no call is waiting: requests and notifications from the
// peer, and the end of the stream. It takes the free token only once it
// has been free for readGrace, so that it does not take it in the short
// gap between two calls made one after the other; and it gives the token
// up again as soon as a caller may read, or the last pending call that
// may read is answered.
//
// The token is never held while a request is written, nor left free for
// longer than readGrace: a Write may have to wait for reading to progress
// (the peer blocked writing to us, or a transport such as Streamable HTTP
// whose Write returns once the answer has been read).
//
// Once the connection is closed, the token is never passed on: its holder
// closes done instead, and done is closed exactly once, by the holder or
// by shutdown when the token was free.

// readGrace is how long the read token must stay free before the
// background reader takes it to read unsolicited messages (between one and
// two periods of the grace timer, see release). It lets a caller that
// makes calls one after the other read its own responses, instead of
// finding the background reader blocked in Read and paying for a goroutine
// hand-off. A message that arrives while no call waits, such as a
// notification after the last call, is read within about twice this.
//
// It is a millisecond because the runtime's timers do not fire much sooner
// than that when its threads sleep in the network poller, and because a
// timer that fires often costs the callers time (measured with
// BenchmarkStdioPing in package mcp: 50µs was slower).
const readGrace = time.Millisecond

// tokenHandoff is what a caller waiting on its channel receives when the
// read token is handed to it, instead of a response. It is never sent to
// the peer nor changed: only its address matters.
var tokenHandoff = new(Response)

// readToken is the state of the read token: who holds it, the callers
// waiting for it, and the grace timer after which the background reader
// takes it. Its methods only change that state and send on the channels
// that hand the token over, which never block (each has room for the one
// value it may get); the caller holds the connection's mu.
type readToken struct {
	held       bool          // by a goroutine, or on its way to one
	head, tail *call         // callers waiting that may take the token, oldest first
	wake       chan struct{} // hands the token to the background reader
	grace      *time.Timer   // armed whenever the token is free (see release)
	armed      bool          // grace is running
	frees      uint64        // times the token was freed
	seenFrees  uint64        // frees as of grace's last look
}

// newReadToken returns a token held by the background reader, so that a
// message sent before the first call is read at once.
func newReadToken() readToken {
	t := readToken{held: true, wake: make(chan struct{}, 1), grace: time.NewTimer(readGrace)}
	t.grace.Stop()
	t.wake <- struct{}{}
	return t
}

// take takes the token if it is free, and reports whether it did.
func (t *readToken) take() bool {
	if t.held {
		return false
	}
	t.held = true
	return true
}

// wait queues cl, a caller that may read, to be handed the token.
func (t *readToken) wait(cl *call) {
	cl.waiting = true
	cl.prev, cl.next = t.tail, nil
	if t.tail != nil {
		t.tail.next = cl
	} else {
		t.head = cl
	}
	t.tail = cl
}

// leave takes cl out of the queue, if it is there.
func (t *readToken) leave(cl *call) {
	if !cl.waiting {
		return
	}
	cl.waiting = false
	if cl.prev != nil {
		cl.prev.next = cl.next
	} else {
		t.head = cl.next
	}
	if cl.next != nil {
		cl.next.prev = cl.prev
	} else {
		t.tail = cl.prev
	}
	cl.prev, cl.next = nil, nil
}

// handToWaiter hands the held token to the oldest caller waiting, if
// any, and reports whether there was one. The caller's channel is empty:
// it waits, unanswered.
func (t *readToken) handToWaiter() bool {
	w := t.head
	if w == nil {
		return false
	}
	t.leave(w)
	w.ch <- tokenHandoff
	return true
}

// passedTo is where pass sent the token.
type passedTo int

const (
	toCaller passedTo = iota // the oldest caller waiting
	toReader                 // the background reader
	toNobody                 // freed
)

// pass passes the held token on: to the oldest caller waiting, else to
// the background reader if calls are pending (that may not read, or are
// writing their requests), else nowhere: the token is freed.
func (t *readToken) pass(pending bool) passedTo {
	if t.handToWaiter() {
		return toCaller
	}
	if pending {
		t.wakeReader()
		return toReader
	}
	t.release()
	return toNobody
}

// wakeReader hands the held token to the background reader, which is not
// reading (it waits for wake or the grace timer).
func (t *readToken) wakeReader() { t.wake <- struct{}{} }

// release frees the token. The background reader takes it once it has
// stayed free for a whole period of the grace timer, which is armed here
// unless it runs already: arming it on every release, and stopping it on
// every take, would cost a timer update per call, and each update can
// wake an idle thread of the runtime.
func (t *readToken) release() {
	t.held = false
	t.frees++
	if !t.armed {
		t.armed = true
		t.seenFrees = t.frees
		t.grace.Reset(readGrace)
	}
}

// expire is the background reader's look at the token when the grace
// timer fires; it reports whether the reader takes it. The reader takes
// the token if it stayed free for a whole period, or if it is free while
// handlers run on the goroutines that read their requests (serving, see
// serveHere), which may block or be long: taken even with calls pending,
// as they are writing their requests and a stream's Write may wait for
// reading to progress. If the token was taken and freed again since the
// last look, the timer runs one more period; if it is held, the timer
// stops until the next release.
func (t *readToken) expire(serving bool) bool {
	if t.held {
		t.armed = false
		return false
	}
	if t.frees != t.seenFrees && !serving {
		t.seenFrees = t.frees
		t.grace.Reset(readGrace)
		return false
	}
	t.armed = false
	t.held = true
	return true
}

// close stops the grace timer and forgets the callers waiting, for a
// connection that ended.
func (t *readToken) close() {
	t.grace.Stop()
	t.head, t.tail = nil, nil
}
