package mcphttp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// Server-sent events framing (the WHATWG HTML "text/event-stream" format),
// as both HTTP transports use it: the server writes events with
// appendSSEEvent, the client reads them with an sseReader.

// appendSSEEvent appends one event to b: an optional event type, id and
// retry field, then one data line per line of data, then the blank line
// that dispatches the event. data is always written, even when empty, so
// that an event with an id and empty data (the priming event of a
// Streamable HTTP stream) reaches the client.
func appendSSEEvent(b []byte, name, id string, retry time.Duration, data []byte) []byte {
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	if id != "" {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	if retry > 0 {
		b = appendSSERetry(b, retry)
	}
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		b = append(b, "data: "...)
		b = append(b, data[:i]...)
		b = append(b, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, '\n', '\n')
}

// appendSSERetry appends a retry field, in milliseconds.
func appendSSERetry(b []byte, retry time.Duration) []byte {
	ms := retry.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	b = append(b, "retry: "...)
	b = strconv.AppendInt(b, ms, 10)
	return append(b, '\n')
}

// sseEvent is one dispatched event.
type sseEvent struct {
	name string // the event type; "" stands for "message"
	id   string // the last event id at dispatch
	data []byte // the data lines joined by '\n'; owned by the caller
}

// errSSETooLarge reports an event whose data exceeds the reader's limit.
var errSSETooLarge = errors.New("mcphttp: SSE event exceeds the size limit")

// sseReader parses an event stream. It follows the WHATWG parsing rules:
// lines end with CRLF, LF or CR; a leading BOM is skipped; comments start
// with a colon; a field without a colon has an empty value; one space after
// the colon is dropped; an id holding NUL is ignored; retry must be all
// digits. Unlike a browser, next also returns events whose data is empty,
// so that callers see priming events.
type sseReader struct {
	r   *bufio.Reader
	max int

	// lastID is the id of the last event dispatched (kept across events
	// that carry none): the Last-Event-ID to reconnect with. An event cut
	// off before its end does not change it.
	lastID string
	idBuf  string // the last id field read
	// retry is the last reconnection time the server asked for; zero if it
	// never did.
	retry time.Duration

	line    []byte
	skipLF  bool // the previous line ended with CR: skip a following LF
	started bool
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	if maxEvent <= 0 {
		maxEvent = jsonrpc.DefaultMaxMessageSize
	}
	return &sseReader{r: bufio.NewReaderSize(r, 4<<10), max: maxEvent}
}

// next returns the next event that has at least one data line. Events
// without data update lastID only; retry takes effect when read. At the end of the input it
// returns io.EOF (an incomplete final event is discarded, as the format
// requires).
func (s *sseReader) next() (sseEvent, error) {
	var (
		name    string
		data    []byte
		hasData bool
	)
	for {
		line, err := s.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			s.lastID = s.idBuf
			if hasData {
				if n := len(data); n > 0 && data[n-1] == '\n' {
					data = data[:n-1]
				}
				if data == nil {
					data = []byte{}
				}
				return sseEvent{name: name, id: s.lastID, data: data}, nil
			}
			name = ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if len(data)+len(value)+1 > s.max {
				return sseEvent{}, errSSETooLarge
			}
			data = append(data, value...)
			data = append(data, '\n')
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.idBuf = string(value)
			}
		case "retry":
			if ms, ok := parseDigits(value); ok {
				s.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// parseDigits parses a non-empty run of ASCII digits that fits in an int64
// count of milliseconds that a time.Duration can hold.
func parseDigits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 12 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// readLine returns the next line without its terminator. The slice is
// valid until the next call.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	if s.skipLF {
		s.skipLF = false
		c, err := s.r.ReadByte()
		if err != nil {
			return nil, err
		}
		if c != '\n' {
			_ = s.r.UnreadByte()
		}
	}
	if !s.started {
		s.started = true
		if b, err := s.r.Peek(3); err == nil && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
			_, _ = s.r.Discard(3)
		}
	}
	for {
		n := s.r.Buffered()
		if n == 0 {
			if _, err := s.r.Peek(1); err != nil {
				return nil, err
			}
			n = s.r.Buffered()
		}
		buf, _ := s.r.Peek(n)
		if i := bytes.IndexAny(buf, "\r\n"); i >= 0 {
			s.line = append(s.line, buf[:i]...)
			if buf[i] == '\r' {
				if i+1 < len(buf) {
					if buf[i+1] == '\n' {
						i++
					}
				} else {
					s.skipLF = true
				}
			}
			_, _ = s.r.Discard(i + 1)
			return s.line, nil
		}
		if len(s.line)+n > s.max+64 {
			return nil, errSSETooLarge
		}
		s.line = append(s.line, buf...)
		_, _ = s.r.Discard(n)
	}
}
