// Command server is the MCP server that the official conformance suite
// drives (its "everything server").
//
//	server -addr 127.0.0.1:PORT   serve Streamable HTTP at http://127.0.0.1:PORT/mcp
//	server -addr :PORT            the same (a port alone binds 127.0.0.1)
//	server                        the same at 127.0.0.1:3000
//	server -stdio                 serve MCP over standard input and output
//
// It offers exactly the tools, resources, prompts, completion and logging
// that the suite's server scenarios use (conformance/harness/REQUIREMENTS.md
// §3). Over HTTP it keeps sessions, answers with SSE streams that clients
// can resume, refuses Host and Origin headers that are not loopback (DNS
// rebinding), and cuts the stream of a test_reconnection call after its
// priming event so that clients must resume it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

func main() {
	addr := flag.String("addr", "", "serve Streamable HTTP at http://ADDR/mcp (default "+defaultAddr+"; a port alone binds 127.0.0.1)")
	stdio := flag.Bool("stdio", false, "serve MCP over standard input and output")
	verbose := flag.Bool("v", false, "log debug messages to standard error")
	flag.Parse()
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if *stdio && *addr != "" {
		fmt.Fprintln(os.Stderr, "server: give -addr or -stdio, not both")
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *stdio {
		err = serveStdio(ctx, logger)
	} else {
		err = serveHTTP(ctx, logger, listenAddr(*addr))
	}
	if err != nil {
		logger.Error("server", "error", err)
		os.Exit(1)
	}
}

// defaultAddr is where the server listens when given neither flag.
const defaultAddr = "127.0.0.1:3000"

// listenAddr completes the -addr flag: empty means defaultAddr, and an
// address without a host (":3000") binds the loopback address, never every
// interface.
func listenAddr(addr string) string {
	if addr == "" {
		return defaultAddr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

func serveStdio(ctx context.Context, logger *slog.Logger) error {
	s, err := newServer(logger)
	if err != nil {
		return err
	}
	if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

func serveHTTP(ctx context.Context, logger *slog.Logger, addr string) error {
	s, err := newServer(logger)
	if err != nil {
		return err
	}
	h, closeHandler := newHTTPHandler(s, logger)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	logger.Info("serving Streamable HTTP", "url", "http://"+ln.Addr().String()+mcpPath)
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		closeHandler()
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	closeHandler()
	if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
