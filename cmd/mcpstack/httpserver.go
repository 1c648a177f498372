package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// The HTTP servers of serve and authserver share their bounds on
// connections (issue #16 items 7 and 13): the same flags, the same
// http.Server settings, the same connection limit and the same graceful
// shutdown.

// Defaults of the HTTP server flags.
const (
	defaultIdleTimeout     = 2 * time.Minute
	defaultReadTimeout     = 30 * time.Second
	defaultWriteTimeout    = 30 * time.Second
	defaultShutdownTimeout = 10 * time.Second
	defaultMaxConnections  = 1024
	// readHeaderTimeout bounds the reading of a request's header, so that
	// a connection that never sends one (slowloris) does not stay.
	readHeaderTimeout = 10 * time.Second
)

// errShutdownCut is the error of a server whose in-flight work did not
// finish within --shutdown-timeout: the command exits 1.
var errShutdownCut = errors.New("in-flight requests were cut: they did not finish within --shutdown-timeout")

// httpLimits are the bounds of an HTTP server of the command, from its
// flags.
type httpLimits struct {
	idle, read, write, shutdown time.Duration
	maxConns                    int
}

// addHTTPLimitFlags registers the flags of httpLimits on fs, with their
// defaults.
func addHTTPLimitFlags(fs *flag.FlagSet) *httpLimits {
	l := &httpLimits{}
	fs.DurationVar(&l.idle, "idle-timeout", defaultIdleTimeout, "close a keep-alive connection idle for `DURATION` (0: never)")
	fs.DurationVar(&l.read, "read-timeout", defaultReadTimeout, "give the body of a request `DURATION` to arrive (0: no limit)")
	fs.DurationVar(&l.write, "write-timeout", defaultWriteTimeout, "give each write to a client `DURATION`: an answer, or one event of a stream, so that streams may last (0: no limit)")
	fs.IntVar(&l.maxConns, "max-connections", defaultMaxConnections, "keep at most `N` connections open: past them an idle one is closed, else the new one gets 503 (0: no limit; lowered to fit the open-file limit)")
	fs.DurationVar(&l.shutdown, "shutdown-timeout", defaultShutdownTimeout, "on SIGINT or SIGTERM, give requests in flight `DURATION` to finish; exit 1 if some had to be cut")
	return l
}

// check refuses negative bounds.
func (l *httpLimits) check() error {
	if l.idle < 0 || l.read < 0 || l.write < 0 || l.shutdown < 0 || l.maxConns < 0 {
		return usageErrorf("--idle-timeout, --read-timeout, --write-timeout, --shutdown-timeout and --max-connections cannot be negative")
	}
	return nil
}

// mcpTimeout turns a flag's duration into an mcphttp.Options one,
// where zero means the default and negative means none.
func mcpTimeout(d time.Duration) time.Duration { return noBound(d) }

// noBound turns a flag's bound into the library option's: a flag's 0
// means no bound, an option's 0 the default and its -1 no bound.
func noBound[T ~int | ~int64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// httpServer is an HTTP server of the command with its bounds.
type httpServer struct {
	hs    *http.Server
	ln    net.Listener
	limit *limitListener // nil without --max-connections
	lim   *httpLimits
	log   *slog.Logger
	drain func(context.Context) error // the handler's own graceful shutdown, or nil
}

// newHTTPServer serves h on ln (listened on with listen; tls, if set,
// wraps it after the connection limit) within lim. drain, if set, is the
// handler's own graceful shutdown (mcphttp.Handler.Shutdown), run
// first when the server stops.
//
// The http.Server's ReadTimeout and WriteTimeout are set too: a handler
// that keeps a response open (an SSE stream) must manage its connection's
// deadlines itself, as the MCP handler does, per body and per event.
func newHTTPServer(ln net.Listener, tlsConf *tls.Config, h http.Handler, lim *httpLimits, logger *slog.Logger, drain func(context.Context) error) *httpServer {
	s := &httpServer{lim: lim, log: logger, drain: drain}
	if max := connLimit(lim.maxConns); max > 0 {
		var reject []byte
		if tlsConf == nil {
			reject = []byte("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
		}
		s.limit = newLimitListener(ln, max, reject, logger)
		ln = s.limit
	}
	if tlsConf != nil {
		ln = tls.NewListener(ln, tlsConf)
	}
	s.ln = ln
	s.hs = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       lim.read,
		WriteTimeout:      lim.write,
		IdleTimeout:       lim.idle,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if lim.idle == 0 {
		// Zero would make net/http use ReadTimeout; --idle-timeout 0 means
		// never.
		s.hs.IdleTimeout = -1
	}
	if s.limit != nil {
		s.hs.ConnState = s.limit.connState
	}
	return s
}

// serve serves until ctx ends, then shuts down: see shutdown.
func (s *httpServer) serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.hs.Serve(s.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	start := time.Now()
	err := s.shutdown()
	s.log.Info("shut down", "took", time.Since(start).Round(time.Millisecond), "error", err)
	return err
}

// shutdown ends the server within --shutdown-timeout. New sessions and
// requests get 503 while requests in flight finish (drain); connections
// are still accepted meanwhile, so that clients can answer the requests
// that those make of them (elicitation, sampling) and resume streams, but
// every response closes its connection. Then the listener closes, and the
// streams, ended by drain after their last event, let their connections
// close. It returns errShutdownCut if work in flight had to be cut.
func (s *httpServer) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.lim.shutdown)
	defer cancel()
	s.hs.SetKeepAlivesEnabled(false) // closes the idle connections too
	cut := false
	if s.drain != nil {
		if err := s.drain(ctx); err != nil {
			cut = true
		}
	}
	if err := s.hs.Shutdown(ctx); err != nil {
		cut = true
		s.hs.Close()
	}
	if cut {
		return fmt.Errorf("shutdown after %s: %w", s.lim.shutdown, errShutdownCut)
	}
	return nil
}

