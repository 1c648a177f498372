package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// A Stream carries whole messages in both directions. Read returns the next
// message, or a *DecodeError for input that is not a valid message (the Conn
// answers it and reads on); any other error ends the stream. Write must be
// safe for concurrent use.
//
// The context given to Write carries the id of the inbound request that the
// message answers or belongs to (see RequestIDFromContext), so that a
// transport with several channels, such as Streamable HTTP, can route it.
type Stream interface {
	Read(ctx context.Context) (Message, error)
	Write(ctx context.Context, m Message) error
	Close() error
}

// DefaultMaxMessageSize is the largest message a line stream reads unless
// told otherwise: 16 MiB.
const DefaultMaxMessageSize = 16 << 20

// ErrClosed is returned by operations on a closed Conn or Stream.
var ErrClosed = errors.New("jsonrpc: connection closed")

// LineStream is a Stream of newline-delimited messages, as MCP's stdio
// transport uses: one compact JSON message per line, in UTF-8. Blank lines
// are skipped. A line longer than the size limit is discarded and reported
// as a *DecodeError, after which reading goes on with the next line.
type LineStream struct {
	r       *bufio.Reader
	maxSize int
	closer  io.Closer

	wmu sync.Mutex
	w   io.Writer
	buf []byte

	closeOnce sync.Once
	closeErr  error
}

// NewLineStream returns a LineStream reading from r and writing to w. Close
// closes closer, if it is not nil. maxSize bounds the length of one message
// in bytes; zero means DefaultMaxMessageSize.
func NewLineStream(r io.Reader, w io.Writer, closer io.Closer, maxSize int) *LineStream {
	if maxSize <= 0 {
		maxSize = DefaultMaxMessageSize
	}
	return &LineStream{r: bufio.NewReaderSize(r, 64<<10), w: w, closer: closer, maxSize: maxSize}
}

// Read returns the next message. It does not watch ctx while blocked on the
// reader: close the stream to stop a pending Read.
func (s *LineStream) Read(ctx context.Context) (Message, error) {
	for {
		line, err := s.readLine()
		if len(line) > 0 {
			m, derr := Decode(line)
			if derr != nil {
				return nil, derr
			}
			return m, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

var errTooLong = errors.New("too long")

// readLine returns the next non-blank line without its terminator. The
// returned slice is owned by the caller.
func (s *LineStream) readLine() ([]byte, error) {
	var acc []byte
	for {
		frag, err := s.r.ReadSlice('\n')
		if len(acc)+len(frag) > s.maxSize+2 {
			// Discard the rest of the line and report it.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = s.r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, &DecodeError{Err: Errorf(CodeInvalidRequest, "Invalid Request: message exceeds the limit of %d bytes", s.maxSize)}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			acc = append(acc, frag...)
			continue
		}
		if acc != nil {
			acc = append(acc, frag...)
		} else if len(frag) > 0 {
			acc = append(make([]byte, 0, len(frag)), frag...)
		}
		line := bytes.TrimSpace(acc)
		if len(line) > s.maxSize {
			return nil, &DecodeError{Err: Errorf(CodeInvalidRequest, "Invalid Request: message exceeds the limit of %d bytes", s.maxSize)}
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(line) > 0 {
				return line, nil
			}
			return nil, err
		}
		if len(line) > 0 {
			return line, nil
		}
		acc = acc[:0]
	}
}

// EncodesMessages makes LineStream an EncodingStream: Write encodes the
// message before it returns.
func (*LineStream) EncodesMessages() {}

// Write encodes m as one line.
func (s *LineStream) Write(ctx context.Context, m Message) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	b, err := AppendMessage(s.buf[:0], m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = s.w.Write(b)
	if cap(b) <= 64<<10 {
		s.buf = b
	} else {
		s.buf = nil
	}
	if err != nil {
		return fmt.Errorf("jsonrpc: write: %w", err)
	}
	return nil
}

// Close closes the underlying closer once.
func (s *LineStream) Close() error {
	s.closeOnce.Do(func() {
		if s.closer != nil {
			s.closeErr = s.closer.Close()
		}
	})
	return s.closeErr
}
