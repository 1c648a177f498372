// Command dosprobe measures how a running `mcpstack serve` holds up to the
// abuse of issue 16 items 8-10: it starts the server binary given, plays
// one attack against it and prints the server's resident memory (and CPU
// time) as it goes. It is a measuring tool, not a test: run it by hand,
// one case at a time, on an otherwise idle machine.
//
//	go build -o /tmp/mcpstack ./cmd/mcpstack
//	go run ./scripts/dosprobe -bin /tmp/mcpstack -case unread-get -duration 60s
//	go run ./scripts/dosprobe -bin /tmp/mcpstack -case unread-answers
//	go run ./scripts/dosprobe -bin /tmp/mcpstack -case batch
//	go run ./scripts/dosprobe -bin /tmp/mcpstack -case subscriptions
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "", "the mcpstack binary")
	which := flag.String("case", "", "unread-get, unread-answers, batch or subscriptions")
	duration := flag.Duration("duration", 60*time.Second, "how long unread-get runs")
	flag.Parse()
	if *bin == "" || *which == "" {
		flag.Usage()
		os.Exit(2)
	}
	root, err := os.MkdirTemp("", "dosprobe")
	check(err)
	defer os.RemoveAll(root)
	// The files are deep down, so that their URIs, and the notifications
	// that name them, are about 3 KB long: the server's messages then
	// outgrow the socket buffers within a minute.
	dir := root
	for i := range 12 {
		dir = filepath.Join(dir, strings.Repeat(string(rune('a'+i)), 240))
	}
	check(os.MkdirAll(dir, 0o755))
	for i := range 100 {
		check(os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), []byte("0"), 0o644))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(*bin, "serve", "--addr", addr, "--root", root)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	defer cmd.Process.Kill()
	p := &probe{url: "http://" + addr + "/mcp", addr: addr, pid: cmd.Process.Pid, root: root, dir: dir}
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if i > 100 {
			fail("the server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.report("idle")
	switch *which {
	case "unread-get":
		p.unreadGET(*duration)
	case "unread-answers":
		p.unreadAnswers()
	case "batch":
		p.batch()
	case "subscriptions":
		p.subscriptions()
	default:
		fail("unknown case " + *which)
	}
}

type probe struct {
	url, addr, root string
	dir             string     // where the files are
	conns           []net.Conn // kept reachable: a collected conn is closed
	pid             int
}

// unreadGET: 20 sessions subscribed to 100 files that change twice a
// second, each with a GET stream it never reads.
func (p *probe) unreadGET(d time.Duration) {
	const sessions = 20
	for range sessions {
		sid := p.init("2025-11-25")
		refused := 0
		for i := range 100 {
			uri := (&url.URL{Scheme: "file", Path: filepath.Join(p.dir, fmt.Sprintf("f%03d.txt", i))}).String()
			if _, resp := p.post(sid, "2025-11-25", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`, i+10, uri)); bytes.Contains(resp, []byte(`"error"`)) {
				refused++
			}
		}
		if refused > 0 {
			fail(fmt.Sprintf("%d subscriptions refused", refused))
		}
		c := p.dialSmall(p.addr)
		fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n", p.addr, sid)
	}
	// One more session reads its stream: it counts what each sends.
	var seen atomic.Int64
	{
		sid := p.init("2025-11-25")
		for i := range 100 {
			uri := (&url.URL{Scheme: "file", Path: filepath.Join(p.dir, fmt.Sprintf("f%03d.txt", i))}).String()
			p.post(sid, "2025-11-25", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`, i+10, uri))
		}
		req, _ := http.NewRequest("GET", p.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		check(err)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if bytes.HasPrefix(sc.Bytes(), []byte("data: {")) {
					seen.Add(1)
				}
			}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	go func() { // change every file with a 64 KiB body, twice a second
		body := bytes.Repeat([]byte("z"), 64<<10)
		for n := 0; ctx.Err() == nil; n++ {
			for i := range 100 {
				_ = os.WriteFile(filepath.Join(p.dir, fmt.Sprintf("f%03d.txt", i)), append(body, strconv.Itoa(n)...), 0o644)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}()
	start := time.Now()
	for ctx.Err() == nil {
		time.Sleep(10 * time.Second)
		p.report(fmt.Sprintf("unread GET streams, %v, %d sent each", time.Since(start).Round(time.Second), seen.Load()))
	}
}

// unreadAnswers: 100 POSTs of an echo of 3.9 MB, whose answers are never
// read.
func (p *probe) unreadAnswers() {
	sid := p.init("2025-11-25")
	text := strings.Repeat("a", 3900<<10)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, text)
	for i := range 100 {
		b := fmt.Sprintf(body, i+10)
		c := p.dialSmall(p.addr)
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: %d\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n%s", p.addr, len(b), sid, b)
	}
	for i := range 6 {
		time.Sleep(5 * time.Second)
		p.report(fmt.Sprintf("100 unread 3.9 MB answers, %ds", 5*(i+1)))
	}
}

// batch: one batch of 85,000 pings (3.8 MiB) in a 2025-03-26 session.
func (p *probe) batch() {
	sid := p.init("2025-03-26")
	var b strings.Builder
	b.WriteByte('[')
	for i := range 85000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+10)
	}
	b.WriteByte(']')
	cpu0 := p.cpu()
	start := time.Now()
	status, resp := p.post(sid, "2025-03-26", b.String())
	fmt.Printf("batch of 85,000 (%d bytes): %d in %v, %d bytes answered, server CPU %v\n", b.Len(), status, time.Since(start).Round(time.Millisecond), len(resp), p.cpu()-cpu0)
	p.report("after the batch")
}

// subscriptions: 20,000 subscriptions of 4 KB URIs in one session.
func (p *probe) subscriptions() {
	sid := p.init("2025-11-25")
	ok, refused := 0, 0
	pad := strings.Repeat("p", 4000)
	for i := range 20000 {
		_, resp := p.post(sid, "2025-11-25", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":"file:///%s/%d"}}`, i+10, pad, i))
		if bytes.Contains(resp, []byte(`"error"`)) {
			refused++
		} else {
			ok++
		}
	}
	fmt.Printf("20,000 subscriptions of 4 KB: %d accepted, %d refused\n", ok, refused)
	p.report("after the subscriptions")
}

func (p *probe) init(version string) string {
	req, _ := http.NewRequest("POST", p.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	check(err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	p.post(sid, version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

func (p *probe) post(sid, version, body string) (int, []byte) {
	req, _ := http.NewRequest("POST", p.url, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", version)
	resp, err := http.DefaultClient.Do(req)
	check(err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b
}

// report prints the server's resident memory now and at its peak.
func (p *probe) report(what string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	check(err)
	var rss, hwm, threads string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rss = f[1]
		case "VmHWM:":
			hwm = f[1]
		case "Threads:":
			threads = f[1]
		}
	}
	fmt.Printf("%-40s RSS %6s MiB (peak %6s MiB), %s threads\n", what+":", kib(rss), kib(hwm), threads)
}

func kib(s string) string {
	n, _ := strconv.Atoi(s)
	return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64)
}

// cpu returns the server's CPU time (user and system).
func (p *probe) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	check(err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * (time.Second / 100) // USER_HZ
}

// dialSmall connects with a small receive buffer; nothing reads the
// connection, which stays open (referenced by p) until the probe exits.
func (p *probe) dialSmall(addr string) net.Conn {
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	c, err := d.Dial("tcp", addr)
	check(err)
	p.conns = append(p.conns, c)
	return c
}

func check(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "dosprobe:", msg)
	os.Exit(1)
}
