package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
)

// rawClient is a lean HTTP/1.1 client for the load: keep-alive connections
// over net.Conn, requests written from one buffer, answers parsed just
// enough (status, Content-Length or chunked, Mcp-Session-Id, Connection).
// It costs the benchmark process a fraction of net/http's client, so that
// more of the machine's two cores go to the servers under test and their
// differences are less diluted by the client's own work. It is the same
// for every server.
type rawClient struct {
	addr, host, path string

	mu   sync.Mutex
	idle []*rawConn
}

func newRawClient(rawURL string) (*rawClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return &rawClient{addr: u.Host, host: u.Host, path: path}, nil
}

// rawConn is one keep-alive connection.
type rawConn struct {
	c    net.Conn
	br   *bufio.Reader
	head []byte // request head buffer, reused
}

func (rc *rawClient) get() (*rawConn, error) {
	rc.mu.Lock()
	if n := len(rc.idle); n > 0 {
		c := rc.idle[n-1]
		rc.idle = rc.idle[:n-1]
		rc.mu.Unlock()
		return c, nil
	}
	rc.mu.Unlock()
	nc, err := net.Dial("tcp", rc.addr)
	if err != nil {
		return nil, err
	}
	return &rawConn{c: nc, br: bufio.NewReaderSize(nc, 64<<10)}, nil
}

func (rc *rawClient) put(c *rawConn) {
	rc.mu.Lock()
	rc.idle = append(rc.idle, c)
	rc.mu.Unlock()
}

func (rc *rawClient) close() {
	rc.mu.Lock()
	idle := rc.idle
	rc.idle = nil
	rc.mu.Unlock()
	for _, c := range idle {
		c.c.Close()
	}
}

// post sends one POST with body and returns the status, the Mcp-Session-Id
// header and, if keep, the body (read and discarded otherwise).
// With modern and no session, the request carries modernCallHeaders.
func (rc *rawClient) post(session string, body []byte, keep, modern bool) (int, string, []byte, error) {
	c, err := rc.get()
	if err != nil {
		return 0, "", nil, err
	}
	st, sid, out, reuse, err := c.roundTrip(rc.host, rc.path, session, body, keep, modern)
	if err != nil || !reuse {
		c.c.Close()
		if err != nil {
			return 0, "", nil, err
		}
	} else {
		rc.put(c)
	}
	return st, sid, out, nil
}

func (c *rawConn) roundTrip(host, path, session string, body []byte, keep, modern bool) (status int, sid string, out []byte, reuse bool, err error) {
	h := c.head[:0]
	h = append(h, "POST "...)
	h = append(h, path...)
	h = append(h, " HTTP/1.1\r\nHost: "...)
	h = append(h, host...)
	h = append(h, "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"...)
	if session != "" {
		h = append(h, "Mcp-Session-Id: "...)
		h = append(h, session...)
		h = append(h, "\r\nMCP-Protocol-Version: "+protocolVersion+"\r\n"...)
	} else if modern {
		h = append(h, modernCallHeaders...)
	}
	h = append(h, "Content-Length: "...)
	h = strconv.AppendInt(h, int64(len(body)), 10)
	h = append(h, "\r\n\r\n"...)
	c.head = h
	if len(body) <= 16<<10 {
		h = append(h, body...)
		c.head = h
		_, err = c.c.Write(h)
	} else {
		bufs := net.Buffers{h, body}
		_, err = bufs.WriteTo(c.c)
	}
	if err != nil {
		return 0, "", nil, false, err
	}
	return c.readResponse(keep)
}

var errBadResponse = errors.New("raw client: malformed response")

func (c *rawConn) readResponse(keep bool) (status int, sid string, out []byte, reuse bool, err error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, "", nil, false, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, "", nil, false, fmt.Errorf("%w: status line %q", errBadResponse, line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, "", nil, false, fmt.Errorf("%w: status line %q", errBadResponse, line)
	}
	length := int64(-1)
	chunked := false
	reuse = true
	for {
		line, err = c.br.ReadSlice('\n')
		if err != nil {
			return 0, "", nil, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		i := bytes.IndexByte(line, ':')
		if i < 0 {
			return 0, "", nil, false, fmt.Errorf("%w: header %q", errBadResponse, line)
		}
		name, value := line[:i], bytes.TrimSpace(line[i+1:])
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			length, err = strconv.ParseInt(string(value), 10, 64)
			if err != nil || length < 0 {
				return 0, "", nil, false, fmt.Errorf("%w: Content-Length %q", errBadResponse, value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Mcp-Session-Id")):
			sid = string(value)
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				reuse = false
			}
		}
	}
	switch {
	case chunked:
		out, err = c.readChunked(keep)
	case length >= 0:
		if keep {
			out = make([]byte, length)
			_, err = io.ReadFull(c.br, out)
		} else {
			_, err = c.br.Discard(int(length))
		}
	default: // read to the end of the connection
		reuse = false
		out, err = io.ReadAll(c.br)
	}
	if err != nil {
		return 0, "", nil, false, err
	}
	return status, sid, out, reuse, nil
}

func (c *rawConn) readChunked(keep bool) ([]byte, error) {
	var out []byte
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		n, err := strconv.ParseInt(string(line), 16, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: chunk size %q", errBadResponse, line)
		}
		if n == 0 {
			// Trailers, then the blank line.
			for {
				line, err := c.br.ReadSlice('\n')
				if err != nil {
					return nil, err
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					return out, nil
				}
			}
		}
		if keep {
			start := len(out)
			out = append(out, make([]byte, n)...)
			if _, err := io.ReadFull(c.br, out[start:]); err != nil {
				return nil, err
			}
		} else if _, err := c.br.Discard(int(n)); err != nil {
			return nil, err
		}
		if _, err := c.br.Discard(2); err != nil { // CRLF after the data
			return nil, err
		}
	}
}