// limitListener keeps at most max connections open. When a connection
// arrives at the limit, it closes one that is idle between requests (the
// http.Server's ConnState tells which are), so that idle keep-alive
// connections cannot crowd out new clients; with none idle, the new
// connection gets reject (a 503 answer; nothing over TLS) and is closed.
// Accept, Close and connState may be called concurrently.
type limitListener struct {
	net.Listener
	max    int
	reject []byte
	log    *slog.Logger

	refusing chan struct{} // a place per refused connection being answered

	mu   sync.Mutex
	open int
	idle map[*limitConn]struct{}
}

func newLimitListener(ln net.Listener, max int, reject []byte, logger *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, max: max, reject: reject, log: logger, idle: make(map[*limitConn]struct{}), refusing: make(chan struct{}, maxRefusing)}
}

// limitConn is a connection counted by its limitListener until closed.
type limitConn struct {
	net.Conn
	l       *limitListener
	once    sync.Once
	evicted bool // closed to make room: its place went to another (guarded by l.mu)
}

// Close closes the connection and gives its place back.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.idle, c)
		if !c.evicted {
			c.l.open--
		}
		c.l.mu.Unlock()
	})
	return err
}

// Accept returns the next connection within the limit.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		var victim *limitConn
		if l.open >= l.max {
			for v := range l.idle {
				victim = v
				break
			}
			if victim == nil {
				l.mu.Unlock()
				l.refuse(c)
				continue
			}
			delete(l.idle, victim)
			victim.evicted = true // its place is the new connection's
		} else {
			l.open++
		}
		l.mu.Unlock()
		if victim != nil {
			l.log.Debug("too many connections: an idle one closed", "max", l.max)
			victim.Conn.Close() // net/http's reader sees it and calls Close
		}
		return &limitConn{Conn: c, l: l}, nil
	}
}

// maxRefusing bounds the refused connections answered at once (see
// refuse); it is within fdReserve.
const maxRefusing = 16

// refuse answers a connection beyond the limit and closes it. The answer
// is read only if the client's request is read too (closing a socket with
// unread input resets it, and the reset may destroy the answer), so it
// closes its side, then reads for up to a second; on a goroutine, at most
// maxRefusing at once, beyond which connections are closed unanswered.
func (l *limitListener) refuse(c net.Conn) {
	l.log.Debug("too many connections: one refused", "max", l.max)
	if l.reject == nil {
		c.Close()
		return
	}
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		_, _ = c.Write(l.reject)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
		c.Close()
	}()
}

// connState is the http.Server's ConnState: it tracks which connections
// are idle.
func (l *limitListener) connState(c net.Conn, state http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*limitConn)
	if !ok {
		return
	}
	l.mu.Lock()
	if state == http.StateIdle {
		if !lc.evicted {
			l.idle[lc] = struct{}{}
		}
	} else {
		delete(l.idle, lc)
	}
	l.mu.Unlock()
}

// openConns is the number of connections open, for tests.
func (l *limitListener) openConns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}
