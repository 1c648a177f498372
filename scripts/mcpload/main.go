// Command mcpload measures how `mcpstack serve --addr` holds under the
// floods of issue #16 items 7 and 11, and reports the server's memory.
//
// Usage:
//
//	go run ./scripts/mcpload -pid PID sessions -n 200000 -c 32 http://127.0.0.1:8080/mcp
//	go run ./scripts/mcpload -pid PID idle -n 2000 http://127.0.0.1:8080/mcp
//
// sessions sends n initialize POSTs from c workers, none ended, and counts
// the answers by status (200 opens a session; 503 is the session cap).
// idle opens n keep-alive connections that each send one request and then
// stay idle, then checks that a new client is still served, and counts
// the idle connections that the server closed. With -pid, the server's
// resident memory (VmRSS, and its peak VmHWM) is read from /proc before
// and after.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpload","version":"1"}}}`

func main() {
	pid := flag.Int("pid", 0, "the server's process `ID`, to report its memory")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mcpload [-pid PID] (sessions [-n N] [-c C] | idle [-n N]) URL")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	mode, args := flag.Arg(0), flag.Args()[1:]
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	n := fs.Int("n", 1000, "how many sessions or connections")
	c := fs.Int("c", 32, "concurrent workers (sessions)")
	fs.Parse(args)
	if fs.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	target := fs.Arg(0)
	memory(*pid, "before")
	var err error
	switch mode {
	case "sessions":
		err = sessions(target, *n, *c)
	case "idle":
		err = idle(target, *n)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	memory(*pid, "after")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpload:", err)
		os.Exit(1)
	}
}

// memory prints the resident memory of process pid, if given.
func memory(pid int, when string) {
	if pid == 0 {
		return
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		fmt.Println("memory:", err)
		return
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") || strings.HasPrefix(line, "VmHWM:") || strings.HasPrefix(line, "Threads:") {
			out = append(out, strings.Join(strings.Fields(line), " "))
		}
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	fmt.Printf("server %s: %s; fds %d\n", when, strings.Join(out, ", "), len(fds))
}

// sessions opens n sessions from c workers and counts the answers.
func sessions(target string, n, c int) error {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}, Timeout: 30 * time.Second}
	var next atomic.Int64
	var mu sync.Mutex
	counts := map[string]int{}
	start := time.Now()
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				key := post(hc, target)
				mu.Lock()
				counts[key]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fmt.Printf("%d initialize POSTs in %s: %v\n", n, time.Since(start).Round(time.Millisecond), counts)
	return nil
}

// post sends one initialize and names its outcome.
func post(hc *http.Client, target string) string {
	req, _ := http.NewRequest("POST", target, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return "error"
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	key := fmt.Sprint(resp.StatusCode)
	if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
		key += "+Retry-After"
	}
	return key
}

// idle opens n idle keep-alive connections, then checks that a new client
// is served.
func idle(target string, n int) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	var conns []net.Conn
	failed := 0
	for range n {
		c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err != nil {
			failed++
			continue
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", u.Path, u.Host)
		c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
			failed++
		}
		conns = append(conns, c)
	}
	fmt.Printf("%d connections opened, each one request then idle (%d failed to connect or answer)\n", len(conns), failed)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A GET without a session: the MCP handler answers 400 at once,
	// whatever the session cap, so the answer shows the connection served.
	req, _ := http.NewRequestWithContext(ctx, "GET", target, nil)
	req.Header.Set("Accept", "text/event-stream")
	start := time.Now()
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		fmt.Printf("a new client: %v after %s\n", err, time.Since(start).Round(time.Millisecond))
	} else {
		resp.Body.Close()
		fmt.Printf("a new client: %d after %s\n", resp.StatusCode, time.Since(start).Round(time.Millisecond))
	}
	closed := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := io.Copy(io.Discard, c); err == nil { // EOF: closed
			closed++
		}
		c.Close()
	}
	fmt.Printf("idle connections closed by the server: %d of %d\n", closed, len(conns))
	return nil
}
